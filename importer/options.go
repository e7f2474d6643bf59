package importer

import (
	"encoding/json"
	"fmt"

	"crmimport/importer/profile"
	"crmimport/phases"
)

// DefaultBatchSize is how many records commit together with their
// checkpoint (R12): a crash loses at most one batch of work.
const DefaultBatchSize = 5000

// MaxBatchSize bounds --batch-size: a batch's records, rows and slots are
// held until it commits, so one batch of a whole export held them all (1.2
// million records: 294 MiB). At this size a batch costs about 15 MiB, and a
// run stays within the memory the README states.
const MaxBatchSize = 50000

// CheckBatchSize refuses a batch size outside 1…MaxBatchSize, as a usage
// error: both faces ask it (Plan too, where 0 asks for the default).
func CheckBatchSize(n int) error {
	if n < 1 || n > MaxBatchSize {
		return &UsageError{Msg: fmt.Sprintf("the batch size must be between 1 and %d records (a batch is held in memory until it commits), got %d", MaxBatchSize, n)}
	}
	return nil
}

// Options are a run's options, persisted with the run (R10) and read back
// on resume.
type Options struct {
	Input string `json:"input"`
	// Inputs are the further paths of the export (its other zips).
	Inputs  []string `json:"inputs,omitempty"`
	Profile string   `json:"profile"`
	// ProfileFile and ProfileText are a custom profile's file and content:
	// a resumed run maps its files as the run began, whatever became of
	// the file since (R10). Built-in profiles are named only.
	ProfileFile string `json:"profile_file,omitempty"`
	ProfileText string `json:"profile_text,omitempty"`
	// SideFiles are the files tasks read beside their own (joined files,
	// parents looked up by name, body folders), fingerprinted with the
	// plan. Their key is "aux", as in the options of older runs.
	SideFiles []profile.SideFile `json:"aux,omitempty"`
	Only      []string           `json:"only,omitempty"`
	BatchSize int                `json:"batch_size"`
	Strict    bool               `json:"strict,omitempty"`
	Encoding  string             `json:"encoding,omitempty"`
	// Reread reads every file, even one an earlier task vouches for
	// (sameinput.go).
	Reread bool `json:"reread,omitempty"`
	// Warnings are what planning found that may have been read wrong
	// without any record failing to say so (a file read as Windows-1252 on
	// the evidence of its bytes): kept with the run, so that its summary
	// and report repeat them whenever they are shown.
	Warnings []string `json:"warnings,omitempty"`
	// Plan is the digest of the run's plan (plandigest.go): over the rest
	// of the options and the tasks, as a dry run showed it.
	Plan string `json:"plan,omitempty"`
}

// PlanWarnings are the warnings planning kept with a run (Options.Warnings).
// A run loaded from a dump carries production's options, which may hold
// anything: options that do not read as ours have no warnings of ours.
func PlanWarnings(r phases.Run) []string {
	var o struct {
		Warnings []string `json:"warnings"`
	}
	if json.Unmarshal(r.Options, &o) != nil {
		return nil
	}
	return o.Warnings
}

// DecodeOptions reads a run's persisted options.
func DecodeOptions(r phases.Run) (Options, error) {
	var o Options
	if len(r.Options) == 0 {
		return o, nil
	}
	if err := json.Unmarshal(r.Options, &o); err != nil {
		return o, fmt.Errorf("run %d: options: %w", r.ID, err)
	}
	return o, nil
}

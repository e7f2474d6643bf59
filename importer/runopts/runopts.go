// Package runopts holds the options a run keeps with it (R10): what it was
// asked (its export, profile, --only, batch size, strictness, encoding),
// what planning found worth repeating (its warnings) and its plan's digest
// and files (SPEC §11: a preview and its commit are the same plan). The
// importer writes them when it plans a run and reads them back on resume;
// the report, the fix folders and both faces read them to tell what a run
// was. They are a package of their own, under importer and report both, so
// that report need not import importer.
package runopts

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"

	"crmimport/importer/profile"
	"crmimport/ledger"
	"crmimport/phases"
)

// Options are a run's options, persisted with the run (R10) and read back
// on resume.
type Options struct {
	Input string `json:"input"`
	// Inputs are the further paths of the export (its other zips).
	Inputs []string `json:"inputs,omitempty"`
	// Users is the users file given as run --users (SPEC §4), one of
	// Inputs: the profile reads it as users in the canonical layout.
	Users string `json:"users,omitempty"`
	// ByIDs are the files of the export that no file name of the profile
	// names, read as the kind their ids say (kinds_by_id_prefix: a
	// Salesforce Data Loader extract.csv): base name -> kind.
	ByIDs   map[string]string `json:"by_ids,omitempty"`
	Profile string            `json:"profile"`
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
	// (importer's sameinput.go).
	Reread bool `json:"reread,omitempty"`
	// Update applies changes at the source (R17, SPEC §11): "" leaves
	// them counted outdated; UpdateApply writes the rows of created slots
	// that no one edited since; UpdateOverwrite writes over an edit too.
	// Kept with the run, so that resume does the same.
	Update string `json:"update,omitempty"`
	// Warnings are what planning found that may have been read wrong
	// without any record failing to say so (a file read as Windows-1252 on
	// the evidence of its bytes): kept with the run, so that its summary
	// and report repeat them whenever they are shown (phases.Run.PlanWarnings
	// reads them back: keep the key).
	Warnings []string `json:"warnings,omitempty"`
	// Plan is the digest of the run's plan (importer's plandigest.go): over the rest
	// of the options and the tasks, as a dry run showed it.
	Plan string `json:"plan,omitempty"`
}

// The values of Options.Update (`run --update`, `--update=overwrite`).
const (
	UpdateApply     = "apply"
	UpdateOverwrite = "overwrite"
)

// ParseUpdate reads the value of --update: "" (not given), "true" or
// "apply" (given alone), "overwrite".
func ParseUpdate(s string) (string, error) {
	switch s {
	case "", "false":
		return "", nil
	case "true", UpdateApply:
		return UpdateApply, nil
	case UpdateOverwrite:
		return UpdateOverwrite, nil
	}
	return "", fmt.Errorf("--update takes no value, or =overwrite (to write over rows edited since they were imported); got %q", s)
}

// Decode reads a run's persisted options.
func Decode(r phases.Run) (Options, error) {
	var o Options
	if len(r.Options) == 0 {
		return o, nil
	}
	if err := json.Unmarshal(r.Options, &o); err != nil {
		return o, fmt.Errorf("run %d: options: %w", r.ID, err)
	}
	return o, nil
}

// PlanFile is one file a run's plan reads, with the fingerprint the plan
// took of it (R10): a task's file and its kind, or a file its tasks read
// beside their own (joined, looked up by name, bodies) and its role.
type PlanFile struct {
	File        string `json:"file"`
	Kind        string `json:"kind,omitempty"`
	Role        string `json:"role,omitempty"`
	Fingerprint string `json:"fingerprint"`
}

// Files are the files of a plan: its tasks', then its side files.
func Files(tasks []phases.TaskSpec, o Options) []PlanFile {
	var out []PlanFile
	for _, t := range tasks {
		out = append(out, PlanFile{File: t.File, Kind: string(t.Kind), Fingerprint: t.Fingerprint})
	}
	for _, s := range o.SideFiles {
		out = append(out, PlanFile{File: s.File, Role: s.Role, Fingerprint: s.Fingerprint})
	}
	return out
}

// PlanOf is the plan a run committed: its digest (kept with its options;
// "" for a run planned before it was) and its files, from its tasks and
// options (R10).
func PlanOf(run phases.Run, tasks []phases.Task) (string, []PlanFile) {
	o, err := Decode(run)
	if err != nil {
		return "", nil
	}
	specs := make([]phases.TaskSpec, len(tasks))
	for i, t := range tasks {
		specs[i] = phases.TaskSpec{Kind: t.Kind, File: t.File, Fingerprint: t.Fingerprint}
	}
	return o.Plan, Files(specs, o)
}

// Profile is the profile a run maps its files with: the custom profile
// kept in its options, or the built-in one it names (the canonical one
// when it names none).
func Profile(o Options) (*profile.Profile, error) {
	var p *profile.Profile
	var err error
	if o.ProfileText != "" {
		p, err = profile.Load(filepath.Base(o.ProfileFile), []byte(o.ProfileText))
	} else {
		name := o.Profile
		if name == "" {
			name = "canonical"
		}
		p, err = profile.Builtin(name)
	}
	return WithUsers(p, err, o)
}

// WithUsers is p reading the run's users file (Users) as users, and the
// files told by their ids (ByIDs) as their kinds, as its plan did; err,
// p's own error, is returned as is.
func WithUsers(p *profile.Profile, err error, o Options) (*profile.Profile, error) {
	if err != nil {
		return p, err
	}
	p = WithFileKinds(p, o.ByIDs)
	if o.Users == "" {
		return p, nil
	}
	return p.WithUsersFile(filepath.Base(o.Users))
}

// WithFileKinds is p reading each file of byIDs (base name -> kind) as
// its kind.
func WithFileKinds(p *profile.Profile, byIDs map[string]string) *profile.Profile {
	names := make([]string, 0, len(byIDs))
	for n := range byIDs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p = p.WithFileKind(n, ledger.Kind(byIDs[n]))
	}
	return p
}

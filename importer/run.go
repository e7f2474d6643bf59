package importer

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"

	"crmimport/canon"
	"crmimport/importer/input"
	"crmimport/importer/runopts"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store"
)

// RunSpec is what a user asks of a new run.
type RunSpec struct {
	Tenant  string
	Source  string
	Profile string // a built-in profile's name or a profile file; "" means the built-in profile named like the source
	Input   string
	Inputs  []string // further paths of the same export (Salesforce's _2.ZIP …)
	// Users is a users file in the canonical layout (SPEC §4, run
	// --users): read as users whatever the profile, beside the export.
	Users     string
	Only      []ledger.Kind
	BatchSize int
	Strict    bool
	Encoding  string // "" means: each file's own, on the evidence of its bytes (reader.ChooseEncoding)
	Reread    bool   // read every file, even one the ledger has already taken whole (sameinput.go)
	// Update applies changes at the source (R17, SPEC §11): "" leaves
	// them (outdated), runopts.UpdateApply writes them, runopts.UpdateOverwrite
	// writes them over a hand edit too.
	Update string
	// Plan, if set, is the digest of the plan a dry run showed: the run is
	// planned only if its plan has it (*PlanChangedError), and Shown, the
	// dry run's files when known, lets the refusal name what changed.
	Plan  string
	Shown []runopts.PlanFile
}

// Importer plans runs over exports and does their work.
type Importer struct {
	Engine *phases.Engine
	// Progress is told, after each committed batch, how far its file is read.
	Progress func(t phases.Task, read, size int64)

	// runs holds each run's in-memory index (index.go).
	runs map[int64]*runIndex
	// limits bound what zips and gzips may uncompress to.
	limits input.Limits
	// beside reads the database beside the engine's writer while a run
	// works (store.Beside): the final slots of the kind a run's next task
	// reads, loaded while the task before it works (index.go). nil when
	// there is none.
	beside *sql.DB
	// kept are the statements of a run's batches, kept from one batch
	// transaction to the next (store.Kept), while Execute runs.
	kept *store.Kept
}

// New returns an importer working through engine.
func New(engine *phases.Engine) *Importer {
	return &Importer{Engine: engine, runs: map[int64]*runIndex{}, limits: input.DefaultLimits()}
}

// UsageError is a request that cannot be right as written (exit 2).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Plan discovers the export's files, fingerprints them, and commits the run
// and its plan (R10). Problems found before the run exists are *input.Error
// and leave no row.
func (imp *Importer) Plan(ctx context.Context, spec RunSpec) (phases.Run, error) {
	if spec.BatchSize != 0 {
		if err := CheckBatchSize(spec.BatchSize); err != nil {
			return phases.Run{}, err
		}
	}
	prof, inputs, err := planInputs(spec.Source, spec.Profile, spec.Encoding, append([]string{spec.Input}, spec.Inputs...))
	if err != nil {
		return phases.Run{}, err
	}
	users, err := planUsers(&prof, spec.Users)
	if err != nil {
		return phases.Run{}, err
	}
	if users != "" {
		inputs = append(inputs, users)
	}
	prof, byIDs, byIDsNotices := kindsByIDs(prof, inputs, imp.limits)
	if spec.BatchSize <= 0 {
		spec.BatchSize = DefaultBatchSize
	}
	d, err := discover(ctx, inputs, prof, spec.Only, spec.Encoding, imp.limits)
	if err != nil {
		return phases.Run{}, err
	}
	d.fixWarnings(prof, spec.Tenant, spec.Source)
	d.fixUpdate(&spec)
	files, side, notes := d.files, d.side, d.notes
	notes.notices = append(byIDsNotices, notes.notices...)
	opts := runopts.Options{Input: inputs[0], Inputs: inputs[1:], Users: users, ByIDs: byIDs, Profile: prof.Name, SideFiles: side,
		BatchSize: spec.BatchSize, Strict: spec.Strict, Encoding: spec.Encoding, Reread: spec.Reread, Update: spec.Update, Warnings: notes.warnings}
	if !prof.BuiltIn {
		opts.ProfileFile, _ = filepath.Abs(spec.Profile)
		opts.ProfileText = string(prof.Text())
	}
	for _, k := range spec.Only {
		opts.Only = append(opts.Only, string(k))
	}
	plan := phases.PlanSpec{Tenant: spec.Tenant, Source: spec.Source, Notices: notes.notices, Warnings: notes.warnings}
	for _, f := range files {
		plan.Tasks = append(plan.Tasks, phases.TaskSpec{Kind: f.Kind, Phase: phases.Phase(f.Kind), File: f.Path,
			Format: string(f.Format), Encoding: f.Encoding, Fingerprint: f.Info.Fingerprint,
			InputKey: inputKey(prof, f, opts), Size: input.Size(f.Path)})
	}
	// Parents first (R7): by the kinds' plan order — within a phase too,
	// users before companies — and by name within a kind.
	order := canon.Kinds()
	slices.SortStableFunc(plan.Tasks, func(a, b phases.TaskSpec) int {
		return slices.Index(order, a.Kind) - slices.Index(order, b.Kind)
	})
	// A dry run and the run that confirms it are the same plan: the
	// fingerprints above are what this run reads (R10).
	if opts.Plan, err = planDigest(spec.Tenant, spec.Source, opts, plan.Tasks); err != nil {
		return phases.Run{}, err
	}
	if spec.Plan != "" && spec.Plan != opts.Plan {
		return phases.Run{}, &PlanChangedError{Want: spec.Plan, Was: spec.Shown, Now: runopts.Files(plan.Tasks, opts)}
	}
	plan.Options = opts
	return imp.Engine.Plan(ctx, plan)
}

// Execute works on a planned or resumed import (see phases.Engine.Execute):
// its tasks read their files (Open). An undo's run is not an import: undo
// takes back its items (undo.Open, R16), and runs.Execute gives each run
// to its own.
func (imp *Importer) Execute(ctx context.Context, runID int64) (phases.Run, error) {
	run, err := phases.LoadRun(ctx, imp.Engine.DB, runID)
	if err != nil {
		return phases.Run{}, err
	}
	if run.Undoes != 0 {
		return phases.Run{}, fmt.Errorf("run %d is the undo of run %d, not an import: undo works on it (runs.Execute)", runID, run.Undoes)
	}
	beside, done, err := store.Beside(ctx, imp.Engine.DB)
	if err != nil {
		return phases.Run{}, err
	}
	imp.beside = beside
	imp.kept = store.NewKept(imp.Engine.DB)
	defer func() {
		imp.waitAhead()
		imp.beside = nil
		done()
		imp.kept.Close()
		imp.kept = nil
	}()
	return imp.Engine.Execute(ctx, runID, imp.Open)
}

// waitAhead waits for the final slots being read ahead for the runs'
// next tasks (index.go), before what reads them is closed.
func (imp *Importer) waitAhead() {
	for _, x := range imp.runs {
		x.waitAhead()
	}
}

// Resume re-arms a run after checking that the files its re-armed tasks
// read are still those it planned (R8, R10). A run loaded from a dump
// whose unfinished tasks have no file here is refused: see ResumeFrom.
func (imp *Importer) Resume(ctx context.Context, runID int64) (phases.Run, []phases.Task, error) {
	dump, err := phases.LoadedFrom(ctx, imp.Engine.DB, runID)
	if err != nil {
		return phases.Run{}, nil, err
	}
	run, err := phases.LoadRun(ctx, imp.Engine.DB, runID)
	if err != nil {
		return phases.Run{}, nil, err
	}
	if run.Undoes != 0 {
		return imp.Engine.Resume(ctx, runID, nil) // an undo reads no file: its items are in the database
	}
	if dump != "" {
		if err := imp.resumeLoaded(ctx, runID, dump); err != nil {
			return phases.Run{}, nil, err
		}
	}
	return imp.Engine.Resume(ctx, runID, imp.checkInputs)
}

// checkInputs refuses a resume into a file that changed since the plan:
// the files of the re-armed tasks, and the files tasks read beside their
// own (R10). A zip entry is checked against the CRC-32 and size the zip
// records for it, without reading it.
func (imp *Importer) checkInputs(ctx context.Context, run phases.Run, rearm []phases.Task) error {
	if len(rearm) == 0 {
		return nil
	}
	for _, t := range rearm {
		if t.File == "" {
			return &phases.ChangedInputError{Run: run.ID, File: t.Kind.Plural() + " task", Reason: "has no input file here"}
		}
		if err := imp.checkInput(ctx, run, t.File, "", t.Fingerprint); err != nil {
			return err
		}
	}
	opts, err := runopts.Decode(run)
	if err != nil {
		return err
	}
	for _, a := range opts.SideFiles {
		if err := imp.checkInput(ctx, run, a.File, a.Format, a.Fingerprint); err != nil {
			return err
		}
	}
	return nil
}

func (imp *Importer) checkInput(ctx context.Context, run phases.Run, file, format, want string) error {
	if err := input.Stat(file); err != nil {
		return &phases.ChangedInputError{Run: run.ID, File: file, Reason: "cannot be opened (" + err.Error() + ")"}
	}
	var got string
	var err error
	if format == "folder" {
		got, err = input.FolderFingerprint(file)
	} else {
		got, err = input.Fingerprint(ctx, file, imp.limits)
	}
	if err != nil && ctx.Err() != nil {
		return ctx.Err() // stopped while checking: nothing changed
	}
	if err != nil {
		return &phases.ChangedInputError{Run: run.ID, File: file, Reason: "cannot be read (" + err.Error() + ")"}
	}
	if got != want {
		return &phases.ChangedInputError{Run: run.ID, File: file,
			Reason: fmt.Sprintf("has changed (fingerprint %s, planned %s)", got, want)}
	}
	return nil
}

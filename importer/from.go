package importer

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"crmimport/importer/input"
	"crmimport/importer/profile"
	"crmimport/ledger"
	"crmimport/phases"
)

// A run loaded from a dump (`crmimport ledger load`) has no input files
// here: a plain resume refuses it, and `resume RUN --from PATH` plans its
// unfinished tasks over a local export in the canonical format (R10).

// ResumeFrom resumes a run loaded from a dump over the export at path: each
// unfinished task of kind K reads path's file for K from its beginning
// (a second file of K gets a task of its own; a second unfinished task of K
// with no file left is cancelled, saying which task reads the file). A kind
// left to do that path has no file for refuses the resume before anything
// changes (*input.Error), and so does a run planned here (*UsageError).
func (imp *Importer) ResumeFrom(ctx context.Context, runID int64, path string) (phases.Run, []phases.Task, error) {
	dump, err := phases.LoadedFrom(ctx, imp.Engine.DB, runID)
	if err != nil {
		return phases.Run{}, nil, err
	}
	if dump == "" {
		return phases.Run{}, nil, &UsageError{Msg: fmt.Sprintf("run %d was planned here and reads its own files: --from is for a run "+
			"loaded from a dump (`crmimport ledger load`); continue it with `crmimport resume %d`", runID, runID)}
	}
	export, err := filepath.Abs(path)
	if err != nil {
		return phases.Run{}, nil, &input.Error{Path: path, Reason: err.Error()}
	}
	prof := profile.Canonical()
	d, err := discover(ctx, []string{export}, prof, nil, "", imp.limits) // the canonical profile joins no files
	if err != nil {
		return phases.Run{}, nil, err
	}
	replan := func(ctx context.Context, run phases.Run, unfinished []phases.Task) (phases.Replan, error) {
		d.fixWarnings(prof, run.Tenant, run.Source)
		return planFrom(run, unfinished, export, prof, d.files, d.notes)
	}
	run, planned, err := imp.Engine.ResumeFrom(ctx, runID, replan)
	if err != nil {
		return run, nil, err
	}
	// The index reads the tasks on first need otherwise, and says what it
	// could not read.
	if tasks, err := phases.LoadTasks(ctx, imp.Engine.DB, run.ID); err == nil {
		imp.skipFileless(run, tasks)
	}
	return run, planned, nil
}

// planFrom points the unfinished tasks of a loaded run at the export's
// files, kind by kind.
func planFrom(run phases.Run, unfinished []phases.Task, export string, prof *profile.Profile, files []inputFile, notes planNotes) (phases.Replan, error) {
	opts := map[string]any{}
	var old map[string]json.RawMessage
	if json.Unmarshal(run.Options, &old) == nil {
		for k, v := range old {
			opts[k] = v
		}
	}
	opts["input"], opts["profile"], opts["batch_size"] = export, prof.Name, DefaultBatchSize
	if len(notes.warnings) > 0 {
		opts["warnings"] = notes.warnings // the files read here from now on: what the summary repeats
	}
	plan := phases.Replan{Options: opts, Inputs: map[int64]phases.TaskSpec{}, Dropped: map[int64]string{},
		Notices: notes.notices, Warnings: notes.warnings}
	byKind := map[ledger.Kind][]inputFile{}
	for _, f := range files {
		byKind[f.Kind] = append(byKind[f.Kind], f)
	}
	tasks := map[ledger.Kind][]phases.Task{}
	var kinds []ledger.Kind
	for _, t := range unfinished {
		if tasks[t.Kind] == nil {
			kinds = append(kinds, t.Kind)
		}
		tasks[t.Kind] = append(tasks[t.Kind], t)
	}
	// Each task in its kind's phase, as a plan made here (R7); the engine
	// holds to it whatever the dump said.
	spec := func(k ledger.Kind, f inputFile) phases.TaskSpec {
		return phases.TaskSpec{Kind: k, Phase: phases.Phase(k), File: f.Path, Format: string(f.Format), Encoding: f.Encoding,
			Fingerprint: f.Info.Fingerprint, Size: input.Size(f.Path)}
	}
	var missing []string
	for _, k := range kinds {
		kindTasks, kindFiles := tasks[k], byKind[k]
		if len(kindFiles) == 0 {
			missing = append(missing, k.Plural())
			continue
		}
		for i, t := range kindTasks {
			if i < len(kindFiles) {
				plan.Inputs[t.ID] = spec(k, kindFiles[i])
				continue
			}
			plan.Dropped[t.ID] = fmt.Sprintf("superseded by resume --from %s: task %d reads its %s", export, kindTasks[0].ID, k.Plural())
		}
		for _, f := range kindFiles[min(len(kindTasks), len(kindFiles)):] {
			plan.Extra = append(plan.Extra, spec(k, f))
		}
	}
	if len(missing) > 0 {
		return plan, &input.Error{Path: export, Reason: fmt.Sprintf("has no file for %s, which run %d has left to do "+
			"(the canonical format: %s); nothing was changed", strings.Join(missing, ", "), run.ID, prof.ExpectedFiles())}
	}
	return plan, nil
}

// skipFileless keeps the index of ids seen from re-reading the tasks of a
// loaded run that have no file here (those production finished): their
// records are in the ledger already.
func (imp *Importer) skipFileless(run phases.Run, tasks []phases.Task) {
	x := imp.index(run)
	for _, t := range tasks {
		if t.File == "" {
			x.loaded[t.ID] = true
		}
	}
}

// resumeLoaded readies a plain resume of a run loaded from a dump (dump:
// where from): refused while unfinished tasks have no file here (only
// --from can say what they read); else it resumes as any run (R10 checks
// its files), the tasks production finished kept from being re-read.
func (imp *Importer) resumeLoaded(ctx context.Context, runID int64, dump string) error {
	tasks, err := phases.LoadTasks(ctx, imp.Engine.DB, runID)
	if err != nil {
		return err
	}
	if err := refuseFileless(runID, dump, tasks); err != nil {
		return err
	}
	run, err := phases.LoadRun(ctx, imp.Engine.DB, runID)
	if err != nil {
		return err
	}
	imp.skipFileless(run, tasks)
	return nil
}

// refuseFileless refuses to resume a run loaded from a dump whose
// unfinished tasks have no file here: a *UsageError naming their kinds and
// the way on, resume --from.
func refuseFileless(runID int64, dump string, tasks []phases.Task) error {
	var kinds []string
	seen := map[ledger.Kind]bool{}
	for _, t := range tasks {
		if t.Status != phases.TaskSucceeded && t.File == "" && !seen[t.Kind] {
			seen[t.Kind] = true
			kinds = append(kinds, t.Kind.Plural())
		}
	}
	if len(kinds) == 0 {
		return nil
	}
	return &UsageError{Msg: fmt.Sprintf("run %d was loaded from a dump (%s) and has no input files here: its %s left to do have "+
		"nothing to read. Point it at a local export of those records: `crmimport resume %d --from PATH` (PATH: a folder in "+
		"the canonical format holding %s)", runID, dump, strings.Join(kinds, ", "), runID, strings.Join(kinds, ", "))}
}

package report

import (
	"time"

	"crmimport/importer/runopts"
	"crmimport/phases"
	"crmimport/undo"
)

// Summary is the JSON summary of a run (SPEC §5): every planned kind with
// every field, zeros included. Fields may be added, none removed.
type Summary struct {
	Run         int64                    `json:"run"`
	Tenant      string                   `json:"tenant"`
	Source      string                   `json:"source"`
	Status      string                   `json:"status"`
	Interrupted bool                     `json:"interrupted"`
	Phase       int                      `json:"phase"`
	StartedAt   string                   `json:"started_at"`
	FinishedAt  *string                  `json:"finished_at"`
	DurationMS  *int64                   `json:"duration_ms"`
	Kinds       map[string]phases.Counts `json:"kinds"`
	// Undoes is the run an undo takes back, UndoneBy the undo that took
	// this run back (R16); absent when 0.
	Undoes   int64 `json:"undoes,omitempty"`
	UndoneBy int64 `json:"undone_by,omitempty"`
	// PartlyUndone is what undos under --cascade took back of this run's
	// records, per undo and kind (R16); absent when nothing.
	PartlyUndone []undo.Part `json:"partly_undone,omitempty"`
	Warnings     []string    `json:"warnings"`
	Next         []string    `json:"next"`
	// DryRun marks the summary of a dry run, whose run is in a throwaway
	// copy: Run is 0 then, naming no run of the database.
	DryRun bool `json:"dry_run,omitempty"`
	// Plan is the digest of the run's plan (SPEC §11: a preview and its
	// commit are the same plan), absent for a run planned before it was
	// kept; PlanFiles, in a dry run's summary, the files it reads with
	// their fingerprints: what `run --plan` and the page's Import confirm.
	Plan      string             `json:"plan,omitempty"`
	PlanFiles []runopts.PlanFile `json:"plan_files,omitempty"`
	// WouldUpdate, in a dry run's summary, is per planned kind how many
	// records its plan would update — or, when it does not ask for
	// --update, how many the same plan with --update would (R17, SPEC §11).
	WouldUpdate map[string]int64 `json:"would_update,omitempty"`
}

// Summary returns the run's JSON summary.
func (r *Report) Summary() Summary {
	s := Summary{
		Run: r.Run.ID, Tenant: r.Run.Tenant, Source: r.Run.Source, Status: string(r.Run.Status),
		Interrupted: r.Interrupted, Phase: r.Run.CurrentPhase, StartedAt: r.Run.StartedAt.UTC().Format(time.RFC3339),
		DurationMS: r.Run.DurationMS, Kinds: map[string]phases.Counts{}, Warnings: r.Warnings(), Next: r.Next(),
		Undoes: r.Run.Undoes, UndoneBy: r.Run.UndoneBy, PartlyUndone: r.TakenBack,
	}
	if r.Run.FinishedAt != nil {
		f := r.Run.FinishedAt.UTC().Format(time.RFC3339)
		s.FinishedAt = &f
	}
	for _, k := range r.Kinds {
		c := k.Counts
		c.Undo = r.Run.Undoes != 0
		s.Kinds[string(k.Kind)] = c
	}
	var files []runopts.PlanFile
	s.Plan, files = runopts.PlanOf(r.Run, r.Tasks)
	if r.DryRun != "" {
		s.Run, s.DryRun, s.PlanFiles, s.WouldUpdate = 0, true, files, r.WouldUpdate()
	}
	if s.Warnings == nil {
		s.Warnings = []string{}
	}
	if s.Next == nil {
		s.Next = []string{}
	}
	return s
}

// Full is the JSON of `report RUN --format json`: the summary, the tasks,
// the reasons and the run log.
type Full struct {
	Summary
	Tasks   []TaskJSON             `json:"tasks"`
	Reasons map[string]ReasonsJSON `json:"reasons"`
	// Changes are what the run found changed at the source (R17), per
	// kind, with examples; UpdateCommand applies what can be applied.
	Changes       []KindChanges `json:"changes"`
	UpdateCommand string        `json:"update_command,omitempty"`
	Log           []LogEntry    `json:"log"`
}

// TaskJSON is one task in the full report.
type TaskJSON struct {
	ID         int64             `json:"id"`
	Kind       string            `json:"kind"`
	Phase      int               `json:"phase"`
	Status     string            `json:"status"`
	File       string            `json:"file"`
	Encoding   string            `json:"encoding"`
	Checkpoint phases.Checkpoint `json:"checkpoint"`
	Attempts   int               `json:"attempts"`
	LastError  string            `json:"last_error,omitempty"`
	Counts     phases.Counts     `json:"counts"`
	// Progress is the task's progress as its row holds it, at the
	// report's instant (phases.TaskProgress).
	Progress phases.Progress `json:"progress"`
}

// ReasonsJSON are one kind's top reasons.
type ReasonsJSON struct {
	Skipped []Reason `json:"skipped"`
	Failed  []Reason `json:"failed"`
}

// Full returns the full JSON report.
func (r *Report) Full() Full {
	f := Full{Summary: r.Summary(), Tasks: r.tasksJSON(), Reasons: map[string]ReasonsJSON{}, Log: r.Log,
		Changes: r.Changes, UpdateCommand: r.UpdateCommand()}
	if f.Changes == nil {
		f.Changes = []KindChanges{}
	}
	for _, k := range r.Kinds {
		rj := ReasonsJSON{Skipped: k.Skips, Failed: k.Failures}
		if rj.Skipped == nil {
			rj.Skipped = []Reason{}
		}
		if rj.Failed == nil {
			rj.Failed = []Reason{}
		}
		f.Reasons[string(k.Kind)] = rj
	}
	if f.Log == nil {
		f.Log = []LogEntry{}
	}
	return f
}

func (r *Report) tasksJSON() []TaskJSON {
	var out []TaskJSON
	for _, t := range r.Tasks {
		out = append(out, TaskJSON{ID: t.ID, Kind: string(t.Kind), Phase: t.Phase, Status: string(t.Status),
			File: t.File, Encoding: t.Encoding, Checkpoint: t.Checkpoint, Attempts: t.Attempts, LastError: t.LastError, Counts: t.Counts,
			Progress: r.TaskProgress(t)})
	}
	return out
}

// Listed is a run as `runs --json` lists it: its summary, and its tasks as
// in the full report, with their progress, so that a live run's list
// shows how far each task stands.
type Listed struct {
	Summary
	Tasks []TaskJSON `json:"tasks"`
}

// Listed returns the run as `runs --json` lists it.
func (r *Report) Listed() Listed {
	l := Listed{Summary: r.Summary(), Tasks: r.tasksJSON()}
	if l.Tasks == nil {
		l.Tasks = []TaskJSON{}
	}
	return l
}

package phases

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"crmimport/canon"
)

// A run loaded from a dump (`crmimport ledger load`) has no plan here: its
// tasks name no input file. ResumeFrom plans its unfinished tasks anew over
// a local export, each from the beginning, with the fingerprints of the
// files it reads now (R10), and then resumes it as Resume does (R8).

// loadedFromSQL: the dump a run was loaded from, NULL for a run planned
// here.
const loadedFromSQL = `SELECT coalesce(dump, '') FROM migrations WHERE id = ?`

// LoadedFrom returns the dump run was loaded from, or "" for a run planned
// here.
func LoadedFrom(ctx context.Context, q queryer, runID int64) (string, error) {
	var dump string
	err := q.QueryRowContext(ctx, loadedFromSQL, runID).Scan(&dump)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("run %d: %w", runID, ErrNoRun)
	}
	return dump, err
}

// Replan is the new plan of a loaded run's unfinished tasks. ResumeFrom
// gives every task it re-arms or adds the phase of its kind (Phase), not
// the dump's: a TaskSpec's Phase is not read.
type Replan struct {
	Options  any                // the run's options from now on (persisted as JSON)
	Inputs   map[int64]TaskSpec // unfinished task id -> its input from now on (its kind stays)
	Extra    []TaskSpec         // more files of a kind than it has unfinished tasks: new tasks
	Dropped  map[int64]string   // unfinished tasks left without a file of their own: cancelled, with this reason
	Notices  []string           // written to the run log
	Warnings []string           // written to the run log as warnings
}

// ReplanFunc plans a loaded run's unfinished tasks over local files. An
// error refuses the resume before anything changes.
type ReplanFunc func(ctx context.Context, run Run, unfinished []Task) (Replan, error)

// replanTaskSQL: R10, an unfinished task of a loaded run is pointed at a
// local file and starts from its beginning: checkpoint, counters and
// progress start over. R7: its phase becomes its kind's in crmimport's
// plan, whatever the dump said — a dump that put contacts in phase 1
// beside companies would otherwise import contacts first and lose their
// company links for good (a created slot is final). Fenced on the status
// and the phase it was read with.
const replanTaskSQL = `
UPDATE migration_tasks SET status = 'pending', phase = ?, file = ?, format = ?, encoding = ?, fingerprint = ?,
    checkpoint = '{"rows":0,"line":0}', last_error = NULL,
    imported = 0, matched = 0, unchanged = 0, skipped = 0, failed = 0, duplicate = 0, unlinked = 0, nul_kept = 0,
    excluded = 0, untaken = 0, updated = 0, overwritten = 0, outdated = 0, conflict = 0, deleted_since = 0,
    adopted = 0, reverted = 0, unowned = 0, updated_at = ?,
    input_size = ?, read_bytes = 0, attempt_started_at = NULL, attempt_rows = 0, attempt_bytes = 0
WHERE id = ? AND migration_id = ? AND status = ? AND phase = ?`

func replanTask(ctx context.Context, tx *sql.Tx, t Task, in TaskSpec, now string) error {
	return expectRows(ctx, tx, 1, fmt.Sprintf("replan task %d", t.ID), replanTaskSQL,
		Phase(t.Kind), in.File, in.Format, in.Encoding, in.Fingerprint, now, max(in.Size, 0), t.ID, t.RunID, string(t.Status), t.Phase)
}

// dropTaskSQL: an unfinished task of a loaded run that no local file is
// left for (another task of its kind reads the file) is cancelled with
// the reason, in its kind's phase like the task that reads the file (R7).
const dropTaskSQL = `
UPDATE migration_tasks SET status = 'cancelled', phase = ?, last_error = ?, updated_at = ?
WHERE id = ? AND migration_id = ? AND status = ? AND phase = ?`

func dropTask(ctx context.Context, tx *sql.Tx, t Task, reason, now string) error {
	return expectRows(ctx, tx, 1, fmt.Sprintf("drop task %d", t.ID), dropTaskSQL, Phase(t.Kind), reason, now,
		t.ID, t.RunID, string(t.Status), t.Phase)
}

// setOptionsSQL: the options of a replanned run (its new input).
const setOptionsSQL = `UPDATE migrations SET options = ? WHERE id = ? AND status = 'running'`

// ResumeFrom resumes a run loaded from a dump over local files (R8, R10):
// its unfinished tasks — pending, running, failed or cancelled, whatever
// the run's status, for the point is to see what the engine does with a
// stranded or falsely finished production run — are planned anew by
// replan, each from the beginning; the run is taken over or reopened with
// one fenced UPDATE and passes the same admission check as a new run
// (R13); each re-armed or added task takes its kind's phase (Phase: R7,
// parents first), logged beside the dump's where they differ; the barrier
// then rewinds to the earliest pending phase. The caller then calls
// Execute. It returns the replanned tasks.
func (e *Engine) ResumeFrom(ctx context.Context, runID int64, replan ReplanFunc) (Run, []Task, error) {
	run, err := LoadRun(ctx, e.DB, runID)
	if err != nil {
		return Run{}, nil, err
	}
	dump, err := LoadedFrom(ctx, e.DB, runID)
	if err != nil {
		return run, nil, err
	}
	if dump == "" {
		return run, nil, &StateError{Run: run.ID, Status: run.Status, Op: "resume --from (it was planned here, not loaded from a dump)"}
	}
	if err := e.refuseTaken(ctx, run); err != nil {
		return run, nil, err
	}
	tasks, err := LoadTasks(ctx, e.DB, runID)
	if err != nil {
		return run, nil, err
	}
	var unfinished []Task
	for _, t := range tasks {
		if t.Status != TaskSucceeded {
			unfinished = append(unfinished, t)
		}
	}
	if len(unfinished) == 0 {
		return run, nil, fmt.Errorf("run %d (%s) has no unfinished task (pending, running, failed or cancelled): --from has nothing to plan",
			run.ID, run.Status)
	}
	plan, err := replan(ctx, run, unfinished)
	if err != nil {
		return run, nil, err
	}
	if err := checkReplan(run, unfinished, plan); err != nil {
		return run, nil, err
	}
	opts, err := json.Marshal(plan.Options)
	if err != nil {
		return run, nil, fmt.Errorf("resume --from: options: %w", err)
	}
	run, err = e.resumeRun(ctx, run, func(tx *sql.Tx, now string) error {
		if err := expectRows(ctx, tx, 1, "set options of run", setOptionsSQL, string(opts), run.ID); err != nil {
			return err
		}
		return e.replanTasks(ctx, tx, run.ID, unfinished, plan, now)
	}, func(tx *sql.Tx, was string, queued int64, earliest int) error {
		msg := fmt.Sprintf("run %d (loaded from the dump %s) resumed over local files (was %s): %d tasks planned anew from their start, "+
			"%d added, %d dropped; %d queued from phase %d", run.ID, dump, was, len(plan.Inputs), len(plan.Extra), len(plan.Dropped), queued, earliest)
		if err := e.log(ctx, tx, run.ID, "info", msg); err != nil {
			return err
		}
		for _, n := range plan.Notices {
			if err := e.log(ctx, tx, run.ID, "notice", n); err != nil {
				return err
			}
		}
		for _, w := range plan.Warnings {
			if err := e.log(ctx, tx, run.ID, "warning", w); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return run, nil, err
	}
	tasks, err = LoadTasks(ctx, e.DB, runID)
	if err != nil {
		return run, nil, err
	}
	var planned []Task
	for _, t := range tasks {
		if t.Status == TaskPending {
			planned = append(planned, t)
		}
	}
	return run, planned, nil
}

// checkReplan refuses a new plan that does not give each unfinished task
// of run either a file or a reason to drop it.
func checkReplan(run Run, unfinished []Task, plan Replan) error {
	for _, t := range unfinished {
		_, in := plan.Inputs[t.ID]
		_, out := plan.Dropped[t.ID]
		if in == out {
			return fmt.Errorf("resume --from: the new plan of run %d must give task %d (%s) either a file or a reason to drop it",
				run.ID, t.ID, t.Kind.Plural())
		}
	}
	return nil
}

// replanTasks points the unfinished tasks of a loaded run at their new
// files or drops them, adds the extra tasks, each in its kind's phase
// (R7), and warns of the tasks whose phase in the dump was not their
// kind's.
func (e *Engine) replanTasks(ctx context.Context, tx *sql.Tx, runID int64, unfinished []Task, plan Replan, now string) error {
	var rephased []string
	for _, t := range unfinished {
		var err error
		what := t.Kind.Plural()
		if in, ok := plan.Inputs[t.ID]; ok {
			err = replanTask(ctx, tx, t, in, now)
		} else {
			err = dropTask(ctx, tx, t, plan.Dropped[t.ID], now)
			what += ", dropped"
		}
		if err != nil {
			return err
		}
		if p := Phase(t.Kind); p != t.Phase {
			rephased = append(rephased, fmt.Sprintf("task %d (%s): phase %d in the dump, phase %d by its kind", t.ID, what, t.Phase, p))
		}
	}
	extra := append([]TaskSpec(nil), plan.Extra...)
	for i := range extra {
		extra[i].Phase = Phase(extra[i].Kind)
	}
	sort.SliceStable(extra, func(i, j int) bool { return extra[i].Phase < extra[j].Phase })
	for _, t := range extra {
		if err := insertTask(ctx, tx, runID, t, now); err != nil {
			return fmt.Errorf("resume --from: %w", err)
		}
	}
	if len(rephased) > 0 {
		msg := fmt.Sprintf("resume --from planned %d tasks in the phase of their kind in crmimport's plan "+
			"(%s), not the dump's, so that parents "+
			"import before the records that link to them (R7): %s", len(rephased), canon.PhasesInWords(), strings.Join(rephased, "; "))
		if err := e.log(ctx, tx, runID, "warning", msg); err != nil {
			return err
		}
	}
	return nil
}

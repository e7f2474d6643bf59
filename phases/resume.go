package phases

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"crmimport/store"
)

// CheckFunc verifies, before anything is written, that the tasks a resume
// would re-arm can still be read as planned (R10: their fingerprints).
type CheckFunc func(ctx context.Context, run Run, rearm []Task) error

// Resume takes ownership of an interrupted, cancelled, partial or failed run
// and re-arms it (R8): failed and cancelled tasks, and running tasks whose
// process is gone, go back to pending with their checkpoints; last_error,
// the stop request, finished_at and duration_ms are cleared; the barrier
// rewinds to the earliest pending phase. The takeover is one fenced UPDATE,
// so two resumes never both proceed, and it passes the same admission check
// as a new run. The caller then calls Execute; with nothing re-armed that
// finalizes the run. It returns the re-armed tasks.
func (e *Engine) Resume(ctx context.Context, runID int64, check CheckFunc) (Run, []Task, error) {
	run, err := LoadRun(ctx, e.DB, runID)
	if err != nil {
		return Run{}, nil, err
	}
	if run.Status == RunSucceeded {
		return run, nil, &StateError{Run: run.ID, Status: run.Status, Op: "resume"}
	}
	if err := e.refuseTaken(ctx, run); err != nil {
		return run, nil, err
	}
	tasks, err := LoadTasks(ctx, e.DB, runID)
	if err != nil {
		return run, nil, err
	}
	var rearm []Task
	for _, t := range tasks {
		if t.Status == TaskFailed || t.Status == TaskCancelled || t.Status == TaskRunning {
			rearm = append(rearm, t)
		}
	}
	if check != nil {
		if err := check(ctx, run, rearm); err != nil {
			return run, nil, err
		}
	}
	var n int64
	run, err = e.resumeRun(ctx, run, func(tx *sql.Tx, now string) error {
		var err error
		if n, err = rearmTasks(ctx, tx, run.ID, now); err != nil {
			return err
		}
		if int(n) != len(rearm) {
			return &RowsError{Stmt: "re-arm tasks (the plan changed while resuming)", Want: int64(len(rearm)), Got: n}
		}
		return nil
	}, func(tx *sql.Tx, was string, queued int64, earliest int) error {
		return e.log(ctx, tx, run.ID, "info", fmt.Sprintf("run %d resumed (was %s): %d tasks re-armed, %d queued from phase %d",
			run.ID, was, n, queued, earliest))
	})
	return run, rearm, err
}

// resumeRun is what Resume and ResumeFrom share once they know what to
// re-arm: in one transaction, run is made this process's again (own),
// change re-arms its tasks, the barrier rewinds to the earliest queued
// phase, and tell logs the resume (was: the run's status, "interrupted"
// for a run whose process is gone); then run is read back. An error
// leaves run as it was read.
func (e *Engine) resumeRun(ctx context.Context, run Run, change func(tx *sql.Tx, now string) error,
	tell func(tx *sql.Tx, was string, queued int64, earliest int) error) (Run, error) {
	err := e.inTx(ctx, func(tx *sql.Tx) error {
		now := e.now()
		if err := e.own(ctx, tx, run, now); err != nil {
			return err
		}
		if err := change(tx, now); err != nil {
			return err
		}
		queued, earliest, err := countQueued(ctx, tx, run.ID)
		if err != nil {
			return err
		}
		if queued > 0 {
			if err := rewind(ctx, tx, run.ID, run.CurrentPhase, earliest); err != nil {
				return err
			}
		}
		was := string(run.Status)
		if run.Status == RunRunning {
			was = "interrupted"
		}
		return tell(tx, was, queued, earliest)
	})
	if err != nil {
		return run, err
	}
	if err := e.Failpoints.Hit("resume"); err != nil {
		return run, err
	}
	return LoadRun(ctx, e.DB, run.ID)
}

// own makes run this process's again, as it was read, with one fenced
// UPDATE (R8): taken over from a process that is gone, or reopened from a
// terminal status. It passes the admission check of a new run (R13), and
// of two resumes only one wins: the other finds the run moved.
func (e *Engine) own(ctx context.Context, tx *sql.Tx, run Run, now string) error {
	err := store.Try(ctx, tx, func() error {
		if run.Status == RunRunning {
			return takeOver(ctx, tx, run.ID, run.Owner, e.Self, now)
		}
		return reopen(ctx, tx, run.ID, run.Status, e.Self, now)
	})
	var rows *RowsError
	switch {
	case store.IsUnique(err):
		return e.admissionError(ctx, tx, run.Tenant)
	case errors.As(err, &rows):
		// Someone else moved the run since we read it: another resume won.
		moved, lerr := LoadRun(ctx, tx, run.ID)
		if lerr != nil {
			return errors.Join(err, lerr)
		}
		return &AdmissionError{Tenant: run.Tenant, LiveRun: run.ID, Owner: moved.Owner, TakenOver: true}
	}
	return err
}

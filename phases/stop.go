package phases

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Stop requests that a run stop (R14) on behalf of by, the face that asks
// ("`crmimport stop`", "the desktop (`crmimport ui`)"): the run's log and
// its cancelled tasks say who asked, with this process. For a live run, the request is the
// run's row (cancellation_requested) and nothing else — no signal: the
// owner may be a server that runs imports among other work, and a process
// that only looks like the owner (a copy of the file names the original's
// pid) must not be touched. The owner reads the request with every batch
// and at least every second between them (Execute), ends the task in
// flight with its checkpoint and the run cancelled. Stop returns at once
// with requested=true (or requested=false with the run, when it ended
// before the request could be written). An interrupted run (its process
// is gone, or works on another file) is cancelled here directly, taking
// it over fenced on the owner it saw gone.
func (e *Engine) Stop(ctx context.Context, runID int64, by string) (run Run, requested bool, err error) {
	asked := fmt.Sprintf("stop requested by %s, %s", by, e.Self)
	run, err = LoadRun(ctx, e.DB, runID)
	if err != nil {
		return Run{}, false, err
	}
	if run.Status != RunRunning {
		return run, false, &StateError{Run: run.ID, Status: run.Status, Op: "stop"}
	}
	if e.Alive(run) {
		// A busy run leaves the write lock free for a moment after each
		// batch (store.BatchPause), which Begin's tries find.
		err := e.inTx(ctx, func(tx *sql.Tx) error {
			if err := requestStop(ctx, tx, run.ID, asked); err != nil {
				return err
			}
			return e.log(ctx, tx, run.ID, "warning", fmt.Sprintf("run %d: %s", run.ID, asked))
		})
		var rows *RowsError
		if errors.As(err, &rows) {
			// The run ended while the request waited for the lock.
			if now, lerr := LoadRun(ctx, e.DB, runID); lerr == nil && now.Status != RunRunning {
				return now, false, nil
			}
		}
		return run, true, err
	}
	err = e.inTx(ctx, func(tx *sql.Tx) error {
		now := e.now()
		if err := takeOver(ctx, tx, run.ID, run.Owner, e.Self, now); err != nil {
			return err
		}
		if err := requestStop(ctx, tx, run.ID, asked); err != nil {
			return err
		}
		n, err := cancelQueued(ctx, tx, run.ID, "cancelled: the run was interrupted and then stopped ("+asked+")", now)
		if err != nil {
			return err
		}
		return e.log(ctx, tx, run.ID, "warning", fmt.Sprintf(
			"run %d was interrupted (%s is gone) and is cancelled: %s; %d tasks cancelled, checkpoints kept",
			run.ID, run.Owner, asked, n))
	})
	if err != nil {
		return run, false, err
	}
	if _, err := e.finalize(ctx, run.ID); err != nil {
		return run, false, err
	}
	run, err = LoadRun(ctx, e.DB, runID)
	return run, false, err
}

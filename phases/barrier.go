package phases

import (
	"context"
	"database/sql"
	"fmt"

	"crmimport/canon"
	"crmimport/ledger"
)

// The barrier (R7): is the phase open, advance (fenced), rewind.

const phaseOpenSQL = `
SELECT count(*) FROM migration_tasks WHERE migration_id = ? AND phase = ? AND status IN ('pending', 'running')`

// phaseOpen: a phase stays open while any of its tasks is pending or
// running. Failed tasks do not hold it.
func phaseOpen(ctx context.Context, q queryer, runID int64, phase int) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, phaseOpenSQL, runID, phase).Scan(&n)
	return n > 0, err
}

// phaseFailedSQL: the kinds of a phase's failed tasks.
const phaseFailedSQL = `
SELECT DISTINCT kind FROM migration_tasks WHERE migration_id = ? AND phase = ? AND status = 'failed'`

// phaseFailed reports whether a failed task stops the run at phase (R7):
// one of a kind whose failure does (canon.StopsRun) — a users task does
// not: owners are optional links, which R6a completes once the users
// import; the run goes on, and ends partial.
func phaseFailed(ctx context.Context, q queryer, runID int64, phase int) (bool, error) {
	rows, err := q.QueryContext(ctx, phaseFailedSQL, runID, phase)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	stops := false
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return false, err
		}
		stops = stops || canon.StopsRun(ledger.Kind(k))
	}
	return stops, rows.Err()
}

const nextPhaseSQL = `SELECT min(phase) FROM migration_tasks WHERE migration_id = ? AND phase > ?`

// nextPhase is the next phase after from that has tasks; phases without
// tasks are stepped over.
func nextPhase(ctx context.Context, q queryer, runID int64, from int) (int, bool, error) {
	var n sql.NullInt64
	if err := q.QueryRowContext(ctx, nextPhaseSQL, runID, from).Scan(&n); err != nil {
		return 0, false, err
	}
	return int(n.Int64), n.Valid, nil
}

// moveBarrierSQL is fenced on the phase it moves from: it must change
// exactly one row, or someone else moved the barrier.
const moveBarrierSQL = `UPDATE migrations SET current_phase = ? WHERE id = ? AND current_phase = ?`

func moveBarrier(ctx context.Context, tx *sql.Tx, runID int64, from, to int) error {
	return expectRows(ctx, tx, 1, fmt.Sprintf("move barrier of run %d from phase %d to %d", runID, from, to),
		moveBarrierSQL, to, runID, from)
}

// barrierVerdict is what the barrier says about the current phase.
type barrierVerdict struct {
	Open   bool // work is queued in the phase: keep working on it
	Failed bool // the phase closed with a failed task: stop the run (R7)
	Moved  int  // the barrier moved to this phase
	Last   bool // the phase closed and no later phase has tasks: finalize
}

// checkBarrier closes the current phase if it can and moves the barrier to
// the next phase that has tasks.
func checkBarrier(ctx context.Context, tx *sql.Tx, runID int64, current int) (barrierVerdict, error) {
	open, err := phaseOpen(ctx, tx, runID, current)
	if err != nil || open {
		return barrierVerdict{Open: open}, err
	}
	failed, err := phaseFailed(ctx, tx, runID, current)
	if err != nil || failed {
		return barrierVerdict{Failed: failed}, err
	}
	next, ok, err := nextPhase(ctx, tx, runID, current)
	if err != nil || !ok {
		return barrierVerdict{Last: !ok}, err
	}
	if err := moveBarrier(ctx, tx, runID, current, next); err != nil {
		return barrierVerdict{}, err
	}
	return barrierVerdict{Moved: next}, nil
}

// rewind moves the barrier back to the earliest phase with queued work
// (R8, R9), fenced like any move. It does nothing when the barrier is
// already there.
func rewind(ctx context.Context, tx *sql.Tx, runID int64, current, earliest int) error {
	if earliest == current {
		return nil
	}
	return moveBarrier(ctx, tx, runID, current, earliest)
}

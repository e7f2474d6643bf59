package phases

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"time"

	"crmimport/ledger"
	"crmimport/store"
)

const countFailedTasksSQL = `SELECT count(*) FROM migration_tasks WHERE migration_id = ? AND status = 'failed'`

// finalize gives the run its terminal status (R9, R15), or refuses to while
// any task is pending or running, unless the run is being cancelled: then it
// rewinds the barrier to the earliest such phase and the run keeps working.
// done reports that the run is now terminal.
func (e *Engine) finalize(ctx context.Context, runID int64) (done bool, err error) {
	if err := e.Failpoints.Hit("finalize"); err != nil {
		return false, err
	}
	err = e.inTx(ctx, func(tx *sql.Tx) error {
		run, err := LoadRun(ctx, tx, runID)
		if err != nil {
			return err
		}
		if run.Status != RunRunning {
			return &StateError{Run: run.ID, Status: run.Status, Op: "finalize"}
		}
		queued, earliest, err := countQueued(ctx, tx, runID)
		if err != nil {
			return err
		}
		if queued > 0 && !run.CancelRequested {
			// R9: no terminal status while work is queued.
			if err := rewind(ctx, tx, runID, run.CurrentPhase, earliest); err != nil {
				return err
			}
			return e.log(ctx, tx, runID, "warning", fmt.Sprintf(
				"finalize refused: %d tasks are still queued; back to phase %d (R9)", queued, earliest))
		}
		if queued > 0 {
			if _, err := cancelQueued(ctx, tx, runID, "cancelled: stop requested", e.now()); err != nil {
				return err
			}
		}
		tasks, err := LoadTasks(ctx, tx, runID)
		if err != nil {
			return err
		}
		var failedTasks int
		if err := tx.QueryRowContext(ctx, countFailedTasksSQL, runID).Scan(&failedTasks); err != nil {
			return err
		}
		stats, err := RollupRun(ctx, tx, runID, tasks)
		if err != nil {
			return err
		}
		status := Outcome(run.CancelRequested, failedTasks, stats)
		now := e.Now()
		duration := now.Sub(run.StartedAt).Milliseconds()
		if duration < 0 {
			// The clock went back between the run's start (R10: kept as
			// it was) and now — set by hand, or by a resume on another
			// machine. A negative duration is false and a guess would be an
			// estimate (R15): the run is over in no time as far as the
			// clocks tell, and its log says why.
			if err := e.log(ctx, tx, runID, "warning", fmt.Sprintf(
				"the clock is %s behind the run's start (%s): its duration is not known, and recorded as 0",
				(-time.Duration(duration)*time.Millisecond).String(), ledger.FormatTime(run.StartedAt))); err != nil {
				return err
			}
			duration = 0
		}
		msg := summaryLine(status, failedTasks, stats)
		if run.Undoes != 0 {
			msg = undoSummaryLine(status, run.Undoes, failedTasks, stats)
		}
		if err := finalizeRun(ctx, tx, runID, status, ledger.FormatTime(now), duration, stats, msg); err != nil {
			return err
		}
		if run.Undoes != 0 && status == RunSucceeded {
			// R16: the undone run names its undo, in the statement's own
			// transaction; it keeps its row and its status.
			if err := markUndone(ctx, tx, run.Undoes, runID); err != nil {
				return err
			}
		}
		done = true
		return e.log(ctx, tx, runID, "info", fmt.Sprintf("run %d finalized: %s", runID, msg))
	})
	if done && err == nil {
		// The next run is planned on the statistics of what this one
		// wrote; the run itself is over whatever they say.
		if aerr := store.Analyze(ctx, e.DB); aerr != nil && e.OnLog != nil {
			e.OnLog(runID, "warning", aerr.Error())
		}
	}
	return done, err
}

// Outcome is R9's status for a run that can end: cancellation requested →
// cancelled; nothing failed → succeeded; something failed but some records
// are accounted for (imported or unchanged) → partial; else failed. Skips
// alone never fail a run.
func Outcome(cancelRequested bool, failedTasks int, stats map[ledger.Kind]Counts) RunStatus {
	var total Counts
	for _, c := range stats {
		total.Add(c)
	}
	switch {
	case cancelRequested:
		return RunCancelled
	case failedTasks == 0 && total.Failed == 0:
		return RunSucceeded
	case total.Imported+total.Unchanged > 0:
		return RunPartial
	case failedTasks == 0 && total.TakenBack()+total.Reverted > 0:
		// An undo whose every task ended but that left rows changed since
		// they were updated (R17, its failed records): it took the rest
		// back (R16).
		return RunPartial
	default:
		return RunFailed
	}
}

// byPhase lists the kinds of stats in phase order.
func byPhase(stats map[ledger.Kind]Counts) []ledger.Kind {
	kinds := make([]ledger.Kind, 0, len(stats))
	for k := range stats {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool { return Phase(kinds[i]) < Phase(kinds[j]) })
	return kinds
}

// undoSummaryLine is the summary of an undo (R16): per kind what it took
// back.
func undoSummaryLine(status RunStatus, undoes int64, failedTasks int, stats map[ledger.Kind]Counts) string {
	var parts []string
	for _, k := range byPhase(stats) {
		c := stats[k]
		parts = append(parts, fmt.Sprintf("%s %d/%d/%d/%d", k.Plural(), c.Removed, c.Released, c.Restored, c.Cleared))
	}
	s := fmt.Sprintf("%s: undo of run %d (removed/released/restored/cleared: %s)", status, undoes, strings.Join(parts, ", "))
	// R6a: the links the run completed, emptied again and waiting.
	s += perKind(stats, "; links emptied again (unlinked): ", func(c Counts) int64 { return c.Unlinked })
	// R17: the rows the run updated, given their before-image back, and
	// those changed since, left as they are (the undo's failed records).
	s += perKind(stats, "; rows given their values before the update back (reverted): ", func(c Counts) int64 { return c.Reverted })
	s += perKind(stats, "; rows changed since they were updated, left as they are (failed): ", func(c Counts) int64 { return c.Failed })
	if failedTasks > 0 {
		s += fmt.Sprintf("; %d tasks failed", failedTasks)
	}
	return s
}

// perKind is head and, per kind in phase order, the kinds whose n is not
// 0 with it; "" when there are none.
func perKind(stats map[ledger.Kind]Counts, head string, n func(Counts) int64) string {
	var parts []string
	for _, k := range byPhase(stats) {
		if v := n(stats[k]); v > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k.Plural(), v))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return head + strings.Join(parts, ", ")
}

func summaryLine(status RunStatus, failedTasks int, stats map[ledger.Kind]Counts) string {
	var parts []string
	for _, k := range byPhase(stats) {
		c := stats[k]
		parts = append(parts, fmt.Sprintf("%s %d/%d/%d/%d", k.Plural(), c.Imported, c.Unchanged, c.Skipped, c.Failed))
	}
	s := fmt.Sprintf("%s (imported/unchanged/skipped/failed: %s)", status, strings.Join(parts, ", "))
	if failedTasks > 0 {
		s += fmt.Sprintf("; %d tasks failed", failedTasks)
	}
	return s
}

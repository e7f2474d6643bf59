package phases

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"crmimport/ledger"
)

// Each function below is one edge of the state table in doc.go. Its UPDATE
// names the from-state in its WHERE and goes through expectRows (R11).

// startTaskSQL also notes the ledger's epoch when the task begins at its
// first record; a task that goes on from a checkpoint keeps the epoch of
// its beginning. It notes when this attempt starts and the checkpoint it
// starts from, for the attempt's rate (progress.go). The checkpoint's rows
// are read here and passed back, where a JSON function would be spelled
// differently by each dialect.
const startTaskSQL = `
UPDATE migration_tasks SET status = 'running', attempts = attempts + 1, updated_at = ?,
    ledger_epoch = CASE WHEN ? = 0 THEN ? ELSE ledger_epoch END,
    attempt_started_at = ?, attempt_rows = ?, attempt_bytes = read_bytes
WHERE id = ? AND status = 'pending'`

func startTask(ctx context.Context, tx *sql.Tx, run Run, id int64, now string) error {
	epoch, err := ledger.Epoch(ctx, tx, run.Tenant, run.Source)
	if err != nil {
		return err
	}
	var cp Checkpoint
	var raw string
	switch err := tx.QueryRowContext(ctx, `SELECT checkpoint FROM migration_tasks WHERE id = ?`, id).Scan(&raw); {
	case errors.Is(err, sql.ErrNoRows): // expectRows says the task is missing
	case err != nil:
		return err
	default:
		if err := json.Unmarshal([]byte(raw), &cp); err != nil {
			return fmt.Errorf("task %d: its checkpoint %q: %w", id, raw, err)
		}
	}
	return expectRows(ctx, tx, 1, "start task", startTaskSQL, now, cp.Rows, epoch, now, cp.Rows, id)
}

// checkpointTaskSQL commits a batch's counters and the task's new
// checkpoint, in the batch's own transaction (R12), and with it the task's
// progress: the input's size and how far the checkpoint has read of it
// (SPEC §9, live updates from the database). The bytes never go back: a
// resumed reader's buffers stand where an earlier one's did not.
const checkpointTaskSQL = `
UPDATE migration_tasks SET
    checkpoint = ?,
    imported = imported + ?, matched = matched + ?, unchanged = unchanged + ?, skipped = skipped + ?,
    failed = failed + ?, duplicate = duplicate + ?, unlinked = unlinked + ?, nul_kept = nul_kept + ?,
    removed = removed + ?, released = released + ?, restored = restored + ?, cleared = cleared + ?,
    excluded = excluded + ?, untaken = untaken + ?,
    updated = updated + ?, overwritten = overwritten + ?, outdated = outdated + ?, conflict = conflict + ?,
    deleted_since = deleted_since + ?, adopted = adopted + ?, reverted = reverted + ?, unowned = unowned + ?,
    input_size = ?, read_bytes = CASE WHEN read_bytes > ? THEN read_bytes ELSE ? END,
    updated_at = ?
WHERE id = ? AND status = 'running'`

func checkpointTask(ctx context.Context, tx *sql.Tx, id int64, cp Checkpoint, read, size int64, c Counts, now string) error {
	b, err := json.Marshal(cp)
	if err != nil {
		return err
	}
	return expectRows(ctx, tx, 1, "checkpoint task", checkpointTaskSQL, string(b),
		c.Imported, c.Matched, c.Unchanged, c.Skipped, c.Failed, c.Duplicate, c.Unlinked, c.NULKept,
		c.Removed, c.Released, c.Restored, c.Cleared, c.Excluded, c.Untaken,
		c.Updated, c.Overwritten, c.Outdated, c.Conflict, c.DeletedSince, c.Adopted, c.Reverted, c.Unowned, size, read, read, now, id)
}

// succeedTaskSQL keeps the task's epoch only if the ledger's has not moved
// since the task began: then every final slot the task counted is still
// there (SameInput).
const succeedTaskSQL = `
UPDATE migration_tasks SET status = 'succeeded', updated_at = ?,
    ledger_epoch = CASE WHEN ledger_epoch = ? THEN ledger_epoch END
WHERE id = ? AND status = 'running'`

func succeedTask(ctx context.Context, tx *sql.Tx, run Run, id int64, now string) error {
	epoch, err := ledger.Epoch(ctx, tx, run.Tenant, run.Source)
	if err != nil {
		return err
	}
	return expectRows(ctx, tx, 1, "finish task", succeedTaskSQL, now, epoch, id)
}

const failTaskSQL = `
UPDATE migration_tasks SET status = 'failed', last_error = ?, updated_at = ? WHERE id = ? AND status = 'running'`

func failTask(ctx context.Context, tx *sql.Tx, id int64, reason, now string) error {
	return expectRows(ctx, tx, 1, "fail task", failTaskSQL, reason, now, id)
}

// cancelTaskSQL stops the task in flight; its checkpoint stays (R14).
const cancelTaskSQL = `
UPDATE migration_tasks SET status = 'cancelled', last_error = ?, updated_at = ? WHERE id = ? AND status = 'running'`

func cancelTask(ctx context.Context, tx *sql.Tx, id int64, reason, now string) error {
	return expectRows(ctx, tx, 1, "cancel task", cancelTaskSQL, reason, now, id)
}

const countLaterSQL = `
SELECT count(*) FROM migration_tasks WHERE migration_id = ? AND phase > ? AND status = 'pending'`

// cancelLaterSQL: R7, a phase that closes with a failed task stops the run;
// running later phases without their parents would lose links for good.
const cancelLaterSQL = `
UPDATE migration_tasks SET status = 'cancelled', last_error = ?, updated_at = ?
WHERE migration_id = ? AND phase > ? AND status = 'pending'`

func cancelLater(ctx context.Context, tx *sql.Tx, runID int64, phase int, reason, now string) (int64, error) {
	var n int64
	if err := tx.QueryRowContext(ctx, countLaterSQL, runID, phase).Scan(&n); err != nil {
		return 0, err
	}
	return n, expectRows(ctx, tx, n, "cancel later phases", cancelLaterSQL, reason, now, runID, phase)
}

const countQueuedSQL = `
SELECT count(*), coalesce(min(phase), 0) FROM migration_tasks
WHERE migration_id = ? AND status IN ('pending', 'running')`

func countQueued(ctx context.Context, q queryer, runID int64) (n int64, earliest int, err error) {
	err = q.QueryRowContext(ctx, countQueuedSQL, runID).Scan(&n, &earliest)
	return n, earliest, err
}

// cancelQueuedSQL: R14, a stop cancels the queued tasks (and an orphaned
// running one, whose checkpoint stays).
const cancelQueuedSQL = `
UPDATE migration_tasks SET status = 'cancelled', last_error = ?, updated_at = ?
WHERE migration_id = ? AND status IN ('pending', 'running')`

func cancelQueued(ctx context.Context, tx *sql.Tx, runID int64, reason, now string) (int64, error) {
	n, _, err := countQueued(ctx, tx, runID)
	if err != nil {
		return 0, err
	}
	return n, expectRows(ctx, tx, n, "cancel queued tasks", cancelQueuedSQL, reason, now, runID)
}

const countRearmSQL = `
SELECT count(*) FROM migration_tasks WHERE migration_id = ? AND status IN ('failed', 'cancelled', 'running')`

// rearmTasksSQL: R8, failed AND cancelled tasks (and running ones, whose
// process is gone) go back to pending with their checkpoints intact (and
// their progress); the attempt they ended is over.
const rearmTasksSQL = `
UPDATE migration_tasks SET status = 'pending', last_error = NULL, updated_at = ?, attempt_started_at = NULL
WHERE migration_id = ? AND status IN ('failed', 'cancelled', 'running')`

func rearmTasks(ctx context.Context, tx *sql.Tx, runID int64, now string) (int64, error) {
	var n int64
	if err := tx.QueryRowContext(ctx, countRearmSQL, runID).Scan(&n); err != nil {
		return 0, err
	}
	return n, expectRows(ctx, tx, n, "re-arm tasks", rearmTasksSQL, now, runID)
}

// heartbeatSQL marks the owner alive with each batch and reads the stop
// request, fenced on the owner: a process that lost its run (taken over by
// a resume) cannot commit another batch into it.
const heartbeatSQL = `
UPDATE migrations SET heartbeat_at = ?
WHERE id = ? AND status = 'running' AND owner_host = ? AND owner_pid = ? AND owner_started = ?
  AND coalesce(owner_file, '') = ?
RETURNING cancellation_requested`

func heartbeat(ctx context.Context, tx *sql.Tx, runID int64, o Owner, now string) (stop bool, err error) {
	var c int
	err = tx.QueryRowContext(ctx, heartbeatSQL, now, runID, o.Host, o.PID, o.Started, o.File).Scan(&c)
	if err == sql.ErrNoRows {
		return false, &RowsError{Stmt: "heartbeat (is this process still the run's owner?)", Want: 1, Got: 0}
	}
	return c == 1, err
}

// requestStopSQL: R14, a stop is a request in the run's row, with who asked
// in its message (free while the run works: finalize writes its summary
// there, a resume clears it), so that the run's owner, whichever process
// it is, tells the stop as it was asked.
const requestStopSQL = `
UPDATE migrations SET cancellation_requested = 1, message = ? WHERE id = ? AND status = 'running'`

func requestStop(ctx context.Context, tx *sql.Tx, runID int64, asked string) error {
	return expectRows(ctx, tx, 1, "request stop", requestStopSQL, asked, runID)
}

// takeOverSQL: R8/R13, resume or stop of an interrupted run takes ownership
// fenced on the owner it saw gone, so that two of them never both win.
const takeOverSQL = `
UPDATE migrations SET owner_host = ?, owner_pid = ?, owner_started = ?, owner_file = nullif(?, ''), heartbeat_at = ?,
    cancellation_requested = 0, message = NULL, attempts = attempts + 1
WHERE id = ? AND status = 'running'
  AND coalesce(owner_host, '') = ? AND coalesce(owner_pid, 0) = ? AND coalesce(owner_started, '') = ?
  AND coalesce(owner_file, '') = ?`

func takeOver(ctx context.Context, tx *sql.Tx, runID int64, from, to Owner, now string) error {
	return expectRows(ctx, tx, 1, "take over run", takeOverSQL,
		to.Host, to.PID, to.Started, to.File, now, runID, from.Host, from.PID, from.Started, from.File)
}

// reopenSQL: R8, resume of a partial, failed or cancelled run: running
// again, unfinished again, fenced on the status it was read with. The
// one-live-run index refuses it while another run of the tenant is live.
const reopenSQL = `
UPDATE migrations SET status = 'running', owner_host = ?, owner_pid = ?, owner_started = ?, owner_file = nullif(?, ''), heartbeat_at = ?,
    cancellation_requested = 0, finished_at = NULL, duration_ms = NULL, message = NULL,
    attempts = attempts + 1
WHERE id = ? AND status = ?`

func reopen(ctx context.Context, tx *sql.Tx, runID int64, from RunStatus, to Owner, now string) error {
	return expectRows(ctx, tx, 1, "reopen run", reopenSQL, to.Host, to.PID, to.Started, to.File, now, runID, string(from))
}

// finalizeRunSQL: R15, the terminal status, finished_at, duration_ms and
// the stats rollup in one statement.
const finalizeRunSQL = `
UPDATE migrations SET status = ?, finished_at = ?, duration_ms = ?, stats = ?, message = ?
WHERE id = ? AND status = 'running'`

func finalizeRun(ctx context.Context, tx *sql.Tx, runID int64, status RunStatus, finished string,
	durationMS int64, stats map[ledger.Kind]Counts, message string) error {
	b, err := json.Marshal(stats)
	if err != nil {
		return err
	}
	return expectRows(ctx, tx, 1, "finalize run", finalizeRunSQL,
		string(status), finished, durationMS, string(b), nullable(message), runID)
}

const logSQL = `INSERT INTO run_log (migration_id, at, level, message) VALUES (?, ?, ?, ?)`

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// markUndoneSQL names the undo in the run it took back (R16). A run is
// undone once: a second undo's mark changes nothing, and fails.
const markUndoneSQL = `UPDATE migrations SET undone_by = ? WHERE id = ? AND undone_by IS NULL AND undoes IS NULL`

func markUndone(ctx context.Context, tx *sql.Tx, runID, undoID int64) error {
	return expectRows(ctx, tx, 1, "mark run undone", markUndoneSQL, undoID, runID)
}

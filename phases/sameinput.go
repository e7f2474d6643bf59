package phases

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"crmimport/ledger"
)

// An earlier task that read the same input (the same InputKey) for the
// same tenant and source, succeeded with no record skipped or failed (and
// none outdated or deleted in the source since: R17 revisits those), and
// began and ended while the ledger's epoch stood where it stands now, left
// every record of that input in a final slot that is still there. Reading
// the input again can only count each of them unchanged (R2): the
// importer counts them so without reading it (SameInput).

// SameInput is such a task.
type SameInput struct {
	Task, Run  int64
	Records    int64      // its records: imported (created or matched) or unchanged
	Checkpoint Checkpoint // where it ended: the end of the input
	// Excluded and Untaken are the rows it read that are not records of
	// its kind, and of those the rows no kind takes (Counts): the same
	// rows of the same input again.
	Excluded, Untaken int64
}

// sameInputSQL finds the latest such task. failed = 0 also rules out
// duplicates (a duplicate is a failure).
const sameInputSQL = `
SELECT t.id, t.migration_id, t.imported + t.unchanged, t.checkpoint, t.excluded, t.untaken
FROM migration_tasks t JOIN migrations m ON m.id = t.migration_id
WHERE m.tenant_id = ? AND m.source = ? AND t.kind = ? AND t.input_key = ? AND t.id <> ?
  AND t.status = 'succeeded' AND t.skipped = 0 AND t.failed = 0 AND t.outdated = 0 AND t.deleted_since = 0 AND t.ledger_epoch = ?
ORDER BY t.id DESC LIMIT 1`

// FindSameInput returns the latest earlier task that vouches for every
// record of task's input (see SameInput), read in q (the batch's
// transaction, so that the epoch cannot move before the batch commits).
// A task without an input key has none.
func FindSameInput(ctx context.Context, q queryer, run Run, task Task) (SameInput, bool, error) {
	if task.InputKey == "" {
		return SameInput{}, false, nil
	}
	epoch, err := ledger.Epoch(ctx, q, run.Tenant, run.Source)
	if err != nil {
		return SameInput{}, false, err
	}
	var s SameInput
	var cp string
	err = q.QueryRowContext(ctx, sameInputSQL, run.Tenant, run.Source, string(task.Kind), task.InputKey, task.ID, epoch).
		Scan(&s.Task, &s.Run, &s.Records, &cp, &s.Excluded, &s.Untaken)
	if errors.Is(err, sql.ErrNoRows) {
		return SameInput{}, false, nil
	}
	if err != nil {
		return SameInput{}, false, fmt.Errorf("look for a task that read the same %s: %w", task.Kind.Plural(), err)
	}
	if err := json.Unmarshal([]byte(cp), &s.Checkpoint); err != nil {
		return SameInput{}, false, fmt.Errorf("task %d: checkpoint %q: %w", s.Task, cp, err)
	}
	return s, true, nil
}

// An earlier task that read the same input whole and succeeded while the
// epoch stood where it stands now, but left some of its records failed or
// skipped, vouches for the others: each is still in its final slot (R2).
// A rerun need read again only the records it did not finalize (the
// importer's revisit). It must have been the only task of its kind in its
// run, so that the duplicates it found are the file's own (SPEC §4 step 2).

// ReadBefore is such a task.
type ReadBefore struct {
	Task, Run  int64
	Epoch      int64
	Counts     Counts     // its outcomes
	Checkpoint Checkpoint // where it ended: the end of the input
}

// readBeforeSQL finds the latest such task.
const readBeforeSQL = `
SELECT t.id, t.migration_id, t.ledger_epoch, t.imported, t.unchanged, t.skipped, t.failed, t.outdated, t.deleted_since, t.checkpoint
FROM migration_tasks t JOIN migrations m ON m.id = t.migration_id
WHERE m.tenant_id = ? AND m.source = ? AND t.kind = ? AND t.input_key = ? AND t.id <> ?
  AND t.status = 'succeeded' AND t.ledger_epoch = ?
  AND NOT EXISTS (SELECT 1 FROM migration_tasks o WHERE o.migration_id = t.migration_id AND o.kind = t.kind AND o.id <> t.id)
ORDER BY t.id DESC LIMIT 1`

// FindReadBefore returns the latest earlier task that read task's input
// whole (see ReadBefore), read in q.
func FindReadBefore(ctx context.Context, q queryer, run Run, task Task) (ReadBefore, bool, error) {
	if task.InputKey == "" {
		return ReadBefore{}, false, nil
	}
	epoch, err := ledger.Epoch(ctx, q, run.Tenant, run.Source)
	if err != nil {
		return ReadBefore{}, false, err
	}
	var s ReadBefore
	var cp string
	err = q.QueryRowContext(ctx, readBeforeSQL, run.Tenant, run.Source, string(task.Kind), task.InputKey, task.ID, epoch).
		Scan(&s.Task, &s.Run, &s.Epoch, &s.Counts.Imported, &s.Counts.Unchanged, &s.Counts.Skipped, &s.Counts.Failed,
			&s.Counts.Outdated, &s.Counts.DeletedSince, &cp)
	if errors.Is(err, sql.ErrNoRows) {
		return ReadBefore{}, false, nil
	}
	if err != nil {
		return ReadBefore{}, false, fmt.Errorf("look for a task that read the same %s: %w", task.Kind.Plural(), err)
	}
	if err := json.Unmarshal([]byte(cp), &s.Checkpoint); err != nil {
		return ReadBefore{}, false, fmt.Errorf("task %d: checkpoint %q: %w", s.Task, cp, err)
	}
	return s, true, nil
}

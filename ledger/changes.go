package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Changes at the source (R17, SPEC §11). A final slot's digest and hashes
// say what was last written for it; they change only by compare-and-sets
// on the digest they had (R2, R11): a slot without hashes adopting a
// record's, a matched slot's moving to what was read, an update's.

// SlotState is what a final slot says of its record: its action, row, and
// what was last written for it.
type SlotState struct {
	Action   Action
	RecordID int64
	Digest   int64
	Hashes   string
	Run      int64
}

const slotStateSQL = `
SELECT action, coalesce(record_id, 0), coalesce(digest, 0), coalesce(hashes, ''), coalesce(migration_id, 0)
FROM migration_records WHERE tenant_id = ? AND source = ? AND kind = ? AND source_id = ? AND action IN ('created', 'matched')`

// FinalSlot reads the final slot of k; found is false when there is none.
func FinalSlot(ctx context.Context, q Querier, k Key) (SlotState, bool, error) {
	rows, err := q.QueryContext(ctx, slotStateSQL, k.Tenant, k.Source, string(k.Kind), k.SourceID)
	if err != nil {
		return SlotState{}, false, fmt.Errorf("read the slot of %s: %w", k, err)
	}
	defer rows.Close()
	if !rows.Next() {
		return SlotState{}, false, rows.Err()
	}
	var s SlotState
	var action string
	if err := rows.Scan(&action, &s.RecordID, &s.Digest, &s.Hashes, &s.Run); err != nil {
		return SlotState{}, false, fmt.Errorf("read the slot of %s: %w", k, err)
	}
	s.Action = Action(action)
	return s, true, rows.Err()
}

const setHashesSQL = `
UPDATE migration_records SET digest = ?, hashes = ?
WHERE tenant_id = ? AND source = ? AND kind = ? AND source_id = ? AND action IN ('created', 'matched') AND coalesce(digest, 0) = ?`

// ErrSlotMoved is a compare-and-set on a slot's digest that changed no
// row: the slot is not what its reader saw (R11).
var ErrSlotMoved = errors.New("the slot changed since it was read")

// SetHashes gives the final slot of k the digest and hashes of what was
// last written for it, if its digest is still was (R11).
func (l *Ledger) SetHashes(ctx context.Context, k Key, was, digest int64, hashes string) error {
	s, err := l.stmt(ctx, setHashesSQL)
	if err != nil {
		return err
	}
	res, err := s.ExecContext(ctx, digest, hashes, k.Tenant, k.Source, string(k.Kind), k.SourceID, was)
	if err != nil {
		return fmt.Errorf("write the hashes of %s: %w", k, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("write the hashes of %s: %w", k, err)
	}
	if n != 1 {
		return fmt.Errorf("write the hashes of %s: %w (%d rows changed, expected 1)", k, ErrSlotMoved, n)
	}
	return nil
}

// Change is one record a run found changed at the source: a row of
// record_changes.
type Change struct {
	Run, Task  int64
	Kind       Kind
	SourceID   string
	File       string
	Line       int
	Change     string // outdated, conflict, deleted_since, updated, overwritten
	Applicable bool
	Fields     string // JSON array, or ""
	Edited     string // JSON array, or ""
	Before     string // JSON object, or ""
	After      string // JSON object, or ""
}

// The changes of record_changes.
const (
	ChangeOutdated     = "outdated"
	ChangeConflict     = "conflict"
	ChangeDeletedSince = "deleted_since"
	ChangeUpdated      = "updated"
	ChangeOverwritten  = "overwritten"
)

const recordChangeSQL = `
INSERT INTO record_changes (migration_id, task_id, kind, source_id, file, line, change, applicable, fields, edited, before, after)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// RecordChanges writes what a batch found changed at the source, in its
// transaction (R12).
func (l *Ledger) RecordChanges(ctx context.Context, cs []Change) error {
	if len(cs) == 0 {
		return nil
	}
	s, err := l.stmt(ctx, recordChangeSQL)
	if err != nil {
		return err
	}
	for _, c := range cs {
		applicable := 0
		if c.Applicable {
			applicable = 1
		}
		if _, err := s.ExecContext(ctx, c.Run, c.Task, string(c.Kind), c.SourceID, nullText(c.File), c.Line, c.Change, applicable,
			nullText(c.Fields), nullText(c.Edited), nullText(c.Before), nullText(c.After)); err != nil {
			return fmt.Errorf("keep the change of %s %s: %w", c.Kind, c.SourceID, err)
		}
	}
	return nil
}

// BeforeImage is an update's before-image (R17, R16): the row's values and
// the slot's hashes before the update, and the hashes it wrote.
type BeforeImage struct {
	Key
	RecordID     int64
	Run          int64
	Values       string // JSON object of the row's columns (target.EncodeState)
	BeforeDigest int64
	BeforeHashes string
	AfterDigest  int64
	AfterHashes  string
	Fields       string // JSON array of the fields the update changed
}

const beforeImageSQL = `
INSERT INTO record_updates (tenant_id, source, kind, source_id, record_id, migration_id, before_values, before_digest, before_hashes,
    after_digest, after_hashes, fields)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (tenant_id, source, kind, source_id, migration_id) DO NOTHING`

// Update writes an update of a final slot's row (R17) in one savepoint:
// the slot's hashes as a compare-and-set on its digest (R11), the
// before-image (kept once per slot and run: a resumed run that meets the
// record again keeps the first), then write (the row). Nothing of it stays
// when one fails.
func (l *Ledger) Update(ctx context.Context, b BeforeImage, write func(context.Context, *sql.Tx) error) error {
	if _, err := l.exec(ctx, `SAVEPOINT crmimport_record`); err != nil {
		return fmt.Errorf("savepoint %s: %w", b.Key, err)
	}
	err := l.SetHashes(ctx, b.Key, b.BeforeDigest, b.AfterDigest, b.AfterHashes)
	if err == nil {
		var s *sql.Stmt
		if s, err = l.stmt(ctx, beforeImageSQL); err == nil {
			_, err = s.ExecContext(ctx, b.Tenant, b.Source, string(b.Kind), b.SourceID, b.RecordID, b.Run, b.Values,
				nullInt(b.BeforeDigest), nullText(b.BeforeHashes), b.AfterDigest, b.AfterHashes, b.Fields)
		}
	}
	if err == nil {
		err = write(ctx, l.tx)
	}
	if err != nil {
		if _, rerr := l.exec(ctx, `ROLLBACK TO crmimport_record`); rerr != nil {
			return errors.Join(err, fmt.Errorf("roll back %s: %w", b.Key, rerr))
		}
		return errors.Join(err, l.release(ctx, b.Key))
	}
	return l.release(ctx, b.Key)
}

const forgetFieldLinkSQL = `
DELETE FROM pending_links WHERE tenant_id = ? AND source = ? AND kind = ? AND source_id = ? AND field = ?`

// RelinkFields remembers, for an update of k's row (R17), the link values
// of fields that the update changed: whatever was remembered of each field
// (waiting, or completed by a run, R6a) is forgotten — the value it names
// is no longer the record's — and ps, the changed values that did not
// resolve, are remembered in its place, by run. A link the update did not
// change stays as it was.
func (l *Ledger) RelinkFields(ctx context.Context, k Key, run int64, fields []string, ps []PendingLink) error {
	for _, f := range fields {
		s, err := l.stmt(ctx, forgetFieldLinkSQL)
		if err != nil {
			return err
		}
		if _, err := s.ExecContext(ctx, k.Tenant, k.Source, string(k.Kind), k.SourceID, f); err != nil {
			return fmt.Errorf("forget the link %s of %s: %w", f, k, err)
		}
	}
	return l.RememberLinks(ctx, run, ps)
}

package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"crmimport/store"
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

// finalSlotsAmong reads the final slots of one kind among some ids, as
// FinalSlot does one: the ids as one JSON array (finalsAmongSQL).
const (
	finalSlotsAmongSQL = `
SELECT source_id, action, coalesce(record_id, 0), coalesce(digest, 0), coalesce(hashes, ''), coalesce(migration_id, 0)
FROM migration_records WHERE tenant_id = ? AND source = ? AND kind = ? AND source_id IN (SELECT value FROM json_each(?))
  AND action IN ('created', 'matched')`
	finalSlotsAmongPG = `
SELECT source_id, action, coalesce(record_id, 0), coalesce(digest, 0), coalesce(hashes, ''), coalesce(migration_id, 0)
FROM migration_records WHERE tenant_id = ? AND source = ? AND kind = ? AND source_id IN (SELECT jsonb_array_elements_text(CAST(? AS jsonb)))
  AND action IN ('created', 'matched')`
)

// FinalSlots reads the final slots of kind among ids in one statement, by
// source id; an id with none is not in the map.
func FinalSlots(ctx context.Context, q Querier, d store.Dialect, tenant, source string, kind Kind, ids []string) (map[string]SlotState, error) {
	out := make(map[string]SlotState, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	b, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	var query string
	switch d {
	case store.SQLite:
		query = finalSlotsAmongSQL
	case store.Postgres:
		query = finalSlotsAmongPG
	default:
		panic(d.Untaught("ledger.FinalSlots"))
	}
	rows, err := q.QueryContext(ctx, query, tenant, source, string(kind), string(b))
	if err != nil {
		return nil, fmt.Errorf("read final %s slots: %w", kind, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, action string
		var s SlotState
		if err := rows.Scan(&id, &action, &s.RecordID, &s.Digest, &s.Hashes, &s.Run); err != nil {
			return nil, fmt.Errorf("read final %s slots: %w", kind, err)
		}
		s.Action = Action(action)
		out[id] = s
	}
	return out, rows.Err()
}

// ErrSlotMoved is a compare-and-set on a slot's digest that changed no
// row: the slot is not what its reader saw (R11).
var ErrSlotMoved = errors.New("the slot changed since it was read")

// HashSet is one slot's new digest and hashes, set if its digest is
// still Was (SetHashesMany).
type HashSet struct {
	SourceID    string
	Was, Digest int64
	Hashes      string
}

// setHashesManyHead, then a tuple per slot, then setHashesManyTail: the
// hashes of many slots of one kind in one statement. Each value is cast
// so that PostgreSQL knows the types of a VALUES list's parameters.
const (
	setHashesManyHead  = `WITH v (source_id, was, digest, hashes) AS (VALUES `
	setHashesManyTuple = `(CAST(? AS TEXT), CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS TEXT))`
	setHashesManyTail  = `)
UPDATE migration_records SET digest = v.digest, hashes = v.hashes FROM v
WHERE migration_records.tenant_id = ? AND migration_records.source = ? AND migration_records.kind = ?
  AND migration_records.source_id = v.source_id AND migration_records.action IN ('created', 'matched')
  AND coalesce(migration_records.digest, 0) = v.was`
)

// SetHashesMany gives final slots of kind (tenant's, from source) the
// digest and hashes of what was last written for them, many slots per
// statement, if each one's digest is still its Was (R11): else
// ErrSlotMoved, and the caller's savepoint takes back what the statements
// wrote.
func (l *Ledger) SetHashesMany(ctx context.Context, tenant, source string, kind Kind, sets []HashSet) error {
	return l.setHashes(ctx, tenant, source, kind, sets, setHashesRows(l.d))
}

// setHashesRows is how many slots one statement of SetHashesMany holds at
// most. On SQLite, 16: from 64 slots on, SQLite planned the join with the
// VALUES list as a scan of every slot of the kind, probing the list (it
// keeps no statistics to tell how many slots a kind has); a rerun in which
// half the records changed, whose chunks hold 64 or more updates, took
// 57 s against 16 s with statements of 16 (TestSetHashesFindsEachSlotByItsKey
// holds SQLite to the plan that finds each slot by its key). A statement
// per slot cost a rerun in which a tenth changed 10% more.
// PostgreSQL's planner counts: store.MaxStatementRows.
func setHashesRows(d store.Dialect) int {
	switch d {
	case store.SQLite:
		return 16
	case store.Postgres:
		return store.MaxStatementRows
	default:
		panic(d.Untaught("ledger.setHashesRows"))
	}
}

// setHashesSQL is the statement that sets the hashes of n slots.
func setHashesSQL(n int) string {
	return setHashesManyHead + strings.TrimSuffix(strings.Repeat(setHashesManyTuple+", ", n), ", ") + setHashesManyTail
}

// setHashes sets the hashes of sets, at most most slots a statement.
func (l *Ledger) setHashes(ctx context.Context, tenant, source string, kind Kind, sets []HashSet, most int) error {
	for start := 0; start < len(sets); {
		part := sets[start : start+store.StatementRows(min(most, len(sets)-start))]
		start += len(part)
		st, err := l.stmt(ctx, setHashesSQL(len(part)))
		if err != nil {
			return err
		}
		args := make([]any, 0, 4*len(part)+3)
		for _, h := range part {
			args = append(args, h.SourceID, h.Was, h.Digest, h.Hashes)
		}
		res, err := st.ExecContext(ctx, append(args, tenant, source, string(kind))...)
		if err != nil {
			return fmt.Errorf("write the hashes of %d %s: %w", len(part), kind.Plural(), err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("write the hashes of %d %s: %w", len(part), kind.Plural(), err)
		}
		if n != int64(len(part)) {
			return fmt.Errorf("write the hashes of %d %s (%s…): %w (%d rows changed, expected %d)",
				len(part), kind.Plural(), part[0].SourceID, ErrSlotMoved, n, len(part))
		}
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
	// ChangeRemovedEdited is an undo's (R16): a row it removed had been
	// edited by hand since it was written; the edit went with it.
	ChangeRemovedEdited = "removed_edited"
)

const recordChangeHead = `
INSERT INTO record_changes (migration_id, task_id, kind, source_id, file, line, change, applicable, fields, edited, before, after)
VALUES `

const recordChangeTuple = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// RecordChanges writes what a batch found changed at the source, in its
// transaction (R12), many per statement.
func (l *Ledger) RecordChanges(ctx context.Context, cs []Change) error {
	for start := 0; start < len(cs); {
		part := cs[start : start+store.StatementRows(min(store.MaxStatementRows, len(cs)-start))]
		start += len(part)
		s, err := l.stmt(ctx, recordChangeHead+strings.TrimSuffix(strings.Repeat(recordChangeTuple+", ", len(part)), ", "))
		if err != nil {
			return err
		}
		args := make([]any, 0, 12*len(part))
		for _, c := range part {
			applicable := 0
			if c.Applicable {
				applicable = 1
			}
			args = append(args, c.Run, c.Task, string(c.Kind), c.SourceID, nullText(c.File), c.Line, c.Change, applicable,
				nullText(c.Fields), nullText(c.Edited), nullText(c.Before), nullText(c.After))
		}
		if _, err := s.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("keep the changes of %s: %w", part[0].Kind.Plural(), err)
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

const beforeImageHead = `
INSERT INTO record_updates (tenant_id, source, kind, source_id, record_id, migration_id, before_values, before_digest, before_hashes,
    after_digest, after_hashes, fields)
VALUES `

const beforeImageTuple = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// beforeImageTail keeps the first before-image of a slot and run: the
// state before the run, whatever it wrote after.
const beforeImageTail = `
ON CONFLICT (tenant_id, source, kind, source_id, migration_id) DO NOTHING`

// Updated writes, for updates of final slots' rows (R17), the
// before-images, many per statement. The caller sets the slots' hashes
// (SetHashesMany) and writes the rows, and holds the savepoint that takes
// all of it back when one fails.
func (l *Ledger) Updated(ctx context.Context, bs []BeforeImage) error {
	for start := 0; start < len(bs); {
		part := bs[start : start+store.StatementRows(min(store.MaxStatementRows, len(bs)-start))]
		start += len(part)
		st, err := l.stmt(ctx, beforeImageHead+strings.TrimSuffix(strings.Repeat(beforeImageTuple+", ", len(part)), ", ")+beforeImageTail)
		if err != nil {
			return err
		}
		args := make([]any, 0, 12*len(part))
		for _, b := range part {
			args = append(args, b.Tenant, b.Source, string(b.Kind), b.SourceID, b.RecordID, b.Run, b.Values,
				nullInt(b.BeforeDigest), nullText(b.BeforeHashes), b.AfterDigest, b.AfterHashes, b.Fields)
		}
		if _, err := st.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("keep the before-images of %s: %w", part[0].Kind.Plural(), err)
		}
	}
	return nil
}

// Savepoint runs f in a savepoint of the Ledger's transaction, which
// takes back all f wrote when f fails (name: one of the caller's).
func (l *Ledger) Savepoint(ctx context.Context, name string, f func() error) error {
	if _, err := l.exec(ctx, "SAVEPOINT "+name); err != nil {
		return fmt.Errorf("savepoint: %w", err)
	}
	if err := f(); err != nil {
		if _, rerr := l.exec(ctx, "ROLLBACK TO "+name); rerr != nil {
			return errors.Join(err, fmt.Errorf("roll back: %w", rerr))
		}
		if _, rerr := l.exec(ctx, "RELEASE "+name); rerr != nil {
			return errors.Join(err, fmt.Errorf("release savepoint: %w", rerr))
		}
		return err
	}
	if _, err := l.exec(ctx, "RELEASE "+name); err != nil {
		return fmt.Errorf("release savepoint: %w", err)
	}
	return nil
}

// keepReplacedLinkSQL keeps what pending_links holds of one link field of
// a slot in replaced_links, by the run that replaces it (schema 16), and
// forgetFieldLinkSQL forgets it.
const (
	keepReplacedLinkSQL = `
INSERT INTO replaced_links (id, tenant_id, source, kind, source_id, record_id, field, kept, parent_kind, parent_source_id,
    migration_id, completed_by, replaced_by)
SELECT id, tenant_id, source, kind, source_id, record_id, field, kept, parent_kind, parent_source_id, migration_id, completed_by, ?
FROM pending_links WHERE tenant_id = ? AND source = ? AND kind = ? AND source_id = ? AND field = ?`
	forgetFieldLinkSQL = `
DELETE FROM pending_links WHERE tenant_id = ? AND source = ? AND kind = ? AND source_id = ? AND field = ?`
)

// RelinkFields remembers, for an update of k's row (R17), the link values
// of fields that the update changed: whatever was remembered of each field
// (waiting, or completed by a run, R6a) is forgotten — the value it names
// is no longer the record's — and ps, the changed values that did not
// resolve, are remembered in its place, by run. A link the update did not
// change stays as it was. What is forgotten is kept in replaced_links, by
// run, for run's undo to put back (R16).
func (l *Ledger) RelinkFields(ctx context.Context, k Key, run int64, fields []string, ps []PendingLink) error {
	for _, f := range fields {
		keep, err := l.stmt(ctx, keepReplacedLinkSQL)
		if err != nil {
			return err
		}
		if _, err := keep.ExecContext(ctx, run, k.Tenant, k.Source, string(k.Kind), k.SourceID, f); err != nil {
			return fmt.Errorf("keep the link %s of %s replaced: %w", f, k, err)
		}
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

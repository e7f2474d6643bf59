package undo

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/target"
)

// Options are an undo's options, as its run's row keeps them.
type Options struct {
	Undo    int64 `json:"undo"`
	Cascade bool  `json:"cascade"`
	// BatchSize is how many slots one batch takes back; 0 is BatchSize.
	// Kept with the run, so that a resume batches as the undo began.
	BatchSize int `json:"batch_size,omitempty"`
}

// BatchSize is how many slots one batch of an undo takes back.
const BatchSize = 1000

// batchSize is o's batch size.
func (o Options) batchSize() int {
	if o.BatchSize > 0 {
		return o.BatchSize
	}
	return BatchSize
}

// Phase is the phase of kind k in an undo: children first (SPEC §10).
func Phase(k ledger.Kind) int {
	switch k {
	case ledger.Activity, ledger.Email:
		return 1
	case ledger.Note:
		return 2
	case ledger.Deal:
		return 3
	case ledger.Contact:
		return 4
	default:
		return 5
	}
}

// Start plans the undo of run id and commits it (R10): the undo's run row,
// a task per kind it takes back, and every item, in one transaction, in
// which the plan is computed again and must come out the same. It returns
// the undo's run, which the engine then executes with Open.
func Start(ctx context.Context, e *phases.Engine, id int64, cascade bool) (phases.Run, *Plan, error) {
	return StartWith(ctx, e, Options{Undo: id, Cascade: cascade})
}

// StartWith is Start with all of an undo's options.
func StartWith(ctx context.Context, e *phases.Engine, o Options) (phases.Run, *Plan, error) {
	id, cascade := o.Undo, o.Cascade
	p, err := Build(ctx, e.DB, e, id, cascade)
	if err != nil {
		return phases.Run{}, nil, err
	}
	spec := phases.PlanSpec{Tenant: p.Run.Tenant, Source: p.Run.Source, Options: o,
		Undoes: id, Notices: p.Notices}
	for _, k := range target.ChildrenFirst() {
		if n := len(p.Items[k]); n > 0 {
			spec.Tasks = append(spec.Tasks, phases.TaskSpec{Kind: k, Phase: Phase(k), File: source(id), Size: int64(n)})
		}
	}
	if cascade && len(p.Dependents) > 0 {
		for _, d := range p.Dependents {
			spec.Notices = append(spec.Notices, "taken back too (--cascade): "+d.String())
		}
	}
	spec.Write = func(ctx context.Context, tx *sql.Tx, undoID int64) error {
		again, err := build(ctx, tx, e, id, cascade, undoID)
		if err != nil {
			return err
		}
		if !sameItems(p, again) {
			return &RefusedError{Msg: fmt.Sprintf("the ledger of tenant %s changed while the undo of run %d was planned: nothing was written; run the undo again",
				p.Run.Tenant, id)}
		}
		return insertItems(ctx, tx, undoID, p)
	}
	run, err := e.Plan(ctx, spec)
	return run, p, err
}

// source is what an undo's tasks name as their input.
func source(id int64) string { return fmt.Sprintf("run %d", id) }

func sameItems(a, b *Plan) bool {
	if len(a.Items) != len(b.Items) {
		return false
	}
	for k, items := range a.Items {
		other := b.Items[k]
		if len(items) != len(other) {
			return false
		}
		for i := range items {
			if items[i] != other[i] {
				return false
			}
		}
	}
	return true
}

const insertItemHead = `INSERT INTO undo_items (undo_id, kind, seq, source, source_id, owner, action, record_id, delete_row) VALUES `

func insertItems(ctx context.Context, tx *sql.Tx, undoID int64, p *Plan) error {
	const chunk = 100
	for k, items := range p.Items {
		for start := 0; start < len(items); start += chunk {
			part := items[start:min(start+chunk, len(items))]
			args := make([]any, 0, 9*len(part))
			for i, it := range part {
				del := 0
				if it.DeleteRow {
					del = 1
				}
				args = append(args, undoID, string(k), start+i+1, it.Source, it.SourceID, it.Owner, string(it.Action), nullID(it.RecordID), del)
			}
			q := insertItemHead + strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?, ?, ?), ", len(part)), ", ")
			if _, err := tx.ExecContext(ctx, q, args...); err != nil {
				return fmt.Errorf("plan the undo: write its %s: %w", k.Plural(), err)
			}
		}
	}
	return nil
}

func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// OptionsOf reads an undo's options from its run; ok is false for a run
// that is not an undo.
func OptionsOf(run phases.Run) (Options, bool, error) {
	if run.Undoes == 0 {
		return Options{}, false, nil
	}
	var o Options
	if err := json.Unmarshal(run.Options, &o); err != nil {
		return Options{}, true, fmt.Errorf("run %d: undo options: %w", run.ID, err)
	}
	return o, true, nil
}

const itemsSQL = `
SELECT seq, source, source_id, owner, action, coalesce(record_id, 0), delete_row
FROM undo_items WHERE undo_id = ? AND kind = ? AND seq > ? ORDER BY seq LIMIT ?`

const countItemsSQL = `SELECT count(*) FROM undo_items WHERE undo_id = ? AND kind = ?`

// Open is the undo's phases.OpenFunc: a task takes its kind's items back,
// a batch at a time from its checkpoint (its rows are the items done).
func Open(db *sql.DB) phases.OpenFunc {
	return func(ctx context.Context, run phases.Run, t phases.Task) (*phases.Work, error) {
		o, _, err := OptionsOf(run)
		if err != nil {
			return nil, err
		}
		size := o.batchSize()
		var total int64
		if err := db.QueryRowContext(ctx, countItemsSQL, run.ID, string(t.Kind)).Scan(&total); err != nil {
			return nil, fmt.Errorf("read the undo's %s: %w", t.Kind.Plural(), err)
		}
		done := t.Checkpoint.Rows
		next := func(ctx context.Context, tx *sql.Tx) (phases.Batch, error) {
			items, last, err := readItems(ctx, tx, run.ID, t.Kind, done, size)
			if err != nil {
				return phases.Batch{}, err
			}
			var c phases.Counts
			if err := takeBack(ctx, tx, run.Tenant, t.Kind, items, &c); err != nil {
				return phases.Batch{}, err
			}
			if len(items) > 0 {
				done = last
			}
			return phases.Batch{Checkpoint: phases.Checkpoint{Rows: done, Line: done}, Read: done, Counts: c,
				Done: len(items) < size || done >= total}, nil
		}
		return &phases.Work{Size: total, Next: next, Close: func() error { return nil }}, nil
	}
}

func readItems(ctx context.Context, tx *sql.Tx, undoID int64, k ledger.Kind, after int64, size int) ([]Item, int64, error) {
	rows, err := tx.QueryContext(ctx, itemsSQL, undoID, string(k), after, size)
	if err != nil {
		return nil, 0, fmt.Errorf("read the undo's %s: %w", k.Plural(), err)
	}
	defer rows.Close()
	var items []Item
	var last int64
	for rows.Next() {
		it := Item{Kind: k}
		var action string
		var del int
		if err := rows.Scan(&last, &it.Source, &it.SourceID, &it.Owner, &action, &it.RecordID, &del); err != nil {
			return nil, 0, fmt.Errorf("read the undo's %s: %w", k.Plural(), err)
		}
		it.Action, it.DeleteRow = ledger.Action(action), del == 1
		items = append(items, it)
	}
	return items, last, rows.Err()
}

const (
	imageSQL = `
SELECT b.taken_by, coalesce(m.undone_by, 0) <> 0
FROM slot_before b LEFT JOIN migrations m ON m.id = b.migration_id
WHERE b.tenant_id = ? AND b.source = ? AND b.kind = ? AND b.source_id = ?`

	// restoreSQL gives a slot its before-image back: the skip it was, its
	// owner, reason, detail and time (R16).
	restoreSQL = `
UPDATE migration_records SET
    (migration_id, record_type, record_id, action, reason, detail, created_at) =
    (SELECT b.migration_id, NULL, NULL, 'skipped', b.reason, b.detail, b.created_at FROM slot_before b
     WHERE b.tenant_id = ?1 AND b.source = ?2 AND b.kind = ?3 AND b.source_id = ?4)
WHERE tenant_id = ?1 AND source = ?2 AND kind = ?3 AND source_id = ?4 AND migration_id = ?5 AND action = ?6`

	deleteSlotSQL = `
DELETE FROM migration_records
WHERE tenant_id = ? AND source = ? AND kind = ? AND source_id = ? AND migration_id = ? AND action = ?`

	deleteImageSQL = `DELETE FROM slot_before WHERE tenant_id = ? AND source = ? AND kind = ? AND source_id = ?`
)

// ChangedError is a slot that is not what the undo's plan found: it is
// left alone, and the undo's task fails.
type ChangedError struct {
	Item Item
}

func (e *ChangedError) Error() string {
	return fmt.Sprintf("%s slot %s (source %s) is no longer %s by run %d as the undo found it when it was planned: it is left alone",
		e.Item.Kind, e.Item.SourceID, e.Item.Source, e.Item.Action, e.Item.Owner)
}

// takeBack takes items back inside tx: the rows that go, then each slot —
// given its before-image back, or deleted — and counts them.
func takeBack(ctx context.Context, tx *sql.Tx, tenant string, k ledger.Kind, items []Item, c *phases.Counts) error {
	var ids []int64
	for _, it := range items {
		if it.DeleteRow {
			ids = append(ids, it.RecordID)
		}
	}
	if _, err := target.Delete(ctx, tx, k, tenant, ids); err != nil {
		return err
	}
	for _, it := range items {
		var im image
		err := tx.QueryRowContext(ctx, imageSQL, tenant, it.Source, string(k), it.SourceID).Scan(&im.takenBy, &im.ownerGone)
		found := err == nil
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("read the before-image of %s %s: %w", k, it.SourceID, err)
		}
		stmt := deleteSlotSQL
		if restores(it, im, found) {
			stmt = restoreSQL
		}
		if err := expectOne(ctx, tx, it, stmt, tenant, it.Source, string(k), it.SourceID, it.Owner, string(it.Action)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, deleteImageSQL, tenant, it.Source, string(k), it.SourceID); err != nil {
			return fmt.Errorf("delete the before-image of %s %s: %w", k, it.SourceID, err)
		}
		tally(c, it, image{takenBy: im.takenBy, ownerGone: im.ownerGone})
	}
	return nil
}

// expectOne runs a statement on one slot that must change exactly that
// slot (R11): anything else is a slot changed since the plan.
func expectOne(ctx context.Context, tx *sql.Tx, it Item, query string, args ...any) error {
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("take back %s %s: %w", it.Kind, it.SourceID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("take back %s %s: %w", it.Kind, it.SourceID, err)
	}
	if n != 1 {
		return &ChangedError{Item: it}
	}
	return nil
}

package undo

import (
	"context"
	"database/sql"
	"encoding/json"
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
// a task per kind it takes back, and every item, in one transaction. It
// returns the undo's run, which the engine then executes with Open.
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
	p.batchSize = o.BatchSize
	run, err := p.Start(ctx, e)
	return run, p, err
}

// Start commits the undo that p plans, as Start does, if nothing was
// written to the tenant since p was built; else it refuses, and nothing is
// written: what the undo takes back is what its plan showed.
func (p *Plan) Start(ctx context.Context, e *phases.Engine) (phases.Run, error) {
	id, cascade := p.Run.ID, p.Cascade
	spec := phases.PlanSpec{Tenant: p.Run.Tenant, Source: p.Run.Source,
		Options: Options{Undo: id, Cascade: cascade, BatchSize: p.batchSize},
		Undoes:  id, Notices: p.Notices}
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
		// The plan stands if no run of the tenant wrote since it was read
		// (the tenant's runs and epochs are as they were), and R16 still
		// allows the undo.
		if err := refuse(ctx, tx, e, p.Run, undoID); err != nil {
			return err
		}
		now, err := tenantMark(ctx, tx, p.Run.Tenant, undoID)
		if err != nil {
			return err
		}
		if now != p.mark {
			return &RefusedError{Msg: fmt.Sprintf("the ledger of tenant %s changed while the undo of run %d was planned: nothing was written; run the undo again",
				p.Run.Tenant, id)}
		}
		return insertItems(ctx, tx, undoID, p)
	}
	return e.Plan(ctx, spec)
}

// source is what an undo's tasks name as their input.
func source(id int64) string { return fmt.Sprintf("run %d", id) }

// tenantMarkSQL is what moves whenever anything writes to the tenant's
// ledger (but the undo being planned, self): a run planned or loaded (ids), a batch committed (heartbeats), a
// run finalized or resumed, a final slot removed or changed (epochs).
const tenantMarkSQL = `
SELECT (SELECT count(*) || '/' || coalesce(max(id), 0) || '/' || coalesce(max(heartbeat_at), '') || '/' ||
            coalesce(max(finished_at), '') || '/' || coalesce(sum(attempts), 0) || '/' || coalesce(max(status), '')
        FROM migrations WHERE tenant_id = ?1 AND id <> ?2) || '/' ||
       coalesce((SELECT group_concat(source || '=' || n) FROM ledger_epochs WHERE tenant_id = ?1), '')`

func tenantMark(ctx context.Context, q Querier, tenant string, self int64) (string, error) {
	var m string
	if err := q.QueryRowContext(ctx, tenantMarkSQL, tenant, self).Scan(&m); err != nil {
		return "", fmt.Errorf("read the state of tenant %s: %w", tenant, err)
	}
	return m, nil
}

const insertItemHead = `INSERT INTO undo_items (undo_id, kind, seq, source, source_id, owner, action, record_id, delete_row) VALUES `

func insertItems(ctx context.Context, tx *sql.Tx, undoID int64, p *Plan) error {
	const chunk = 100
	full, err := tx.PrepareContext(ctx, insertItemHead+strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?, ?, ?), ", chunk), ", "))
	if err != nil {
		return fmt.Errorf("plan the undo: %w", err)
	}
	defer full.Close()
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
			var err error
			if len(part) == chunk {
				_, err = full.ExecContext(ctx, args...)
			} else {
				_, err = tx.ExecContext(ctx, insertItemHead+strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?, ?, ?), ", len(part)), ", "), args...)
			}
			if err != nil {
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
	// imagesSQL reads the before-images of a chunk of slots of one source:
	// who took each over, and whether the image's own owner was undone.
	imagesSQL = `
SELECT b.source_id, b.taken_by, coalesce(m.undone_by, 0) <> 0
FROM slot_before b LEFT JOIN migrations m ON m.id = b.migration_id
WHERE b.tenant_id = ? AND b.source = ? AND b.kind = ? AND b.source_id IN (%s)`

	// restoreSQL gives a slot its before-image back: the skip it was, its
	// owner, reason, detail and time (R16).
	restoreSQL = `
UPDATE migration_records SET
    (migration_id, record_type, record_id, action, reason, detail, created_at) =
    (SELECT b.migration_id, NULL, NULL, 'skipped', b.reason, b.detail, b.created_at FROM slot_before b
     WHERE b.tenant_id = ?1 AND b.source = ?2 AND b.kind = ?3 AND b.source_id = ?4)
WHERE tenant_id = ?1 AND source = ?2 AND kind = ?3 AND source_id = ?4 AND migration_id = ?5 AND action = ?6`

	// deleteSlotsSQL deletes a chunk of slots of one source, owner and
	// action.
	deleteSlotsSQL = `
DELETE FROM migration_records
WHERE tenant_id = ? AND source = ? AND kind = ? AND migration_id = ? AND action = ? AND source_id IN (%s)`

	deleteImagesSQL = `DELETE FROM slot_before WHERE tenant_id = ? AND source = ? AND kind = ? AND source_id IN (%s)`
)

// chunk is how many slots one statement names.
const chunk = 250

func placeholders(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }

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
// given its before-image back, or deleted, many per statement — and counts
// them. A statement that changes fewer slots than it names means a slot
// changed since the plan: the items are then taken one by one, to name it.
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
	images, err := readImages(ctx, tx, tenant, k, items)
	if err != nil {
		return err
	}
	// Slots to delete, by source, owner and action; slots to restore.
	type group struct {
		source string
		owner  int64
		action ledger.Action
	}
	del := map[group][]Item{}
	var order []group
	var restore []Item
	for _, it := range items {
		im, found := images[imageKey{it.Source, k, it.SourceID}]
		if restores(it, im, found) {
			restore = append(restore, it)
		} else {
			g := group{it.Source, it.Owner, it.Action}
			if del[g] == nil {
				order = append(order, g)
			}
			del[g] = append(del[g], it)
		}
		tally(c, it, im)
	}
	if len(restore) > 0 {
		st, err := tx.PrepareContext(ctx, restoreSQL)
		if err != nil {
			return fmt.Errorf("take back %s slots: %w", k, err)
		}
		defer st.Close()
		for _, it := range restore {
			if err := expectOne(ctx, it, st, tenant, it.Source, string(k), it.SourceID, it.Owner, string(it.Action)); err != nil {
				return err
			}
		}
	}
	for _, g := range order {
		group := del[g]
		for start := 0; start < len(group); start += chunk {
			part := group[start:min(start+chunk, len(group))]
			args := []any{tenant, g.source, string(k), g.owner, string(g.action)}
			for _, it := range part {
				args = append(args, it.SourceID)
			}
			// In a savepoint: a statement that changed fewer slots than it
			// named is taken back before its slots are looked at one by one.
			if _, err := tx.ExecContext(ctx, `SAVEPOINT crmimport_undo`); err != nil {
				return fmt.Errorf("take back %s slots: %w", k, err)
			}
			res, err := tx.ExecContext(ctx, fmt.Sprintf(deleteSlotsSQL, placeholders(len(part))), args...)
			if err != nil {
				return fmt.Errorf("take back %s slots: %w", k, err)
			}
			if n, err := res.RowsAffected(); err != nil || n != int64(len(part)) {
				if _, rerr := tx.ExecContext(ctx, `ROLLBACK TO crmimport_undo`); rerr != nil {
					return fmt.Errorf("take back %s slots: %w", k, rerr)
				}
				return changed(ctx, tx, tenant, k, part, err)
			}
			if _, err := tx.ExecContext(ctx, `RELEASE crmimport_undo`); err != nil {
				return fmt.Errorf("take back %s slots: %w", k, err)
			}
		}
	}
	// The images given back, and any older image of a slot that goes.
	bySource := map[string][]string{}
	for key := range images {
		bySource[key.source] = append(bySource[key.source], key.sourceID)
	}
	err = eachChunk(tenant, k, bySource, func(_ string, args []any) error {
		_, err := tx.ExecContext(ctx, fmt.Sprintf(deleteImagesSQL, placeholders(len(args)-3)), args...)
		return err
	})
	if err != nil {
		return fmt.Errorf("delete the before-images of %s slots: %w", k, err)
	}
	return nil
}

// readImages reads the before-images of the items' slots.
func readImages(ctx context.Context, tx *sql.Tx, tenant string, k ledger.Kind, items []Item) (map[imageKey]image, error) {
	bySource := map[string][]string{}
	for _, it := range items {
		bySource[it.Source] = append(bySource[it.Source], it.SourceID)
	}
	out := map[imageKey]image{}
	err := eachChunk(tenant, k, bySource, func(source string, args []any) error {
		rows, err := tx.QueryContext(ctx, fmt.Sprintf(imagesSQL, placeholders(len(args)-3)), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var sid string
			var im image
			if err := rows.Scan(&sid, &im.takenBy, &im.ownerGone); err != nil {
				return err
			}
			out[imageKey{source, k, sid}] = im
		}
		return rows.Close()
	})
	if err != nil {
		return nil, fmt.Errorf("read the before-images of %s slots: %w", k, err)
	}
	return out, nil
}

// eachChunk calls f per source and chunk of its source ids, with the
// arguments of a statement on them: tenant, source, kind, then the ids.
func eachChunk(tenant string, k ledger.Kind, bySource map[string][]string, f func(source string, args []any) error) error {
	for source, sids := range bySource {
		for start := 0; start < len(sids); start += chunk {
			part := sids[start:min(start+chunk, len(sids))]
			args := []any{tenant, source, string(k)}
			for _, id := range part {
				args = append(args, id)
			}
			if err := f(source, args); err != nil {
				return err
			}
		}
	}
	return nil
}

// changed names the first of items whose slot is not as the plan found it
// (the statement that named them all changed fewer): the batch rolls back.
func changed(ctx context.Context, tx *sql.Tx, tenant string, k ledger.Kind, items []Item, cause error) error {
	if cause != nil {
		return fmt.Errorf("take back %s slots: %w", k, cause)
	}
	for _, it := range items {
		var n int
		err := tx.QueryRowContext(ctx, `SELECT count(*) FROM migration_records
WHERE tenant_id = ? AND source = ? AND kind = ? AND source_id = ? AND migration_id = ? AND action = ?`,
			tenant, it.Source, string(k), it.SourceID, it.Owner, string(it.Action)).Scan(&n)
		if err != nil {
			return fmt.Errorf("take back %s slots: %w", k, err)
		}
		if n == 0 {
			return &ChangedError{Item: it}
		}
	}
	return &ChangedError{Item: items[0]}
}

// expectOne runs a statement on one slot that must change exactly that
// slot (R11): anything else is a slot changed since the plan.
func expectOne(ctx context.Context, it Item, st *sql.Stmt, args ...any) error {
	res, err := st.ExecContext(ctx, args...)
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

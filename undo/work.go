package undo

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store"
	"crmimport/target"
)

// Options are an undo's options, as its run's row keeps them.
type Options struct {
	Undo    int64 `json:"undo"`
	Cascade bool  `json:"cascade"`
	// BatchSize is how many slots one batch takes back; 0 is BatchSize.
	// Kept with the run, so that a resume batches as the undo began.
	BatchSize int `json:"batch_size,omitempty"`
	// Taken is, under cascade, how many records of each other run and kind
	// the plan takes back (TakenBack marks those runs with it).
	Taken []Taken `json:"taken,omitempty"`
	// Plan is the digest of the plan the undo commits: to StartWith, the
	// one a preview showed (Plan.Digest), which the plan must still have
	// (R16: a preview and its commit are the same plan); kept with the
	// undo's run as the plan it committed.
	Plan string `json:"plan,omitempty"`
	// Shown are the parts of the plan the preview showed, when the caller
	// has them (the page sends them back): a refusal then names what
	// changed. Not kept.
	Shown []PlanPart `json:"-"`
}

// BatchSize is how many slots one batch of an undo takes back: as many as
// a run's batch holds records (importer.DefaultBatchSize). At scale 1 an
// undo of 294,075 slots took 13.3-13.5 s in batches of 5,000 and 12.5-13.0 s
// in batches of 10,000 (12.2-12.7 s in 20,000, holding the write lock twice
// as long between two chances for a stop or another process).
const BatchSize = 10000

// batchSize is o's batch size.
func (o Options) batchSize() int {
	if o.BatchSize > 0 {
		return o.BatchSize
	}
	return BatchSize
}

// Phase is the phase of kind k in an undo: children first (SPEC §10), the
// plan's phases walked back (canon.UndoPhase). A kind that has no row
// panics naming it.
func Phase(k ledger.Kind) int { return canon.UndoPhase(k) }

// taskSpecs are the tasks of an undo that takes back counts from file: a
// task per kind of table t that it takes back records of, in the kind's
// phase of an undo (t.UndoPhase), children first (SPEC §10, R16).
func taskSpecs(t canon.Table, counts map[ledger.Kind]phases.Counts, file string) []phases.TaskSpec {
	var out []phases.TaskSpec
	for _, k := range t.ChildrenFirst() {
		if n := counts[k].TakenBack() + counts[k].Reverted; n > 0 {
			out = append(out, phases.TaskSpec{Kind: k, Phase: t.UndoPhase(k), File: file, Size: n})
		}
	}
	return out
}

// Start plans the undo of run id and commits it (R10): the undo's run row,
// a task per kind it takes back, and every item, in one transaction. It
// returns the undo's run, which the engine then executes with Open.
func Start(ctx context.Context, e *phases.Engine, id int64, cascade bool) (phases.Run, *Plan, error) {
	return StartWith(ctx, e, Options{Undo: id, Cascade: cascade})
}

// StartWith is Start with all of an undo's options. With o.Plan, the plan
// must be the one whose digest a preview showed: one that changed since is
// refused (*PlanChangedError), and nothing is written. The plan is walked
// once, in the transaction that writes it: refused, it leaves nothing.
func StartWith(ctx context.Context, e *phases.Engine, o Options) (phases.Run, *Plan, error) {
	run, err := phases.LoadRun(ctx, e.DB, o.Undo)
	if err != nil {
		return phases.Run{}, nil, err
	}
	// What R16 refuses of the run itself is said before any admission of
	// the undo (the walk says it again, in its transaction).
	if err := refuse(ctx, e.DB, e, run, 0); err != nil {
		return phases.Run{}, nil, err
	}
	if err := walkFirst(ctx, e, o); err != nil {
		return phases.Run{}, nil, err
	}
	var p *Plan
	spec := phases.PlanSpec{Tenant: run.Tenant, Source: run.Source, Undoes: o.Undo,
		Walk: func(ctx context.Context, tx *sql.Tx, undoID int64) (phases.Walked, error) {
			now, err := walkInto(ctx, tx, e, o, undoID)
			p = now
			if err != nil {
				return phases.Walked{}, err
			}
			return now.walked(o.BatchSize), nil
		}}
	started, err := e.Plan(ctx, spec)
	if err != nil {
		return phases.Run{}, nil, err
	}
	p.batchSize = o.BatchSize
	return started, p, nil
}

// Start commits the undo that p plans, as Start does, if its plan is
// still p — the items it writes, walked again in the transaction that
// writes them, have p's digest; else it refuses (*PlanChangedError), and
// nothing is written: what the undo takes back is what its plan showed.
func (p *Plan) Start(ctx context.Context, e *phases.Engine) (phases.Run, error) {
	run, _, err := StartWith(ctx, e, Options{Undo: p.Run.ID, Cascade: p.Cascade, BatchSize: p.batchSize, Plan: p.Digest, Shown: p.Parts})
	return run, err
}

// walkFirst refuses, before the undo takes its run's id, what its walk
// would refuse — dependents without cascade, nothing to take back, a plan
// that is not the preview's — where a refused plan would burn an id: on
// PostgreSQL, whose sequences a rollback does not take back, a refused
// undo left a gap in the runs' numbers. It walks the tenant a second time.
// On SQLite, a rolled-back run row gives its id back, and the walk in the
// plan's transaction is the only one (a sixth of an undo's time).
func walkFirst(ctx context.Context, e *phases.Engine, o Options) error {
	switch d := store.DialectOf(e.DB); d {
	case store.SQLite:
		return nil
	case store.Postgres:
		p, err := Build(ctx, e.DB, e, o.Undo, o.Cascade)
		if o.Plan != "" && p != nil && p.Digest != o.Plan {
			return &PlanChangedError{Run: o.Undo, Cascade: o.Cascade, Want: o.Plan, Was: o.Shown, Now: p}
		}
		return err
	default:
		panic(d.Untaught("undo.walkFirst"))
	}
}

// walkInto walks the undo o plans within tx, the transaction that plans
// undo undoID, and writes its items as the walk yields them. With o.Plan,
// a plan whose digest is another is refused (*PlanChangedError) before any
// other refusal: what changed since the preview is what the caller needs
// to hear.
func walkInto(ctx context.Context, tx *sql.Tx, e *phases.Engine, o Options, undoID int64) (*Plan, error) {
	items, err := newItemWriter(ctx, tx, undoID)
	if err != nil {
		return nil, err
	}
	defer items.close()
	now, err := build(ctx, tx, e, o.Undo, o.Cascade, undoID, slotsPage, func(it walked) error { return items.add(ctx, it) })
	if o.Plan != "" && now != nil && now.Digest != o.Plan {
		return now, &PlanChangedError{Run: o.Undo, Cascade: o.Cascade, Want: o.Plan, Was: o.Shown, Now: now}
	}
	if err != nil {
		return now, err
	}
	return now, items.flush(ctx)
}

// walked is what the walk of p found out that its run keeps: a task per
// kind it takes back, its options (with the digest of the plan it
// commits) and its notices.
func (p *Plan) walked(batchSize int) phases.Walked {
	w := phases.Walked{
		Tasks:   taskSpecs(canon.KindTable(), p.Counts, source(p.Run.ID)),
		Options: Options{Undo: p.Run.ID, Cascade: p.Cascade, BatchSize: batchSize, Plan: p.Digest, Taken: p.taken},
		Notices: p.Notices,
	}
	if p.Cascade {
		for _, d := range p.Dependents {
			w.Notices = append(w.Notices, "taken back too (--cascade): "+d.String())
		}
	}
	return w
}

// source is what an undo's tasks name as their input.
func source(id int64) string { return fmt.Sprintf("run %d", id) }

const insertItemHead = `INSERT INTO undo_items (undo_id, kind, seq, source, source_id, owner, action, record_id, delete_row) VALUES `

// itemWriter writes an undo's items as its plan's walk yields them: per
// kind numbered in the walk's order (seq, which the undo's batches follow
// from their checkpoint), a statement of store.MaxStatementRows rows at a
// time, so that no more than that many items per kind are held.
type itemWriter struct {
	tx      *sql.Tx
	undo    int64
	full    *sql.Stmt
	seq     map[ledger.Kind]int64
	pending map[ledger.Kind][]walked
}

func newItemWriter(ctx context.Context, tx *sql.Tx, undo int64) (*itemWriter, error) {
	full, err := tx.PrepareContext(ctx, insertItemHead+strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?, ?, ?), ", store.MaxStatementRows), ", "))
	if err != nil {
		return nil, fmt.Errorf("plan the undo: %w", err)
	}
	return &itemWriter{tx: tx, undo: undo, full: full, seq: map[ledger.Kind]int64{}, pending: map[ledger.Kind][]walked{}}, nil
}

func (w *itemWriter) close() { w.full.Close() }

// add takes the next item of its kind.
func (w *itemWriter) add(ctx context.Context, it walked) error {
	w.pending[it.Kind] = append(w.pending[it.Kind], it)
	if len(w.pending[it.Kind]) < store.MaxStatementRows {
		return nil
	}
	return w.write(ctx, it.Kind)
}

// flush writes what is left of every kind.
func (w *itemWriter) flush(ctx context.Context) error {
	for _, k := range canon.Kinds() {
		if err := w.write(ctx, k); err != nil {
			return err
		}
	}
	return nil
}

func (w *itemWriter) write(ctx context.Context, k ledger.Kind) error {
	part := w.pending[k]
	if len(part) == 0 {
		return nil
	}
	args := make([]any, 0, 9*len(part))
	for _, it := range part {
		w.seq[k]++
		del := 0
		if it.DeleteRow {
			del = 1
		}
		args = append(args, w.undo, string(k), w.seq[k], it.Source, it.SourceID, it.Owner, string(it.Action), nullID(it.RecordID), del)
	}
	var err error
	if len(part) == store.MaxStatementRows {
		_, err = w.full.ExecContext(ctx, args...)
	} else {
		_, err = w.tx.ExecContext(ctx, insertItemHead+strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?, ?, ?), ", len(part)), ", "), args...)
	}
	if err != nil {
		return fmt.Errorf("plan the undo: write its %s: %w", k.Plural(), err)
	}
	w.pending[k] = part[:0]
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
		// The task's first batch takes back the kind's updates (updates.go).
		first := done == 0
		d := store.DialectOf(db)
		next := func(ctx context.Context, tx *sql.Tx) (phases.Batch, error) {
			items, last, err := readItems(ctx, tx, run.ID, t.Kind, done, size)
			if err != nil {
				return phases.Batch{}, err
			}
			var c phases.Counts
			b := batch{dialect: d, task: t.ID, undo: run.ID, undoes: run.Undoes, tenant: run.Tenant, kind: t.Kind, after: done, last: last, items: items}
			if err := emptyLinks(ctx, tx, run.Tenant, run.Undoes, run.ID); err != nil {
				return phases.Batch{}, err
			}
			if first {
				if err := revertUpdates(ctx, tx, d, run, o.Cascade, t, &c); err != nil {
					return phases.Batch{}, err
				}
			}
			if err := takeBack(ctx, tx, b, &c); err != nil {
				return phases.Batch{}, err
			}
			first = false
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
	// batchRowsSQL lists the target rows of a batch's created slots that go
	// with them (delete_row): the batch's items are those of its kind after
	// the task's checkpoint, up to the batch's last (seq after … up to last).
	batchRowsSQL = `
SELECT record_id FROM undo_items
WHERE undo_id = ? AND kind = ? AND seq > ? AND seq <= ? AND delete_row = 1`

	// batchImagesSQL reads the before-images of a batch's slots: who took
	// each over, and whether the image's own owner is undone — undone
	// since, or the very run this undo takes back (?6), whose skips a
	// dependent's record took over under --cascade (SPEC §10: never
	// restored).
	batchImagesSQL = `
SELECT b.source, b.source_id, b.taken_by, coalesce(m.undone_by, 0) <> 0 OR coalesce(b.migration_id, 0) = ?6
FROM undo_items u
JOIN slot_before b ON b.tenant_id = ?1 AND b.source = u.source AND b.kind = u.kind AND b.source_id = u.source_id
LEFT JOIN migrations m ON m.id = b.migration_id
WHERE u.undo_id = ?2 AND u.kind = ?3 AND u.seq > ?4 AND u.seq <= ?5`

	// restoreSQL gives a slot its before-image back: the skip it was, its
	// owner, reason, detail and time (R16). What every skip has (no row, the
	// action) is set outside the image's subquery, where each column types
	// its NULL (PostgreSQL types a NULL of a subquery as text).
	restoreSQL = `
UPDATE migration_records SET
    record_type = NULL, record_id = NULL, action = 'skipped', digest = NULL, hashes = NULL,
    (migration_id, reason, detail, created_at) =
    (SELECT b.migration_id, b.reason, b.detail, b.created_at FROM slot_before b
     WHERE b.tenant_id = ?1 AND b.source = ?2 AND b.kind = ?3 AND b.source_id = ?4)
WHERE tenant_id = ?1 AND source = ?2 AND kind = ?3 AND source_id = ?4 AND migration_id = ?5 AND action = ?6`

	// batchSlotsSQL deletes the batch's slots that are still as the plan
	// found them — the owner and action of their item — in one statement;
	// a slot given its before-image back just before no longer is (its
	// owner is the image's). Its count is the guard: fewer than the items
	// it should delete means a slot changed since the plan.
	batchSlotsSQL = `
DELETE FROM migration_records
WHERE tenant_id = ?1 AND (source, kind, source_id, migration_id, action) IN (
    SELECT source, kind, source_id, owner, action FROM undo_items
    WHERE undo_id = ?2 AND kind = ?3 AND seq > ?4 AND seq <= ?5)`

	// batchImagesGoneSQL deletes the before-images of the batch's slots:
	// those given back, and any older image of a slot that goes.
	batchImagesGoneSQL = `
DELETE FROM slot_before
WHERE tenant_id = ?1 AND (source, kind, source_id) IN (
    SELECT source, kind, source_id FROM undo_items
    WHERE undo_id = ?2 AND kind = ?3 AND seq > ?4 AND seq <= ?5)`
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

// batch is one batch of an undo's task: the items of its kind whose seq is
// in (after, last].
type batch struct {
	dialect     store.Dialect
	task        int64
	undo        int64
	undoes      int64 // the run the undo takes back
	tenant      string
	kind        ledger.Kind
	after, last int64
	items       []Item
}

// args are the arguments of the batch statements: tenant, undo, kind and
// the seq range.
func (b batch) args() []any {
	return []any{b.tenant, b.undo, string(b.kind), b.after, b.last}
}

// takeBack takes a batch back inside tx, a few set statements for the
// whole batch: the rows that go, then the slots given their before-image
// back (one by one: they are few), then every other slot deleted at once,
// then the images; and counts them. A statement that changes fewer slots
// than it names means a slot changed since the plan: the batch fails,
// naming the first slot the statement left, and rolls back whole.
func takeBack(ctx context.Context, tx *sql.Tx, b batch, c *phases.Counts) error {
	if len(b.items) == 0 {
		return nil
	}
	k := b.kind
	if err := forgetLinks(ctx, tx, b); err != nil {
		return err
	}
	gone, err := target.DeleteListed(ctx, tx, k, b.tenant, batchRowsSQL, b.args()[1:])
	if err != nil {
		return err
	}
	images, err := readImages(ctx, tx, b)
	if err != nil {
		return err
	}
	// The slots' own triggers would move the epoch once per final slot:
	// the batch moves it once itself, when every slot is taken back.
	if err := ledger.HoldEpoch(ctx, tx); err != nil {
		return fmt.Errorf("take back %s slots: %w", k, err)
	}
	var restore []Item
	for _, it := range b.items {
		im, found := images[imageKey{it.Source, k, it.SourceID}]
		if restores(it, im, found) {
			restore = append(restore, it)
		}
		tally(c, it, im)
	}
	hashes := map[slotKey]string{}
	if err := restoredHashes(ctx, tx, b, restore, hashes); err != nil {
		return err
	}
	if len(restore) > 0 {
		st, err := tx.PrepareContext(ctx, restoreSQL)
		if err != nil {
			return fmt.Errorf("take back %s slots: %w", k, err)
		}
		defer st.Close()
		for _, it := range restore {
			if err := expectOne(ctx, it, st, b.tenant, it.Source, string(k), it.SourceID, it.Owner, string(it.Action)); err != nil {
				return err
			}
		}
	}
	// The statement names each slot as the plan found it and returns the
	// ones it deleted: one it did not delete changed since the plan, and
	// the batch fails and rolls back whole. The keys it returns name that
	// slot, where a savepoint around it let the slots be looked at again
	// one by one: two statements less per batch. (SQLite journals the
	// pages the statement changes either way: its trigger and the
	// subquery make it a statement that may stop halfway.)
	want := int64(len(b.items) - len(restore))
	n, err := deleteSlots(ctx, tx, b, hashes)
	if err != nil {
		return fmt.Errorf("take back %s slots: %w", k, err)
	}
	if n != want {
		return changed(b.items, restore, hashes)
	}
	if len(images) > 0 {
		if _, err := tx.ExecContext(ctx, batchImagesGoneSQL, b.args()...); err != nil {
			return fmt.Errorf("delete the before-images of %s slots: %w", k, err)
		}
	}
	if err := noteEdits(ctx, tx, b, gone, hashes); err != nil {
		return err
	}
	return moveEpochs(ctx, tx, b)
}

// deleteSlots deletes the batch's slots still as the plan found them
// (batchSlotsSQL), keeps the hashes of each into hashes, and returns how
// many it deleted.
func deleteSlots(ctx context.Context, tx *sql.Tx, b batch, hashes map[slotKey]string) (int64, error) {
	rows, err := tx.QueryContext(ctx, batchSlotsSQL+` RETURNING source, source_id, coalesce(hashes, '')`, b.args()...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var n int64
	for rows.Next() {
		var key slotKey
		var h string
		if err := rows.Scan(&key.source, &key.sourceID, &h); err != nil {
			return n, err
		}
		hashes[key] = h
		n++
	}
	return n, rows.Err()
}

// moveEpochs ends the batch's hold on the epoch (ledger.HoldEpoch) and
// moves the epoch of every source whose final slots the batch deleted or
// gave back their skip: once each, where the triggers moved it once per
// slot.
func moveEpochs(ctx context.Context, tx *sql.Tx, b batch) error {
	var sources []string
	for _, it := range b.items {
		if it.Action != ledger.Skipped && !slices.Contains(sources, it.Source) {
			sources = append(sources, it.Source)
		}
	}
	if err := ledger.ReleaseEpoch(ctx, tx, b.tenant, sources...); err != nil {
		return fmt.Errorf("take back %s slots: %w", b.kind, err)
	}
	return nil
}

// readImages reads the before-images of a batch's slots.
func readImages(ctx context.Context, tx *sql.Tx, b batch) (map[imageKey]image, error) {
	rows, err := tx.QueryContext(ctx, batchImagesSQL, append(b.args(), b.undoes)...)
	if err != nil {
		return nil, fmt.Errorf("read the before-images of %s slots: %w", b.kind, err)
	}
	defer rows.Close()
	out := map[imageKey]image{}
	for rows.Next() {
		var key imageKey
		var im image
		if err := rows.Scan(&key.source, &key.sourceID, &im.takenBy, &im.ownerGone); err != nil {
			return nil, fmt.Errorf("read the before-images of %s slots: %w", b.kind, err)
		}
		key.kind = b.kind
		out[key] = im
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the before-images of %s slots: %w", b.kind, err)
	}
	return out, nil
}

// changed names the first of items whose slot the batch's statement did
// not delete — it kept no hashes of it (deleteSlots) — other than those
// given back their before-image (restored): it is not as the plan found
// it, and the batch rolls back.
func changed(items, restored []Item, hashes map[slotKey]string) error {
	given := map[slotKey]bool{}
	for _, it := range restored {
		given[slotKey{it.Source, it.SourceID}] = true
	}
	for _, it := range items {
		key := slotKey{it.Source, it.SourceID}
		if _, deleted := hashes[key]; !deleted && !given[key] {
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

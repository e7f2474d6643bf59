package undo

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/target"
)

// Querier is a *sql.DB or a *sql.Tx.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Item is one slot an undo takes back, with what the plan found there: its
// owner (the undone run, or a dependent's run under cascade), its action,
// and for a created slot its row and whether that row goes with it.
type Item struct {
	Kind      ledger.Kind
	Source    string
	SourceID  string
	Owner     int64
	Action    ledger.Action
	RecordID  int64
	DeleteRow bool
}

// Dependent is what one other run has that depends on the undone run's
// rows, for one kind: rows that link to them, or matched slots that point
// at them (R16), transitively. Run 0 stands for rows that no slot names.
type Dependent struct {
	Run      int64    `json:"run"`
	Source   string   `json:"source"`
	Kind     string   `json:"kind"`
	How      string   `json:"how"` // "links" or "matched"
	Count    int      `json:"count"`
	Examples []string `json:"examples"`
}

func (d Dependent) String() string {
	what := fmt.Sprintf("%d %s that link to its rows", d.Count, ledger.Kind(d.Kind).Plural())
	if d.How == "matched" {
		what = fmt.Sprintf("%d %s slots matched to its rows", d.Count, d.Kind)
	}
	who := fmt.Sprintf("run %d (%s)", d.Run, d.Source)
	if d.Run == 0 {
		who = "rows written by no run"
	}
	return fmt.Sprintf("%s: %s, e.g. %s", who, what, strings.Join(d.Examples, ", "))
}

// maxExamples is how many example ids a dependent keeps.
const maxExamples = 5

// Plan is what an undo of a run takes back, computed from the database as
// it stands (Build): per kind and per run, what becomes of the slots, and
// the digest of every item. The items themselves are never held: Build
// walks them, and Start walks them again inside the transaction that
// writes them (R10), in bounded memory whatever the run's size.
type Plan struct {
	Run     phases.Run // the run undone
	Cascade bool
	Loaded  bool // the run was loaded from a dump: its skips have no before-image
	// Counts is, per kind, what the items come to (Fate): removed,
	// released, restored, cleared.
	Counts map[ledger.Kind]phases.Counts
	// Parts are the same per run whose slots the items are, kind and fate:
	// what a preview shows, and what a changed plan is compared by.
	Parts []PlanPart
	// Digest is the plan's identity: a SHA-256 over every item — each
	// slot it takes back, its owner, action and row, and the before-image
	// it is given back or the fact that it is deleted — in the order the
	// undo takes them. A preview returns it; the undo it confirms commits
	// only a plan with the same digest (PlanChangedError).
	Digest string
	// Dependents are the other runs' records that depend on the run's
	// rows; under cascade they are among the items.
	Dependents []Dependent
	// Notices say what the undo leaves or cannot give back.
	Notices   []string
	total     int
	batchSize int // Options.BatchSize of the undo Start commits
	taken     []Taken
}

// Total is how many slots the plan takes back.
func (p *Plan) Total() int { return p.total }

// RefusedError is an undo that cannot be (exit 1): the run is an undo, was
// undone, is being undone, or has nothing to take back.
type RefusedError struct{ Msg string }

func (e *RefusedError) Error() string { return e.Msg }

// DependentsError refuses an undo whose run has dependents while cascade is
// off (R16, exit 1).
type DependentsError struct {
	Run        int64
	Dependents []Dependent
}

func (e *DependentsError) Error() string {
	lines := make([]string, len(e.Dependents))
	for i, d := range e.Dependents {
		lines[i] = "  " + d.String()
	}
	return fmt.Sprintf("run %d cannot be undone alone: records of other runs depend on its rows\n%s\n"+
		"take them back too with `crmimport undo %d --cascade` (see first what it would do with --dry-run)",
		e.Run, strings.Join(lines, "\n"), e.Run)
}

const undoOfSQL = `SELECT id, status FROM migrations WHERE undoes = ? AND id <> ? ORDER BY id DESC LIMIT 1`

// Build computes the undo of run id as the database q holds it now, and
// refuses what R16 refuses: a run that is itself an undo, one already
// undone or being undone, a live run (*phases.AdmissionError), a run with
// nothing to take back (*RefusedError), and one with dependents unless
// cascade (*DependentsError). A refusal found once its items were walked
// (the last three) comes with the plan, whose digest says whether it is
// the plan a preview showed. It writes nothing, and holds no item.
func Build(ctx context.Context, q Querier, e *phases.Engine, id int64, cascade bool) (*Plan, error) {
	return build(ctx, q, e, id, cascade, 0, slotsPage, nil)
}

// build is Build within the transaction that plans undo self (0: none),
// which is not an undo that refuses it, reading page slots at a time and
// calling emit with every item in the order the undo takes them. A refusal found once every item was
// walked (dependents, nothing to take back) comes with the plan, whose
// digest then says whether the plan is the one a preview showed.
func build(ctx context.Context, q Querier, e *phases.Engine, id int64, cascade bool, self int64, page int, emit func(walked) error) (*Plan, error) {
	run, err := phases.LoadRun(ctx, q, id)
	if err != nil {
		return nil, err
	}
	if err := refuse(ctx, q, e, run, self); err != nil {
		return nil, err
	}
	dump, err := phases.LoadedFrom(ctx, q, id)
	if err != nil {
		return nil, err
	}
	p := &Plan{Run: run, Cascade: cascade, Loaded: dump != "", Counts: map[ledger.Kind]phases.Counts{}}
	w := newWalk(run, p.Loaded, page)
	if err := w.rows(ctx, q); err != nil {
		return nil, err
	}
	acc := newAccount(p)
	err = w.slots(ctx, q, func(it walked) error {
		acc.add(it)
		if emit != nil {
			return emit(it)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	acc.finish(w)
	if p.Loaded && w.kept > 0 {
		p.Notices = append(p.Notices, fmt.Sprintf(
			"%d rows that run %d's created slots name stay: they are not placeholders of its dump, or another slot names them", w.kept, id))
	}
	for _, d := range p.Dependents {
		if d.Run == 0 {
			return p, &RefusedError{Msg: fmt.Sprintf(
				"run %d cannot be undone: %s — rows that no run wrote cannot be taken back; remove them by hand first",
				id, d.String())}
		}
	}
	if len(p.Dependents) > 0 && !cascade {
		return p, &DependentsError{Run: id, Dependents: p.Dependents}
	}
	if p.total == 0 {
		return p, &RefusedError{Msg: fmt.Sprintf(
			"run %d has nothing to take back: no slot of tenant %s is its any more (later runs took its skips over, or it wrote none)",
			id, run.Tenant)}
	}
	if p.Loaded {
		if n := sum(p.Counts, func(c phases.Counts) int64 { return c.Cleared }); n > 0 {
			p.Notices = append(p.Notices, fmt.Sprintf(
				"run %d was loaded from a dump: its %d skips have no earlier state here and are deleted (the next run decides them again)",
				id, n))
		}
	}
	return p, nil
}

func sum(m map[ledger.Kind]phases.Counts, f func(phases.Counts) int64) int64 {
	var n int64
	for _, c := range m {
		n += f(c)
	}
	return n
}

// refuse refuses an undo of run that R16 does not allow.
func refuse(ctx context.Context, q Querier, e *phases.Engine, run phases.Run, self int64) error {
	switch {
	case run.Undoes != 0:
		return &RefusedError{Msg: fmt.Sprintf("run %d is an undo (of run %d): an undo cannot be undone — to import run %d's records again, start a new run of its export", run.ID, run.Undoes, run.Undoes)}
	case run.UndoneBy != 0:
		return &RefusedError{Msg: fmt.Sprintf("run %d was already undone by run %d: there is nothing left to take back", run.ID, run.UndoneBy)}
	case run.Status == phases.RunRunning:
		return &phases.AdmissionError{Tenant: run.Tenant, LiveRun: run.ID, Owner: run.Owner, Interrupted: e.Interrupted(run)}
	}
	var undo int64
	var status string
	err := q.QueryRowContext(ctx, undoOfSQL, run.ID, self).Scan(&undo, &status)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("read the undos of run %d: %w", run.ID, err)
	}
	return &RefusedError{Msg: fmt.Sprintf("run %d is being undone by run %d, which is %s: continue that undo with `crmimport resume %d`",
		run.ID, undo, status, undo)}
}

// walk finds the items of an undo in two passes over the tenant, holding
// no more than a bit per row id and one page of slots. rows finds the rows
// that go: the run's created rows (for a loaded run, only the placeholders
// that no other slot names), and, parents before children, every row that
// links to a row that goes (R16's dependents, transitively). slots then
// reads the tenant's slots in the order of their key, a page at a time,
// and yields the run's own, the created slots of the rows that go by
// their links, and the matched slots that point at a row that goes.
type walk struct {
	run    phases.Run
	loaded bool
	page   int // slots read at a time
	// placeholders and named (loaded runs only): rows that are a dump's
	// placeholders, and rows that a final slot of another run names.
	placeholders, named rowSets
	gone                rowSets // rows that go
	linked              rowSets // rows that go because they link to a row that goes
	claimed             rowSets // rows of linked whose created slot the walk found
	kept                int     // created slots of a loaded run whose row stays
}

func newWalk(run phases.Run, loaded bool, page int) *walk {
	return &walk{run: run, loaded: loaded, page: page, placeholders: rowSets{}, named: rowSets{}, gone: rowSets{}, linked: rowSets{}, claimed: rowSets{}}
}

const (
	// ownRowsSQL lists the rows the run created (R16: they go).
	ownRowsSQL = `
SELECT kind, record_id FROM migration_records
WHERE tenant_id = ? AND migration_id = ? AND action = 'created' AND record_id IS NOT NULL`

	// namedRowsSQL lists the rows that final slots of other runs name: a
	// loaded run's placeholder that one of them names stays.
	namedRowsSQL = `
SELECT kind, record_id FROM migration_records
WHERE tenant_id = ? AND coalesce(migration_id, 0) <> ? AND action IN ('created', 'matched') AND record_id IS NOT NULL`
)

// rows finds the rows that go.
func (w *walk) rows(ctx context.Context, q Querier) error {
	tenant := w.run.Tenant
	if w.loaded {
		for _, k := range canon.Kinds() {
			set := w.placeholders.of(k)
			if err := target.EachPlaceholder(ctx, q, k, tenant, set.add); err != nil {
				return err
			}
		}
		if err := eachRow(ctx, q, namedRowsSQL, tenant, w.run.ID, func(k ledger.Kind, id int64) { w.named.of(k).add(id) }); err != nil {
			return err
		}
	}
	err := eachRow(ctx, q, ownRowsSQL, tenant, w.run.ID, func(k ledger.Kind, id int64) {
		if w.deletes(k, id) {
			w.gone.of(k).add(id)
		} else {
			w.kept++
		}
	})
	if err != nil {
		return err
	}
	for _, k := range canon.Kinds() {
		parents := canon.ParentKinds(k)
		gone, linked := w.gone.of(k), w.linked.of(k)
		err := target.EachLink(ctx, q, k, tenant, func(id int64, links []int64) error {
			if gone.has(id) {
				return nil
			}
			for i, parent := range links {
				if w.gone[parents[i]].has(parent) {
					gone.add(id)
					linked.add(id)
					return nil
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// deletes reports whether the row of one of the run's created slots goes
// with it: always, but for a run loaded from a dump, whose row goes only
// if it is a placeholder that no other run's slot names (SPEC §10).
func (w *walk) deletes(k ledger.Kind, id int64) bool {
	return !w.loaded || (w.placeholders[k].has(id) && !w.named[k].has(id))
}

func eachRow(ctx context.Context, q Querier, query, tenant string, run int64, f func(ledger.Kind, int64)) error {
	rows, err := q.QueryContext(ctx, query, tenant, run)
	if err != nil {
		return fmt.Errorf("read the ledger of tenant %s: %w", tenant, err)
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var id int64
		if err := rows.Scan(&k, &id); err != nil {
			return fmt.Errorf("read the ledger of tenant %s: %w", tenant, err)
		}
		f(ledger.Kind(k), id)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read the ledger of tenant %s: %w", tenant, err)
	}
	return nil
}

// slotsPage is how many slots one page of the walk reads: the page is read
// whole before its items are yielded, so that a caller may write between
// two pages in the same transaction (PostgreSQL runs one statement at a
// time on a connection).
const slotsPage = 10000

// slotsPageSQL reads the next page of the tenant's slots that an undo may
// take back (the run's own, and other runs' final slots), in the order of
// the ledger's key from after the last one read (keyset: each page is a
// range of the key, whatever the tenant's size).
const slotsPageSQL = `
SELECT source, kind, source_id, coalesce(migration_id, 0), action, coalesce(record_id, 0)
FROM migration_records
WHERE tenant_id = ?1 AND (source, kind, source_id) > (?2, ?3, ?4)
  AND (migration_id = ?5 OR (action IN ('created', 'matched') AND record_id IS NOT NULL))
ORDER BY source, kind, source_id
LIMIT ?6`

// pageImagesSQL reads the before-images of the slots in a page's range of
// the key (after ?2…?4, up to ?5…?7): who took each over, its owner, and
// whether that owner was undone. One range read where a join probed the
// images once per slot, most of which have none.
const pageImagesSQL = `
SELECT b.source, b.kind, b.source_id, b.taken_by, coalesce(b.migration_id, 0), coalesce(m.undone_by, 0) <> 0
FROM slot_before b LEFT JOIN migrations m ON m.id = b.migration_id
WHERE b.tenant_id = ?1 AND (b.source, b.kind, b.source_id) > (?2, ?3, ?4) AND (b.source, b.kind, b.source_id) <= (?5, ?6, ?7)`

// walked is one item as the walk finds it, with its slot's before-image.
type walked struct {
	Item
	image     image
	imageRun  int64 // the before-image's owner
	dependent string
}

// pageImage is a before-image as a page reads it.
type pageImage struct {
	image
	run int64
}

// slots yields the items, page by page.
func (w *walk) slots(ctx context.Context, q Querier, yield func(walked) error) error {
	var last [3]string // the key of the last slot read; '' is below every kind
	page := make([]walked, 0, min(w.page, slotsPage))
	for {
		page = page[:0]
		first := last
		rows, err := q.QueryContext(ctx, slotsPageSQL, w.run.Tenant, last[0], last[1], last[2], w.run.ID, w.page)
		if err != nil {
			return fmt.Errorf("read the ledger of tenant %s: %w", w.run.Tenant, err)
		}
		n := 0
		for rows.Next() {
			var it walked
			var kind, action string
			if err := rows.Scan(&it.Source, &kind, &it.SourceID, &it.Owner, &action, &it.RecordID); err != nil {
				rows.Close()
				return fmt.Errorf("read the ledger of tenant %s: %w", w.run.Tenant, err)
			}
			n++
			last = [3]string{it.Source, kind, it.SourceID}
			it.Kind, it.Action = ledger.Kind(kind), ledger.Action(action)
			if w.item(&it) {
				page = append(page, it)
			}
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("read the ledger of tenant %s: %w", w.run.Tenant, err)
		}
		if len(page) > 0 {
			images, err := w.images(ctx, q, first, last)
			if err != nil {
				return err
			}
			for i := range page {
				it := &page[i]
				if im, ok := images[imageKey{it.Source, it.Kind, it.SourceID}]; ok {
					it.image, it.imageRun = im.image, im.run
					// SPEC §10: the run's own skips are never given back,
					// whoever holds their slot now (a dependent under
					// --cascade).
					it.image.ownerGone = it.image.ownerGone || im.run == w.run.ID
				}
			}
		}
		for _, it := range page {
			if err := yield(it); err != nil {
				return err
			}
		}
		if n < w.page {
			return nil
		}
	}
}

// images reads the before-images of the slots in (after, upTo].
func (w *walk) images(ctx context.Context, q Querier, after, upTo [3]string) (map[imageKey]pageImage, error) {
	rows, err := q.QueryContext(ctx, pageImagesSQL, w.run.Tenant, after[0], after[1], after[2], upTo[0], upTo[1], upTo[2])
	if err != nil {
		return nil, fmt.Errorf("read the before-images of tenant %s: %w", w.run.Tenant, err)
	}
	defer rows.Close()
	out := map[imageKey]pageImage{}
	for rows.Next() {
		var k imageKey
		var kind string
		var im pageImage
		if err := rows.Scan(&k.source, &kind, &k.sourceID, &im.takenBy, &im.run, &im.ownerGone); err != nil {
			return nil, fmt.Errorf("read the before-images of tenant %s: %w", w.run.Tenant, err)
		}
		k.kind = ledger.Kind(kind)
		out[k] = im
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the before-images of tenant %s: %w", w.run.Tenant, err)
	}
	return out, nil
}

// item tells whether a slot is an item of the undo, and completes it.
func (w *walk) item(it *walked) bool {
	k := it.Kind
	switch {
	case it.Owner == w.run.ID:
		it.DeleteRow = it.Action == ledger.Created && it.RecordID != 0 && w.deletes(k, it.RecordID)
		return true
	case it.Action == ledger.Created && w.linked[k].has(it.RecordID):
		w.claimed.of(k).add(it.RecordID)
		it.DeleteRow, it.dependent = true, "links"
		return true
	case it.Action == ledger.Matched && w.gone[k].has(it.RecordID):
		it.dependent = "matched"
		return true
	}
	return false
}

// account adds up a plan from its items: counts per kind, parts, the
// dependents with a few examples each, and the digest.
type account struct {
	p      *Plan
	digest *digest
	parts  map[partKey]int64
	deps   map[depKey]*Dependent
}

type partKey struct {
	run  int64
	kind ledger.Kind
	fate string
}

type depKey struct {
	run  int64
	kind ledger.Kind
	how  string
}

func newAccount(p *Plan) *account {
	return &account{p: p, digest: newDigest(p.Run, p.Cascade), parts: map[partKey]int64{}, deps: map[depKey]*Dependent{}}
}

func (a *account) add(it walked) {
	c := a.p.Counts[it.Kind]
	fate := tally(&c, it.Item, it.image)
	a.p.Counts[it.Kind] = c
	a.p.total++
	a.parts[partKey{it.Owner, it.Kind, fate}]++
	a.digest.item(it, fate)
	if it.dependent != "" {
		a.depend(depKey{it.Owner, it.Kind, it.dependent}, it.Source, it.SourceID)
	}
}

func (a *account) depend(key depKey, source, example string) {
	d := a.deps[key]
	if d == nil {
		d = &Dependent{Run: key.run, Source: source, Kind: string(key.kind), How: key.how}
		a.deps[key] = d
	}
	d.Count++
	if len(d.Examples) < maxExamples {
		d.Examples = append(d.Examples, example)
	}
}

// finish names the rows that go by their links but that no run's slot
// names (rows written by no run, which refuse the undo), and orders the
// dependents and the parts: by run, then kind in plan order.
func (a *account) finish(w *walk) {
	for _, k := range canon.Kinds() {
		w.linked[k].each(w.claimed[k], func(id int64) bool {
			a.depend(depKey{0, k, "links"}, "", fmt.Sprintf("%s row %d", k, id))
			return true
		})
	}
	p := a.p
	for _, d := range a.deps {
		sort.Strings(d.Examples)
		p.Dependents = append(p.Dependents, *d)
	}
	sort.Slice(p.Dependents, func(i, j int) bool {
		a, b := p.Dependents[i], p.Dependents[j]
		if a.Run != b.Run {
			return a.Run < b.Run
		}
		if a.Kind != b.Kind {
			return kindOrder(a.Kind) < kindOrder(b.Kind)
		}
		return a.How < b.How
	})
	for key, n := range a.parts {
		p.Parts = append(p.Parts, PlanPart{Run: key.run, Kind: string(key.kind), Fate: key.fate, Count: n})
	}
	sortParts(p.Parts)
	p.Digest = a.digest.sum()
	p.taken = taken(p.Dependents)
}

// image is what the plan needs of a slot's before-image: who took the slot
// over, and whether the image's own owner is undone — since, or by this
// very undo.
type image struct {
	takenBy   int64
	ownerGone bool
}

type imageKey struct {
	source   string
	kind     ledger.Kind
	sourceID string
}

// restores reports whether an item's slot gets its before-image back: an
// image of this very takeover, whose owner was not undone (SPEC §10).
func restores(it Item, im image, found bool) bool {
	return found && im.takenBy == it.Owner && !im.ownerGone
}

// The fates of an item's slot, as the undo's counts name them.
const (
	fateRemoved  = "removed"
	fateReleased = "released"
	fateRestored = "restored"
	fateCleared  = "cleared"
)

// tally counts one item by what becomes of its slot, and returns it: given
// its before-image back (restored; a created one's row is removed with it,
// as the takeover wrote it), else deleted — with its row (removed),
// leaving the matched row (released), or a skip of its own (cleared).
func tally(c *phases.Counts, it Item, im image) string {
	switch {
	case restores(it, im, im.takenBy != 0):
		c.Restored++
		return fateRestored
	case it.Action == ledger.Created:
		c.Removed++
		return fateRemoved
	case it.Action == ledger.Matched:
		c.Released++
		return fateReleased
	default:
		c.Cleared++
		return fateCleared
	}
}

// Preview is a plan as --dry-run and the desktop show it: per kind what the
// undo would take back, the same per run, the dependents (taken back too
// under cascade), the notices, and the plan's digest, which the undo that
// confirms it carries (--plan, the page's POST).
type Preview struct {
	DryRun     bool                     `json:"dry_run"`
	Undoes     int64                    `json:"undoes"`
	Tenant     string                   `json:"tenant"`
	Source     string                   `json:"source"`
	Cascade    bool                     `json:"cascade"`
	Loaded     bool                     `json:"loaded_from_dump"`
	Total      int                      `json:"total"`
	Plan       string                   `json:"plan"`
	Kinds      map[string]PreviewCounts `json:"kinds"`
	Parts      []PlanPart               `json:"parts"`
	Dependents []Dependent              `json:"dependents"`
	Notices    []string                 `json:"notices"`
}

// PreviewCounts are what the undo would do to one kind's slots.
type PreviewCounts struct {
	Removed  int64 `json:"removed"`
	Released int64 `json:"released"`
	Restored int64 `json:"restored"`
	Cleared  int64 `json:"cleared"`
}

// Preview is the plan as --dry-run shows it.
func (p *Plan) Preview() Preview {
	v := Preview{DryRun: true, Undoes: p.Run.ID, Tenant: p.Run.Tenant, Source: p.Run.Source, Cascade: p.Cascade,
		Loaded: p.Loaded, Total: p.Total(), Plan: p.Digest, Kinds: map[string]PreviewCounts{}, Parts: p.Parts,
		Dependents: p.Dependents, Notices: p.Notices}
	for k, c := range p.Counts {
		v.Kinds[string(k)] = PreviewCounts{Removed: c.Removed, Released: c.Released, Restored: c.Restored, Cleared: c.Cleared}
	}
	if v.Parts == nil {
		v.Parts = []PlanPart{}
	}
	if v.Dependents == nil {
		v.Dependents = []Dependent{}
	}
	if v.Notices == nil {
		v.Notices = []string{}
	}
	return v
}

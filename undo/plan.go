package undo

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"

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

// Plan is what an undo of a run takes back, computed from the database as
// it stands (Build). Nothing of it is written until Start.
type Plan struct {
	Run     phases.Run // the run undone
	Cascade bool
	Loaded  bool // the run was loaded from a dump: its skips have no before-image
	// Items per kind, in the order the undo takes them: by source, then
	// source id.
	Items map[ledger.Kind][]Item
	// Counts is, per kind, what the items come to (Fate): removed,
	// released, restored, cleared.
	Counts map[ledger.Kind]phases.Counts
	// Dependents are the other runs' records that depend on the run's rows;
	// under cascade they are among the items.
	Dependents []Dependent
	// Notices say what the undo leaves or cannot give back.
	Notices   []string
	mark      string // the tenant's state when the plan was read (tenantMark)
	batchSize int    // Options.BatchSize of the undo Start commits
}

// Total is how many slots the plan takes back.
func (p *Plan) Total() int {
	n := 0
	for _, items := range p.Items {
		n += len(items)
	}
	return n
}

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

// slotRef is one slot as the plan reads it.
type slotRef struct {
	kind             ledger.Kind
	source, sourceID string
	run              int64
	action           ledger.Action
	recordID         int64
}

type rowKey struct {
	kind ledger.Kind
	id   int64
}

const tenantSlotsSQL = `
SELECT source, kind, source_id, coalesce(migration_id, 0), action, coalesce(record_id, 0)
FROM migration_records WHERE tenant_id = ?`

// beforeImagesSQL reads the tenant's before-images: who took each slot
// over, and whether the image's own owner is undone — undone since, or
// the run being undone (?2), whose skips a dependent's record took over
// under --cascade (SPEC §10: never restored).
const beforeImagesSQL = `
SELECT b.source, b.kind, b.source_id, b.taken_by, coalesce(m.undone_by, 0) <> 0 OR coalesce(b.migration_id, 0) = ?2
FROM slot_before b LEFT JOIN migrations m ON m.id = b.migration_id
WHERE b.tenant_id = ?1`

const undoOfSQL = `SELECT id, status FROM migrations WHERE undoes = ? AND id <> ? ORDER BY id DESC LIMIT 1`

// Build computes the undo of run id as the database q holds it now, and
// refuses what R16 refuses: a run that is itself an undo, one already
// undone or being undone, a live run (*phases.AdmissionError), a run with
// nothing to take back (*RefusedError), and one with dependents unless
// cascade (*DependentsError). It writes nothing.
func Build(ctx context.Context, q Querier, e *phases.Engine, id int64, cascade bool) (*Plan, error) {
	return build(ctx, q, e, id, cascade, 0)
}

// build is Build within the transaction that plans undo self (0: none),
// which is not an undo that refuses it.
func build(ctx context.Context, q Querier, e *phases.Engine, id int64, cascade bool, self int64) (*Plan, error) {
	run, err := phases.LoadRun(ctx, q, id)
	if err != nil {
		return nil, err
	}
	if err := refuse(ctx, q, e, run, self); err != nil {
		return nil, err
	}
	mark, err := tenantMark(ctx, q, run.Tenant, self)
	if err != nil {
		return nil, err
	}
	dump, err := phases.LoadedFrom(ctx, q, id)
	if err != nil {
		return nil, err
	}
	p := &Plan{Run: run, Cascade: cascade, Loaded: dump != "", Items: map[ledger.Kind][]Item{}, Counts: map[ledger.Kind]phases.Counts{}, mark: mark}

	// Every slot of the tenant, once: the run's own, who created each row,
	// and the matched slots that point at rows.
	var own, matched []slotRef
	creator := map[rowKey]slotRef{}
	naming := map[rowKey]int{} // how many final slots of other runs name a row
	rows, err := q.QueryContext(ctx, tenantSlotsSQL, run.Tenant)
	if err != nil {
		return nil, fmt.Errorf("read the ledger of tenant %s: %w", run.Tenant, err)
	}
	for rows.Next() {
		var s slotRef
		var kind, action string
		if err := rows.Scan(&s.source, &kind, &s.sourceID, &s.run, &action, &s.recordID); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read the ledger of tenant %s: %w", run.Tenant, err)
		}
		k := ledger.Kind(kind)
		s.kind, s.action = k, ledger.Action(action)
		if s.run == id {
			own = append(own, s)
			continue
		}
		if s.action.Final() && s.recordID != 0 {
			naming[rowKey{k, s.recordID}]++
		}
		switch s.action {
		case ledger.Created:
			creator[rowKey{k, s.recordID}] = s
		case ledger.Matched:
			matched = append(matched, s)
		}
	}
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("read the ledger of tenant %s: %w", run.Tenant, err)
	}

	// The rows that go: the run's created rows (for a loaded run, only the
	// placeholders that no other slot names).
	placeholders := map[rowKey]bool{}
	if p.Loaded {
		for _, k := range ledger.Kinds() {
			if err := target.EachPlaceholder(ctx, q, k, run.Tenant, func(id int64) { placeholders[rowKey{k, id}] = true }); err != nil {
				return nil, err
			}
		}
	}
	gone := map[rowKey]bool{}
	var kept int
	for _, s := range own {
		k := s.kind
		it := Item{Kind: k, Source: s.source, SourceID: s.sourceID, Owner: id, Action: s.action, RecordID: s.recordID}
		if s.action == ledger.Created && s.recordID != 0 {
			r := rowKey{k, s.recordID}
			it.DeleteRow = !p.Loaded || (placeholders[r] && naming[r] == 0)
			if it.DeleteRow {
				gone[r] = true
			} else {
				kept++
			}
		}
		p.Items[k] = append(p.Items[k], it)
	}
	if p.Loaded && kept > 0 {
		p.Notices = append(p.Notices, fmt.Sprintf(
			"%d rows that run %d's created slots name stay: they are not placeholders of its dump, or another slot names them", kept, id))
	}

	// Dependents, parents before children: a row that links to a row that
	// goes goes too (under cascade), and so does what links to it.
	deps := map[[3]string]*Dependent{}
	depend := func(run int64, source string, k ledger.Kind, how, example string) {
		key := [3]string{fmt.Sprint(run), string(k), how}
		d := deps[key]
		if d == nil {
			d = &Dependent{Run: run, Source: source, Kind: string(k), How: how}
			deps[key] = d
		}
		d.Count++
		if len(d.Examples) < 5 {
			d.Examples = append(d.Examples, example)
		}
	}
	for _, k := range ledger.Kinds() {
		parents := target.ParentsOf(k)
		err := target.EachLink(ctx, q, k, run.Tenant, func(rowID int64, links []int64) error {
			r := rowKey{k, rowID}
			if gone[r] {
				return nil
			}
			for i, parent := range links {
				if parent == 0 || !gone[rowKey{parents[i], parent}] {
					continue
				}
				gone[r] = true
				c, ok := creator[r]
				if !ok {
					depend(0, "", k, "links", fmt.Sprintf("%s row %d", k, rowID))
					return nil
				}
				depend(c.run, c.source, k, "links", c.sourceID)
				p.Items[k] = append(p.Items[k], Item{Kind: k, Source: c.source, SourceID: c.sourceID, Owner: c.run,
					Action: ledger.Created, RecordID: rowID, DeleteRow: true})
				return nil
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		// Then the matched slots that point at a row of the kind that goes
		// (the run's own, or a dependent's).
		for _, m := range matched {
			if m.kind == k && gone[rowKey{k, m.recordID}] {
				depend(m.run, m.source, k, "matched", m.sourceID)
				p.Items[k] = append(p.Items[k], Item{Kind: k, Source: m.source, SourceID: m.sourceID, Owner: m.run, Action: ledger.Matched, RecordID: m.recordID})
			}
		}
	}
	for _, d := range deps {
		sort.Strings(d.Examples)
		p.Dependents = append(p.Dependents, *d)
	}
	sort.Slice(p.Dependents, func(i, j int) bool {
		a, b := p.Dependents[i], p.Dependents[j]
		if a.Run != b.Run {
			return a.Run < b.Run
		}
		if a.Kind != b.Kind {
			return phases.Phase(ledger.Kind(a.Kind)) < phases.Phase(ledger.Kind(b.Kind))
		}
		return a.How < b.How
	})
	for _, d := range p.Dependents {
		if d.Run == 0 {
			return nil, &RefusedError{Msg: fmt.Sprintf(
				"run %d cannot be undone: %s — rows that no run wrote cannot be taken back; remove them by hand first",
				id, d.String())}
		}
	}
	if len(p.Dependents) > 0 && !cascade {
		return nil, &DependentsError{Run: id, Dependents: p.Dependents}
	}
	if p.Total() == 0 {
		return nil, &RefusedError{Msg: fmt.Sprintf(
			"run %d has nothing to take back: no slot of tenant %s is its any more (later runs took its skips over, or it wrote none)",
			id, run.Tenant)}
	}
	for k, items := range p.Items {
		sort.Slice(items, func(i, j int) bool {
			if items[i].Source != items[j].Source {
				return items[i].Source < items[j].Source
			}
			return items[i].SourceID < items[j].SourceID
		})
		p.Items[k] = items
	}
	if err := p.count(ctx, q); err != nil {
		return nil, err
	}
	if p.Loaded {
		if c := p.Counts; sum(c, func(c phases.Counts) int64 { return c.Cleared }) > 0 {
			p.Notices = append(p.Notices, fmt.Sprintf(
				"run %d was loaded from a dump: its %d skips have no earlier state here and are deleted (the next run decides them again)",
				id, sum(c, func(c phases.Counts) int64 { return c.Cleared })))
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

// count fills Counts with what each item comes to.
func (p *Plan) count(ctx context.Context, q Querier) error {
	images, err := beforeImages(ctx, q, p.Run.Tenant, p.Run.ID)
	if err != nil {
		return err
	}
	for k, items := range p.Items {
		var c phases.Counts
		for _, it := range items {
			tally(&c, it, images[imageKey{it.Source, k, it.SourceID}])
		}
		p.Counts[k] = c
	}
	return nil
}

type imageKey struct {
	source   string
	kind     ledger.Kind
	sourceID string
}

// image is what the plan needs of a slot's before-image: who took the slot
// over, and whether the image's own owner was undone since.
type image struct {
	takenBy   int64
	ownerGone bool
}

func beforeImages(ctx context.Context, q Querier, tenant string, undone int64) (map[imageKey]image, error) {
	rows, err := q.QueryContext(ctx, beforeImagesSQL, tenant, undone)
	if err != nil {
		return nil, fmt.Errorf("read the before-images of tenant %s: %w", tenant, err)
	}
	defer rows.Close()
	out := map[imageKey]image{}
	for rows.Next() {
		var k imageKey
		var kind string
		var im image
		if err := rows.Scan(&k.source, &kind, &k.sourceID, &im.takenBy, &im.ownerGone); err != nil {
			return nil, fmt.Errorf("read the before-images of tenant %s: %w", tenant, err)
		}
		k.kind = ledger.Kind(kind)
		out[k] = im
	}
	return out, rows.Err()
}

// restores reports whether an item's slot gets its before-image back: an
// image of this very takeover, whose owner was not undone since (SPEC §10).
func restores(it Item, im image, found bool) bool {
	return found && im.takenBy == it.Owner && !im.ownerGone
}

// tally counts one item by what becomes of its slot: given its
// before-image back (restored; a created slot's row is removed with it, as
// the takeover wrote it), else deleted — with its row (removed), leaving
// the matched row (released), or a skip of its own (cleared).
func tally(c *phases.Counts, it Item, im image) {
	switch {
	case restores(it, im, im.takenBy != 0):
		c.Restored++
	case it.Action == ledger.Created:
		c.Removed++
	case it.Action == ledger.Matched:
		c.Released++
	default:
		c.Cleared++
	}
}

// Preview is a plan as --dry-run and the desktop show it: per kind what the
// undo would take back, the dependents (taken back too under cascade) and
// the notices.
type Preview struct {
	DryRun     bool                     `json:"dry_run"`
	Undoes     int64                    `json:"undoes"`
	Tenant     string                   `json:"tenant"`
	Source     string                   `json:"source"`
	Cascade    bool                     `json:"cascade"`
	Loaded     bool                     `json:"loaded_from_dump"`
	Total      int                      `json:"total"`
	Kinds      map[string]PreviewCounts `json:"kinds"`
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
		Loaded: p.Loaded, Total: p.Total(), Kinds: map[string]PreviewCounts{}, Dependents: p.Dependents, Notices: p.Notices}
	for k, c := range p.Counts {
		v.Kinds[string(k)] = PreviewCounts{Removed: c.Removed, Released: c.Released, Restored: c.Restored, Cleared: c.Cleared}
	}
	if v.Dependents == nil {
		v.Dependents = []Dependent{}
	}
	if v.Notices == nil {
		v.Notices = []string{}
	}
	return v
}

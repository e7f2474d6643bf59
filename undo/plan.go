package undo

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/phases"
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
// rows, for one kind: rows that link to them, matched slots that point at
// them, or updates of them (R16, R17), transitively. Run 0 stands for rows that no slot names.
type Dependent struct {
	Run      int64    `json:"run"`
	Source   string   `json:"source"`
	Kind     string   `json:"kind"`
	How      string   `json:"how"` // "links", "matched" or "updates"
	Count    int      `json:"count"`
	Examples []string `json:"examples"`
}

func (d Dependent) String() string {
	what := fmt.Sprintf("%d %s that link to its rows", d.Count, ledger.Kind(d.Kind).Plural())
	switch d.How {
	case "matched":
		what = fmt.Sprintf("%d %s slots matched to its rows", d.Count, d.Kind)
	case "updates":
		what = fmt.Sprintf("%d %s that it created or updated, updated since (R17)", d.Count, ledger.Kind(d.Kind).Plural())
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
	relinks, err := ledger.CompletedLinks(ctx, q, run.Tenant, run.ID)
	if err != nil {
		return nil, err
	}
	w := newWalk(run, p.Loaded, page)
	w.relinked = newRelinkSet(relinks)
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
	acc.relinks(relinks)
	if err := acc.updates(ctx, q, run); err != nil {
		return nil, err
	}
	if err := acc.laterUpdates(ctx, q, run, w); err != nil {
		return nil, err
	}
	acc.finish(w)
	return p, p.judge(w.kept)
}

// judge says, once every item of p was walked and added up, what the
// undo leaves (kept: created slots of a loaded run whose row stays) and
// what it cannot give back, and refuses what R16 refuses only now: rows
// that no run wrote among the dependents, dependents without cascade,
// nothing to take back.
func (p *Plan) judge(kept int) error {
	id := p.Run.ID
	var unlinked []string
	for _, k := range canon.ChildrenFirst() {
		if n := p.Counts[k].Unlinked; n > 0 {
			unlinked = append(unlinked, fmt.Sprintf("%s %d", k.Plural(), n))
		}
	}
	if len(unlinked) > 0 {
		p.Notices = append(p.Notices, fmt.Sprintf(
			"links that run %d completed when their parents arrived are emptied again and wait for their parents (R6a, counted unlinked): %s",
			id, strings.Join(unlinked, ", ")))
	}
	if p.Loaded && kept > 0 {
		p.Notices = append(p.Notices, fmt.Sprintf(
			"%d rows that run %d's created slots name stay: they are not placeholders of its dump, or another slot names them", kept, id))
	}
	for _, d := range p.Dependents {
		if d.Run == 0 {
			return &RefusedError{Msg: fmt.Sprintf(
				"run %d cannot be undone: %s — rows that no run wrote cannot be taken back; remove them by hand first",
				id, d.String())}
		}
	}
	if len(p.Dependents) > 0 && !p.Cascade {
		return &DependentsError{Run: id, Dependents: p.Dependents}
	}
	if p.total == 0 {
		return &RefusedError{Msg: fmt.Sprintf(
			"run %d has nothing to take back: no slot of tenant %s is its any more (later runs took its skips over, or it wrote none)",
			id, p.Run.Tenant)}
	}
	if p.Loaded {
		if n := sum(p.Counts, func(c phases.Counts) int64 { return c.Cleared }); n > 0 {
			p.Notices = append(p.Notices, fmt.Sprintf(
				"run %d was loaded from a dump: its %d skips have no earlier state here and are deleted (the next run decides them again)",
				id, n))
		}
	}
	return nil
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

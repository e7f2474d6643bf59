package report

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
)

// Skip is one record a run skipped, with what it waits for.
type Skip struct {
	Kind     string            `json:"kind"`
	SourceID string            `json:"source_id"`
	Reason   string            `json:"reason"`
	Waits    map[string]string `json:"waits_for"` // the link values the skip could not resolve (its detail)
	Ready    []string          `json:"ready"`     // the kinds of those parents that now have a final slot (R3: a run takes it over)
	// WaitsForNothing: its links name only records that no run of its
	// export gives (R6b: a case, a kind the profile does not read); the
	// page promises it no run.
	WaitsForNothing bool   `json:"waits_for_nothing"`
	At              string `json:"at"`
}

// SkipKey is where a skip stands in a page's order: kinds in plan order,
// then source ids.
type SkipKey struct {
	Kind     ledger.Kind `json:"kind"`
	SourceID string      `json:"source_id"`
}

// SkipQuery chooses a page of the skips a run owns: of a kind and a source
// id (the whole id) when given, whose reason holds the words Search (any
// case), after the skip After or before the skip Before (keyset: the keys
// of a page's last and first records), at most Limit (MaxPage when 0).
type SkipQuery struct {
	Kind     ledger.Kind
	SourceID string
	Search   string
	After    *SkipKey
	Before   *SkipKey
	Limit    int
}

// SkipPage is a page of the skips a run still owns (R3) and what they are
// a page of: every count is the database's, over every skip of the run.
type SkipPage struct {
	Run     int64  `json:"run"`
	Records []Skip `json:"records"` // at most the query's Limit
	// Total counts the skips that the kind, source id and search select;
	// First is the place of Records[0] among them (1-based, 0 for none).
	Total int64 `json:"total"`
	First int64 `json:"first"`
	// Next and Prev are the After and Before of the pages next to this
	// one, nil when there is none.
	Next *SkipKey `json:"next"`
	Prev *SkipKey `json:"prev"`
	// Kinds counts, per kind, the skips that the source id and search
	// select.
	Kinds []KindCount `json:"kinds"`
	// Ready counts, per kind, every skip of the run whose detail names a
	// parent that has a final slot now (doctor's ready-to-take-over: a run
	// of that kind over the export takes them over, R3); ReadyTotal is
	// their sum.
	Ready      []KindCount `json:"ready"`
	ReadyTotal int64       `json:"ready_total"`
}

// The statements of a page of skips, on the slots a run owns as skipped
// (R3: the latest attempt owns a skip), by the index of them (schema 12:
// migration_records_skips, per run and kind in source id order). A page
// that spans kinds reads them one after the other in plan order, each by
// the index. Filters are fragments of the WHERE, as a page of failures'.
const (
	skipsOfRun   = ` WHERE r.action = 'skipped' AND r.migration_id = ?`
	skipOfKind   = ` AND r.kind = ?`
	skipOfSource = ` AND r.source_id = ?`
	skipFound    = ` AND lower(coalesce(r.reason, '')) LIKE ? ESCAPE '!'`
	skipAfter    = ` AND r.source_id > ?`
	skipBefore   = ` AND r.source_id < ?`
	skipsForward = ` ORDER BY r.source_id LIMIT ?`
	skipsBack    = ` ORDER BY r.source_id DESC LIMIT ?`

	skipKindsSQL   = `SELECT r.kind, count(*) FROM migration_records r`
	skipKindsGroup = ` GROUP BY r.kind`
	skipsBeforeSQL = `SELECT count(*) FROM migration_records r`
)

// The statements that find a skip's parents (ParentsFoundSQL) are
// variables: the kinds they name come from the table of kinds.
var (
	// skipPageSQL: a skip with the kinds of the parents of its detail
	// found since (ParentsFoundSQL). json_valid is SQLite's spelling
	// (store.Dialect); skipPagePG is PostgreSQL's.
	skipPageSQL = `SELECT r.kind, r.source_id, coalesce(r.reason, ''), coalesce(r.detail, ''), r.created_at,
    CASE WHEN r.detail IS NOT NULL AND json_valid(r.detail) THEN ` + ParentsFoundSQL + ` END
FROM migration_records r`
	skipPagePG = `SELECT r.kind, r.source_id, coalesce(r.reason, ''), coalesce(r.detail, ''), r.created_at,
    CASE WHEN ` + FlatDetailPG + ` THEN ` + ParentsFoundPG + ` END
FROM migration_records r`

	// readySkipsSQL: R3 and R6, per kind, the skips of a run whose detail
	// names a parent that has a final slot now (doctor's readySQL, counted
	// in the database). readySkipsPG is PostgreSQL's.
	readySkipsSQL = `SELECT r.kind, count(*) FROM migration_records r
WHERE r.action = 'skipped' AND r.migration_id = ? AND r.detail IS NOT NULL AND json_valid(r.detail)
    AND ` + ParentsFoundSQL + ` IS NOT NULL
GROUP BY r.kind`
	readySkipsPG = `SELECT r.kind, count(*) FROM migration_records r
WHERE r.action = 'skipped' AND r.migration_id = ? AND r.detail IS NOT NULL AND ` + FlatDetailPG + `
    AND ` + ParentsFoundPG + ` IS NOT NULL
GROUP BY r.kind`
)

// where is the WHERE of q's skips of run, of kind k when not "" (a page
// reads one kind at a time), and its arguments.
func (q SkipQuery) where(run int64, k ledger.Kind) (string, []any) {
	w, args := skipsOfRun, []any{run}
	if k != "" {
		w, args = w+skipOfKind, append(args, string(k))
	}
	if q.SourceID != "" {
		w, args = w+skipOfSource, append(args, q.SourceID)
	}
	if q.Search != "" {
		w, args = w+skipFound, append(args, likePattern(q.Search))
	}
	return w, args
}

// PageSkips reads one page of the skips that run runID still owns (R3):
// those q chooses, at most q.Limit of them, kinds in plan order and source
// ids in order within a kind, with the counts per kind and of the skips
// ready to be taken over, all from the database. Memory holds the page
// and the counts, however many skips the run has.
func PageSkips(ctx context.Context, db *sql.DB, runID int64, q SkipQuery) (*SkipPage, error) {
	if q.After != nil && q.Before != nil {
		return nil, fmt.Errorf("%w: a page is after one record or before one, not both", ErrBadPage)
	}
	if err := checkPage(0, 0, &q.Limit); err != nil {
		return nil, err
	}
	if _, err := phases.LoadRun(ctx, db, runID); err != nil {
		return nil, err
	}
	p := &SkipPage{Run: runID, Records: []Skip{}, Kinds: []KindCount{}, Ready: []KindCount{}}
	var texts skipTexts
	switch d := store.DialectOf(db); d {
	case store.SQLite:
		texts = skipTexts{ready: readySkipsSQL, head: skipPageSQL}
	case store.Postgres:
		texts = skipTexts{ready: readySkipsPG, head: skipPagePG}
	default:
		panic(d.Untaught("report.PageSkips"))
	}
	for _, read := range []func(context.Context, *sql.DB, skipTexts, int64, SkipQuery, *SkipPage) error{
		skipKinds, readySkips, skipRecords, skipPlace,
	} {
		if err := read(ctx, db, texts, runID, q, p); err != nil {
			return nil, fmt.Errorf("skipped records of run %d: %w", runID, err)
		}
	}
	return p, nil
}

// skipTexts are the statements of a skips page in the handle's engine.
type skipTexts struct{ ready, head string }

// skipKinds counts the skips per kind (the source id and search applied),
// and the total of the kind asked (every kind: their sum).
func skipKinds(ctx context.Context, db *sql.DB, _ skipTexts, runID int64, q SkipQuery, p *SkipPage) error {
	where, args := q.where(runID, "")
	var err error
	p.Kinds, p.Total, err = kindCounts(ctx, db, skipKindsSQL+where+skipKindsGroup, args, q.Kind)
	return err
}

// readySkips counts, per kind, the run's skips ready to be taken over.
func readySkips(ctx context.Context, db *sql.DB, texts skipTexts, runID int64, _ SkipQuery, p *SkipPage) error {
	err := store.EachRow(ctx, db, texts.ready, []any{runID}, func(rows store.Scanner) error {
		var c KindCount
		if err := rows.Scan(&c.Kind, &c.Count); err != nil {
			return err
		}
		p.ReadyTotal += c.Count
		p.Ready = append(p.Ready, c)
		return nil
	})
	p.Ready = kindsInPlanOrder(p.Ready, "")
	return err
}

// skipRecords reads the page: kind after kind from the key given, forward
// (or backward from Before), until it is full.
func skipRecords(ctx context.Context, db *sql.DB, texts skipTexts, runID int64, q SkipQuery, p *SkipPage) error {
	kinds := pageKinds(p.Kinds, q.Kind)
	from, back := q.After, false
	if q.Before != nil {
		from, back = q.Before, true
		slices.Reverse(kinds)
	}
	if from != nil {
		// Kinds on the far side of the key have nothing for this page.
		for len(kinds) > 0 && kinds[0] != from.Kind && kindBefore(kinds[0], from.Kind) != back {
			kinds = kinds[1:]
		}
	}
	head, order, bound := texts.head, skipsForward, skipAfter
	if back {
		order, bound = skipsBack, skipBefore
	}
	var got []Skip
	for _, k := range kinds {
		if len(got) == q.Limit {
			break
		}
		where, args := q.where(runID, k)
		if from != nil && k == from.Kind {
			where, args = where+bound, append(args, from.SourceID)
		}
		err := store.EachRow(ctx, db, head+where+order, append(args, q.Limit-len(got)), func(rows store.Scanner) error {
			s, err := scanSkip(rows)
			got = append(got, s)
			return err
		})
		if err != nil {
			return err
		}
	}
	if back {
		slices.Reverse(got)
	}
	p.Records = append(p.Records, got...)
	return nil
}

// skipPlace is the page's place: the skips of the kinds before its first
// record's, and of that kind before its source id; and the pages before
// and after it.
func skipPlace(ctx context.Context, db *sql.DB, _ skipTexts, runID int64, q SkipQuery, p *SkipPage) error {
	got := p.Records
	if len(got) == 0 {
		return nil
	}
	firstKey := SkipKey{Kind: ledger.Kind(got[0].Kind), SourceID: got[0].SourceID}
	var before int64
	for _, c := range p.Kinds {
		if (q.Kind == "" || c.Kind == string(q.Kind)) && kindBefore(ledger.Kind(c.Kind), firstKey.Kind) {
			before += c.Count
		}
	}
	where, args := q.where(runID, firstKey.Kind)
	var within int64
	if err := db.QueryRowContext(ctx, skipsBeforeSQL+where+skipBefore, append(args, firstKey.SourceID)...).Scan(&within); err != nil {
		return err
	}
	before += within
	p.First = before + 1
	if before > 0 {
		p.Prev = &firstKey
	}
	if last := got[len(got)-1]; before+int64(len(got)) < p.Total {
		p.Next = &SkipKey{Kind: ledger.Kind(last.Kind), SourceID: last.SourceID}
	}
	return nil
}

// pageKinds are the kinds a page of skips reads, in plan order: the kind
// asked, or every kind that has skips.
func pageKinds(counts []KindCount, asked ledger.Kind) []ledger.Kind {
	if asked != "" {
		return []ledger.Kind{asked}
	}
	var out []ledger.Kind
	for _, c := range counts {
		if c.Count > 0 {
			out = append(out, ledger.Kind(c.Kind))
		}
	}
	return out
}

// kindBefore tells whether kind a comes before kind b in a page's order
// (plan order, ledger.Kinds; a kind this binary does not know last, by
// name).
func kindBefore(a, b ledger.Kind) bool {
	at := func(k ledger.Kind) int {
		for i, known := range canon.Kinds() {
			if k == known {
				return i
			}
		}
		return len(canon.Kinds())
	}
	if at(a) != at(b) {
		return at(a) < at(b)
	}
	return a < b
}

// scanSkip reads a row of skipPageSQL.
func scanSkip(rows store.Scanner) (Skip, error) {
	var s Skip
	var detail string
	var ready sql.NullString
	if err := rows.Scan(&s.Kind, &s.SourceID, &s.Reason, &detail, &s.At, &ready); err != nil {
		return s, err
	}
	s.WaitsForNothing = ledger.WaitsForNothing(s.Reason)
	s.Waits = map[string]string{}
	if detail != "" {
		_ = json.Unmarshal([]byte(detail), &s.Waits) // a detail that is not an object waits for nothing known
	}
	s.Ready = []string{}
	if ready.Valid && ready.String != "" {
		// In plan order: the dialects' aggregates give the kinds in
		// orders of their own.
		var kinds []ledger.Kind
		for _, k := range strings.Split(ready.String, ",") {
			kinds = append(kinds, ledger.Kind(k))
		}
		for _, k := range phases.InPhaseOrder(kinds) {
			s.Ready = append(s.Ready, string(k))
		}
	}
	return s, nil
}

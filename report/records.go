package report

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store"
)

// What the desktop's pages of a run's records show (SPEC §9, *Failed
// records*), read by the same queries as rejects and fix folders. A run
// may hold hundreds of thousands of failed records (issue 23 item 15), so
// nothing here reads them all at once: a page is read in the database by
// keyset (the failure's id, never OFFSET, which reads every row it skips),
// its counts are the database's (GROUP BY), and the functions that go
// through every failure (EachFailure, rejects, fix folders) stream.

// Failure is one record a run failed (R4), as record_failures keeps it.
type Failure struct {
	ID       int64     `json:"id"` // record_failures.id: what a fix of the row names it by (package fixfile)
	Kind     string    `json:"kind"`
	SourceID string    `json:"source_id"`
	File     string    `json:"file"`
	Line     int64     `json:"line"`
	Reason   string    `json:"reason"`
	Class    string    `json:"class"` // the reason without its value, line and column (store.ReasonClass)
	Raw      []RawCell `json:"raw"`   // the row as read, in file order
	// RawJSON is the row as record_failures keeps it (a JSON object in
	// file order: importer/profile's RawJSON).
	RawJSON string `json:"-"`
	// Input and Format are the file the row's task read (a file, or
	// ZIP!/ENTRY) and its format, "" when not known.
	Input  string `json:"-"`
	Format string `json:"-"`
}

// RawCell is one column of a raw row.
type RawCell struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// MaxPage is the most records one page of a run's records holds.
const MaxPage = 500

// MaxClasses is the most reason classes a page of failures counts; the
// others are there to search for (FailurePage.MoreClasses).
const MaxClasses = 100

// FailureQuery chooses a page of a run's failed records: of a kind, a
// reason class and a source id (the whole id, as the export has it: found
// by an index) when given, whose reason holds the words Search (any case:
// read in every failure of the run), after the failure After or before
// the failure Before (keyset: ids of a page's last and first records), at
// most Limit (MaxPage when 0).
type FailureQuery struct {
	Kind     ledger.Kind
	Class    string
	SourceID string
	Search   string
	After    int64
	Before   int64
	Limit    int
}

// FailurePage is a page of a run's failed records and what they are a page
// of: every count is the database's, over every failure of the run.
type FailurePage struct {
	Run     int64     `json:"run"`
	Records []Failure `json:"records"` // at most the query's Limit
	// Total counts the failures that the kind, class, source id and
	// search select; First is the place of Records[0] among them
	// (1-based, 0 for none).
	Total int64 `json:"total"`
	First int64 `json:"first"`
	// Next and Prev are the After and Before of the pages next to this
	// one, 0 when there is none.
	Next int64 `json:"next"`
	Prev int64 `json:"prev"`
	// Kinds counts, per kind, the failures that the class, source id and
	// search select; Classes, per class, those that the kind, source id
	// and search select — the MaxClasses largest, MoreClasses telling
	// that there are more.
	Kinds       []KindCount  `json:"kinds"`
	Classes     []ClassCount `json:"reasons"`
	MoreClasses bool         `json:"more_reasons"`
}

// KindCount is how many records of a kind.
type KindCount struct {
	Kind  string `json:"kind"`
	Count int64  `json:"count"`
}

// ClassCount is how many failures of a reason class.
type ClassCount struct {
	Class string `json:"reason"`
	Count int64  `json:"count"`
}

// failureColumns are the columns every read of failures gives, in
// scanFailure's order: the failure, and its task's input (R10: the file
// the plan named) where it has one.
const failureColumns = `f.id, f.kind, coalesce(f.source_id, ''), coalesce(f.file, ''), coalesce(f.line, 0), f.reason,
    coalesce(f.reason_class, ''), coalesce(f.raw, ''), coalesce(t.file, ''), coalesce(t.format, '')
FROM record_failures f LEFT JOIN migration_tasks t ON t.id = f.task_id`

// The filters of a page of failures, each a fragment of the WHERE of the
// statements below, which hold those that a query sets and no other: a
// filter that stands aside when its parameter is empty, written in SQL,
// keeps SQLite's planner off the index that answers it. Every value is a
// parameter.
const (
	failuresOfRun = ` WHERE f.migration_id = ?`
	failureOfKind = ` AND f.kind = ?`
	// R4: failureOfClass uses the class written with the failure.
	failureOfClass = ` AND f.reason_class = ?`
	// failureOfSource: one source id, by record_failures_source.
	failureOfSource = ` AND f.source_id = ?`
	// failureFound: the search, a LIKE pattern in lower case (likePattern),
	// in the reason, of any case: SQLite's lower() folds ASCII only,
	// PostgreSQL's every letter.
	failureFound  = ` AND lower(f.reason) LIKE ? ESCAPE '!'`
	failureAfter  = ` AND f.id > ?`
	failureBefore = ` AND f.id < ?`
)

// where is the WHERE of q's failures of run (without the kind or the
// class when their counts are asked: noKind, noClass), and its arguments.
func (q FailureQuery) where(run int64, noKind, noClass bool) (string, []any) {
	w, args := failuresOfRun, []any{run}
	if q.Kind != "" && !noKind {
		w, args = w+failureOfKind, append(args, string(q.Kind))
	}
	if q.Class != "" && !noClass {
		w, args = w+failureOfClass, append(args, q.Class)
	}
	if q.SourceID != "" {
		w, args = w+failureOfSource, append(args, q.SourceID)
	}
	if q.Search != "" {
		w, args = w+failureFound, append(args, likePattern(q.Search))
	}
	return w, args
}

// likePattern is a LIKE pattern that finds s anywhere, its own % and _
// meaning themselves (escaped with !), in lower case.
func likePattern(s string) string {
	r := strings.NewReplacer("!", "!!", "%", "!%", "_", "!_")
	return "%" + r.Replace(strings.ToLower(s)) + "%"
}

// The statements of a page of failures: its rows (in id order, or
// backwards from Before), their place, and the counts per kind and class.
const (
	failurePageSQL     = `SELECT ` + failureColumns
	failuresAscending  = ` ORDER BY f.id LIMIT ?`
	failuresDescending = ` ORDER BY f.id DESC LIMIT ?`
	failuresBeforeSQL  = `SELECT count(*) FROM record_failures f`
	failureKindsSQL    = `SELECT f.kind, count(*) FROM record_failures f`
	failureKindsGroup  = ` GROUP BY f.kind`
	failureClassesSQL  = `SELECT coalesce(f.reason_class, ''), count(*) FROM record_failures f`
	// The largest classes first, the most a page lists and one more,
	// which tells that there are more.
	failureClassesGroup = ` GROUP BY f.reason_class ORDER BY count(*) DESC, f.reason_class LIMIT ?`
	// The counts of a source id's failures: found by its index
	// (record_failures_source), then grouped. Grouped by the column, as
	// above, SQLite's planner reads the run's every failure in the order
	// of the kind's or the class's index instead, to spare a sort of the
	// few rows it finds (0.4 s at 400,000 failures, against a moment).
	failureKindsOfSourceSQL     = `SELECT f.kind || '', count(*) FROM record_failures f`
	failureKindsOfSourceGroup   = ` GROUP BY f.kind || ''`
	failureClassesOfSourceGroup = ` GROUP BY coalesce(f.reason_class, '') ORDER BY count(*) DESC, coalesce(f.reason_class, '') LIMIT ?`
)

// ErrBadPage is a query for a page that cannot be answered: both After
// and Before, or a limit out of range.
var ErrBadPage = errors.New("bad page")

// PageFailures reads one page of the failed records of run runID (R4):
// the records q chooses, at most q.Limit of them, in the order they
// failed, and the counts per kind and class, all from the database.
// Memory holds the page and the counts, however many failures the run has.
func PageFailures(ctx context.Context, db *sql.DB, runID int64, q FailureQuery) (*FailurePage, error) {
	if err := checkPage(q.After, q.Before, &q.Limit); err != nil {
		return nil, err
	}
	if _, err := phases.LoadRun(ctx, db, runID); err != nil {
		return nil, err
	}
	p := &FailurePage{Run: runID, Records: []Failure{}, Kinds: []KindCount{}, Classes: []ClassCount{}}
	for _, read := range []func(context.Context, *sql.DB, int64, FailureQuery, *FailurePage) error{
		failureKinds, failureClasses, failureRecords, failurePlace,
	} {
		if err := read(ctx, db, runID, q, p); err != nil {
			return nil, fmt.Errorf("failed records of run %d: %w", runID, err)
		}
	}
	return p, nil
}

// failureKinds counts the failures per kind (the class and search
// applied), and the total of the kind asked (every kind: their sum).
func failureKinds(ctx context.Context, db *sql.DB, runID int64, q FailureQuery, p *FailurePage) error {
	kindsSQL, kindsGroup := failureKindsSQL, failureKindsGroup
	if q.SourceID != "" {
		kindsSQL, kindsGroup = failureKindsOfSourceSQL, failureKindsOfSourceGroup
	}
	where, args := q.where(runID, true, false)
	var err error
	p.Kinds, p.Total, err = kindCounts(ctx, db, kindsSQL+where+kindsGroup, args, q.Kind)
	return err
}

// kindCounts reads a page's counts per kind (query: a kind and a count a
// row), kinds in plan order, and the total of the kind asked (every kind:
// their sum).
func kindCounts(ctx context.Context, db *sql.DB, query string, args []any, asked ledger.Kind) ([]KindCount, int64, error) {
	var counts []KindCount
	var total int64
	err := store.EachRow(ctx, db, query, args, func(rows store.Scanner) error {
		var c KindCount
		if err := rows.Scan(&c.Kind, &c.Count); err != nil {
			return err
		}
		if asked == "" || c.Kind == string(asked) {
			total += c.Count
		}
		counts = append(counts, c)
		return nil
	})
	return kindsInPlanOrder(counts, asked), total, err
}

// failureClasses counts the failures per class (the kind and search
// applied), the largest MaxClasses of them and the class asked.
func failureClasses(ctx context.Context, db *sql.DB, runID int64, q FailureQuery, p *FailurePage) error {
	classesGroup := failureClassesGroup
	if q.SourceID != "" {
		classesGroup = failureClassesOfSourceGroup
	}
	where, args := q.where(runID, false, true)
	err := store.EachRow(ctx, db, failureClassesSQL+where+classesGroup, append(args, MaxClasses+1), func(rows store.Scanner) error {
		var c ClassCount
		if err := rows.Scan(&c.Class, &c.Count); err != nil {
			return err
		}
		p.Classes = append(p.Classes, c)
		return nil
	})
	if err != nil {
		return err
	}
	if p.MoreClasses = len(p.Classes) > MaxClasses; p.MoreClasses {
		p.Classes = p.Classes[:MaxClasses]
	}
	if q.Class != "" && !hasClass(p.Classes, q.Class) {
		// The class asked, beyond the largest: its count is the total.
		p.Classes = append(p.Classes, ClassCount{Class: q.Class, Count: p.Total})
	}
	return nil
}

// failureRecords reads the page: forward from After (from the first
// failure when 0), or backward from Before, then put in order.
func failureRecords(ctx context.Context, db *sql.DB, runID int64, q FailureQuery, p *FailurePage) error {
	where, args := q.where(runID, false, false)
	order := failuresAscending
	switch {
	case q.Before > 0:
		where, args, order = where+failureBefore, append(args, q.Before), failuresDescending
	case q.After > 0:
		where, args = where+failureAfter, append(args, q.After)
	}
	err := store.EachRow(ctx, db, failurePageSQL+where+order, append(args, q.Limit), func(rows store.Scanner) error {
		f, err := scanFailure(rows)
		if err != nil {
			return err
		}
		p.Records = append(p.Records, f)
		return nil
	})
	if err != nil {
		return err
	}
	if q.Before > 0 {
		slices.Reverse(p.Records)
	}
	return nil
}

// failurePlace is the page's place: the failures selected before its
// first record, and the pages before and after it.
func failurePlace(ctx context.Context, db *sql.DB, runID int64, q FailureQuery, p *FailurePage) error {
	if len(p.Records) == 0 {
		return nil
	}
	where, args := q.where(runID, false, false)
	var before int64
	if err := db.QueryRowContext(ctx, failuresBeforeSQL+where+failureBefore, append(args, p.Records[0].ID)...).Scan(&before); err != nil {
		return err
	}
	p.First = before + 1
	if before > 0 {
		p.Prev = p.Records[0].ID
	}
	if last := p.Records[len(p.Records)-1]; before+int64(len(p.Records)) < p.Total {
		p.Next = last.ID
	}
	return nil
}

// checkPage refuses a page asked both after and before a record, or of a
// size out of range; a size of 0 is MaxPage.
func checkPage(after, before int64, limit *int) error {
	switch {
	case after < 0 || before < 0:
		return fmt.Errorf("%w: after and before name a record of the page next to it, not %d", ErrBadPage, min(after, before))
	case after > 0 && before > 0:
		return fmt.Errorf("%w: a page is after one record or before one, not both", ErrBadPage)
	case *limit < 0 || *limit > MaxPage:
		return fmt.Errorf("%w: a page holds 1 to %d records, not %d", ErrBadPage, MaxPage, *limit)
	case *limit == 0:
		*limit = MaxPage
	}
	return nil
}

// kindsInPlanOrder puts counts per kind in plan order (ledger.Kinds), the
// kind asked among them even when it counts none, so that a page can show
// it chosen.
func kindsInPlanOrder(counts []KindCount, asked ledger.Kind) []KindCount {
	by := map[string]int64{}
	for _, c := range counts {
		by[c.Kind] = c.Count
	}
	out := []KindCount{}
	for _, k := range canon.Kinds() {
		if n, ok := by[string(k)]; ok || k == asked {
			out = append(out, KindCount{Kind: string(k), Count: n})
			delete(by, string(k))
		}
	}
	// A kind this binary does not know (a table written by another
	// engine): after the known ones, by name, never dropped.
	var unknown []KindCount
	for _, c := range counts {
		if _, ok := by[c.Kind]; ok {
			unknown = append(unknown, c)
		}
	}
	sort.Slice(unknown, func(i, j int) bool { return unknown[i].Kind < unknown[j].Kind })
	return append(out, unknown...)
}

func hasClass(cs []ClassCount, class string) bool {
	for _, c := range cs {
		if c.Class == class {
			return true
		}
	}
	return false
}

// scanFailure reads a row of failureColumns, its raw row in file order.
func scanFailure(rows store.Scanner) (Failure, error) {
	var f Failure
	if err := rows.Scan(&f.ID, &f.Kind, &f.SourceID, &f.File, &f.Line, &f.Reason, &f.Class, &f.RawJSON, &f.Input, &f.Format); err != nil {
		return f, err
	}
	f.Raw = rawCells(f.RawJSON)
	return f, nil
}

// failuresByIDSQL: R4, the failures of a run of the ids given (as a JSON
// array of numbers: one parameter, whatever their number), in id order.
// json_each is SQLite's spelling (store.Dialect); failuresByIDPG is
// PostgreSQL's.
const failuresByIDSQL = `SELECT ` + failureColumns + `
WHERE f.migration_id = ?1 AND f.id IN (SELECT j.value FROM json_each(?2) j) ORDER BY f.id`

const failuresByIDPG = `SELECT ` + failureColumns + `
WHERE f.migration_id = ?1 AND f.id IN (SELECT j::bigint FROM json_array_elements_text(?2::json) j) ORDER BY f.id`

// FailuresByID reads the failures of run runID that ids name, and only
// those (a fix of a few rows reads a few rows, however many failed), in id
// order; an id that is not a failure of the run is not among them.
func FailuresByID(ctx context.Context, db *sql.DB, runID int64, ids []int64) ([]Failure, error) {
	out := []Failure{}
	if len(ids) == 0 {
		return out, nil
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	var q string
	switch d := store.DialectOf(db); d {
	case store.SQLite:
		q = failuresByIDSQL
	case store.Postgres:
		q = failuresByIDPG
	default:
		panic(d.Untaught("report.FailuresByID"))
	}
	err = store.EachRow(ctx, db, q, []any{runID, string(list)}, func(rows store.Scanner) error {
		f, err := scanFailure(rows)
		out = append(out, f)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("failed records of run %d: %w", runID, err)
	}
	return out, nil
}

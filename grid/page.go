package grid

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"crmimport/canon"
	"crmimport/importer/profile"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/report"
	"crmimport/store"
)

// MaxPage is the most rows a page of the grid holds.
const MaxPage = 200

// Sort orders of a page: file order (the order the run failed them, which
// is the file's), the reason's class, the source id, or a column's value
// as read (SortColumn).
const (
	SortLine     = "line"
	SortReason   = "reason"
	SortSourceID = "source_id"
	SortColumn   = "column"
)

// Query chooses a page of the failed rows of one file of a run: of a kind,
// a reason class and a source id (whole) when given; whose row as read
// holds Value in any cell (any case); whose column Column holds Has; in
// the order Sort (SortColumn: by the column Column... named by By), from
// Offset, at most Limit (MaxPage when 0).
type Query struct {
	File     string
	Kind     ledger.Kind
	Class    string
	SourceID string
	Value    string
	Column   string // with Has: a column whose value holds Has
	Has      string
	Sort     string // SortLine when ""
	By       string // the column of SortColumn
	Desc     bool
	Offset   int64
	Limit    int
}

// Row is one failed row of a page: the failure as read, the column its
// reason points at, the edits waiting or re-imported, and what became of
// its last re-import.
type Row struct {
	report.Failure
	Failing string            `json:"failing"` // the column the reason points at, "" when none is named
	Edits   map[string]string `json:"edits"`   // column → the value a person gave it
	Pending bool              `json:"pending"` // an edit waits for a re-import
	FixRun  int64             `json:"fix_run"` // the run that re-imported its edits last, 0 for none
	Outcome *Outcome          `json:"outcome"` // what that run made of it, nil for none
}

// Outcome is what a re-import made of a row (fixfile.Outcome).
type Outcome struct {
	Outcome string `json:"outcome"` // imported, unchanged, skipped, failed, not read, pending
	Action  string `json:"action,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Owner   int64  `json:"owner_run,omitempty"`
}

// FileCount is how many failed rows a file of the run has.
type FileCount struct {
	File  string `json:"file"`
	Count int64  `json:"count"`
}

// PageOf is a page of the grid and what it is a page of: every count is
// the database's.
type PageOf struct {
	Run     int64              `json:"run"`
	File    string             `json:"file"`
	Files   []FileCount        `json:"files"`   // the run's files with failed rows
	Columns []string           `json:"columns"` // the file's columns, in its order
	Rows    []Row              `json:"rows"`
	Total   int64              `json:"total"`  // the rows the filters choose
	Offset  int64              `json:"offset"` // of Rows[0] among them, from 0
	Kinds   []report.KindCount `json:"kinds"`  // per kind, the rows the other filters choose
	// Classes counts the rows per reason class (the other filters
	// applied), the largest report.MaxClasses.
	Classes []report.ClassCount `json:"reasons"`
	// Pending counts the run's failed rows (of every file) whose edits
	// wait for a re-import, per file.
	Pending []FileCount `json:"pending"`
}

// ErrBadQuery is a query that cannot be answered: a sort by a column not
// named, a page out of range.
var ErrBadQuery = errors.New("bad grid query")

// The filters of a page, each a fragment of the WHERE (as report's pages
// of failures): a filter that stands aside when its parameter is empty,
// written in SQL, keeps SQLite's planner off the index that answers it.
// Every value is a parameter.
const (
	rowsOfFile   = ` WHERE f.migration_id = ? AND f.file = ?`
	rowOfKind    = ` AND f.kind = ?`
	rowOfClass   = ` AND f.reason_class = ?`
	rowOfSource  = ` AND f.source_id = ?`
	rowHasValue  = ` AND lower(f.raw) LIKE ? ESCAPE '!'`
	pageIDsSQL   = `SELECT f.id FROM record_failures f`
	pageCountSQL = `SELECT count(*) FROM record_failures f`
	pageLimit    = ` LIMIT ? OFFSET ?`
	kindsSQL     = `SELECT f.kind, count(*) FROM record_failures f`
	kindsGroup   = ` GROUP BY f.kind`
	classesSQL   = `SELECT coalesce(f.reason_class, ''), count(*) FROM record_failures f`
	classesGroup = ` GROUP BY f.reason_class ORDER BY count(*) DESC, f.reason_class LIMIT ?`
	// filesSQL: a run's files with failed rows, from record_failures_file.
	filesSQL = `SELECT f.file, count(*) FROM record_failures f WHERE f.migration_id = ? AND f.file IS NOT NULL GROUP BY f.file ORDER BY f.file`
	// firstRawSQL: the first row of a file read as a row (its columns).
	firstRawSQL = `SELECT coalesce(f.raw, '') FROM record_failures f WHERE f.migration_id = ? AND f.file = ? AND f.raw NOT LIKE '{"(text)":%' ORDER BY f.id LIMIT 1`
)

// statements are the texts of a page that only one engine spells so: a
// column's value in a row as read (record_failures.raw, a JSON object).
type statements struct {
	column string // the value of the column named by the parameter, or NULL
	path   func(column string) string
}

func statementsOf(db *sql.DB) statements {
	switch d := store.DialectOf(db); d {
	case store.SQLite:
		// json_extract's path names a key in double quotes, its own
		// double quotes escaped.
		return statements{column: `json_extract(f.raw, ?)`, path: func(c string) string {
			return `$."` + strings.ReplaceAll(c, `"`, `\"`) + `"`
		}}
	case store.Postgres:
		return statements{column: `(f.raw::json ->> ?)`, path: func(c string) string { return c }}
	default:
		panic(d.Untaught("grid.statementsOf"))
	}
}

// where is the WHERE of q's rows of run (without the kind or the class
// when their counts are asked: noKind, noClass), and its arguments.
func (q Query) where(st statements, run int64, noKind, noClass bool) (string, []any) {
	w, args := rowsOfFile, []any{run, q.File}
	if q.Kind != "" && !noKind {
		w, args = w+rowOfKind, append(args, string(q.Kind))
	}
	if q.Class != "" && !noClass {
		w, args = w+rowOfClass, append(args, q.Class)
	}
	if q.SourceID != "" {
		w, args = w+rowOfSource, append(args, q.SourceID)
	}
	if q.Value != "" {
		w, args = w+rowHasValue, append(args, likePattern(q.Value))
	}
	if q.Column != "" && q.Has != "" {
		w, args = w+` AND lower(`+st.column+`) LIKE ? ESCAPE '!'`, append(args, st.path(q.Column), likePattern(q.Has))
	}
	return w, args
}

// order is the ORDER BY of q and its arguments.
func (q Query) order(st statements) (string, []any, error) {
	dir := ""
	if q.Desc {
		dir = " DESC"
	}
	switch q.Sort {
	case "", SortLine:
		return ` ORDER BY f.id` + dir, nil, nil
	case SortReason:
		return ` ORDER BY f.reason_class` + dir + `, f.reason` + dir + `, f.id` + dir, nil, nil
	case SortSourceID:
		return ` ORDER BY f.source_id` + dir + `, f.id` + dir, nil, nil
	case SortColumn:
		if q.By == "" {
			return "", nil, fmt.Errorf("%w: a sort by a column names the column", ErrBadQuery)
		}
		return ` ORDER BY ` + st.column + dir + `, f.id` + dir, []any{st.path(q.By)}, nil
	}
	return "", nil, fmt.Errorf("%w: sort %q is none of line, reason, source_id, column", ErrBadQuery, q.Sort)
}

// likePattern is a LIKE pattern that finds s anywhere, its own % and _
// meaning themselves (escaped with !), in lower case.
func likePattern(s string) string {
	r := strings.NewReplacer("!", "!!", "%", "!%", "_", "!_")
	return "%" + r.Replace(strings.ToLower(s)) + "%"
}

// Page reads one page of the failed rows of a file of run runID (R4): the
// rows q chooses in q's order, at most q.Limit, each with its failing
// column, its edits and the outcome of its last re-import; and the counts
// per file, kind and class, all from the database. Memory holds the page
// and the counts, however many rows failed. A file of "" is the run's
// first file with failed rows.
func Page(ctx context.Context, db *sql.DB, runID int64, q Query) (*PageOf, error) {
	switch {
	case q.Limit == 0:
		q.Limit = MaxPage
	case q.Limit < 0 || q.Limit > MaxPage:
		return nil, fmt.Errorf("%w: a page holds 1 to %d rows, not %d", ErrBadQuery, MaxPage, q.Limit)
	}
	if q.Offset < 0 {
		return nil, fmt.Errorf("%w: offset %d", ErrBadQuery, q.Offset)
	}
	if _, err := phases.LoadRun(ctx, db, runID); err != nil {
		return nil, err
	}
	st := statementsOf(db)
	p := &PageOf{Run: runID, Files: []FileCount{}, Columns: []string{}, Rows: []Row{}, Kinds: []report.KindCount{},
		Classes: []report.ClassCount{}, Pending: []FileCount{}}
	wrap := func(err error) error { return fmt.Errorf("review grid of run %d: %w", runID, err) }
	err := store.EachRow(ctx, db, filesSQL, []any{runID}, func(rows store.Scanner) error {
		var c FileCount
		err := rows.Scan(&c.File, &c.Count)
		p.Files = append(p.Files, c)
		return err
	})
	if err != nil {
		return nil, wrap(err)
	}
	if q.File == "" && len(p.Files) > 0 {
		q.File = p.Files[0].File
	}
	p.File = q.File
	if p.Pending, err = pendingFiles(ctx, db, runID); err != nil {
		return nil, wrap(err)
	}
	if q.File == "" {
		return p, nil
	}
	order, orderArgs, err := q.order(st)
	if err != nil {
		return nil, err
	}
	where, args := q.where(st, runID, false, false)
	if err := db.QueryRowContext(ctx, pageCountSQL+where, args...).Scan(&p.Total); err != nil {
		return nil, wrap(err)
	}
	p.Offset = q.Offset
	var ids []int64
	err = store.EachRow(ctx, db, pageIDsSQL+where+order+pageLimit, append(append(args, orderArgs...), q.Limit, q.Offset),
		func(rows store.Scanner) error {
			var id int64
			err := rows.Scan(&id)
			ids = append(ids, id)
			return err
		})
	if err != nil {
		return nil, wrap(err)
	}
	if err := p.readRows(ctx, db, runID, ids); err != nil {
		return nil, wrap(err)
	}
	if err := p.counts(ctx, db, st, runID, q); err != nil {
		return nil, wrap(err)
	}
	var first string
	err = db.QueryRowContext(ctx, firstRawSQL, runID, q.File).Scan(&first)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, wrap(err)
	}
	p.Columns = columnsOf(first, p.Rows)
	return p, nil
}

// readRows reads the rows of ids (in that order), their edits and the
// outcomes of their re-imports.
func (p *PageOf) readRows(ctx context.Context, db *sql.DB, runID int64, ids []int64) error {
	fails, err := report.FailuresByID(ctx, db, runID, ids)
	if err != nil {
		return err
	}
	byID := make(map[int64]report.Failure, len(fails))
	for _, f := range fails {
		byID[f.ID] = f
	}
	edits, err := Edits(ctx, db, ids)
	if err != nil {
		return err
	}
	for _, id := range ids {
		f, ok := byID[id]
		if !ok {
			continue
		}
		r := Row{Failure: f, Failing: FailingColumn(f.Reason, f.Raw), Edits: map[string]string{}}
		for _, e := range edits[id] {
			r.Edits[e.Column] = e.Value
			r.Pending = r.Pending || e.FixRun == 0
			r.FixRun = max(r.FixRun, e.FixRun)
		}
		p.Rows = append(p.Rows, r)
	}
	return outcomes(ctx, db, p.Rows)
}

// counts reads the page's counts per kind and class.
func (p *PageOf) counts(ctx context.Context, db *sql.DB, st statements, runID int64, q Query) error {
	where, args := q.where(st, runID, true, false)
	err := store.EachRow(ctx, db, kindsSQL+where+kindsGroup, args, func(rows store.Scanner) error {
		var c report.KindCount
		err := rows.Scan(&c.Kind, &c.Count)
		p.Kinds = append(p.Kinds, c)
		return err
	})
	if err != nil {
		return err
	}
	p.Kinds = inPlanOrder(p.Kinds)
	where, args = q.where(st, runID, false, true)
	return store.EachRow(ctx, db, classesSQL+where+classesGroup, append(args, report.MaxClasses), func(rows store.Scanner) error {
		var c report.ClassCount
		err := rows.Scan(&c.Class, &c.Count)
		p.Classes = append(p.Classes, c)
		return err
	})
}

// inPlanOrder puts counts per kind in plan order (canon.Kinds), a kind
// this binary does not know last.
func inPlanOrder(counts []report.KindCount) []report.KindCount {
	out := make([]report.KindCount, 0, len(counts))
	for _, k := range canon.Kinds() {
		for _, c := range counts {
			if c.Kind == string(k) {
				out = append(out, c)
			}
		}
	}
	for _, c := range counts {
		if _, err := canon.ParseKind(c.Kind); err != nil {
			out = append(out, c)
		}
	}
	return out
}

// columnsOf are a file's columns: those of its first row read as a row,
// then any other a row of the page has (a JSON file's rows may differ).
func columnsOf(first string, rows []Row) []string {
	out := []string{}
	seen := map[string]bool{}
	add := func(cells []report.RawCell) {
		for _, c := range cells {
			if !seen[c.Name] && c.Name != TextColumn {
				seen[c.Name] = true
				out = append(out, c.Name)
			}
		}
	}
	add(report.RawCells(first))
	for _, r := range rows {
		add(r.Raw)
	}
	return out
}

// TextColumn is the one cell of a row that could not be read as a row (a
// broken quote): its text (the importer's raw row of it).
const TextColumn = profile.RawText

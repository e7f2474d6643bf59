package report

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"crmimport/phases"
	"crmimport/store"
)

// rejectColumns are the columns every rejects file starts with; the raw
// row's columns follow, the union over the run's failures in the order
// first seen. The shape varies with the files a run read, so the file is
// written with encoding/csv rather than gocsv, which needs a struct.
var rejectColumns = []string{"run", "kind", "source_id", "file", "line", "reason"}

// rawColumn holds a raw value that is not a JSON object (none of ours).
const rawColumn = "(raw)"

// Rejects writes the failed records of a run to w as CSV: run, kind,
// source_id, file, line, reason, then the raw row's columns. A cell that
// a spreadsheet would run as a formula (SafeCell: one starting with =, +,
// -, @, a tab, a carriage return, | or %, or a full-width form of one,
// blanks before it or not) is written with a leading ' so that it shows as
// text (a negative amount -5 reads '-5). It returns how many records it
// wrote; a run without failures gives the header alone. It streams: a
// first pass gathers the header, a second writes the rows as it reads
// them, so that memory holds a row and the header, however many failed.
func Rejects(ctx context.Context, db *sql.DB, runID int64, w io.Writer) (int, error) {
	if _, err := phases.LoadRun(ctx, db, runID); err != nil {
		return 0, err
	}
	// First the header: every raw column of the run's failures.
	var header []string
	seen := map[string]bool{}
	err := EachFailure(ctx, db, runID, func(f Failure) error {
		for _, c := range f.Raw {
			if !seen[c.Name] {
				seen[c.Name] = true
				header = append(header, c.Name)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	cw := csv.NewWriter(w)
	row := make([]string, 0, len(rejectColumns)+len(header))
	row = append(row, rejectColumns...)
	for _, h := range header {
		row = append(row, SafeCell(h))
	}
	if err := cw.Write(row); err != nil {
		return 0, err
	}
	at := map[string]int{}
	for i, h := range header {
		at[h] = len(rejectColumns) + i
	}
	n := 0
	err = EachFailure(ctx, db, runID, func(f Failure) error {
		row = row[:len(rejectColumns)+len(header)]
		for i := range row {
			row[i] = ""
		}
		row[0], row[1], row[2], row[3] = strconv.FormatInt(runID, 10), f.Kind, SafeCell(f.SourceID), SafeCell(f.File)
		row[4], row[5] = strconv.FormatInt(f.Line, 10), SafeCell(f.Reason)
		if f.Line == 0 {
			row[4] = ""
		}
		for _, c := range f.Raw {
			row[at[c.Name]] = SafeCell(c.Value)
		}
		n++
		return cw.Write(row)
	})
	if err != nil {
		return n, err
	}
	cw.Flush()
	return n, cw.Error()
}

// eachFailureSQL: R4, a run's failed records, in the order they failed.
const eachFailureSQL = `SELECT ` + failureColumns + ` WHERE f.migration_id = ? ORDER BY f.id`

// EachFailure hands every failed record of run runID to f, in the order
// they failed, one at a time as the database gives them: memory holds
// one, however many there are. An error of f stops it and is returned.
func EachFailure(ctx context.Context, db *sql.DB, runID int64, f func(Failure) error) error {
	return eachFailureOf(ctx, db, runID, eachFailureSQL, []any{runID}, f)
}

func eachFailureOf(ctx context.Context, db *sql.DB, runID int64, query string, args []any, f func(Failure) error) error {
	var stop error
	err := store.EachRow(ctx, db, query, args, func(rows store.Scanner) error {
		r, err := scanFailure(rows)
		if err != nil {
			return err
		}
		if err := f(r); err != nil {
			stop = err
			return err
		}
		return nil
	})
	switch {
	case stop != nil:
		return stop
	case err != nil:
		return fmt.Errorf("failed records of run %d: %w", runID, err)
	}
	return nil
}

// FailureSource is a file whose rows a run failed, as a task read it: the
// task (0 when not known) with its input (a file, ZIP!/ENTRY; "" when not
// known) and format, the file the failures name (a workbook's sheet, an
// entry), and their kind.
type FailureSource struct {
	Task                      int64
	Input, Format, File, Kind string
	Count                     int64 // how many failed
}

// failureSourcesSQL: R4, the files of a run's failed records, in the order
// their first failed.
const failureSourcesSQL = `
SELECT coalesce(f.task_id, 0), coalesce(t.file, ''), coalesce(t.format, ''), coalesce(f.file, ''), f.kind, count(*)
FROM record_failures f LEFT JOIN migration_tasks t ON t.id = f.task_id
WHERE f.migration_id = ?
GROUP BY coalesce(f.task_id, 0), coalesce(t.file, ''), coalesce(t.format, ''), coalesce(f.file, ''), f.kind
ORDER BY min(f.id)`

// FailureSources lists the files of the failed records of run runID, one
// per task, file and kind, in the order their first failed: few, however
// many failed, so that a writer of them (package fixfile) can read each
// file's failures on their own (EachFailureOf).
func FailureSources(ctx context.Context, db *sql.DB, runID int64) ([]FailureSource, error) {
	out := []FailureSource{}
	err := store.EachRow(ctx, db, failureSourcesSQL, []any{runID}, func(rows store.Scanner) error {
		var s FailureSource
		if err := rows.Scan(&s.Task, &s.Input, &s.Format, &s.File, &s.Kind, &s.Count); err != nil {
			return err
		}
		out = append(out, s)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("failed records of run %d: %w", runID, err)
	}
	return out, nil
}

// failuresOfSourceSQL: R4, the failed records of one file of a run by one
// task, in the order they failed — the order the task read them — by the
// index of a run's failures per kind in id order (record_failures_run): no
// sort, which would hold them all.
const failuresOfSourceSQL = `SELECT ` + failureColumns + `
WHERE f.migration_id = ?1 AND f.kind = ?2 AND coalesce(f.task_id, 0) = ?3 AND coalesce(f.file, '') = ?4
ORDER BY f.id`

// The failed records of one file of a run by several tasks (a file that
// feeds several kinds, SPEC §4): those of each task (failureOfTask, one
// each, OR'ed: each by record_failures_run), in the order the run read
// them — line, then failure — so that the failures of one line by its
// kinds follow each other. That order is a sort: it holds the rows, and
// spills them to a file (store.Open's connections keep temporary data in
// files).
const (
	failuresOfTasksSQL = `SELECT ` + failureColumns + `
WHERE f.migration_id = ? AND coalesce(f.file, '') = ? AND (`
	failureOfTask      = `(f.kind = ? AND coalesce(f.task_id, 0) = ?)`
	failuresOfTasksEnd = `) ORDER BY f.line, f.id`
)

// EachFailureOf hands the failed records of one file of run runID to f,
// one at a time, in the order the run read them: srcs are the file's
// FailureSources, one per task that failed rows of it (all of one input
// and file). With several, a line failed by several of them comes once per
// failure, one after the other.
func EachFailureOf(ctx context.Context, db *sql.DB, runID int64, srcs []FailureSource, f func(Failure) error) error {
	switch len(srcs) {
	case 0:
		return nil
	case 1:
		src := srcs[0]
		return eachFailureOf(ctx, db, runID, failuresOfSourceSQL, []any{runID, src.Kind, src.Task, src.File}, f)
	}
	q, args := failuresOfTasksSQL, []any{runID, srcs[0].File}
	for i, src := range srcs {
		if i > 0 {
			q += " OR "
		}
		q, args = q+failureOfTask, append(args, src.Kind, src.Task)
	}
	return eachFailureOf(ctx, db, runID, q+failuresOfTasksEnd, args, f)
}

// rawCells reads record_failures.raw, a JSON object in file order (the
// importer's rawJSON; "(text)" holds a record that could not be parsed),
// keeping the order. A string is its text, a nested value its JSON.
func rawCells(raw string) []RawCell {
	if raw == "" {
		return []RawCell{}
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return []RawCell{{rawColumn, raw}}
	}
	out := []RawCell{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return []RawCell{{rawColumn, raw}}
		}
		name, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return []RawCell{{rawColumn, raw}}
		}
		out = append(out, RawCell{name, rawValue(v)})
	}
	return out
}

func rawValue(v json.RawMessage) string {
	var s string
	switch {
	case bytes.Equal(v, []byte("null")):
		return ""
	case json.Unmarshal(v, &s) == nil:
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, v) == nil {
		return b.String()
	}
	return string(v)
}

// formulaStarters are the first characters that make a spreadsheet read a
// cell as a formula (OWASP, "CSV Injection"): =, +, -, @, a tab and a
// carriage return; | and %, which older Excel and LibreOffice read as a
// DDE call or a macro; and the full-width forms of them all, which an East
// Asian keyboard types and spreadsheets fold into the plain ones.
const formulaStarters = "=+-@\t\r|%\uff1d\uff0b\uff0d\uff20\uff5c\uff05"

// SafeCell neutralises a cell that a spreadsheet would run as a formula
// (CSV injection): one that starts with a formula starter, or with blanks
// (a space, a no-break space, any white space, a zero-width space) before
// one, which a spreadsheet skips, gets a leading ' so that it shows as
// text. Every other cell is written as it is.
func SafeCell(s string) string {
	if startsFormula(s) || startsFormula(strings.TrimLeftFunc(s, blank)) {
		return "'" + s
	}
	return s
}

func startsFormula(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return s != "" && strings.ContainsRune(formulaStarters, r)
}

// blank is what a spreadsheet skips before a formula: white space of any
// kind (unicode.IsSpace: the space, the no-break space, the ideographic
// space …) and the zero-width space and no-break space.
func blank(r rune) bool {
	return unicode.IsSpace(r) || r == '\u200b' || r == '\ufeff'
}

// RawCells reads a raw row as record_failures keeps it (Failure.RawJSON)
// into its cells in file order, as Failure.Raw holds them: for the review
// grid (package grid), which reads raw rows of its own.
func RawCells(raw string) []RawCell { return rawCells(raw) }

package forensics

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
)

// rejectColumns are the columns every rejects file starts with; the raw
// row's columns follow, the union over the run's failures in the order
// first seen. The shape varies with the files a run read, so the file is
// written with encoding/csv rather than gocsv, which needs a struct.
var rejectColumns = []string{"run", "kind", "source_id", "file", "line", "reason"}

// rawColumn holds a raw value that is not a JSON object (none of ours).
const rawColumn = "(raw)"

// rejectsSQL: R4, a run's failed records, in the order they failed.
// Each with its task's input (R10: the file the plan named), where it has one.
const rejectsSQL = `
SELECT f.id, f.kind, coalesce(f.source_id, ''), coalesce(f.file, ''), coalesce(f.line, 0), f.reason, coalesce(f.raw, ''),
    coalesce(t.file, ''), coalesce(t.format, '')
FROM record_failures f LEFT JOIN migration_tasks t ON t.id = f.task_id
WHERE f.migration_id = ? ORDER BY f.id`

// Rejects writes the failed records of a run to w as CSV: run, kind,
// source_id, file, line, reason, then the raw row's columns. A cell that
// a spreadsheet would run as a formula (SafeCell: one starting with =, +,
// -, @, a tab, a carriage return, | or %, or a full-width form of one,
// blanks before it or not) is written with a leading ' so that it shows as
// text (a negative amount -5 reads '-5). It returns how many records it
// wrote; a run without failures gives the header alone.
func Rejects(ctx context.Context, db *sql.DB, runID int64, w io.Writer) (int, error) {
	if _, err := phases.LoadRun(ctx, db, runID); err != nil {
		return 0, err
	}
	// First the header: every raw column of the run's failures.
	var header []string
	seen := map[string]bool{}
	err := eachReject(ctx, db, runID, func(r reject) error {
		for _, c := range r.raw {
			if !seen[c.name] {
				seen[c.name] = true
				header = append(header, c.name)
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
	err = eachReject(ctx, db, runID, func(r reject) error {
		row = row[:len(rejectColumns)+len(header)]
		for i := range row {
			row[i] = ""
		}
		row[0], row[1], row[2], row[3] = strconv.FormatInt(runID, 10), r.kind, SafeCell(r.sourceID), SafeCell(r.file)
		row[4], row[5] = strconv.FormatInt(r.line, 10), SafeCell(r.reason)
		if r.line == 0 {
			row[4] = ""
		}
		for _, c := range r.raw {
			row[at[c.name]] = SafeCell(c.value)
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

// reject is one row of record_failures, its raw row in file order.
type reject struct {
	id                           int64
	kind, sourceID, file, reason string
	line                         int64
	raw                          []rawCell
	rawJSON                      string
	input, format                string // the task's input (a file, ZIP!/ENTRY) and its format, "" when not known
}

type rawCell struct{ name, value string }

func eachReject(ctx context.Context, db *sql.DB, runID int64, f func(reject) error) error {
	rows, err := db.QueryContext(ctx, rejectsSQL, runID)
	if err != nil {
		return fmt.Errorf("rejects of run %d: %w", runID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var r reject
		if err := rows.Scan(&r.id, &r.kind, &r.sourceID, &r.file, &r.line, &r.reason, &r.rawJSON, &r.input, &r.format); err != nil {
			return fmt.Errorf("rejects of run %d: %w", runID, err)
		}
		r.raw = rawCells(r.rawJSON)
		if err := f(r); err != nil {
			return err
		}
	}
	return rows.Err()
}

// rawCells reads record_failures.raw, a JSON object in file order (the
// importer's rawJSON; "(text)" holds a record that could not be parsed),
// keeping the order. A string is its text, a nested value its JSON.
func rawCells(raw string) []rawCell {
	if raw == "" {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return []rawCell{{rawColumn, raw}}
	}
	var out []rawCell
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return []rawCell{{rawColumn, raw}}
		}
		name, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return []rawCell{{rawColumn, raw}}
		}
		out = append(out, rawCell{name, rawValue(v)})
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

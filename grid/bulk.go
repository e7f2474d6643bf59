package grid

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"crmimport/importer/profile"
	"crmimport/report"
	"crmimport/store"
)

// The bulk operations of the grid.
const (
	OpReplace  = "replace"  // find and replace in a column (12,000.00 → 12000.00)
	OpDate     = "date"     // a column's dates, written in Format, as ISO 8601
	OpFill     = "fill"     // Value filled down a column, below the row From
	OpEncoding = "encoding" // the encoding of a file
)

// Op is a bulk operation on the rows a Query chooses (every page of them),
// in file order.
type Op struct {
	Op      string `json:"op"`
	Column  string `json:"column"`
	Find    string `json:"find"`    // replace: the text to find (as it is, any case kept)
	Replace string `json:"replace"` // replace: what it becomes
	Format  string `json:"format"`  // date: the format the column is written in (DD/MM/YYYY)
	Value   string `json:"value"`   // fill: the value
	// From: fill, the row (a failure id) below which the value is filled
	// (file order); 0 fills every row chosen.
	From     int64  `json:"from"`
	Encoding string `json:"encoding"` // encoding: the file's encoding
	// Command is the command line that imports the run's export again in
	// Encoding (the desktop writes it from the run's options).
	Command string `json:"-"`
}

// Change is one cell a bulk operation changes.
type Change struct {
	Failure  int64  `json:"failure"`
	SourceID string `json:"source_id"`
	Line     int64  `json:"line"`
	Before   string `json:"before"`
	After    string `json:"after"`
}

// MaxExamples is how many changes a result shows.
const MaxExamples = 5

// Result is what a bulk operation changes, or changed: the count of cells
// and the first of them; Left counts the rows it read and left as they are
// (a date not in the format, a value that holds nothing to replace).
type Result struct {
	Op       string   `json:"op"`
	Column   string   `json:"column"`
	Count    int64    `json:"count"`
	Left     int64    `json:"left"`
	Examples []Change `json:"examples"`
	Saved    bool     `json:"saved"`
	// Instead, for an operation the ledger cannot do (an encoding), says
	// what to do instead; nothing is changed.
	Instead string `json:"instead,omitempty"`
	Command string `json:"command,omitempty"` // with Instead: the command that does it
}

// bulkChunk is how many rows a bulk operation reads at a time.
const bulkChunk = 1000

const (
	bulkRowsSQL  = `SELECT f.id, coalesce(f.source_id, ''), coalesce(f.line, 0), coalesce(f.raw, '') FROM record_failures f`
	bulkAfter    = ` AND f.id > ?`
	bulkOrderSQL = ` ORDER BY f.id LIMIT ?`
)

// Bulk runs op over the failed rows of run runID that q chooses (its sort
// and page aside: every row, in file order), a chunk at a time. Without a
// writer (w nil) it previews: it counts the cells op changes and keeps the
// first MaxExamples, reading through db. With one, the same pass saves
// each change as an edit (record_edits) in one transaction of w, reading
// through it: what the preview showed is what is saved. now stamps the
// edits.
func Bulk(ctx context.Context, db, w *sql.DB, runID int64, q Query, op Op, now time.Time) (Result, error) {
	res := Result{Op: op.Op, Column: op.Column, Examples: []Change{}}
	change, err := op.changer()
	if err != nil {
		return res, err
	}
	if change == nil {
		res.Instead, res.Command = EncodingInstead(op.Encoding, q.File, op.Command != ""), op.Command
		return res, nil
	}
	if q.File == "" {
		return res, fmt.Errorf("%w: a bulk operation names its file", ErrBadQuery)
	}
	var read store.Querier = db
	var tx *sql.Tx
	if w != nil {
		if tx, err = store.Begin(ctx, w); err != nil {
			return res, err
		}
		defer tx.Rollback()
		read = tx
	}
	at := now.UTC().Format(time.RFC3339Nano)
	where, args := q.where(statementsOf(db), runID, false, false)
	type row struct {
		id, line int64
		sourceID string
		cells    []report.RawCell
	}
	var after int64
	for {
		var chunk []row
		err := store.EachRow(ctx, read, bulkRowsSQL+where+bulkAfter+bulkOrderSQL, append(append([]any(nil), args...), after, bulkChunk),
			func(rows store.Scanner) error {
				var r row
				var raw string
				if err := rows.Scan(&r.id, &r.sourceID, &r.line, &raw); err != nil {
					return err
				}
				r.cells = report.RawCells(raw)
				chunk = append(chunk, r)
				return nil
			})
		if err != nil {
			return res, fmt.Errorf("bulk %s of run %d: %w", op.Op, runID, err)
		}
		if len(chunk) == 0 {
			break
		}
		after = chunk[len(chunk)-1].id
		ids := make([]int64, len(chunk))
		for i, r := range chunk {
			ids[i] = r.id
		}
		edits, err := Edits(ctx, read, ids)
		if err != nil {
			return res, err
		}
		for _, r := range chunk {
			if len(r.cells) == 1 && r.cells[0].Name == TextColumn {
				continue // not read as a row: no column to change
			}
			asRead, has := "", false
			for _, c := range r.cells {
				if c.Name == op.Column {
					asRead, has = c.Value, true
				}
			}
			cur := asRead
			for _, e := range edits[r.id] {
				if e.Column == op.Column {
					cur, has = e.Value, true
				}
			}
			next, ok := change(r.id, cur, has)
			if !ok || next == cur {
				res.Left++
				continue
			}
			res.Count++
			if len(res.Examples) < MaxExamples {
				res.Examples = append(res.Examples, Change{Failure: r.id, SourceID: r.sourceID, Line: r.line, Before: cur, After: next})
			}
			if tx == nil {
				continue
			}
			stmt, sargs := saveEditSQL, []any{r.id, runID, op.Column, next, at}
			if next == asRead {
				stmt, sargs = dropEditSQL, []any{r.id, op.Column}
			}
			if _, err := tx.ExecContext(ctx, stmt, sargs...); err != nil {
				return res, fmt.Errorf("bulk %s of run %d, failure %d: %w", op.Op, runID, r.id, err)
			}
		}
	}
	if tx != nil {
		if err := tx.Commit(); err != nil {
			return res, err
		}
		res.Saved = true
	}
	return res, nil
}

// changer is op as a function of a cell (the row's failure id, its value
// now, whether the row has the column) to its new value, ok false when it
// leaves it; nil for an operation that changes no cell (an encoding).
func (op Op) changer() (func(id int64, v string, has bool) (string, bool), error) {
	if op.Op != OpEncoding && op.Column == "" {
		return nil, fmt.Errorf("%w: %s names no column", ErrBadQuery, op.Op)
	}
	switch op.Op {
	case OpReplace:
		if op.Find == "" {
			return nil, fmt.Errorf("%w: find is empty: name the text to replace", ErrBadQuery)
		}
		return func(_ int64, v string, has bool) (string, bool) {
			if !has || !strings.Contains(v, op.Find) {
				return v, false
			}
			return strings.ReplaceAll(v, op.Find, op.Replace), true
		}, nil
	case OpDate:
		if _, _, err := profile.ReformatDate(op.Format, ""); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadQuery, err)
		}
		return func(_ int64, v string, has bool) (string, bool) {
			if !has {
				return v, false
			}
			iso, ok, _ := profile.ReformatDate(op.Format, v)
			return iso, ok
		}, nil
	case OpFill:
		return func(id int64, v string, _ bool) (string, bool) {
			if id <= op.From {
				return v, false
			}
			return op.Value, true
		}, nil
	case OpEncoding:
		if strings.TrimSpace(op.Encoding) == "" {
			return nil, fmt.Errorf("%w: name the file's encoding", ErrBadQuery)
		}
		return nil, nil
	}
	return nil, fmt.Errorf("%w: %q is none of replace, date, fill, encoding", ErrBadQuery, op.Op)
}

// EncodingInstead says why the grid does not re-decode a file, and what
// does: the ledger keeps each failed row as it was decoded
// (record_failures.raw, text), not its bytes, so a byte decoded wrongly is
// not there to decode again — and a row decoded wrongly that did not fail
// was imported so. command tells whether the page shows the command that
// imports the run's export again (not when the run names no export here).
func EncodingInstead(enc, file string, command bool) string {
	s := fmt.Sprintf("The ledger keeps each failed row as text, decoded when it was read, not the file's bytes: "+
		"the rows of %s cannot be decoded again as %s here, and nothing was changed. ", file, enc)
	then := "The failed rows are read again; a record imported before that reads otherwise in %s is listed as outdated, " +
		"and nothing is written over it until you check it and apply the changes (--update)."
	if !command {
		return s + fmt.Sprintf("Import the export again with its encoding (--encoding %s). "+then, enc, enc)
	}
	return s + fmt.Sprintf("Import the export again with its encoding, with the command below. "+then, enc)
}

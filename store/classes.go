package store

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strings"
)

// ReasonClass groups failure reasons that differ only in the value they
// quote or the place they point to: `email "x" is not …` → `email "…" is
// not …`, `… at line 4, column 19` → `… at line …, column …`, and a
// duplicate's `, first at FILE:LINE` goes. It is kept beside each reason
// in record_failures.reason_class, written with the failure in its batch
// (R4, R12) and given to older rows by the schema step that made the
// column, so that the pages filter, count and page a run's failed records
// by class in SQL however many there are (issue 23 item 15).
func ReasonClass(reason string) string {
	if i := strings.Index(reason, ", first at "); i >= 0 {
		reason = reason[:i]
	}
	reason = position.ReplaceAllString(reason, "line …, column …")
	return quoted.ReplaceAllString(reason, `"…"`)
}

var (
	quoted   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	position = regexp.MustCompile(`\bline \d+, column \d+\b`)
)

// classChunk is how many failures classFailures reads at a time.
const classChunk = 1000

// unclassedSQL: the failures written before schema 12 (SQLite; 4 on
// PostgreSQL), which have no reason class yet, a chunk at a time.
const unclassedSQL = `SELECT id, reason FROM record_failures WHERE reason_class IS NULL AND id > ? ORDER BY id LIMIT ?`

const classSQL = `UPDATE record_failures SET reason_class = ? WHERE id = ?`

// classFailures gives every failure the step finds its reason class: the
// fill of the schema step failure_classes, in its transaction. It reads a
// chunk, closes it, then writes it (one connection answers one statement
// at a time), so that memory holds a chunk however many failures there
// are.
func classFailures(ctx context.Context, tx *sql.Tx) error {
	upd, err := tx.PrepareContext(ctx, classSQL)
	if err != nil {
		return fmt.Errorf("class failure reasons: %w", err)
	}
	defer upd.Close()
	type failure struct {
		id     int64
		reason string
	}
	var after int64
	for {
		rows, err := tx.QueryContext(ctx, unclassedSQL, after, classChunk)
		if err != nil {
			return fmt.Errorf("class failure reasons: %w", err)
		}
		var chunk []failure
		for rows.Next() {
			var f failure
			if err := rows.Scan(&f.id, &f.reason); err != nil {
				rows.Close()
				return fmt.Errorf("class failure reasons: %w", err)
			}
			chunk = append(chunk, f)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("class failure reasons: %w", err)
		}
		for _, f := range chunk {
			if _, err := upd.ExecContext(ctx, ReasonClass(f.reason), f.id); err != nil {
				return fmt.Errorf("class failure %d: %w", f.id, err)
			}
		}
		if len(chunk) < classChunk {
			return nil
		}
		after = chunk[len(chunk)-1].id
	}
}

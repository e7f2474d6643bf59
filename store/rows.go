package store

import (
	"context"
	"database/sql"
)

// Scanner is a row being read (*sql.Rows, *sql.Row).
type Scanner interface{ Scan(dest ...any) error }

// Querier is what a query runs on: a *sql.DB, a *sql.Tx or a *sql.Conn.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// EachRow runs query on q and calls f for every row, in order; the rows
// are closed however it ends, and the first error ends it (f's, or the
// rows' own, which a loop over rows.Next alone would leave unread).
func EachRow(ctx context.Context, q Querier, query string, args []any, f func(Scanner) error) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := f(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

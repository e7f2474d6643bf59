package report

import (
	"context"
	"database/sql"
)

// scanner is a row being read.
type scanner interface{ Scan(dest ...any) error }

// queryEach runs a query and calls f for every row.
func queryEach(ctx context.Context, db *sql.DB, query string, args []any, f func(scanner) error) error {
	rows, err := db.QueryContext(ctx, query, args...)
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

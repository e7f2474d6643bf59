package store

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOpenAddsRecordEdits: a database written before the review grid
// (SQLite's schema 19, PostgreSQL's 11) opens with the table of pending
// edits (issue 27 item 1: a changed cell per failure and column, kept in
// the database until it is re-imported) and the index of failures per
// file; its failures are kept, an edit of one of them is written, an edit
// of a failure that is not there is refused (a foreign key), and one cell
// holds one edit (the primary key: the next edit of it replaces it).
func TestOpenAddsRecordEdits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	insert := func(t *testing.T, exec func(string, ...any) error) {
		t.Helper()
		require.NoError(t, exec(`INSERT INTO migrations (id, tenant_id, source, status, started_at) VALUES (1, 'acme', 'canonical', 'partial', 'then')`))
		require.NoError(t, exec(`INSERT INTO record_failures (id, migration_id, kind, source_id, file, line, reason, reason_class, raw)
			VALUES (7, 1, 'deal', 'd-1', 'deals.csv', 2, 'amount "12,000.00" is not a number', 'amount "…" is not a number', '{"id":"d-1","amount":"12,000.00"}')`))
	}
	check := func(t *testing.T, db *sql.DB) {
		t.Helper()
		var n int
		require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM record_failures WHERE id = 7`).Scan(&n))
		require.Equal(t, 1, n, "the upgrade keeps the failures")
		const edit = `INSERT INTO record_edits (failure_id, migration_id, column_name, value, edited_at) VALUES (?, 1, 'amount', ?, 'now')
			ON CONFLICT (failure_id, column_name) DO UPDATE SET value = excluded.value, fix_run = NULL`
		_, err := db.ExecContext(ctx, edit, 7, "12000")
		require.NoError(t, err)
		_, err = db.ExecContext(ctx, edit, 7, "12000.00")
		require.NoError(t, err)
		var v string
		require.NoError(t, db.QueryRowContext(ctx, `SELECT value FROM record_edits WHERE failure_id = 7`).Scan(&v))
		require.Equal(t, "12000.00", v, "one cell, one edit: the latest")
		_, err = db.ExecContext(ctx, edit, 8, "1")
		require.True(t, DialectOf(db).IsConstraint(err), "an edit of no failure is refused: %v", err)
		require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM record_failures WHERE migration_id = 1 AND file = 'deals.csv' AND kind = 'deal'`).Scan(&n))
		require.Equal(t, 1, n)
	}

	afterUpgrade(t, 19, 11, insert, func(t *testing.T, db *sql.DB) {
		check(t, db)
		var there bool
		switch d := DialectOf(db); d {
		case SQLite:
			require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) = 1 FROM sqlite_master WHERE type = 'index' AND name = 'record_failures_file'`).Scan(&there))
		case Postgres:
			require.NoError(t, db.QueryRowContext(ctx, `SELECT to_regclass('record_failures_file') IS NOT NULL`).Scan(&there))
		default:
			t.Fatalf("no test of the index on %s", d)
		}
		require.True(t, there, "the index of failures per file")
	})
}

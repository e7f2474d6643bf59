package store

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/store/pgtest"
)

// Statements written with SQLite's placeholders run on a real PostgreSQL
// server through PostgresDriver: directly, prepared, and in a transaction,
// with a literal '?' left alone.
func TestPostgresDriverRebindsEveryPath(t *testing.T) {
	ctx := context.Background()
	c, err := pgtest.Start(ctx, "")
	require.NoError(t, err, "start a throwaway PostgreSQL cluster")
	t.Cleanup(func() { require.NoError(t, c.Stop()) })
	db, err := sql.Open(PostgresDriver, c.DSN())
	require.NoError(t, err)
	defer db.Close()

	_, err = db.ExecContext(ctx, `CREATE TABLE t (a integer, b text)`)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `INSERT INTO t (a, b) VALUES (?1, ?2), (?, ?)`, 1, "one", 2, "?")
	require.NoError(t, err)

	st, err := db.PrepareContext(ctx, `SELECT b FROM t WHERE a = ? AND b <> '?'`)
	require.NoError(t, err)
	var b string
	require.NoError(t, st.QueryRowContext(ctx, 1).Scan(&b))
	require.Equal(t, "one", b)
	require.ErrorIs(t, st.QueryRowContext(ctx, 2).Scan(&b), sql.ErrNoRows, "the literal '?' was compared as text")
	require.NoError(t, st.Close())

	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	res, err := tx.ExecContext(ctx, `UPDATE t SET b = ?2 WHERE a = ?1`, 2, "two")
	require.NoError(t, err)
	n, err := res.RowsAffected()
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	require.NoError(t, tx.Commit())
	var got []string
	rows, err := db.QueryContext(ctx, `SELECT b FROM t WHERE a >= ? ORDER BY a`, 1)
	require.NoError(t, err)
	for rows.Next() {
		require.NoError(t, rows.Scan(&b))
		got = append(got, b)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"one", "two"}, got)
}

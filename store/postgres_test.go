package store

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/store/pgtest"
)

// Statements written with SQLite's placeholders run on a real PostgreSQL
// server through PostgresDB: directly, prepared, and in a transaction,
// with a literal '?' left alone.
func TestPostgresDriverRebindsEveryPath(t *testing.T) {
	ctx := context.Background()
	c, err := pgtest.Start(ctx, "")
	require.NoError(t, err, "start a throwaway PostgreSQL cluster")
	t.Cleanup(func() { require.NoError(t, c.Stop()) })
	db, err := PostgresDB(c.DSN())
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

// PostgreSQL's refusals are told apart by their SQLSTATE, as SQLite's are
// by their result codes: a constraint (a record's fault), a unique key, a
// primary key (an engine error), a lock given up on; and each dialect
// answers for its own driver's errors only.
func TestPostgresErrorsAreClassifiedByCode(t *testing.T) {
	ctx := context.Background()
	c, err := pgtest.Start(ctx, "")
	require.NoError(t, err, "start a throwaway PostgreSQL cluster")
	t.Cleanup(func() { require.NoError(t, c.Stop()) })
	db, err := PostgresDB(c.DSN())
	require.NoError(t, err)
	defer db.Close()
	require.Equal(t, Postgres, DialectOf(db))
	for _, q := range []string{
		`CREATE TABLE parents (id integer PRIMARY KEY)`,
		`CREATE TABLE kids (id integer PRIMARY KEY, parent integer REFERENCES parents (id), email text UNIQUE, n integer NOT NULL CHECK (n > 0))`,
		`INSERT INTO parents (id) VALUES (1)`,
		`INSERT INTO kids (id, parent, email, n) VALUES (1, 1, 'a@b', 1)`,
	} {
		_, err := db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	insert := func(id, parent int, email string, n any) error {
		_, err := db.ExecContext(ctx, `INSERT INTO kids (id, parent, email, n) VALUES (?, ?, ?, ?)`, id, parent, email, n)
		return err
	}
	for _, tc := range []struct {
		name                        string
		err                         error
		constraint, unique, primary bool
	}{
		{"primary key", insert(1, 1, "x@y", 1), true, true, true},
		{"unique", insert(2, 1, "a@b", 1), true, true, false},
		{"foreign key", insert(3, 9, "c@d", 1), true, false, false},
		{"not null", insert(4, 1, "e@f", nil), true, false, false},
		{"check", insert(5, 1, "g@h", 0), true, false, false},
	} {
		require.Error(t, tc.err, tc.name)
		require.Equal(t, tc.constraint, IsConstraint(tc.err), tc.name)
		require.Equal(t, tc.unique, IsUnique(tc.err), tc.name)
		require.Equal(t, tc.primary, IsPrimaryKey(tc.err), tc.name)
		require.False(t, IsBusy(tc.err), tc.name)
		require.False(t, SQLite.IsConstraint(tc.err), "SQLite answers for its own errors only")
	}

	// A lock given up on: NOWAIT on a row another transaction holds.
	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer tx.Rollback()
	_, err = tx.ExecContext(ctx, `SELECT id FROM parents WHERE id = 1 FOR UPDATE`)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `SELECT id FROM parents WHERE id = 1 FOR UPDATE NOWAIT`)
	require.Error(t, err)
	require.True(t, IsBusy(err), "%v", err)
	require.False(t, IsConstraint(err))
}

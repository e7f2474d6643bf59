package store

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/store/pgtest"
)

// afterUpgrade tests an upgrade on both engines: a database made at an
// older schema (SQLite's sqliteAt, PostgreSQL's postgresAt), given rows by
// insert through a plain connection, then opened by Open, which upgrades
// it; check reads what the upgrade left.
func afterUpgrade(t *testing.T, sqliteAt, postgresAt int, insert func(*testing.T, func(string, ...any) error), check func(*testing.T, *sql.DB)) {
	t.Helper()
	ctx := context.Background()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "crm.db")
		fileOfVersion(t, path, sqliteAt)
		raw, err := sql.Open("sqlite", path)
		require.NoError(t, err)
		insert(t, func(q string, args ...any) error { _, err := raw.ExecContext(ctx, q, args...); return err })
		require.NoError(t, raw.Close())
		db, err := Open(ctx, path)
		require.NoError(t, err)
		defer db.Close()
		check(t, db)
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		c, err := pgtest.Start(ctx, "")
		require.NoError(t, err, "start a throwaway PostgreSQL cluster")
		t.Cleanup(func() { require.NoError(t, c.Stop()) })
		raw, err := PostgresDB(c.DSN() + "&search_path=" + DefaultPostgresSchema)
		require.NoError(t, err)
		defer raw.Close()
		all, err := steps(Postgres)
		require.NoError(t, err)
		_, err = raw.ExecContext(ctx, `CREATE SCHEMA `+DefaultPostgresSchema)
		require.NoError(t, err)
		for _, s := range all[:postgresAt] {
			_, err = raw.ExecContext(ctx, s.sql)
			require.NoError(t, err, s.name)
		}
		_, err = raw.ExecContext(ctx, pgSetVersionSQL+fmt.Sprintf(` INSERT INTO crmimport_schema_version (version) VALUES (%d)`, postgresAt))
		require.NoError(t, err)
		insert(t, func(q string, args ...any) error { _, err := raw.ExecContext(ctx, Rebind(q), args...); return err })
		db, err := OpenPostgres(ctx, c.DSN())
		require.NoError(t, err)
		defer db.Close()
		check(t, db)
	})
}

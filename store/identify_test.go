package store

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// foreignFile writes a SQLite file of another application with the
// statements given, closes it, and returns its path and bytes.
func foreignFile(t *testing.T, name string, stmts ...string) (string, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	raw, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	for _, s := range stmts {
		_, err := raw.Exec(s)
		require.NoError(t, err, s)
	}
	require.NoError(t, raw.Close())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return path, b
}

// TestOpenWritesNothingToAnotherApplicationsFile: issue 11 item 9. A file
// that holds other tables is refused before any write — no schema, no
// switch to WAL, no -wal or -shm beside it — and the refusal says what the
// file is. Both ways of opening refuse it.
func TestOpenWritesNothingToAnotherApplicationsFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := []struct {
		name  string
		stmts []string
		says  string
	}{
		{"OtherTables", []string{`CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)`, `INSERT INTO users VALUES (1, 'ann')`},
			"holds the tables of another application (users)"},
		{"OwnContactsAndUserVersion", []string{`CREATE TABLE contacts (id INTEGER PRIMARY KEY)`, `PRAGMA user_version = 3`},
			"holds the tables of another application (contacts)"},
		{"OtherApplicationID", []string{`PRAGMA application_id = 42`, `CREATE TABLE t (x)`},
			"another application (application_id 0x2a)"},
		{"WALModeClosedCleanly", []string{`PRAGMA journal_mode = WAL`, `CREATE TABLE notes (body TEXT)`, `INSERT INTO notes VALUES ('x')`},
			"holds the tables of another application (notes)"},
		{"OurNamesNoVersion", []string{`CREATE TABLE migrations (id)`, `CREATE TABLE migration_tasks (id)`,
			`CREATE TABLE migration_records (id)`, `CREATE TABLE record_failures (id)`, `CREATE TABLE run_log (id)`},
			"no schema version"},
		{"NoTablesButAVersion", []string{`PRAGMA user_version = 7`}, "no tables but a user_version of 7"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path, before := foreignFile(t, "app.db", c.stmts...)
			for _, open := range []func(context.Context, string) (*sql.DB, error){Open, OpenExisting} {
				db, err := open(ctx, path)
				if db != nil {
					db.Close()
				}
				var not *NotOursError
				require.ErrorAs(t, err, &not)
				require.ErrorContains(t, err, c.says)
				require.ErrorContains(t, err, "crmimport writes nothing to it")
				after, rerr := os.ReadFile(path)
				require.NoError(t, rerr)
				require.Equal(t, before, after, "the file's bytes, its header (journal mode) included")
				for _, side := range []string{"-wal", "-shm", "-journal"} {
					_, serr := os.Stat(path + side)
					require.True(t, errors.Is(serr, os.ErrNotExist), "no %s file beside it", side)
				}
			}
		})
	}
}

// TestOpenExistingNeverCreates: issue 11 item 9. A command that only reads
// is refused on a path where no database is, and makes no file there.
func TestOpenExistingNeverCreates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "typo.db")
	_, err := OpenExisting(ctx, path)
	require.ErrorIs(t, err, ErrNoDatabase)
	require.ErrorContains(t, err, "typo.db")
	_, serr := os.Stat(path)
	require.True(t, errors.Is(serr, os.ErrNotExist), "no file made")

	db, err := Open(ctx, path)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	db, err = OpenExisting(ctx, path)
	require.NoError(t, err, "a database made by Open is ours")
	var app int64
	require.NoError(t, db.QueryRowContext(ctx, `PRAGMA application_id`).Scan(&app))
	require.Equal(t, int64(AppID), app)
	require.NoError(t, db.Close())
}

// TestOpenTakesEmptyAndOlderFiles: an empty file, an empty SQLite file and
// a file of an older schema (no application id yet) are ours.
func TestOpenTakesEmptyAndOlderFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	emptySQLite, _ := foreignFile(t, "empty-sqlite.db", `PRAGMA user_version = 0`)
	all, err := steps(SQLite)
	require.NoError(t, err)
	older, _ := foreignFile(t, "v3.db", all[0].sql, all[1].sql, all[2].sql, `PRAGMA user_version = 3`)
	for _, path := range []string{empty, emptySQLite, older} {
		db, err := Open(ctx, path)
		require.NoError(t, err, path)
		var v int
		require.NoError(t, db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v))
		require.Equal(t, Version(), v, path)
		require.NoError(t, db.Close())
	}
}

// TestOpenPathsWithURICharacters: a path may hold '?', '#' and '%'; the
// database is made at that very path.
func TestOpenPathsWithURICharacters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "a b?c#d%20e")
	require.NoError(t, os.Mkdir(dir, 0o700))
	path := filepath.Join(dir, "crm?.db")
	db, err := Open(ctx, path)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Greater(t, st.Size(), int64(0), "the schema is in the file at that path")
	entries, err := os.ReadDir(filepath.Dir(dir))
	require.NoError(t, err)
	require.Len(t, entries, 1, "nothing made beside it under a cut-off name")
}

// TestOpenReaderWritesNothing: the desktop's read pool reads what the
// writer commits and refuses every write.
func TestOpenReaderWritesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "crm.db")
	w, err := Open(ctx, path)
	require.NoError(t, err)
	defer w.Close()
	r, err := OpenReader(ctx, path)
	require.NoError(t, err)
	defer r.Close()
	_, err = w.ExecContext(ctx, `INSERT INTO migrations (tenant_id, source, status, started_at) VALUES ('t', 's', 'succeeded', 'x')`)
	require.NoError(t, err)
	var n int
	require.NoError(t, r.QueryRowContext(ctx, `SELECT count(*) FROM migrations`).Scan(&n))
	require.Equal(t, 1, n, "a reader sees what the writer committed")
	_, err = r.ExecContext(ctx, `DELETE FROM migrations`)
	require.Error(t, err, "a reader writes nothing")
	_, err = OpenReader(ctx, filepath.Join(t.TempDir(), "none.db"))
	require.ErrorIs(t, err, ErrNoDatabase)
}

package store

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWriteOutputRefusesDatabases: an output file that is the database in
// use — by its name, another spelling, a symlink, a hard link — or its
// -wal, -shm or -journal (there or not), or any other SQLite file, is
// refused before anything is written: the message names the file and what
// it is, the write is never called, and the database's bytes and rows are
// as before.
func TestWriteOutputRefusesDatabases(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "crm.db")
	db, err := Open(ctx, dbPath)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `INSERT INTO migrations (tenant_id, source, status, started_at, message)
		VALUES ('acme', 'canonical', 'succeeded', 'x', 'kept')`)
	require.NoError(t, err)
	require.NoError(t, db.Close()) // the -wal is checkpointed and removed
	_, err = os.Stat(dbPath + "-wal")
	require.ErrorIs(t, err, os.ErrNotExist)

	other := filepath.Join(dir, "other.db")
	odb, err := Open(ctx, other)
	require.NoError(t, err)
	require.NoError(t, odb.Close())

	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o700))
	require.NoError(t, os.Symlink(dbPath, filepath.Join(dir, "link.csv")))
	require.NoError(t, os.Symlink("../crm.db", filepath.Join(sub, "relative-link.csv")))
	require.NoError(t, os.Symlink(filepath.Join(dir, "link.csv"), filepath.Join(dir, "link-to-link.csv")))
	require.NoError(t, os.Symlink(dbPath+"-wal", filepath.Join(dir, "dangling-wal.csv")))
	require.NoError(t, os.Link(dbPath, filepath.Join(dir, "hard.csv")))
	require.NoError(t, os.Symlink(dir, filepath.Join(sub, "up")))

	before, err := os.ReadFile(dbPath)
	require.NoError(t, err)
	for _, tc := range []struct {
		name, out, what string
	}{
		{"TheDatabase", dbPath, "the database in use"},
		{"AnotherSpelling", filepath.Join(sub, "..", "crm.db"), "the database in use"},
		{"ThroughALinkedFolder", filepath.Join(sub, "up", "crm.db"), "the database in use"},
		{"Symlink", filepath.Join(dir, "link.csv"), "the database in use"},
		{"RelativeSymlink", filepath.Join(sub, "relative-link.csv"), "the database in use"},
		{"SymlinkToSymlink", filepath.Join(dir, "link-to-link.csv"), "the database in use"},
		{"HardLink", filepath.Join(dir, "hard.csv"), "the database in use (" + dbPath + ") under another name"},
		{"WALNotThere", dbPath + "-wal", "the write-ahead log of the database in use"},
		{"SHMNotThere", dbPath + "-shm", "the shared-memory index of the database in use"},
		{"JournalNotThere", dbPath + "-journal", "the rollback journal of the database in use"},
		{"SymlinkToWALNotThere", filepath.Join(dir, "dangling-wal.csv"), "the write-ahead log of the database in use"},
		{"AnotherSQLiteFile", other, "a SQLite database (it begins with SQLite's header)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			called := false
			err := WriteOutput(dbPath, tc.out, func(w io.Writer) error {
				called = true
				_, err := io.WriteString(w, "run,kind\n")
				return err
			})
			var refused *RefusedOutputError
			require.ErrorAs(t, err, &refused)
			require.Contains(t, err.Error(), "will not write "+tc.out+": it is "+tc.what)
			require.Contains(t, err.Error(), "name another file")
			require.False(t, called, "nothing is written")
		})
	}
	after, err := os.ReadFile(dbPath)
	require.NoError(t, err)
	require.Equal(t, before, after, "the database's bytes are unchanged")
	_, err = os.Stat(dbPath + "-wal")
	require.ErrorIs(t, err, os.ErrNotExist, "no -wal was made")
	db, err = Open(ctx, dbPath)
	require.NoError(t, err)
	defer db.Close()
	var msg string
	require.NoError(t, db.QueryRowContext(ctx, `SELECT message FROM migrations`).Scan(&msg))
	require.Equal(t, "kept", msg)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		require.False(t, strings.HasSuffix(e.Name(), ".tmp"), "no temporary file is left: %s", e.Name())
	}

	// With the database open, its -wal and -shm exist: the same files.
	_, err = db.ExecContext(ctx, `INSERT INTO migrations (tenant_id, source, status, started_at) VALUES ('b', 'canonical', 'failed', 'x')`)
	require.NoError(t, err)
	require.NoError(t, os.Link(dbPath+"-wal", filepath.Join(dir, "hard-wal.csv")))
	for _, out := range []string{dbPath + "-wal", dbPath + "-shm", filepath.Join(dir, "hard-wal.csv")} {
		err := WriteOutput(dbPath, out, func(io.Writer) error { return errors.New("called") })
		var refused *RefusedOutputError
		require.ErrorAs(t, err, &refused, out)
	}
	var n int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM migrations`).Scan(&n))
	require.Equal(t, 2, n)

	// A write-ahead log with frames is refused by its magic number too,
	// when no database is named (a server's database is in use).
	err = WriteOutput("", filepath.Join(dir, "hard-wal.csv"), func(io.Writer) error { return errors.New("called") })
	var refused *RefusedOutputError
	require.ErrorAs(t, err, &refused)
	require.Contains(t, err.Error(), "the write-ahead log of a SQLite database")
}

// TestWriteOutputReplacesWhole: a new file is made 0600; an existing file
// that is no database is replaced (a nightly report keeps working) and
// keeps its permissions; a symlink's target is replaced and the link kept;
// a write that fails leaves the old file whole and no temporary file; a
// device is written directly.
func TestWriteOutputReplacesWhole(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "crm.db")
	write := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}

	out := filepath.Join(dir, "r.html")
	require.NoError(t, WriteOutput(dbPath, out, write("night 1\n")))
	st, err := os.Stat(out)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "a new file holds customer data")
	require.NoError(t, os.Chmod(out, 0o640))
	require.NoError(t, WriteOutput(dbPath, out, write("night 2\n")))
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Equal(t, "night 2\n", string(b))
	st, err = os.Stat(out)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o640), st.Mode().Perm(), "a replaced file keeps its permissions")

	err = WriteOutput(dbPath, out, func(w io.Writer) error {
		_, _ = io.WriteString(w, "half of night 3")
		return errors.New("disk full")
	})
	require.ErrorContains(t, err, "disk full ("+out+" is left as it was)")
	b, err = os.ReadFile(out)
	require.NoError(t, err)
	require.Equal(t, "night 2\n", string(b), "a failed write leaves the old file whole")

	real := filepath.Join(dir, "published", "r.html")
	require.NoError(t, os.Mkdir(filepath.Dir(real), 0o700))
	require.NoError(t, os.WriteFile(real, []byte("old"), 0o644))
	link := filepath.Join(dir, "latest.html")
	require.NoError(t, os.Symlink(real, link))
	require.NoError(t, WriteOutput(dbPath, link, write("new")))
	b, err = os.ReadFile(real)
	require.NoError(t, err)
	require.Equal(t, "new", string(b), "the link's target is replaced")
	lst, err := os.Lstat(link)
	require.NoError(t, err)
	require.NotZero(t, lst.Mode()&os.ModeSymlink, "the link is kept")

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		require.False(t, strings.HasSuffix(e.Name(), ".tmp"), "no temporary file is left: %s", e.Name())
	}

	require.NoError(t, WriteOutput(dbPath, os.DevNull, write("discarded")), "a device is written directly")
	err = WriteOutput(dbPath, dir, write("x"))
	require.ErrorContains(t, err, "it is a folder")
	err = WriteOutput(dbPath, filepath.Join(dir, "missing", "r.csv"), write("x"))
	require.ErrorContains(t, err, "folder "+filepath.Join(dir, "missing")+" does not exist")
}

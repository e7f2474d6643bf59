package desktop

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/store"
	"crmimport/store/storetest"
)

// TestTheServerKeepsItsLocks (issue 23 item 1): SQLite's locks belong to
// the process, and closing any descriptor of the database file inside it
// drops them all — after which another process's connection, closing,
// deletes the -wal and -shm from under the server. With a write
// transaction held on the server's own writer connection, every path of
// the server that touches the database's name leaves a second process
// seeing the server's locks where they were, and the sqlite3 shell,
// reading the file as doctor's repairs do, leaves the -wal and -shm in
// place.
func TestTheServerKeepsItsLocks(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "crm.db")
	s := testServer(t, path) // ui start: the writer, then the pages' pool
	pid := os.Getpid()
	held := func(t *testing.T, step string, writing bool) {
		t.Helper()
		l := storetest.ProbeLocks(t, path)
		require.Equal(t, pid, l.Shared, "%s: the server's read lock on the database file (every connection holds one)", step)
		require.Equal(t, pid, l.DMS, "%s: the server's lock on the -shm file", step)
		if writing {
			require.Equal(t, pid, l.Writer, "%s: the server's write transaction", step)
		}
	}
	held(t, "ui start", false)

	ctx := context.Background()
	tx, err := store.Begin(ctx, s.db) // a batch in flight on the server's writer
	require.NoError(t, err)
	defer tx.Rollback()
	_, err = tx.ExecContext(ctx, `UPDATE migrations SET message = 'held' WHERE id = 1`)
	require.NoError(t, err)
	held(t, "a write transaction", true)

	// identify: the checks of Open, OpenExisting and OpenReader read the
	// file's header by name.
	ro, err := store.OpenReader(ctx, path)
	require.NoError(t, err)
	require.NoError(t, ro.Close())
	held(t, "identify (OpenReader)", true)
	other, err := store.OpenExisting(ctx, path)
	require.NoError(t, err)
	require.NoError(t, other.Close())
	held(t, "identify (OpenExisting)", true)

	// The --out refusals: the database, its sidecars, a hard link to it,
	// and any SQLite file are refused, reading their first bytes.
	link := filepath.Join(t.TempDir(), "also-crm.db")
	require.NoError(t, os.Link(path, link))
	for _, out := range []string{path, path + "-wal", path + "-shm", link} {
		for _, db := range []string{path, ""} {
			if db == "" && (strings.HasSuffix(out, "-shm") || strings.HasSuffix(out, "-wal")) {
				continue // the sidecars of no database named: empty, nothing tells them from any file
			}
			err := store.WriteOutput(db, out, func(io.Writer) error { return nil })
			var refused *store.RefusedOutputError
			require.ErrorAs(t, err, &refused, "%s (database %q)", out, db)
			held(t, "--out "+out, true)
		}
	}

	// The dry-run copy, from the page.
	w := s.post(t, "/api/imports", map[string]any{"path": "../fixtures/demo", "tenant": "acme", "source": "canonical", "dry_run": true})
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	held(t, "the dry-run copy", true)

	// Doctor and the pages.
	for _, p := range []string{"/api/doctor", "/ledger", "/", "/runs/1"} {
		w := s.do(t, req{http.MethodGet, p, s.addr, nil, true})
		require.Equal(t, http.StatusOK, w.Code, "%s: %s", p, w.Body.String())
		held(t, p, true)
	}
	require.NoError(t, tx.Rollback())
	held(t, "after the transaction", false)

	// The sqlite3 shell, as doctor's repairs read the file, from another
	// process: it must find it is not the last connection.
	shell, err := exec.LookPath("sqlite3")
	require.NoError(t, err, "this test runs the sqlite3 shell: apt-get install -y sqlite3 (make test installs it)")
	out, err := exec.Command(shell, path, "SELECT count(*) FROM migrations").CombinedOutput()
	require.NoError(t, err, string(out))
	require.Equal(t, "1", strings.TrimSpace(string(out)))
	for _, f := range []string{path + "-wal", path + "-shm"} {
		_, err := os.Stat(f)
		require.NoError(t, err, "the shell left %s in place: the server still holds its locks", filepath.Base(f))
	}
	held(t, "the sqlite3 shell", false)
}

// TestAnExportFolderThatHoldsTheDatabase (issue 23 item 1): a consultant
// keeps crm.db in the export's folder and points the page at that folder —
// inspect, suggest, a dry run and an import read every file of it but the
// database, which they must not open and close: the server keeps its
// locks.
func TestAnExportFolderThatHoldsTheDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"companies.csv", "contacts.csv"} {
		b, err := os.ReadFile(filepath.Join("../fixtures/demo", name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o600))
	}
	path := filepath.Join(dir, "crm.db")
	s := testServer(t, path)
	pid := os.Getpid()
	held := func(step string) {
		t.Helper()
		l := storetest.ProbeLocks(t, path)
		require.Equal(t, pid, l.Shared, "%s: the server's read lock on the database file", step)
		require.Equal(t, pid, l.DMS, "%s: the server's lock on the -shm file", step)
	}
	held("ui start")
	for _, step := range []struct {
		path string
		body map[string]any
	}{
		{"/api/inspect", map[string]any{"path": dir, "source": "canonical"}},
		{"/api/profiles/suggest", map[string]any{"paths": []string{dir}}},
		{"/api/imports", map[string]any{"path": dir, "tenant": "acme", "source": "canonical", "dry_run": true}},
	} {
		w := s.post(t, step.path, step.body)
		require.Less(t, w.Code, 300, "%s: %s", step.path, w.Body.String())
		held(step.path)
	}
}

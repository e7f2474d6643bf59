package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/importer"
	"crmimport/store"
	"crmimport/store/storetest"
)

// writeExport writes files (name -> content) into a new folder.
func writeExport(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600))
	}
	return dir
}

const (
	storyCompanies = "id,name,domain\nco-1,Acme,acme.example\n"
	storyContacts  = "id,first_name,last_name,email,company_id\nc-1,Ann,Archer,ann@acme.example,co-1\nc-2,Bob,Baker,bob@acme.example,co-1\n"
	storyNotes     = "id,body,contact_id\nn-1,\"Called; they want a quote, \"\"soon\"\"\",c-1\nn-2,Sent the deck,c-2\nn-3,\"Two\nlines\",c-1\n"
	storyActs      = "id,type,subject,contact_id\na-1,call,Intro call,c-2\n"
)

// TestPoisonedLedgerStory is the seed's first incident, end to end: notes
// skipped while their contacts are missing; the contacts imported by a
// second run; `run --only notes,activities` takes every skipped note over,
// and no note slot still carries the first run's verdict (R3).
func TestPoisonedLedgerStory(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, path string) {
		base := []string{"--db", path, "--json", "run", "--tenant", "acme", "--source", "canonical"}

		// Run 1: the contacts are missing from the export.
		first := writeExport(t, map[string]string{"companies.csv": storyCompanies, "notes.csv": storyNotes, "activities.csv": storyActs})
		r := crm(t, nil, append(base, "--strict", first)...)
		require.Equal(t, exitStrict, r.code, "skips alone succeed, but --strict exits 7: %s", r.stderr)
		s := r.summary(t)
		require.Equal(t, "succeeded", s.Status)
		require.Equal(t, int64(3), s.Kinds["note"].Skipped)
		require.Len(t, s.Warnings, 2, "R9: every note and every activity took the same skip")
		require.Contains(t, s.Warnings[0], `every one of the 3 notes was skipped as "not linked to any record"`)
		require.Equal(t, []string{
			`n-1|skipped|1|{"contact_id":"c-1"}`, `n-2|skipped|1|{"contact_id":"c-2"}`, `n-3|skipped|1|{"contact_id":"c-1"}`,
		}, query(t, path, `SELECT source_id, action, migration_id, detail FROM migration_records WHERE kind = 'note' ORDER BY source_id`),
			"the unresolved link is kept in the slot's detail")

		// Run 2: the contacts arrive.
		second := writeExport(t, map[string]string{"contacts.csv": storyContacts})
		r = crm(t, nil, append(base, second)...)
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Equal(t, int64(2), r.summary(t).Kinds["contact"].Imported)

		// Run 3: notes and activities again, from the full export.
		full := writeExport(t, map[string]string{"companies.csv": storyCompanies, "contacts.csv": storyContacts,
			"notes.csv": storyNotes, "activities.csv": storyActs})
		r = crm(t, nil, append(base, "--only", "notes,activities", full)...)
		require.Equal(t, exitOK, r.code, r.stderr)
		s = r.summary(t)
		require.Len(t, s.Kinds, 2, "--only plans notes and activities alone")
		require.Equal(t, int64(3), s.Kinds["note"].Imported, "every skipped note is taken over")
		require.Equal(t, int64(1), s.Kinds["activity"].Imported)
		require.Empty(t, s.Warnings)
		require.Equal(t, []string{"0"}, query(t, path,
			`SELECT count(*) FROM migration_records WHERE kind IN ('note', 'activity') AND (action = 'skipped' OR migration_id <> 3)`),
			"no note or activity slot still carries an older run's verdict")
		require.Equal(t, []string{"Ann|Called; they want a quote, \"soon\"", "Bob|Sent the deck", "Ann|Two\nlines"},
			queryRaw(t, path, `SELECT c.first_name, n.body FROM notes n JOIN contacts c ON c.id = n.contact_id ORDER BY n.body`))
	})
}

// queryRaw is query without flattening line breaks.
func queryRaw(t *testing.T, path, q string) []string {
	t.Helper()
	db := storetest.OpenFile(t, path)
	rows, err := db.Query(q)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var a, b string
		require.NoError(t, rows.Scan(&a, &b))
		out = append(out, a+"|"+b)
	}
	return out
}

// TestFlagsBeforeAndAfterArguments: flags work before or after positional
// arguments, and a global flag after the command name; none is ignored.
func TestFlagsBeforeAndAfterArguments(t *testing.T) {
	t.Parallel()
	dir := writeExport(t, map[string]string{"companies.csv": storyCompanies})
	cases := map[string][]string{
		"FlagsFirst":            {"--db", "DB", "--json", "run", "--tenant", "acme", "--source", "canonical", "--batch-size", "1", dir},
		"FlagsAfterPath":        {"--db", "DB", "run", dir, "--tenant", "acme", "--source=canonical", "--batch-size", "1", "--json"},
		"GlobalsAfterCommand":   {"run", "--db", "DB", "--json", "--tenant", "acme", dir, "--source", "canonical", "--batch-size=1"},
		"EverythingAfterTheArg": {"run", dir, "--db=DB", "--tenant=acme", "--source", "canonical", "--json", "--batch-size", "1"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "crm.db")
			for i := range args {
				args[i] = strings.ReplaceAll(args[i], "DB", path)
			}
			r := crm(t, nil, args...)
			require.Equal(t, exitOK, r.code, r.stderr)
			s := r.summary(t)
			require.Equal(t, "acme", s.Tenant)
			require.Equal(t, int64(1), s.Kinds["company"].Imported)
			opts := query(t, path, `SELECT options FROM migrations`)
			require.Len(t, opts, 1)
			// The options and, after them, the digest of the plan they are part of.
			require.Regexp(t, `^`+regexp.QuoteMeta(`{"input":"`+dir+`","profile":"canonical","batch_size":1,"plan":"`)+`[0-9a-f]{64}"}$`,
				opts[0], "--batch-size was not ignored")
		})
	}
}

// TestUsageErrors: a command line that cannot be right exits 2 with a
// message saying what is wrong, as one JSON document under --json; it
// leaves no run.
func TestUsageErrors(t *testing.T) {
	t.Parallel()
	dir := writeExport(t, map[string]string{"companies.csv": storyCompanies})
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want string
		code int
	}{
		{"NoTenant", []string{"run", "--source", "canonical", dir}, nil, "run needs --tenant", exitUsage},
		{"NoPath", []string{"run", "--tenant", "a", "--source", "canonical"}, nil, "run takes one PATH", exitUsage},
		{"UnknownFlag", []string{"run", "--tenant", "a", "--source", "canonical", "--frobnicate", dir}, nil, "flag provided but not defined", exitUsage},
		{"UnknownCommand", []string{"import", dir}, nil, `unknown command "import"`, exitUsage},
		{"UnknownKind", []string{"run", "--tenant", "a", "--source", "canonical", "--only", "tickets", dir}, nil, `unknown kind "tickets"`, exitUsage},
		{"BadBatchSize", []string{"run", "--tenant", "a", "--source", "canonical", "--batch-size", "0", dir}, nil, "--batch-size: the batch size must be between 1 and 50000 records", exitUsage},
		// Issue 23 item 21: a batch is held in memory until it commits.
		{"BatchSizeOverTheBound", []string{"run", "--tenant", "a", "--source", "canonical", "--batch-size", "50001", dir}, nil, "--batch-size: the batch size must be between 1 and 50000 records (a batch is held in memory until it commits), got 50001", exitUsage},
		{"UnknownProfile", []string{"run", "--tenant", "a", "--source", "hubspot2", dir}, nil, `unknown profile "hubspot2"`, exitUsage},
		{"UnknownEncoding", []string{"run", "--tenant", "a", "--source", "canonical", "--encoding", "klingon", dir}, nil, "--encoding klingon", exitUsage},
		{"UnknownFailpoint", []string{"runs"}, map[string]string{"CRMIMPORT_FAILPOINTS": "batch:ticket:1=error"}, `unknown kind "ticket"`, exitUsage},
		{"NoSuchPath", []string{"run", "--tenant", "a", "--source", "canonical", dir + "/nope"}, nil, "no such file or folder", exitError},
		{"NoMatchingFile", []string{"run", "--tenant", "a", "--source", "canonical", t.TempDir()}, nil, "no file matches a kind", exitError},
		{"ResumeNoRun", []string{"resume", "42"}, nil, "run 42: no such run", exitError},
		{"ResumeNoDatabase", []string{"resume", "42"}, nil, "crm.db: no such database", exitError},
		{"ResumeNotANumber", []string{"resume", "last"}, nil, `"last" is not a run id`, exitUsage},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "crm.db")
			if c.name == "ResumeNoRun" {
				db, err := store.Open(context.Background(), path)
				require.NoError(t, err)
				require.NoError(t, db.Close())
			}
			r := crm(t, c.env, append([]string{"--db", path, "--json"}, c.args...)...)
			require.Equal(t, c.code, r.code, r.stderr)
			require.Contains(t, r.stderr, c.want)
			var doc map[string]any
			require.NoError(t, jsonUnmarshal(r.stdout, &doc), "stdout carries exactly one JSON document: %q", r.stdout)
			require.Contains(t, doc["error"], c.want)
			if _, err := os.Stat(path); err == nil {
				require.Equal(t, []string{"0"}, query(t, path, `SELECT count(*) FROM migrations`), "no run row")
			}
		})
	}
}

// TestReadOnlyCommandsNeverCreateTheFile: issue 11 item 9. A command that
// only reads, or works on the runs a file holds, exits 1 on a --db where no
// database is, saying so — a typo is not a clean bill of health — and
// makes no file there.
func TestReadOnlyCommandsNeverCreateTheFile(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"doctor"}, {"runs"}, {"report", "1"}, {"rejects", "1"}, {"ledger", "why", "--tenant", "acme"},
		{"stop", "1"}, {"resume", "1"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "typo.db")
			r := crm(t, nil, append([]string{"--db", path}, args...)...)
			require.Equal(t, exitError, r.code, r.stderr)
			require.Contains(t, r.stderr, "typo.db: no such database")
			require.Contains(t, r.stderr, "check --db")
			_, err := os.Stat(path)
			require.ErrorIs(t, err, os.ErrNotExist, "no file made at --db")
		})
	}
}

// TestAnotherApplicationsFileIsLeftAlone: issue 11 item 9. Every command
// refuses a --db that is another application's SQLite file, saying what it
// is, and writes nothing to it: no tables, no switch to WAL.
func TestAnotherApplicationsFileIsLeftAlone(t *testing.T) {
	t.Parallel()
	dir := writeExport(t, map[string]string{"companies.csv": storyCompanies})
	path := filepath.Join(t.TempDir(), "app.db")
	raw, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	_, err = raw.Exec(`CREATE TABLE contacts (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO contacts VALUES (1, 'Ann'); PRAGMA user_version = 12`)
	require.NoError(t, err)
	require.NoError(t, raw.Close())
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, args := range [][]string{{"runs"}, {"doctor"}, {"run", "--tenant", "acme", "--source", "canonical", dir},
		{"run", "--tenant", "acme", "--source", "canonical", "--dry-run", dir}, {"ledger", "load", "../../fixtures/dumps/clean"}} {
		r := crm(t, nil, append([]string{"--db", path}, args...)...)
		require.Equal(t, exitError, r.code, "%v: %s", args, r.stderr)
		require.Contains(t, r.stderr, "holds the tables of another application (contacts)", "%v", args)
		after, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, before, after, "%v: the file is as it was", args)
		_, err = os.Stat(path + "-wal")
		require.ErrorIs(t, err, os.ErrNotExist, "%v: not switched to WAL", args)
	}
}

// TestTheBatchSizeBound (issue 23 item 21): a batch is held in memory until
// it commits (R12), so --batch-size is bounded (importer.MaxBatchSize);
// one batch of the bound's size, in a real process, stays within the
// memory the README states for a run (256 MiB).
func TestTheBatchSizeBound(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("id,first_name,last_name,email,title\n")
	for i := range importer.MaxBatchSize {
		fmt.Fprintf(&b, "c-%06d,Ann %d,Lee,ann.%d@example.com,Head of purchasing at a company of the example group\n", i, i, i)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "contacts.csv"), []byte(b.String()), 0o600))
	path := filepath.Join(t.TempDir(), "crm.db")
	c := startChild(t, nil, "--db", path, "--json", "run", "--tenant", "a", "--source", "canonical",
		"--batch-size", strconv.Itoa(importer.MaxBatchSize), dir)
	require.Equal(t, exitOK, c.wait(t), c.stderr.String())
	require.Equal(t, []string{strconv.Itoa(importer.MaxBatchSize)}, query(t, path, `SELECT count(*) FROM contacts`))
	peak := peakRSS(t, c)
	t.Logf("one batch of %d records: peak RSS %d MiB", importer.MaxBatchSize, peak>>20)
	require.Less(t, peak, rssBound(), "one batch at the bound stays within the README's 256 MiB")
}

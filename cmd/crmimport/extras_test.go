package main

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/ledger/ledgertest"
	"crmimport/store"
	"crmimport/store/storetest"
)

// TestDryRunWritesNothing: --dry-run reports what a run would do and leaves
// the database byte for byte as it was (issue 11 items 8 and 24): here a
// file of an older schema in rollback-journal mode, which opening it for
// real would upgrade and switch to WAL. Its advice names no run: the run
// exists only in the throwaway copy.
func TestDryRunWritesNothing(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, path string) {
		r := crm(t, nil, "--db", path, "--json", "run", "--tenant", "demo", "--source", "canonical", "--only", "companies", demo)
		require.Equal(t, exitPartial, r.code, r.stderr)
		before := dumpAndClose(t, path, "demo")
		if !store.IsAddress(path) {
			makeSchema3Rollback(t, path) // a file of an older schema (PostgreSQL's starts at SQLite's 9)
			// whose slots hold no hashes (R17): they are not in its dump
			before = regexp.MustCompile(` hashes="[^"]*"`).ReplaceAllString(before, "")
		}
		raw := stateOf(t, path)

		r = crm(t, nil, "--db", path, "--json", "run", "--tenant", "demo", "--source", "canonical", "--dry-run", demo)
		require.Equal(t, exitPartial, r.code, r.stderr)
		s := r.summary(t)
		require.Equal(t, int64(84), s.Kinds["contact"].Imported, "the dry run reports what the run would do")
		require.Equal(t, int64(27), s.Kinds["company"].Unchanged, "…against what the database already holds")
		var doc map[string]any
		require.NoError(t, jsonUnmarshal(r.stdout, &doc))
		require.Equal(t, true, doc["dry_run"])
		require.Equal(t, float64(0), doc["run"], "no run of the database is named")
		next := strings.Join(s.Next, "\n")
		require.Contains(t, next, "this was a dry run: nothing was written to "+store.Name(path))
		require.NotRegexp(t, `crmimport (report|rejects|resume) [0-9]`, next, "no advice names a run that will not exist")

		require.Equal(t, raw, stateOf(t, path), "the database is as it was (a file: byte for byte)")
		for _, side := range []string{"-wal", "-shm"} {
			_, err := os.Stat(path + side)
			require.ErrorIs(t, err, os.ErrNotExist, "no %s made beside it", side)
		}
		// Opened for real, it is upgraded, and holds what it held.
		require.Equal(t, before, dump(t, path, "demo"))
		require.Equal(t, []string{"1"}, query(t, path, `SELECT count(*) FROM migrations`))

		human := crm(t, nil, "--db", path, "run", "--tenant", "demo", "--source", "canonical", "--dry-run", demo)
		require.Equal(t, exitPartial, human.code, human.stderr)
		require.Contains(t, human.stdout, "dry run (nothing written) · tenant demo")
		require.NotRegexp(t, `crmimport (report|rejects|resume) [0-9]`, human.stdout)
	})
}

// dumpAndClose is dump with the database closed again at once.
func dumpAndClose(t *testing.T, path, tenant string) string {
	t.Helper()
	db, err := store.Open(context.Background(), path)
	require.NoError(t, err)
	defer db.Close()
	s, err := ledgertest.Dump(context.Background(), db, tenant)
	require.NoError(t, err)
	return s
}

// makeSchema3Rollback makes a database file look as a crmimport of schema 3
// left it: no owner_file, slot_ids for id_allocators, no application id,
// no task progress columns, and the rollback journal instead of WAL.
func makeSchema3Rollback(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	for _, q := range append(append([]string(nil), storetest.Schema6...), `PRAGMA journal_mode = DELETE`, `ALTER TABLE migrations DROP COLUMN owner_file`,
		`ALTER TABLE migration_tasks DROP COLUMN input_size`, `ALTER TABLE migration_tasks DROP COLUMN read_bytes`,
		`ALTER TABLE migration_tasks DROP COLUMN attempt_started_at`, `ALTER TABLE migration_tasks DROP COLUMN attempt_rows`,
		`ALTER TABLE migration_tasks DROP COLUMN attempt_bytes`,
		`CREATE TABLE slot_ids (next INTEGER NOT NULL)`,
		`INSERT INTO slot_ids (next) SELECT next FROM id_allocators WHERE name = 'migration_records'`,
		`DROP TABLE id_allocators`, `PRAGMA application_id = 0`, `PRAGMA user_version = 3`) {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}
	var mode string
	require.NoError(t, db.QueryRow(`PRAGMA journal_mode`).Scan(&mode))
	require.Equal(t, "delete", mode)
}

// TestProgressOnTerminalOnly: a bar per phase on stderr when it is a
// terminal; nothing with --quiet.
func TestProgressOnTerminalOnly(t *testing.T) {
	t.Parallel()
	for _, quiet := range []bool{false, true} {
		var out, errb bytes.Buffer
		a := newApp(&out, &errb, func(string) string { return "" })
		a.isTerminal = func() bool { return true }
		args := []string{"crmimport", "--db", filepath.Join(t.TempDir(), "crm.db"), "run", "--tenant", "demo",
			"--source", "canonical", "--batch-size", "10", demo}
		if quiet {
			args = append(args, "--quiet")
		}
		oneApp.Lock()
		code := a.run(context.Background(), args)
		oneApp.Unlock()
		require.Equal(t, exitPartial, code, errb.String())
		if quiet {
			require.Empty(t, errb.String(), "--quiet: no progress, no notices")
		} else {
			require.Contains(t, errb.String(), "phase 2 · contacts")
			require.Contains(t, errb.String(), "phase 5 · activities, emails")
		}
		require.Contains(t, out.String(), "What next:")
	}
}

// TestDatabasePathErrors: a database that cannot be opened is an error
// before any run exists (exit 1), naming the path.
func TestDatabasePathErrors(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "plain")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o600))
	r := crm(t, nil, "--db", filepath.Join(file, "crm.db"), "--json", "runs")
	require.Equal(t, exitError, r.code)
	require.Contains(t, r.stderr, "is not a folder")
}

// TestTheDatabaseFromTheEnvironment: $CRMIMPORT_DB names the database as
// --db does, a file's path or a server's address alike, and --db wins.
func TestTheDatabaseFromTheEnvironment(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, path string) {
		env := map[string]string{"CRMIMPORT_DB": path}
		r := crm(t, env, "--json", "run", "--tenant", "demo", "--source", "canonical", "--only", "companies", demo)
		require.Equal(t, exitPartial, r.code, r.stderr)
		r = crm(t, env, "--json", "runs")
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Contains(t, r.stdout, `"tenant": "demo"`)
		require.Equal(t, []string{"1"}, query(t, path, `SELECT count(*) FROM migrations`), "the run went to $CRMIMPORT_DB")
		other := filepath.Join(t.TempDir(), "other.db")
		r = crm(t, env, "--db", other, "--json", "run", "--tenant", "demo", "--source", "canonical", "--only", "companies", demo)
		require.Equal(t, exitPartial, r.code, r.stderr)
		require.Equal(t, []string{"1"}, query(t, other, `SELECT count(*) FROM migrations`), "--db wins over $CRMIMPORT_DB")
		require.Equal(t, []string{"1"}, query(t, path, `SELECT count(*) FROM migrations`))
	})
}

// TestReportAndRuns: the run page in text and JSON, and the list of runs.
func TestReportAndRuns(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, path string) {
		r := crm(t, nil, "--db", path, "run", "--tenant", "demo", "--source", "canonical", demo)
		require.Equal(t, exitPartial, r.code, r.stderr)

		r = crm(t, nil, "--db", path, "report", "1")
		require.Equal(t, exitOK, r.code, r.stderr)
		for _, want := range []string{
			"status      partial",
			"contacts    ############################~!  84 imported, 0 unchanged, 2 skipped, 4 failed (1 matched, 3 unlinked, 1 duplicate)",
			`2  email "…" is not an email address`,
			"5  not linked to any record",
			"contacts.csv    succeeded  90",
			"run 1 finalized: partial",
		} {
			require.Contains(t, r.stdout, want)
		}

		out := filepath.Join(t.TempDir(), "run-1.json")
		r = crm(t, nil, "--db", path, "report", "1", "--format", "json", "--out", out)
		require.Equal(t, exitOK, r.code, r.stderr)
		b, err := os.ReadFile(out)
		require.NoError(t, err)
		var full struct {
			Status  string
			Kinds   map[string]map[string]int64
			Tasks   []struct{ Kind, Status, File string }
			Reasons map[string]struct {
				Skipped, Failed []struct {
					Reason string
					Count  int64
				}
			}
			Log []struct{ Level, Message string }
		}
		require.NoError(t, jsonUnmarshal(string(b), &full))
		require.Equal(t, "partial", full.Status)
		require.Len(t, full.Tasks, 6)
		require.Equal(t, int64(84), full.Kinds["contact"]["imported"])
		require.Equal(t, "not linked to any record", full.Reasons["note"].Skipped[0].Reason)
		require.NotEmpty(t, full.Log)

		r = crm(t, nil, "--db", path, "runs")
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Regexp(t, `1\s+demo\s+canonical\s+partial\s+5\s+270\s+0\s+17\s+13\s+\S+`, r.stdout)
	})
}

// TestOutNeverOverwritesTheDatabase: `rejects --out` and `report --out`
// refuse a file that is the database in use — by name, through a symlink
// or a hard link — its -wal (there while the command has the database
// open) or -shm, and any other SQLite file, exit 1 naming the file and
// what it is, and leave the database as it was (its bytes and its runs);
// a file that is no database is replaced whole, night after night.
func TestOutNeverOverwritesTheDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "d.db")
	r := crm(t, nil, "--db", path, "run", "--tenant", "demo", "--source", "canonical", demo)
	require.Equal(t, exitPartial, r.code, r.stderr)
	other := filepath.Join(dir, "other.db")
	odb, err := store.Open(context.Background(), other)
	require.NoError(t, err)
	require.NoError(t, odb.Close())
	require.NoError(t, os.Symlink("d.db", filepath.Join(dir, "link.csv")))
	require.NoError(t, os.Link(path, filepath.Join(dir, "hard.csv")))
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	otherBefore, err := os.ReadFile(other)
	require.NoError(t, err)

	for _, cmd := range [][]string{{"rejects", "1"}, {"report", "1"}, {"report", "1", "--format", "json"}} {
		for _, tc := range []struct{ name, out, what string }{
			{"Database", path, "the database in use (" + path + ")"},
			{"Symlink", filepath.Join(dir, "link.csv"), "the database in use (" + path + ")"},
			{"HardLink", filepath.Join(dir, "hard.csv"), "the database in use (" + path + ") under another name (a hard link)"},
			{"WAL", path + "-wal", "the write-ahead log of the database in use (" + path + "-wal)"},
			{"SHM", path + "-shm", "the shared-memory index of the database in use (" + path + "-shm)"},
			{"AnotherSQLiteFile", other, "a SQLite database (it begins with SQLite's header)"},
		} {
			t.Run(cmd[0]+cmd[len(cmd)-1]+tc.name, func(t *testing.T) {
				r := crm(t, nil, append([]string{"--db", path}, append(cmd, "--out", tc.out)...)...)
				require.Equal(t, exitError, r.code, r.stdout+r.stderr)
				require.Contains(t, r.stderr, "will not write "+tc.out+": it is "+tc.what+", and writing over it would destroy it")
				require.Empty(t, r.stdout)
			})
		}
	}
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after, "the database's bytes are as they were")
	otherAfter, err := os.ReadFile(other)
	require.NoError(t, err)
	require.Equal(t, otherBefore, otherAfter)
	require.Equal(t, []string{"1|partial"}, query(t, path, `SELECT id, status FROM migrations`))

	// A report that is no database is replaced, every night.
	out := filepath.Join(dir, "r.txt")
	require.NoError(t, os.WriteFile(out, []byte("last night's report"), 0o644))
	for range 2 {
		r = crm(t, nil, "--db", path, "report", "1", "--out", out)
		require.Equal(t, exitOK, r.code, r.stderr)
		b, err := os.ReadFile(out)
		require.NoError(t, err)
		require.Contains(t, string(b), "status      partial")
		require.NotContains(t, string(b), "last night's report")
	}
	r = crm(t, nil, "--db", path, "rejects", "1", "--out", out)
	require.Equal(t, exitOK, r.code, r.stderr)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(b), "run,kind,source_id,file,line,reason,"), "%.80s", b)
	// A failed write (no such run) leaves the old file whole.
	r = crm(t, nil, "--db", path, "rejects", "9", "--out", out)
	require.Equal(t, exitError, r.code)
	require.Contains(t, r.stderr, "run 9: no such run ("+out+" is left as it was)")
	b2, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Equal(t, b, b2)
}

// TestRunConfirmsItsDryRun (issue 23 item 3; SPEC §11, R10): `run
// --dry-run` prints its plan's digest and the command that imports exactly
// that plan (`--json`: plan, plan_files with their fingerprints); `run
// --plan DIGEST` imports it, or — a file changed since — nothing, exit 8,
// naming the files it reads now; a digest that is not one is a usage error.
func TestRunConfirmsItsDryRun(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, path string) {
		companies, err := os.ReadFile(filepath.Join(demo, "companies.csv"))
		require.NoError(t, err)
		export := writeExport(t, map[string]string{"companies.csv": string(companies)})
		// A database to dry-run against: another tenant's import.
		r := crm(t, nil, "--db", path, "--quiet", "run", "--tenant", "other", "--source", "canonical", "--only", "companies", demo)
		require.Equal(t, exitPartial, r.code, r.stderr)
		args := []string{"--db", path, "run", "--tenant", "acme", "--source", "canonical"}
		r = crm(t, nil, append(args, "--dry-run", export)...)
		require.Equal(t, exitPartial, r.code, r.stderr)
		m := regexp.MustCompile("its plan is ([0-9a-f]{64}): with `--plan ([0-9a-f]{64})` in place of --dry-run, the same command imports exactly this plan, " +
			"or nothing \\(exit 8\\) if a file changed since").FindStringSubmatch(r.stdout)
		require.NotNil(t, m, r.stdout)
		plan := m[1]
		require.Equal(t, plan, m[2])
		r = crm(t, nil, append([]string{"--json"}, append(args, "--dry-run", export)...)...)
		var dry struct {
			Plan      string `json:"plan"`
			PlanFiles []struct {
				File        string `json:"file"`
				Kind        string `json:"kind"`
				Fingerprint string `json:"fingerprint"`
			} `json:"plan_files"`
		}
		require.NoError(t, jsonUnmarshal(r.stdout, &dry))
		require.Equal(t, plan, dry.Plan, "the same export, the same plan")
		require.Len(t, dry.PlanFiles, 1)
		require.Equal(t, "company", dry.PlanFiles[0].Kind)
		require.Regexp(t, `^crc32c:[0-9a-f]{8}:\d+$`, dry.PlanFiles[0].Fingerprint)

		require.NoError(t, os.WriteFile(filepath.Join(export, "companies.csv"), append(companies, "acc-900,Zed Ltd,zed.example.com,,,,,\n"...), 0o600))
		before := stateOf(t, path)
		r = crm(t, nil, append(args, "--plan", plan, export)...)
		require.Equal(t, exitPlanChanged, r.code, r.stderr)
		require.Regexp(t, `the run was not started: its plan changed since the dry run that showed plan `+plan[:12]+
			`…: it now reads companies\.csv \(company\) \(crc32c:[0-9a-f]{8}:\d+\); nothing was written — dry-run it again`, r.stderr)
		require.NotContains(t, r.stderr, dry.PlanFiles[0].Fingerprint, "the file as it is now, not as the dry run read it")
		require.Equal(t, before, stateOf(t, path), "nothing was written")
		r = crm(t, nil, append(args, "--plan", "abc", export)...)
		require.Equal(t, exitUsage, r.code, r.stderr)

		require.NoError(t, os.WriteFile(filepath.Join(export, "companies.csv"), companies, 0o600))
		r = crm(t, nil, append([]string{"--json"}, append(args, "--plan", plan, export)...)...)
		require.Equal(t, exitPartial, r.code, r.stderr)
		require.Contains(t, r.stdout, `"plan": "`+plan+`"`, "the run keeps the plan it imported")
	})
}

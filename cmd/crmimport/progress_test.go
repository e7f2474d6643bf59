package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"crmimport/bytesize"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store"
	"crmimport/store/storetest"
)

// taskProgress is a task as `report --format json` and `runs --json` show
// it: what these tests read of it.
type taskProgress struct {
	Kind     string `json:"kind"`
	Status   string `json:"status"`
	Progress struct {
		Records          int64    `json:"records"`
		ReadBytes        int64    `json:"read_bytes"`
		SizeBytes        int64    `json:"size_bytes"`
		Percent          *float64 `json:"percent"`
		RecordsPerSecond *float64 `json:"records_per_second"`
		SecondsLeft      *float64 `json:"seconds_left"`
	} `json:"progress"`
}

// reportTasks are the tasks of `report RUN --format json`, by kind.
func reportTasks(t *testing.T, path, run string) map[string]taskProgress {
	t.Helper()
	r := crm(t, nil, "--db", path, "report", run, "--format", "json")
	require.Equal(t, exitOK, r.code, r.stderr)
	var doc struct{ Tasks []taskProgress }
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc))
	out := map[string]taskProgress{}
	for _, tk := range doc.Tasks {
		out[tk.Kind] = tk
	}
	return out
}

// TestRunsAndReportShowStoredProgress: SPEC §9, a task's progress comes
// from the database, so another process shows it: a run killed by
// batch:contact:2=exit (a child process, SIGKILL) shows, in `report` and
// in `runs` alike, its contacts task at its committed checkpoint (10
// records, bytes read of the file's size, short of 100%) with no pace (no
// process works on it), a task not started with its planned size at 0%;
// resumed, every task shows its file read whole.
func TestRunsAndReportShowStoredProgress(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, path string) {
		c := startChild(t, map[string]string{"CRMIMPORT_FAILPOINTS": "batch:contact:2=exit"}, demoArgs(path)...)
		require.Equal(t, -1, c.wait(t), "killed by its own SIGKILL")
		size := func(name string) int64 {
			st, err := os.Stat(filepath.Join(demo, name))
			require.NoError(t, err)
			return st.Size()
		}

		tasks := reportTasks(t, path, "1")
		contact := tasks["contact"].Progress
		require.Equal(t, "running", tasks["contact"].Status)
		require.Equal(t, int64(10), contact.Records)
		require.Equal(t, size("contacts.csv"), contact.SizeBytes)
		require.Positive(t, contact.ReadBytes)
		require.NotNil(t, contact.Percent)
		require.Less(t, *contact.Percent, 100.0, "not done: short of 100%")
		deal := tasks["deal"].Progress
		require.Equal(t, size("deals.csv"), deal.SizeBytes, "planned with its size")
		require.Equal(t, 0.0, *deal.Percent)
		require.Nil(t, deal.RecordsPerSecond, "not started")
		company := tasks["company"].Progress
		require.Equal(t, size("companies.csv"), company.ReadBytes)
		require.Equal(t, 100.0, *company.Percent)
		require.Equal(t, 0.0, *company.SecondsLeft)

		r := crm(t, nil, "--db", path, "--json", "runs")
		require.Equal(t, exitOK, r.code, r.stderr)
		var runs struct {
			Runs []struct {
				Interrupted bool
				Tasks       []taskProgress
			}
		}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &runs))
		require.Len(t, runs.Runs, 1)
		require.True(t, runs.Runs[0].Interrupted)
		require.Len(t, runs.Runs[0].Tasks, 6)
		for _, tk := range runs.Runs[0].Tasks {
			want := tasks[tk.Kind].Progress
			require.Equal(t, []any{want.Records, want.ReadBytes, want.SizeBytes, *want.Percent},
				[]any{tk.Progress.Records, tk.Progress.ReadBytes, tk.Progress.SizeBytes, *tk.Progress.Percent},
				"runs and report show the same progress of %s", tk.Kind)
		}

		r = crm(t, nil, "--db", path, "report", "1")
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Regexp(t, regexp.MustCompile(`\n  2\s+2\s+contacts\s+contacts\.csv\s+running\s+10\s+\d\d?%\s+1\s*\n`), r.stdout,
			"the percent, and no rate for a task no process works on")
		require.Regexp(t, regexp.MustCompile(`\n  3\s+3\s+deals\s+deals\.csv\s+pending\s+0\s+0%\s+0\s*\n`), r.stdout)
		require.Regexp(t, regexp.MustCompile(`\n  1\s+1\s+companies\s+companies\.csv\s+succeeded\s+30\s+100%\s+1\s*\n`), r.stdout)

		r = crm(t, nil, "--db", path, "--json", "resume", "1")
		require.Equal(t, exitPartial, r.code, r.stderr)
		for kind, tk := range reportTasks(t, path, "1") {
			require.Equal(t, "succeeded", tk.Status, kind)
			require.Equal(t, tk.Progress.SizeBytes, tk.Progress.ReadBytes, "%s: read to its end", kind)
			require.Positive(t, tk.Progress.SizeBytes, kind)
			require.Equal(t, 100.0, *tk.Progress.Percent, kind)
		}
		require.Equal(t, int64(90), reportTasks(t, path, "1")["contact"].Progress.Records)
		r = crm(t, nil, "--db", path, "report", "1")
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Contains(t, r.stdout, "contacts.csv    succeeded  90       100%")
	})
}

// TestOlderTasksShowProgressUnknown: a file of schema 5 opens; its tasks,
// planned before progress was stored, show their size and percent as
// unknown (JSON: size_bytes 0, percent null; text: —). Resumed, the tasks
// that run again store the size their input opens with: read whole,
// 100%; the one that had succeeded before stays unknown.
func TestOlderTasksShowProgressUnknown(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "crm.db") // a file of an older schema (PostgreSQL's starts at SQLite's 9)
	c := startChild(t, map[string]string{"CRMIMPORT_FAILPOINTS": "batch:contact:2=exit"}, demoArgs(path)...)
	require.Equal(t, -1, c.wait(t), "killed by its own SIGKILL")
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	for _, q := range append(append([]string(nil), storetest.Schema6...),
		`ALTER TABLE migration_tasks DROP COLUMN input_size`, `ALTER TABLE migration_tasks DROP COLUMN read_bytes`,
		`ALTER TABLE migration_tasks DROP COLUMN attempt_started_at`, `ALTER TABLE migration_tasks DROP COLUMN attempt_rows`,
		`ALTER TABLE migration_tasks DROP COLUMN attempt_bytes`, `PRAGMA user_version = 5`,
	) {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}
	require.NoError(t, db.Close())

	tasks := reportTasks(t, path, "1")
	for kind, want := range map[string]struct {
		status  string
		records int64
	}{"company": {"succeeded", 30}, "contact": {"running", 10}, "deal": {"pending", 0}} {
		tk := tasks[kind]
		require.Equal(t, want.status, tk.Status, kind)
		require.Equal(t, want.records, tk.Progress.Records, "%s: the records are the checkpoint's", kind)
		require.Zero(t, tk.Progress.SizeBytes, kind)
		require.Zero(t, tk.Progress.ReadBytes, kind)
		require.Nil(t, tk.Progress.Percent, "%s: unknown, not 0%%", kind)
	}
	r := crm(t, nil, "--db", path, "report", "1")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Regexp(t, regexp.MustCompile(`companies\.csv\s+succeeded\s+30\s+—\s+1`), r.stdout)
	require.Regexp(t, regexp.MustCompile(`contacts\.csv\s+running\s+10\s+—\s+1`), r.stdout)

	r = crm(t, nil, "--db", path, "--json", "resume", "1")
	require.Equal(t, exitPartial, r.code, r.stderr)
	tasks = reportTasks(t, path, "1")
	require.Nil(t, tasks["company"].Progress.Percent, "not read again: still unknown")
	for _, kind := range []string{"contact", "deal", "note", "activity", "email"} {
		tk := tasks[kind]
		require.Positive(t, tk.Progress.SizeBytes, kind)
		require.Equal(t, tk.Progress.SizeBytes, tk.Progress.ReadBytes, kind)
		require.Equal(t, 100.0, *tk.Progress.Percent, kind)
	}
}

// TestProgressBarShowsTheStoredProgress: the CLI's bar shows the progress
// the batches stored — the database's, as runs and report read it — and
// not a count of its own: pointed at the run of another process, killed
// at batch:contact:2=exit, it shows that run's contacts where their
// checkpoint stands (10 records, the bytes read of the stored size, the
// stored percent), as report does.
func TestProgressBarShowsTheStoredProgress(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, path string) {
		c := startChild(t, map[string]string{"CRMIMPORT_FAILPOINTS": "batch:contact:2=exit"}, demoArgs(path)...)
		require.Equal(t, -1, c.wait(t), "killed by its own SIGKILL")
		contacts := reportTasks(t, path, "1")["contact"].Progress
		require.Equal(t, int64(10), contacts.Records)

		db, err := store.Open(context.Background(), path)
		require.NoError(t, err)
		defer db.Close()
		var errb bytes.Buffer
		a := newApp(&bytes.Buffer{}, &errb, func(string) string { return "" })
		p := &progressView{a: a, db: db, now: time.Now, on: true}
		p.task(phases.Task{RunID: 1, Kind: ledger.Contact, Phase: 2})
		defer p.finish()
		s := p.bar.State()
		require.Equal(t, contacts.SizeBytes, s.Max, "the stored size")
		require.Equal(t, int64(*contacts.Percent/100*float64(contacts.SizeBytes)), s.CurrentNum, "the stored percent")
		require.True(t, strings.HasPrefix(s.Description, "phase 2 · contacts · 10 records · "+bytesize.Format(contacts.ReadBytes)+" of "+bytesize.Format(contacts.SizeBytes)),
			s.Description)
	})
}

// TestProgressBarOfAnUndo: an undo's bar names its children-first phases
// and counts slots taken back, not bytes (R16).
func TestProgressBarOfAnUndo(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, path string) {
		r := crm(t, nil, demoArgs(path)...)
		require.Equal(t, exitPartial, r.code, r.stderr)
		c := startChild(t, map[string]string{"CRMIMPORT_FAILPOINTS": "batch:note:2=exit"}, "--db", path, "undo", "1", "--batch-size", "20")
		require.Equal(t, -1, c.wait(t), "killed by its own SIGKILL")

		db, err := store.Open(context.Background(), path)
		require.NoError(t, err)
		defer db.Close()
		var errb bytes.Buffer
		a := newApp(&bytes.Buffer{}, &errb, func(string) string { return "" })
		p := &progressView{a: a, db: db, now: time.Now, on: true}
		p.task(phases.Task{RunID: 2, Kind: ledger.Note, Phase: 2})
		defer p.finish()
		s := p.bar.State()
		require.Equal(t, int64(79), s.Max, "the notes' slots to take back")
		require.True(t, strings.HasPrefix(s.Description, "undo phase 2 · notes · 20 of 79 slots taken back"), s.Description)
	})
}

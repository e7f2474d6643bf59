package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/store"
	"crmimport/store/storetest"
)

// runDemo starts a full demo run of tenant acme in batches of 10.
func demoArgs(path string) []string {
	return []string{"--db", path, "--json", "run", "--tenant", "acme", "--source", "canonical", "--batch-size", "10", demo}
}

// TestFailpointErrorThenResume: SPEC §8 batch:contact:2=error rolls the 2nd
// batch of contacts back and fails its task; the run is partial (exit 3),
// the later phases are cancelled (R7); resume rewinds and finishes it with
// the same slots and rows as an uninterrupted run (R8, R12).
func TestFailpointErrorThenResume(t *testing.T) {
	t.Parallel()
	refDump, refKinds := reference(t, "10")
	storetest.RunAddress(t, func(t *testing.T, path string) {
		r := crm(t, map[string]string{"CRMIMPORT_FAILPOINTS": "batch:contact:2=error"}, demoArgs(path)...)
		require.Equal(t, exitPartial, r.code, r.stderr)
		s := r.summary(t)
		require.Equal(t, "partial", s.Status)
		require.Equal(t, int64(10), s.Kinds["contact"].Imported+s.Kinds["contact"].Failed+s.Kinds["contact"].Skipped,
			"batch 1 of contacts stays committed, batch 2 rolled back")
		require.Equal(t, []string{
			"company|succeeded|NULL", "contact|failed|injected failure at failpoint batch:contact:2",
			"deal|cancelled|not started: phase 2 failed", "note|cancelled|not started: phase 2 failed",
			"activity|cancelled|not started: phase 2 failed", "email|cancelled|not started: phase 2 failed",
		}, query(t, path, `SELECT kind, status, last_error FROM migration_tasks ORDER BY id`))
		require.Equal(t, []string{"0"}, query(t, path, `SELECT count(*) FROM notes`), "R7: no note imported behind failed contacts")
		require.Contains(t, r.summary(t).Next[0], "crmimport resume 1")

		r = crm(t, nil, "--db", path, "--json", "resume", strconv.FormatInt(s.Run, 10))
		require.Equal(t, exitPartial, r.code, r.stderr)
		require.Equal(t, s.Run, r.summary(t).Run, "R10: the same run")
		require.Contains(t, r.stderr, "5 tasks re-armed")
		require.Equal(t, refDump, dump(t, path, "acme"))
		require.Equal(t, refKinds, kindsOf(t, r))
		require.Equal(t, demoFailures, failures(t, path))
		require.Equal(t, []string{"1"}, query(t, path, `SELECT count(*) FROM migrations`))
	})
}

// TestFailpointExitThenResume: batch:deal:2=exit kills the process in the
// middle of a batch, as SIGKILL would; the run shows as interrupted, a new
// run is refused naming it, and resume gives the same slots and rows as an
// uninterrupted run (R12, R13).
func TestFailpointExitThenResume(t *testing.T) {
	t.Parallel()
	refDump, refKinds := reference(t, "10")
	for point, task := range map[string]string{
		"batch:deal:2=exit": `deal|running|{"rows":10,"line":11}`,
		// con-015 is first read in batch 2 and repeated in batch 5: the
		// resumed process must still know where it was first seen.
		"batch:contact:3=exit": `contact|running|{"rows":20,"line":21}`,
	} {
		t.Run(point, func(t *testing.T) {
			t.Parallel()
			exitThenResume(t, point, task, refDump, refKinds)
		})
	}
}

func exitThenResume(t *testing.T, point, task, refDump string, refKinds map[string]any) {
	storetest.RunAddress(t, func(t *testing.T, path string) {
		c := startChild(t, map[string]string{"CRMIMPORT_FAILPOINTS": point}, demoArgs(path)...)
		require.Equal(t, -1, c.wait(t), "killed by its own SIGKILL")
		require.Equal(t, syscall.SIGKILL, c.cmd.ProcessState.Sys().(syscall.WaitStatus).Signal())

		r := crm(t, nil, "--db", path, "--json", "runs")
		require.Equal(t, exitOK, r.code, r.stderr)
		var runs struct{ Runs []map[string]any }
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &runs))
		require.Len(t, runs.Runs, 1)
		require.Equal(t, "running", runs.Runs[0]["status"])
		require.Equal(t, true, runs.Runs[0]["interrupted"])
		require.Nil(t, runs.Runs[0]["duration_ms"], "R15: never finalized, never estimated")
		require.Equal(t, []string{task},
			query(t, path, `SELECT kind, status, checkpoint FROM migration_tasks WHERE status = 'running'`), "the batches before the kill committed")

		r = crm(t, nil, demoArgs(path)...)
		require.Equal(t, exitRefused, r.code)
		var refusal map[string]any
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &refusal))
		require.Equal(t, float64(1), refusal["live_run"])
		require.Equal(t, true, refusal["interrupted"])
		require.Contains(t, refusal["error"], "crmimport resume 1")

		r = crm(t, nil, "--db", path, "--json", "resume", "1")
		require.Equal(t, exitPartial, r.code, r.stderr)
		require.Equal(t, refDump, dump(t, path, "acme"))
		require.Equal(t, refKinds, kindsOf(t, r))
		require.Equal(t, demoFailures, failures(t, path), "the same failures, the duplicate still pointing at its first line")
	})
}

// TestAdmissionAndStopFromAnotherProcess: a second run of the tenant is
// refused with exit 6 naming the live run (R13) while another tenant's run
// goes ahead; `stop` from another process ends the run cancelled (exit 5,
// R14) and resume completes it.
func TestAdmissionAndStopFromAnotherProcess(t *testing.T) {
	t.Parallel()
	refDump, refKinds := reference(t, "10")
	storetest.RunAddress(t, func(t *testing.T, path string) {
		// The batch sleeps long enough for the refused run, another tenant's
		// whole run and the stop to come first, under the race detector too.
		c := startChild(t, map[string]string{"CRMIMPORT_FAILPOINTS": "batch:contact:2=sleep:8s"}, demoArgs(path)...)
		id := waitForRun(t, path, "acme", c)

		r := crm(t, nil, demoArgs(path)...)
		require.Equal(t, exitRefused, r.code, r.stderr)
		var refusal map[string]any
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &refusal))
		require.Equal(t, float64(id), refusal["live_run"])
		require.Equal(t, false, refusal["interrupted"])
		require.Contains(t, r.stderr, "crmimport stop "+strconv.FormatInt(id, 10))
		require.Equal(t, []string{"1"}, query(t, path, `SELECT count(*) FROM migrations WHERE tenant_id = 'acme'`),
			"a refused attempt leaves no row")

		other := crm(t, nil, "--db", path, "--json", "run", "--tenant", "globex", "--source", "canonical", demo)
		require.Equal(t, exitPartial, other.code, "another tenant's run goes ahead: %s", other.stderr)

		r = crm(t, nil, "--db", path, "--json", "stop", strconv.FormatInt(id, 10))
		require.Equal(t, exitOK, r.code, r.stderr)
		require.JSONEq(t, `{"run": `+strconv.FormatInt(id, 10)+`, "status": "cancelled", "stopped": true, "requested": true}`, r.stdout)
		require.Equal(t, exitCancelled, c.wait(t), c.stderr.String())
		require.Equal(t, "cancelled", startedSummary(t, c).Status)
		// Who asked, as the queued tasks tell it (issue 23 item 16): this
		// command, from this host, not "from another host".
		host, err := os.Hostname()
		require.NoError(t, err)
		for _, note := range query(t, path, `SELECT last_error FROM migration_tasks WHERE status = 'cancelled' AND kind <> 'contact'`) {
			require.Contains(t, note, "stop requested by `crmimport stop`, pid ")
			require.Contains(t, note, " on "+host)
		}

		r = crm(t, nil, "--db", path, "--json", "resume", strconv.FormatInt(id, 10))
		require.Equal(t, exitPartial, r.code, r.stderr)
		require.Equal(t, refDump, dump(t, path, "acme"))
		require.Equal(t, refKinds, kindsOf(t, r))
	})
}

// TestADryRunBesideALiveRun: issue 23 item 14 — `run --dry-run` of a
// tenant whose run works in another process is refused as a second run
// would be (R13, exit 6), naming the live run and `stop N`, not calling it
// interrupted and advising `resume`: the dry run's throwaway copy of the
// database stands for the database, in which the run's owner works.
// Not parallel: on PostgreSQL its dry run's throwaway schema would show in
// TestDryRunWritesNothing's look at the server's dry-run copies.
func TestADryRunBesideALiveRun(t *testing.T) {
	storetest.RunAddress(t, func(t *testing.T, path string) {
		c := startChild(t, map[string]string{"CRMIMPORT_FAILPOINTS": "batch:contact:2=sleep:4s"}, demoArgs(path)...)
		id := waitForRun(t, path, "acme", c)

		r := crm(t, nil, append(demoArgs(path), "--dry-run")...)
		require.Equal(t, exitRefused, r.code, r.stderr)
		var refusal map[string]any
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &refusal), r.stdout)
		require.Equal(t, float64(id), refusal["live_run"])
		require.Equal(t, false, refusal["interrupted"])
		n := strconv.FormatInt(id, 10)
		require.Contains(t, refusal["error"], "already has a live run: run "+n)
		require.Contains(t, refusal["error"], "crmimport stop "+n)
		require.NotContains(t, refusal["error"], "resume")

		r = crm(t, nil, "--db", path, "--json", "stop", n)
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Equal(t, exitCancelled, c.wait(t), c.stderr.String())
	})
}

func startedSummary(t *testing.T, c *childProc) (s struct{ Status string }) {
	t.Helper()
	require.NoError(t, json.Unmarshal(c.stdout.Bytes(), &s), c.stdout.String())
	return s
}

// TestSignalsStopTheRun: SIGTERM and Ctrl-C (SIGINT) stop after the batch in
// flight; the run ends cancelled and resume completes it.
func TestSignalsStopTheRun(t *testing.T) {
	t.Parallel()
	refDump, _ := reference(t, "10")
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			storetest.RunAddress(t, func(t *testing.T, path string) {
				c := startChild(t, map[string]string{"CRMIMPORT_FAILPOINTS": "batch:deal:1=sleep:1s"}, demoArgs(path)...)
				id := waitForRun(t, path, "acme", c)
				waitForTask(t, path, "deal")
				require.NoError(t, c.cmd.Process.Signal(sig))
				require.Equal(t, exitCancelled, c.wait(t), c.stderr.String())
				require.Contains(t, c.stderr.String(), "stopping after the current batch")
				require.Equal(t, []string{"deal|cancelled|{\"rows\":10,\"line\":11}"},
					query(t, path, `SELECT kind, status, checkpoint FROM migration_tasks WHERE kind = 'deal'`),
					"the batch in flight committed whole; its task keeps its checkpoint")
				r := crm(t, nil, "--db", path, "--json", "resume", strconv.FormatInt(id, 10))
				require.Equal(t, exitPartial, r.code, r.stderr)
				require.Equal(t, refDump, dump(t, path, "acme"))
			})
		})
	}
}

func waitForTask(t *testing.T, path, kind string) {
	t.Helper()
	for i := 0; i < 1000; i++ {
		if got := query(t, path, `SELECT status FROM migration_tasks WHERE kind = ?`, kind); len(got) == 1 && got[0] == "running" {
			return
		}
		sleepMs(10)
	}
	t.Fatalf("task %s never started", kind)
}

// TestResumeRefusesChangedInput: R10, a file that changed since the plan is
// refused with a clear message and the run is left as it was.
func TestResumeRefusesChangedInput(t *testing.T) {
	t.Parallel()
	dir := copyDemo(t)
	storetest.RunAddress(t, func(t *testing.T, path string) {
		args := []string{"--db", path, "--json", "run", "--tenant", "acme", "--source", "canonical", "--batch-size", "10", dir}
		r := crm(t, map[string]string{"CRMIMPORT_FAILPOINTS": "batch:contact:2=error"}, args...)
		require.Equal(t, exitPartial, r.code, r.stderr)

		f, err := os.OpenFile(filepath.Join(dir, "contacts.csv"), os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = f.WriteString("con-999,Late,Arrival,late@example.com,,,,,\r\n")
		require.NoError(t, err)
		require.NoError(t, f.Close())

		r = crm(t, nil, "--db", path, "resume", "1")
		require.Equal(t, exitError, r.code)
		require.Contains(t, r.stderr, "contacts.csv has changed")
		require.Contains(t, r.stderr, "start a new run instead")
		require.Equal(t, []string{"partial"}, query(t, path, `SELECT status FROM migrations`), "a refused resume changes nothing")

		r = crm(t, nil, args...)
		require.Equal(t, exitPartial, r.code, "the way forward is a new run: %s", r.stderr)
		require.Equal(t, int64(1), r.summary(t).Kinds["company"].Imported+r.summary(t).Kinds["company"].Unchanged-26,
			"companies imported by run 1 are unchanged")
	})
}

// copyDemo copies the demo export to a folder the test may change.
func copyDemo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir(demo)
	require.NoError(t, err)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(demo, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, e.Name()), b, 0o600))
	}
	return dir
}

// demoFailures are the failed records of a full demo run.
var demoFailures = []string{
	"activity||activities.csv|22|missing id",
	"activity|act-014|activities.csv|15|due_at \"next Tuesday\" is not a date (expected ISO 8601, e.g. 2024-03-01 or 2024-03-01T10:00:00Z)",
	"activity|act-025|activities.csv|27|done \"pending\" is not true or false",
	"company|acc-012|companies.csv|13|company has no name",
	"contact|con-015|contacts.csv|48|duplicate source_id, first at contacts.csv:16",
}

func failures(t *testing.T, path string) []string {
	t.Helper()
	return query(t, path, `SELECT kind, coalesce(source_id, ''), file, line, reason FROM record_failures
		WHERE kind IN ('company', 'activity') OR reason LIKE 'duplicate%' ORDER BY kind, coalesce(source_id, '')`)
}

// TestFailpointsAtOtherPoints: a commit that fails as a full disk would, and
// crashes right after planning, at a phase boundary and inside finalize —
// each resumed to the database of an uninterrupted run.
func TestFailpointsAtOtherPoints(t *testing.T) {
	t.Parallel()
	refDump, refKinds := reference(t, "10")
	cases := []struct {
		point string
		exit  int // of the first run: -1 when it kills itself
		tasks string
	}{
		{"commit:contact:3=error", exitPartial, "contact:failed deal:cancelled"},
		{"commit:deal:2=full", exitPartial, "deal:failed note:cancelled"},
		{"plan=exit", -1, "company:pending contact:pending"},
		{"phase:3=exit", -1, "contact:succeeded deal:pending"},
		{"finalize=exit", -1, "company:succeeded email:succeeded"},
	}
	for _, c := range cases {
		t.Run(c.point, func(t *testing.T) {
			t.Parallel()
			storetest.RunAddress(t, func(t *testing.T, path string) {
				p := startChild(t, map[string]string{"CRMIMPORT_FAILPOINTS": c.point}, demoArgs(path)...)
				require.Equal(t, c.exit, p.wait(t), p.stderr.String())
				for _, kv := range strings.Fields(c.tasks) {
					kind, status, _ := strings.Cut(kv, ":")
					require.Equal(t, []string{status}, query(t, path, `SELECT status FROM migration_tasks WHERE kind = ?`, kind), kv)
				}
				require.Equal(t, []string{"NULL"}, query(t, path, `SELECT CAST(duration_ms AS TEXT) FROM migrations WHERE status = 'running'
				UNION ALL SELECT 'NULL' WHERE `+strconv.Itoa(c.exit)+` >= 0`), "R15: not finalized")
				if strings.HasSuffix(c.point, "=full") {
					full := "database or disk is full" // SQLite's own error, as on a full disk
					if store.IsAddress(path) {
						full = "No space left on device (SQLSTATE 53100)" // PostgreSQL's disk_full
					}
					last := query(t, path, `SELECT last_error FROM migration_tasks WHERE status = 'failed'`)
					require.Len(t, last, 1)
					require.Contains(t, last[0], full)
				}
				r := crm(t, nil, "--db", path, "--json", "resume", "1")
				require.Equal(t, exitPartial, r.code, r.stderr)
				require.Equal(t, refDump, dump(t, path, "acme"))
				require.Equal(t, refKinds, kindsOf(t, r))
				require.Equal(t, demoFailures, failures(t, path))
			})
		})
	}
}

// TestStopOnACopyLeavesTheOriginalAlone: issue 11 item 10, R13 and R14. In
// a copy of the database a run's owner is not at work (it has the original
// open, not the copy): the run shows as interrupted there, and `stop` on the
// copy cancels it in the copy alone. A stop is a request in the database,
// never a signal, so the original's process goes on to the end.
func TestStopOnACopyLeavesTheOriginalAlone(t *testing.T) {
	t.Parallel()
	refDump, _ := reference(t, "10")
	path := filepath.Join(t.TempDir(), "crm.db")
	c := startChild(t, map[string]string{"CRMIMPORT_FAILPOINTS": "batch:contact:2=sleep:2s"}, demoArgs(path)...)
	id := waitForRun(t, path, "acme", c)
	waitForTask(t, path, "contact")
	cp := filepath.Join(t.TempDir(), "copy.db")
	copied, err := store.Copy(context.Background(), path, cp)
	require.NoError(t, err)
	require.True(t, copied)

	runs := crm(t, nil, "--db", cp, "--json", "runs")
	require.Equal(t, exitOK, runs.code, runs.stderr)
	require.Contains(t, runs.stdout, `"interrupted": true`, "in the copy, nobody works on the run")
	r := crm(t, nil, "--db", cp, "--json", "stop", strconv.FormatInt(id, 10))
	require.Equal(t, exitOK, r.code, r.stderr)
	require.JSONEq(t, `{"run": `+strconv.FormatInt(id, 10)+`, "status": "cancelled", "stopped": true, "requested": false}`, r.stdout)

	require.Equal(t, exitPartial, c.wait(t), "the original's run went on to its end: %s", c.stderr.String())
	require.Equal(t, "partial", startedSummary(t, c).Status)
	require.Equal(t, refDump, dump(t, path, "acme"))
	require.Equal(t, []string{"cancelled"}, query(t, cp, `SELECT status FROM migrations WHERE id = ?`, id))
}

package forensics_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/forensics"
	"crmimport/phases"
	"crmimport/store"
	"crmimport/store/storetest"
)

// TestEachFindingFiresOnItsDumpAlone loads every dump of fixtures/dumps into
// a fresh database: each finding fires on its own dump and on no other,
// the clean dump triggers none, and each incident dump triggers exactly the
// findings of its incident, which doctor names.
func TestEachFindingFiresOnItsDumpAlone(t *testing.T) {
	t.Parallel()
	want := map[string][]string{
		"clean":              nil,
		"uniform-skip":       {forensics.UniformSkip},
		"stale-skips":        {forensics.StaleSkips},
		"ready-to-take-over": {forensics.ReadyToTakeOver},
		"stranded-work":      {forensics.StrandedWork},
		"false-success":      {forensics.FalseSuccess},
		"unfinalized":        {forensics.Unfinalized},
		"orphan-slots":       {forensics.OrphanSlots},
		"misphased-tasks":    {forensics.MisphasedTasks},
		"poisoned-ledger":    {forensics.UniformSkip, forensics.StaleSkips, forensics.ReadyToTakeOver},
		"stranded-retry":     {forensics.StrandedWork, forensics.FalseSuccess},
		"terminal-escapes":   {forensics.ReadyToTakeOver},
		"shell-quotes":       {forensics.UniformSkip, forensics.ReadyToTakeOver, forensics.Unfinalized, forensics.OrphanSlots},
	}
	incidents := map[string]string{"poisoned-ledger": forensics.PoisonedLedger, "stranded-retry": forensics.StrandedRetry}
	entries, err := os.ReadDir(dumps)
	require.NoError(t, err)
	var seen int
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		seen++
		name := e.Name()
		expected, ok := want[name]
		require.True(t, ok, "fixtures/dumps/%s has no expectation here", name)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			storetest.Run(t, func(t *testing.T, db *sql.DB) {
				loadFixture(t, db, name)
				d := doctor(t, db, "")
				require.Equal(t, expected, d.Names(), "%+v", d.Findings)
				require.Equal(t, len(expected) == 0, d.Clean)
				for _, f := range d.Findings {
					require.Positive(t, f.Count)
					require.NotEmpty(t, f.Rule)
					require.NotEmpty(t, f.Examples)
					require.LessOrEqual(t, len(f.Examples), 5)
					require.NotEmpty(t, f.Repair, f.Name)
					require.NotEmpty(t, f.Details, f.Name)
				}
				var names []string
				for _, inc := range d.Incidents {
					names = append(names, inc.Name)
				}
				if inc, ok := incidents[name]; ok {
					require.Equal(t, []string{inc}, names)
				} else {
					require.Empty(t, names)
				}
			})
		})
	}
	require.Equal(t, len(want), seen, "every expectation has its dump")
}

// skippedNotes is a dump of run 1 skipping n notes of tenant t for one
// reason, with task counters as given.
func skippedNotes(t *testing.T, n int, taskCounters string) string {
	t.Helper()
	slots := "id,tenant_id,source,kind,source_id,migration_id,action,reason,created_at\n"
	for i := 1; i <= n; i++ {
		slots += fmt.Sprintf("%d,t,canonical,note,n-%02d,1,skipped,deleted in source,2026-01-05 09:00:00+00\n", i, i)
	}
	return writeDump(t, map[string]string{
		"migrations.csv":        "id,tenant_id,source,status,duration_ms,started_at\n1,t,canonical,succeeded,10,2026-01-05 09:00:00+00\n",
		"migration_tasks.csv":   "id,migration_id,kind,status,imported,unchanged\n1,1,notes,succeeded," + taskCounters + "\n",
		"migration_records.csv": slots,
	})
}

// TestUniformSkipNeedsEnoughRecords: below UniformSkipMin records, one
// reason for all is no finding; at it, it is, and the finding says how
// many.
func TestUniformSkipNeedsEnoughRecords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		n        int
		counters string
		want     []string
	}{
		{forensics.UniformSkipMin - 1, ",", nil},
		{forensics.UniformSkipMin, ",", []string{forensics.UniformSkip}},
		// The run's counters say it also found notes already there: not
		// every record it processed was skipped.
		{forensics.UniformSkipMin, "0,3", nil},
	} {
		t.Run(fmt.Sprintf("%dNotesCounters%q", tc.n, tc.counters), func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, db *sql.DB) {
				_, err := forensics.Load(ctx, db, skippedNotes(t, tc.n, tc.counters), loadTime)
				require.NoError(t, err)
				d := doctor(t, db, "")
				require.Equal(t, tc.want, d.Names(), "%d notes, counters %q", tc.n, tc.counters)
				if len(tc.want) > 0 {
					require.Equal(t, int64(tc.n), d.Findings[0].Count)
					require.Contains(t, d.Findings[0].Summary, fmt.Sprintf("(at least %d)", forensics.UniformSkipMin))
					require.Equal(t, []string{`run 1 skipped every one of its 20 notes (source canonical) as "deleted in source"`}, d.Findings[0].Details)
					require.Equal(t, []string{"note n-01", "note n-02", "note n-03", "note n-04", "note n-05"}, d.Findings[0].Examples)
				}
			})
		})
	}
}

// TestStaleSkipsNeedALaterRunThatProcessedTheKind: a later run whose notes
// task never ran (cancelled behind a failed phase, R7) leaves run 1's
// skips as the latest attempt — not stale; one whose notes task succeeded
// does not.
func TestStaleSkipsNeedALaterRunThatProcessedTheKind(t *testing.T) {
	t.Parallel()
	for status, want := range map[string][]string{"cancelled": nil, "failed": nil, "succeeded": {forensics.StaleSkips}} {
		dir := writeDump(t, map[string]string{
			"migrations.csv": "id,tenant_id,source,status,duration_ms,started_at\n" +
				"1,t,canonical,succeeded,10,2026-01-05 09:00:00+00\n2,t,canonical,partial,10,2026-01-06 09:00:00+00\n",
			"migration_tasks.csv":   "id,migration_id,kind,status\n1,1,notes,succeeded\n2,2,notes," + status + "\n",
			"migration_records.csv": "tenant_id,source,kind,source_id,migration_id,action,reason,created_at\nt,canonical,note,n-1,1,skipped,empty body,2026-01-05\n",
		})
		t.Run(status, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, db *sql.DB) {
				_, err := forensics.Load(context.Background(), db, dir, loadTime)
				require.NoError(t, err)
				require.Equal(t, want, doctor(t, db, "").Names(), "run 2's notes task %s", status)
			})
		})
	}
}

// TestDoctorOneTenant: --tenant narrows every finding to that tenant.
func TestDoctorOneTenant(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		loadFixture(t, db, "stranded-retry")
		_, err := forensics.Load(context.Background(), db, skippedNotesOf(t, "umbrella", 100), loadTime)
		require.NoError(t, err)
		require.Equal(t, []string{forensics.StrandedWork, forensics.FalseSuccess, forensics.UniformSkip}, doctor(t, db, "").Names())
		require.Equal(t, []string{forensics.StrandedWork, forensics.FalseSuccess}, doctor(t, db, "globex").Names())
		require.Equal(t, []string{forensics.UniformSkip}, doctor(t, db, "umbrella").Names())
		require.True(t, doctor(t, db, "nobody").Clean)
	})
}

// skippedNotesOf is skippedNotes for tenant, with ids from base.
func skippedNotesOf(t *testing.T, tenant string, base int) string {
	t.Helper()
	slots := "id,tenant_id,source,kind,source_id,migration_id,action,reason,created_at\n"
	for i := 1; i <= forensics.UniformSkipMin; i++ {
		slots += fmt.Sprintf("%d,%s,canonical,note,n-%02d,%d,skipped,deleted in source,2026-01-05 09:00:00+00\n", base+i, tenant, i, base)
	}
	return writeDump(t, map[string]string{
		"migrations.csv":        fmt.Sprintf("id,tenant_id,source,status,duration_ms,started_at\n%d,%s,canonical,succeeded,10,2026-01-05\n", base, tenant),
		"migration_tasks.csv":   fmt.Sprintf("id,migration_id,kind,status\n%d,%d,notes,succeeded\n", base, base),
		"migration_records.csv": slots,
	})
}

// TestMisphasedTasksOfAFinishedRun: tasks that finished in production's
// order have nothing to re-run; doctor names them and says where to look.
// A task whose phase is its kind's (deals in phase 3) is no finding.
func TestMisphasedTasksOfAFinishedRun(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		sum, err := forensics.Load(context.Background(), db, writeDump(t, map[string]string{
			"migrations.csv": "id,tenant_id,source,status,duration_ms,started_at\n1,t,canonical,succeeded,10,2026-01-05 09:00:00+00\n",
			"migration_tasks.csv": "id,migration_id,kind,phase,status\n1,1,companies,1,succeeded\n2,1,contacts,1,succeeded\n" +
				"3,1,deals,3,succeeded\n4,1,emails,4,succeeded\n",
		}), loadTime)
		require.NoError(t, err)
		require.Len(t, sum.Warnings, 1)
		require.Contains(t, sum.Warnings[0], "2 tasks are in another phase than their kind's in crmimport's plan")
		require.Contains(t, sum.Warnings[0], "task 2 of run 1 (contacts) in phase 1 instead of 2, task 4 of run 1 (emails) in phase 4 instead of 5")
		d := doctor(t, db, "")
		require.Equal(t, []string{forensics.MisphasedTasks}, d.Names())
		f := d.Findings[0]
		require.Equal(t, int64(2), f.Count)
		require.Equal(t, []string{"task 2", "task 4"}, f.Examples)
		require.Equal(t, []string{"run 1 (succeeded): its contacts task 2 (succeeded) is in phase 1, its kind's is 2; " +
			"emails task 4 (succeeded) is in phase 4, its kind's is 5"}, f.Details)
		require.Len(t, f.Repair, 1)
		require.Contains(t, f.Repair[0], "nothing to re-run for run 1")
		require.Contains(t, f.Repair[0], "crmimport ledger why --tenant t --run 1")
	})
}

// TestOrphanSlotsRepairFreesThem: the statement doctor gives to free the
// slots of missing rows names the database it read — sqlite3 and the
// file, or psql and the server's address (without the search_path that
// libpq refuses: a statement sets it first) — and, run, frees them:
// doctor no longer finds them.
func TestOrphanSlotsRepairFreesThem(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		db := storetest.Open(t, addr)
		loadFixture(t, db, "orphan-slots")
		opts := forensics.DoctorOptions{DBPath: addr}
		d, err := forensics.Doctor(ctx, db, phases.New(db, nil), opts)
		require.NoError(t, err)
		require.Equal(t, []string{forensics.OrphanSlots}, d.Names())
		line, note, _ := strings.Cut(d.Findings[0].Repair[0], "   # ")
		require.Equal(t, "1. frees the slots", note)
		// The words the shell gives the program, as a user pasting it.
		out, err := exec.Command("sh", "-c", `printf '%s\0' `+line).Output()
		require.NoError(t, err, line)
		argv := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		stmt := "DELETE FROM migration_records WHERE tenant_id = 'tyrell' AND source = 'canonical' AND kind = 'contact' AND source_id IN ('c-1')"
		if store.IsAddress(addr) {
			p, err := store.PsqlOf(addr)
			require.NoError(t, err)
			require.NotContains(t, p.Address, "search_path")
			require.Equal(t, []string{"psql", p.Address, "-c", p.SearchPath, "-c", stmt}, argv)
			out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
			require.NoError(t, err, "%s", out)
			require.Equal(t, "SET\nDELETE 1\n", string(out))
		} else {
			require.Equal(t, []string{"sqlite3", addr, stmt}, argv)
			_, err := storetest.Reopen(t, db).Exec(argv[2]) // as sqlite3 would
			require.NoError(t, err)
		}
		d, err = forensics.Doctor(ctx, db, phases.New(db, nil), opts)
		require.NoError(t, err)
		require.True(t, d.Clean, "%+v", d.Findings)
	})
}

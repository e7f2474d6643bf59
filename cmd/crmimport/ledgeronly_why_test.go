package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLedgerWhyAndReportOnAProductionLedger (issue 17 item 5): on the
// production ledger of incident one (poisoned-ledger), made without
// crmimport, `ledger why` groups the tenant's slots as on a SQLite file
// after `ledger load` of its dump; a record's story tells the same runs
// and parents but that its row cannot be told; `report RUN` shows the
// run's status, tasks, outcomes and skip reasons as there, without a log,
// saying what it cannot tell — and nothing is written to the production
// schema.
func TestLedgerWhyAndReportOnAProductionLedger(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "crm.db")
	r := crm(t, nil, "--db", path, "ledger", "load", filepath.Join(dumps, "poisoned-ledger"))
	require.Equal(t, exitOK, r.code, r.stderr)
	addr := productionLedger(t, "poisoned-ledger")
	before := ledgerPrint(t, addr)
	both := func(args ...string) (ref, got map[string]any, text result) {
		t.Helper()
		for i, db := range []string{path, addr} {
			r := crm(t, nil, append([]string{"--db", db, "--json"}, args...)...)
			require.Equal(t, exitOK, r.code, "%s %v: %s", db, args, r.stderr)
			var doc map[string]any
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), r.stdout)
			if i == 0 {
				ref = doc
			} else {
				got = doc
			}
		}
		text = crm(t, nil, append([]string{"--db", addr}, args...)...)
		require.Equal(t, exitOK, text.code, text.stderr)
		require.Contains(t, text.stdout, "read from the production ledger at "+addr+" as it is")
		return ref, got, text
	}

	ref, got, text := both("ledger", "why", "--tenant", "acme")
	require.Nil(t, ref["ledger_only"])
	require.NotNil(t, got["ledger_only"])
	require.Equal(t, ref["groups"], got["groups"])
	require.Equal(t, float64(59), got["total"])
	require.Regexp(t, `note\s+hubspot\s+skipped\s+not linked to any record\s+1 \(failed\)\s+24`, text.stdout)
	for _, args := range [][]string{{"--kind", "notes"}, {"--run", "2"}} {
		ref, got, _ := both(append([]string{"ledger", "why", "--tenant", "acme"}, args...)...)
		require.Equal(t, ref["groups"], got["groups"], "%v", args)
	}
	ref, got, _ = both("ledger", "why", "--tenant", "nobody")
	require.Equal(t, ref["groups"], got["groups"])

	// A record's story: its runs and parents as there; its row unknown.
	ref, got, text = both("ledger", "why", "--tenant", "acme", "--source-id", "n-01")
	refSlot, gotSlot := ref["slots"].([]any)[0].(map[string]any), got["slots"].([]any)[0].(map[string]any)
	for _, k := range []string{"action", "reason", "claimed_at", "run_id", "parents"} {
		require.Equal(t, refSlot[k], gotSlot[k], k)
	}
	require.Equal(t, false, gotSlot["run"].(map[string]any)["loaded_from_dump"], "read from production, not loaded from a dump")
	require.Equal(t, float64(2), gotSlot["later_runs"].([]any)[0].(map[string]any)["id"])
	require.Contains(t, text.stdout, "since then, run 2 (succeeded) processed notes and left this skip as it was: a stale verdict (R3)")
	require.Contains(t, text.stdout, "its contact c-01 is created now, by run 2")
	require.Contains(t, text.stdout, "cannot tell which records failed and why: the ledger has no record_failures")
	_, got, text = both("ledger", "why", "--tenant", "acme", "--source-id", "c-01")
	row := got["slots"].([]any)[0].(map[string]any)["row"].(map[string]any)
	require.Equal(t, map[string]any{"table": "contacts", "id": row["id"], "missing": false, "placeholder": false, "unknown": true}, row)
	require.Contains(t, text.stdout, "whether it is there cannot be told: the ledger's schema has no target tables")
	r = crm(t, nil, "--db", addr, "ledger", "why", "--tenant", "acme", "--source-id", "c-01", "--ledger-only", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.NotContains(t, r.stderr, "holds a production engine's ledger", "told, not found")
	require.Contains(t, r.stdout, `"unknown": true`)

	// The run page of run 1.
	ref, got, text = both("report", "1")
	for _, k := range []string{"run", "tenant", "source", "status", "interrupted", "phase", "started_at", "finished_at", "duration_ms", "kinds", "tasks", "reasons"} {
		require.Equal(t, ref[k], got[k], k)
	}
	require.NotEmpty(t, ref["log"], "a loaded run's log says where it came from")
	require.Empty(t, got["log"], "a production ledger has no run_log")
	asIs := got["ledger_only"].(map[string]any)
	require.Equal(t, addr, asIs["database"])
	require.Contains(t, asIs["untold"], "a run's log: the ledger has no run_log")
	require.Regexp(t, `2\s+2\s+contacts\s+—\s+failed`, text.stdout)
	require.Contains(t, text.stdout, "cannot tell a run's log: the ledger has no run_log")
	r = crm(t, nil, "--db", addr, "report", "1", "--format", "html", "--out", filepath.Join(t.TempDir(), "run-1.html"))
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stderr, "the run page has no log and no failed records' reasons")
	r = crm(t, nil, "--db", addr, "report", "9")
	require.Equal(t, exitError, r.code)
	require.Contains(t, r.stderr, "run 9: no such run")

	require.Equal(t, before, ledgerPrint(t, addr), "nothing was written to the production ledger")
}

// TestProductionLedgerIsNeverWritten (issue 17 item 5): --ledger-only
// names a server's ledger (on a file it is a usage error); the commands
// that write refuse a production ledger's schema before writing anything,
// and those that read crmimport's own database say there is none; a
// schema without the ledger's tables is no production ledger.
func TestProductionLedgerIsNeverWritten(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "crm.db")
	require.Equal(t, exitOK, crm(t, nil, "--db", path, "ledger", "load", filepath.Join(dumps, "stranded-retry")).code)
	r := crm(t, nil, "--db", path, "doctor", "--ledger-only")
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, "--ledger-only reads a production engine's ledger on its PostgreSQL server")

	addr := productionLedger(t, "stranded-retry")
	before := ledgerPrint(t, addr)
	for _, args := range [][]string{
		{"run", "--tenant", "globex", "--source", "canonical", filepath.Join(dumps, "stranded-retry", "export")},
		{"ledger", "load", filepath.Join(dumps, "stranded-retry")},
	} {
		r := crm(t, nil, append([]string{"--db", addr}, args...)...)
		require.Equal(t, exitError, r.code, "%v: %s", args, r.stderr)
		require.Contains(t, r.stderr, "holds 3 tables and no crmimport database", "%v", args)
	}
	for _, args := range [][]string{{"runs"}, {"resume", "1"}, {"stop", "1"}, {"rejects", "1"}} {
		r := crm(t, nil, append([]string{"--db", addr}, args...)...)
		require.Equal(t, exitError, r.code, "%v: %s", args, r.stderr)
		require.Contains(t, r.stderr, "no such database", "%v", args)
	}
	require.Equal(t, before, ledgerPrint(t, addr), "nothing was written to the production ledger")

	empty := productionLedgerOf(t, map[string]string{"migrations.csv": "id,tenant_id,source,status,started_at\n"})
	r = crm(t, nil, "--db", empty, "doctor", "--ledger-only")
	require.Equal(t, exitError, r.code, r.stderr)
	require.Contains(t, r.stderr, "holds no production ledger: it has no migration_tasks, migration_records")
	r = crm(t, nil, "--db", empty, "doctor")
	require.Equal(t, exitError, r.code, r.stderr)
	require.Contains(t, r.stderr, "no such database", "without the three tables it is not found to be a ledger")
}

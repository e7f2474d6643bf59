package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"crmimport/store"
	"crmimport/store/storetest"
)

// issue 23 item 22: a run on a server whose schema's write lock another
// writer holds waits for it, and after a short wait says on stderr whose
// lock it waits for (store.WithNotice), where it waited without a word.
func TestARunThatWaitsForTheWriteLockSaysWhose(t *testing.T) {
	addr := storetest.PostgresDSN(t)
	db := storetest.Open(t, addr)
	ctx := context.Background()
	tx, err := store.Begin(ctx, db) // another writer of the schema, in the middle of its batch
	require.NoError(t, err)
	defer tx.Rollback()
	var pid int64
	require.NoError(t, tx.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid))

	c := startChild(t, nil, "--db", addr, "run", "--tenant", "demo", "--source", "canonical", demo)
	time.Sleep(store.LockNotice + 3*time.Second)
	require.Nil(t, c.cmd.ProcessState, "the run ended while another writer held the lock")
	require.NoError(t, tx.Commit())
	require.Equal(t, exitPartial, c.wait(t), "the demo is partial by design: %s", c.stderr.String())
	require.Contains(t, c.stderr.String(), "notice: waiting for the write lock of schema t")
	require.Contains(t, c.stderr.String(), fmt.Sprintf("held by server process %d (", pid))
}

// issue 23 item 22: a dry run on PostgreSQL killed with SIGKILL left its
// copy of the customer's data in a crmimport_dry_run_… schema that nothing
// mentioned. runs and doctor name it, with the statement that drops it,
// and the next dry run removes it and says so — never the copy of a dry
// run that is still working.
func TestADryRunKilledOnPostgresLeavesNoSilentCopy(t *testing.T) {
	addr := storetest.PostgresDSN(t)
	schema := addr[strings.LastIndex(addr, "search_path=")+len("search_path="):]
	r := crm(t, nil, "--db", addr, "run", "--tenant", "demo", "--source", "canonical", demo)
	require.Equal(t, exitPartial, r.code, r.stderr)
	db := storetest.Open(t, addr)
	ctx := context.Background()
	// copies are the dry runs' copies of this test's schema.
	copies := func() []string {
		t.Helper()
		var s sql.NullString
		require.NoError(t, db.QueryRowContext(ctx, `SELECT string_agg(nspname, ' ' ORDER BY nspname) FROM pg_namespace
WHERE nspname LIKE 'crmimport\_dry\_run\_%' AND obj_description(oid, 'pg_namespace') LIKE ?`, `%"of":"`+schema+`"%`).Scan(&s))
		if s.String == "" {
			return nil
		}
		return strings.Fields(s.String)
	}
	// dryRun starts a dry run that waits before its first batch, and
	// returns it once its copy is made, with the copy's name.
	dryRun := func() (*childProc, string) {
		t.Helper()
		before := copies()
		c := startChild(t, map[string]string{"CRMIMPORT_FAILPOINTS": "batch:company:1=sleep:60s"},
			"--db", addr, "run", "--dry-run", "--tenant", "demo", "--source", "canonical", demo)
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			for _, name := range copies() {
				if !slices.Contains(before, name) {
					return c, name
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("no copy appeared: %s", c.stderr.String())
		return nil, ""
	}

	// Two dry runs at work; one is killed.
	working, workingCopy := dryRun()
	killed, killedCopy := dryRun()
	time.Sleep(500 * time.Millisecond) // well into its work
	require.NoError(t, killed.cmd.Process.Kill())
	require.Equal(t, -1, killed.wait(t), "SIGKILL")
	require.ElementsMatch(t, []string{workingCopy, killedCopy}, copies(), "SIGKILL left the copy")

	r = crm(t, nil, "--db", addr, "runs")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "left behind: schema "+killedCopy+", a copy of schema "+schema+" made by a dry run on ")
	require.Contains(t, r.stdout, `DROP SCHEMA "`+killedCopy+`" CASCADE`)
	require.NotContains(t, r.stdout, workingCopy, "a working dry run's copy is not left behind")
	r = crm(t, nil, "--db", addr, "--json", "runs")
	require.Equal(t, 0, r.code, r.stderr)
	var listed struct {
		Copies []store.DryRunCopy `json:"dry_run_copies"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &listed))
	require.Len(t, listed.Copies, 1)
	require.Equal(t, killedCopy, listed.Copies[0].Schema)
	require.Equal(t, schema, listed.Copies[0].Of)
	r = crm(t, nil, "--db", addr, "doctor")
	require.Equal(t, exitFindings, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "dry-run-copies · every tenant")
	require.Contains(t, r.stdout, killedCopy)
	require.Contains(t, r.stdout, `DROP SCHEMA "`+killedCopy+`" CASCADE`)

	require.NotContains(t, r.stdout, workingCopy)

	// The next dry run removes the copy left behind, and not the working
	// one's.
	r = crm(t, nil, "--db", addr, "run", "--dry-run", "--tenant", "demo", "--source", "canonical", demo)
	require.Equal(t, exitPartial, r.code, r.stderr)
	require.Contains(t, r.stderr, "notice: dry run: removed schema "+killedCopy+", a copy of schema "+schema)
	require.Equal(t, []string{workingCopy}, copies())
	r = crm(t, nil, "--db", addr, "runs")
	require.NotContains(t, r.stdout, "left behind", "a working dry run's copy is not left behind")

	// Killed too, its copy goes with the next dry run: none is left.
	require.NoError(t, working.cmd.Process.Kill())
	working.wait(t)
	r = crm(t, nil, "--db", addr, "run", "--dry-run", "--tenant", "demo", "--source", "canonical", demo)
	require.Equal(t, exitPartial, r.code, r.stderr)
	require.Contains(t, r.stderr, "removed schema "+workingCopy)
	require.Empty(t, copies())
	r = crm(t, nil, "--db", addr, "--json", "doctor")
	require.NotContains(t, r.stdout, "dry-run-copies")
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"crmimport/ledger/ledgertest"
	"crmimport/report"
	"crmimport/store"
	"crmimport/store/storetest"
)

// The test binary doubles as crmimport: with CRMIMPORT_TEST_CHILD=1 it runs
// the command line on CRMIMPORT_TEST_ARGS, so that tests can kill, stop and
// signal a real process. With CRMIMPORT_TEST_START_AT (unix nanoseconds) it
// first sleeps until then, so that several children start at one instant
// (the crash suite's admission races).
func TestMain(m *testing.M) {
	if os.Getenv("CRMIMPORT_TEST_CHILD") == "1" {
		limitMemory() // as main does
		sleepUntilStartAt()
		var args []string
		if err := json.Unmarshal([]byte(os.Getenv("CRMIMPORT_TEST_ARGS")), &args); err != nil {
			panic(err)
		}
		a := newApp(os.Stdout, os.Stderr, os.Getenv)
		a.signals = true
		code := a.run(context.Background(), append([]string{"crmimport"}, args...))
		keepPeakRSS(os.Getenv("CRMIMPORT_TEST_PEAK"))
		os.Exit(code)
	}
	code := storetest.Tests(m) // stops the PostgreSQL cluster the tests started
	printCrashSummary()
	os.Exit(code)
}

const demo = "../../fixtures/demo"

// demoLater is two contacts added to the demo's CRM after its export, at
// its company acc-001.
const demoLater = "../../fixtures/demo-later"

// result is what one command line gave.
type result struct {
	code           int
	stdout, stderr string
}

// summary decodes the JSON document on stdout.
func (r result) summary(t *testing.T) report.Summary {
	t.Helper()
	var s report.Summary
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &s), "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	return s
}

// oneApp serialises in-process command lines: urfave/cli v2 keeps its help
// flag and help command in package variables that every App's setup
// writes. A process runs one command line, so only these tests could race.
var oneApp sync.Mutex

// crm runs the command line in-process with env as its environment.
func crm(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	a := newApp(&out, &errb, func(k string) string { return env[k] })
	oneApp.Lock()
	code := a.run(context.Background(), append([]string{"crmimport"}, args...))
	oneApp.Unlock()
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// child starts the command line as a real process.
type childProc struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	peak           string // where the child writes its peak RSS (keepPeakRSS)
}

func startChild(t *testing.T, env map[string]string, args ...string) *childProc {
	t.Helper()
	b, err := json.Marshal(args)
	require.NoError(t, err)
	c := &childProc{cmd: exec.Command(os.Args[0], "-test.run=^$"), peak: filepath.Join(t.TempDir(), "peak")}
	c.cmd.Env = append(os.Environ(), "CRMIMPORT_TEST_CHILD=1", "CRMIMPORT_TEST_ARGS="+string(b), "CRMIMPORT_TEST_PEAK="+c.peak)
	for k, v := range env {
		c.cmd.Env = append(c.cmd.Env, k+"="+v)
	}
	c.cmd.Stdout, c.cmd.Stderr = &c.stdout, &c.stderr
	require.NoError(t, c.cmd.Start())
	t.Cleanup(func() {
		if c.cmd.ProcessState == nil {
			_ = c.cmd.Process.Kill()
			_ = c.cmd.Wait()
		}
	})
	return c
}

// wait waits for the child and returns its exit code (-1 when killed by a
// signal).
func (c *childProc) wait(t *testing.T) int {
	t.Helper()
	err := c.cmd.Wait()
	if err != nil {
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "stderr: %s", c.stderr.String())
	}
	return c.cmd.ProcessState.ExitCode()
}

// waitForRun waits until the database holds a running run of tenant and
// returns its id.
func waitForRun(t *testing.T, path, tenant string, c *childProc) int64 {
	t.Helper()
	db := storetest.Open(t, path)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		var id int64
		err := db.QueryRow(`SELECT id FROM migrations WHERE tenant_id = ? AND status = 'running'`, tenant).Scan(&id)
		if err == nil {
			return id
		}
		if c != nil && c.cmd.ProcessState != nil {
			t.Fatalf("the child ended before its run started: %s", c.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no running run of %s appeared", tenant)
	return 0
}

// dump is the canonical dump of a tenant's ledger and rows.
func dump(t *testing.T, path, tenant string) string {
	t.Helper()
	db := storetest.Open(t, path)
	defer db.Close() // a server has a bounded number of connections: none kept to the end of the test
	s, err := ledgertest.Dump(context.Background(), db, tenant)
	require.NoError(t, err)
	return s
}

// reference is the dump and the per-kind outcomes of an uninterrupted full
// run of the demo export.
func reference(t *testing.T, batchSize string) (string, map[string]any) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "reference.db")
	r := crm(t, nil, "--db", path, "--json", "run", "--tenant", "acme", "--source", "canonical", "--batch-size", batchSize, demo)
	require.Equal(t, exitPartial, r.code, r.stderr)
	return dump(t, path, "acme"), kindsOf(t, r)
}

func kindsOf(t *testing.T, r result) map[string]any {
	t.Helper()
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), r.stdout)
	return doc["kinds"].(map[string]any)
}

func query(t *testing.T, path, q string, args ...any) []string {
	t.Helper()
	if store.IsAddress(path) {
		q = testSQL(store.Postgres, q)
	}
	db := storetest.Open(t, path)
	defer db.Close() // a server has a bounded number of connections: none kept to the end of the test
	rows, err := db.Query(q, args...)
	require.NoError(t, err)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(t, err)
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		var parts []string
		for _, v := range vals {
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			parts = append(parts, strings.TrimSpace(strings.ReplaceAll(fmtAny(v), "\n", " ")))
		}
		out = append(out, strings.Join(parts, "|"))
	}
	require.NoError(t, rows.Err())
	return out
}

func fmtAny(v any) string {
	if v == nil {
		return "NULL"
	}
	if s, ok := v.(string); ok {
		return s
	}
	if b, ok := v.(bool); ok { // PostgreSQL's booleans, as SQLite gives them
		return map[bool]string{true: "1", false: "0"}[b]
	}
	b, _ := json.Marshal(v)
	s := string(b)
	return strings.Trim(s, `"`)
}

func sleepMs(n int) { time.Sleep(time.Duration(n) * time.Millisecond) }

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

// testSQL is a test's own query, written in SQLite's spelling, in dialect
// d's: the checks of what was stored read JSON (json_extract(COLUMN,
// '$.KEY'), PostgreSQL's ->>) and find text (instr, strpos; char, chr).
func testSQL(d store.Dialect, q string) string {
	if d != store.Postgres {
		return q
	}
	q = jsonExtractPG.ReplaceAllString(q, `(CAST($1 AS jsonb) ->> '$3')`)
	q = strings.ReplaceAll(q, "instr(", "strpos(")
	return strings.ReplaceAll(q, "char(", "chr(")
}

var jsonExtractPG = regexp.MustCompile(`json_extract\(([a-z_.]+), '\$\.("?)([^'"]+)"?'\)`)

// stateOf is what a database holds, to compare before and after a command
// that must write nothing: a file's bytes, or on PostgreSQL every row of
// every table of its schema and the dry runs' copies in its database (a
// dry run's copy beside it must be gone after it).
func stateOf(t *testing.T, path string) string {
	t.Helper()
	if !store.IsAddress(path) {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		return string(b)
	}
	var b strings.Builder
	for _, table := range query(t, path, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = current_schema() ORDER BY table_name`) {
		rows := query(t, path, `SELECT * FROM `+table)
		sort.Strings(rows)
		fmt.Fprintf(&b, "%s:\n  %s\n", table, strings.Join(rows, "\n  "))
	}
	// Other tests make schemas and dry runs of their own meanwhile: the
	// copies of this schema only (a copy says what it copies, store's
	// dry-run comment).
	fmt.Fprintf(&b, "dry-run copies: %s\n", strings.Join(query(t, path,
		`SELECT nspname FROM pg_namespace n WHERE nspname LIKE 'crmimport\_dry\_run\_%'
		  AND coalesce(obj_description(n.oid, 'pg_namespace'), '') LIKE '%"of":"' || current_schema() || '"%'
		ORDER BY nspname`), ", "))
	return b.String()
}

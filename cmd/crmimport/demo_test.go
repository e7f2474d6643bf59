package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/store/storetest"
)

// TestDemoPassesAndRerun: make demo's two passes and a rerun give exactly
// the outcomes of fixtures/demo/expected.json; the rerun creates nothing,
// leaves every final slot as it was (R2), refreshes every skip (R3), and
// fails the duplicate id again.
func TestDemoPassesAndRerun(t *testing.T) {
	t.Parallel()
	var expected map[string]map[string]map[string]int64
	b, err := os.ReadFile(filepath.Join(demo, "expected.json"))
	require.NoError(t, err)
	var raw map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &raw))
	expected = map[string]map[string]map[string]int64{}
	for _, p := range []string{"pass1", "pass2", "pass3"} {
		var m map[string]map[string]int64
		require.NoError(t, json.Unmarshal(raw[p], &m))
		expected[p] = m
	}

	storetest.RunAddress(t, func(t *testing.T, path string) {
		run := func(extra ...string) result {
			args := append([]string{"--db", path, "--json", "run", "--tenant", "demo", "--source", "canonical"}, extra...)
			return crm(t, nil, append(args, demo)...)
		}
		check := func(pass string, r result) {
			t.Helper()
			require.Equal(t, exitPartial, r.code, "the demo is partial by design\n%s", r.stderr)
			s := r.summary(t)
			require.Equal(t, "partial", s.Status)
			require.Len(t, s.Kinds, len(expected[pass]), pass)
			for kind, want := range expected[pass] {
				got := s.Kinds[kind]
				require.Equal(t, want, map[string]int64{
					"imported": got.Imported, "unchanged": got.Unchanged, "skipped": got.Skipped, "failed": got.Failed,
					"matched": got.Matched, "unlinked": got.Unlinked, "duplicate": got.Duplicate,
				}, "%s %s", pass, kind)
			}
		}
		check("pass1", run("--only", "companies"))
		r2 := run()
		check("pass2", r2)
		run2 := r2.summary(t).Run

		finalBefore := query(t, path, `SELECT kind, source_id, action, record_id, migration_id, created_at FROM migration_records
		WHERE action <> 'skipped' ORDER BY kind, source_id`)
		rowsBefore := counts(t, path)
		skipsBefore := query(t, path, `SELECT count(*) FROM migration_records WHERE action = 'skipped' AND migration_id = ?`, run2)

		r3 := run()
		check("pass3", r3)
		run3 := r3.summary(t).Run
		require.Equal(t, finalBefore, query(t, path, `SELECT kind, source_id, action, record_id, migration_id, created_at
		FROM migration_records WHERE action <> 'skipped' ORDER BY kind, source_id`), "R2: no final slot changed")
		require.Equal(t, rowsBefore, counts(t, path), "a rerun creates nothing")
		require.Equal(t, []string{"0"}, query(t, path, `SELECT count(*) FROM migration_records WHERE action = 'skipped' AND migration_id <> ?`, run3),
			"R3: every skip now tells the latest attempt")
		require.Equal(t, skipsBefore, query(t, path, `SELECT count(*) FROM migration_records WHERE action = 'skipped' AND migration_id = ?`, run3))
		for _, run := range []int64{run2, run3} {
			require.Equal(t, []string{"con-015|contacts.csv|48|duplicate source_id, first at contacts.csv:16"},
				query(t, path, `SELECT source_id, file, line, reason FROM record_failures WHERE migration_id = ? AND reason LIKE 'duplicate%'`, run),
				"a duplicate id fails as a duplicate every time")
		}
	})
}

func counts(t *testing.T, path string) []string {
	t.Helper()
	var out []string
	for _, table := range []string{"companies", "contacts", "deals", "notes", "activities", "emails"} {
		out = append(out, fmt.Sprint(table, query(t, path, `SELECT count(*) FROM `+table)))
	}
	return out
}

// TestDemoTextSummary: the human summary shows the four outcomes per kind in
// their order and says what to do next.
func TestDemoTextSummary(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, path string) {
		r := crm(t, nil, "--db", path, "run", "--tenant", "demo", "--source", "canonical", demo)
		require.Equal(t, exitPartial, r.code, r.stderr)
		require.Regexp(t, `imported\s+unchanged\s+skipped\s+failed`, r.stdout)
		require.Regexp(t, `contacts\s+84\s+0\s+2\s+4\s+\(1 matched, 3 unlinked, 1 duplicate\)`, r.stdout)
		require.Contains(t, r.stdout, "fix those rows and run again; imported rows will be left alone")
		require.Contains(t, r.stdout, "`crmimport run --only notes,activities,emails …` takes them over")
		require.Contains(t, r.stderr, "run 1 planned")
		require.NotContains(t, r.stderr, "\x1b[", "no progress bar when stderr is not a terminal")
	})
}

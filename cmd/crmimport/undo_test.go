package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/store/storetest"
)

// TestUndoCommand (R16, SPEC §5): `undo RUN` through the command line —
// --dry-run prints per kind what would be taken back and writes nothing;
// dependents refuse with exit 1, named in text and --json; --cascade takes
// them back; the summary has the run summary's shape with removed,
// released, restored and cleared; runs shows both runs; an undo of an undo
// and of an undone run exit 1; a live run exits 6.
func TestUndoCommand(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, path string) {
		r := crm(t, nil, "--db", path, "--json", "run", "--tenant", "acme", "--source", "canonical", "--only", "companies", demo)
		require.Equal(t, exitPartial, r.code, r.stderr)
		first := r.summary(t).Run
		r = crm(t, nil, "--db", path, "--json", "run", "--tenant", "acme", "--source", "canonical", demo)
		require.Equal(t, exitPartial, r.code, r.stderr)
		second := r.summary(t).Run

		before := stateOf(t, path)
		r = crm(t, nil, "--db", path, "undo", "2", "--dry-run")
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Contains(t, r.stdout, "dry run (nothing written) · undo of run 2 · tenant acme · source canonical · 260 slots to take back")
		require.Regexp(t, `contacts\s+83\s+1\s+0\s+2`, r.stdout)
		require.Regexp(t, `companies\s+0\s+0\s+2\s+0`, r.stdout, "run 2 refreshed run 1's two skipped companies: their images come back")
		require.Equal(t, before, stateOf(t, path), "--dry-run writes nothing")

		r = crm(t, nil, "--db", path, "undo", "1")
		require.Equal(t, exitError, r.code)
		require.Contains(t, r.stderr, "run 1 cannot be undone alone: records of other runs depend on its rows")
		require.Contains(t, r.stderr, "run 2 (canonical): 77 contacts that link to its rows, e.g. con-001, con-002, con-003, con-004, con-005")
		require.Contains(t, r.stderr, "`crmimport undo 1 --cascade`")
		r = crm(t, nil, "--db", path, "--json", "undo", "1")
		require.Equal(t, exitError, r.code)
		var refusal struct {
			Error      string `json:"error"`
			Dependents []struct {
				Run      int64    `json:"run"`
				Kind     string   `json:"kind"`
				How      string   `json:"how"`
				Count    int      `json:"count"`
				Examples []string `json:"examples"`
			} `json:"dependents"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &refusal), r.stdout)
		require.Len(t, refusal.Dependents, 6, "77 contacts link to its companies, one more matched one of them (con-040), and their deals, notes, activities and emails")
		require.Equal(t, second, refusal.Dependents[0].Run)
		require.Equal(t, "contact", refusal.Dependents[0].Kind)
		require.Equal(t, 77, refusal.Dependents[0].Count)

		r = crm(t, nil, "--db", path, "--json", "undo", "1", "--cascade")
		require.Equal(t, exitOK, r.code, r.stderr)
		s := r.summary(t)
		require.Equal(t, first, s.Undoes)
		require.Equal(t, "succeeded", s.Status)
		var kinds map[string]map[string]int64
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &struct {
			Kinds *map[string]map[string]int64 `json:"kinds"`
		}{&kinds}))
		require.Equal(t, map[string]int64{"removed": 26, "released": 1, "restored": 0, "cleared": 0, "imported": 0, "unchanged": 0, "skipped": 0,
			"failed": 0, "matched": 0, "unlinked": 0, "unowned": 0, "relinked": 0, "duplicate": 0, "excluded": 0, "updated": 0, "overwritten": 0, "outdated": 0,
			"conflict": 0, "deleted_since": 0, "reverted": 0}, kinds["company"], "run 1's companies and its matched one; its skips are run 2's now")
		require.Equal(t, int64(77), kinds["contact"]["removed"], "run 2's contacts that link to run 1's companies")
		require.Equal(t, []string{"0"}, query(t, path, `SELECT count(*) FROM companies`), "every company went")
		require.Equal(t, []string{"0"}, query(t, path, `SELECT count(*) FROM migration_records WHERE migration_id = 1 AND action <> 'skipped'`))

		r = crm(t, nil, "--db", path, "runs")
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Contains(t, r.stdout, "undo of run 1: ")
		require.Contains(t, r.stdout, "undone by run 3")
		r = crm(t, nil, "--db", path, "report", "1")
		require.Contains(t, r.stdout, "undo        undone by run 3")

		r = crm(t, nil, "--db", path, "undo", "3")
		require.Equal(t, exitError, r.code)
		require.Contains(t, r.stderr, "run 3 is an undo (of run 1): an undo cannot be undone")
		r = crm(t, nil, "--db", path, "undo", "1")
		require.Equal(t, exitError, r.code)
		require.Contains(t, r.stderr, "run 1 was already undone by run 3")
		r = crm(t, nil, "--db", path, "undo", "x")
		require.Equal(t, exitUsage, r.code)
		r = crm(t, nil, "--db", path, "doctor", "--tenant", "acme")
		require.Equal(t, exitOK, r.code, "doctor stays clean after an undo: %s", r.stdout)
	})
}

// TestUndoOfALiveRunIsRefused (R16, R13): exit 6, naming the live run.
func TestUndoOfALiveRunIsRefused(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, path string) {
		c := startChild(t, map[string]string{"CRMIMPORT_FAILPOINTS": "batch:contact:1=exit"}, demoArgs(path)...)
		require.Equal(t, -1, c.wait(t), "killed by its own SIGKILL")
		r := crm(t, nil, "--db", path, "undo", "1")
		require.Equal(t, exitRefused, r.code, r.stderr)
		require.Contains(t, r.stderr, "tenant acme has an interrupted run: run 1")
		r = crm(t, nil, "--db", path, "--json", "undo", "1", "--dry-run")
		require.Equal(t, exitRefused, r.code, r.stderr)
		require.Contains(t, r.stdout, `"live_run":1`)
	})
}

// TestUndoConfirmsItsDryRun (R16; SPEC §5 `undo --plan DIGEST`, §11: a
// preview and its commit are the same plan): --dry-run prints the plan's
// digest and the command that confirms it; `undo --plan DIGEST` commits
// that plan or, when another run changed what it would take back since,
// nothing — exit 8, saying what the plan takes back now and how to look
// again; a digest that is not one is a usage error.
func TestUndoConfirmsItsDryRun(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, path string) {
		r := crm(t, nil, "--db", path, "--json", "run", "--tenant", "acme", "--source", "canonical", "--only", "companies", demo)
		require.Equal(t, exitPartial, r.code, r.stderr)
		r = crm(t, nil, "--db", path, "--json", "run", "--tenant", "acme", "--source", "canonical", "--only", "contacts", demo)
		require.Equal(t, exitPartial, r.code, r.stderr)

		r = crm(t, nil, "--db", path, "undo", "1", "--cascade", "--dry-run")
		require.Equal(t, exitOK, r.code, r.stderr)
		m := regexp.MustCompile("`crmimport undo 1 --cascade --plan ([0-9a-f]{64})` takes back exactly this plan").FindStringSubmatch(r.stdout)
		require.NotNil(t, m, r.stdout)
		shown := m[1]
		require.Contains(t, r.stdout, "plan "+shown+"\n")
		r = crm(t, nil, "--db", path, "--json", "undo", "1", "--cascade", "--dry-run")
		require.Equal(t, exitOK, r.code, r.stderr)
		var preview struct {
			Plan  string `json:"plan"`
			Parts []struct {
				Run   int64  `json:"run"`
				Kind  string `json:"kind"`
				Fate  string `json:"fate"`
				Count int64  `json:"count"`
			} `json:"parts"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &preview), r.stdout)
		require.Equal(t, shown, preview.Plan)
		require.NotEmpty(t, preview.Parts)

		// Another run imports contacts of run 1's companies meanwhile.
		r = crm(t, nil, "--db", path, "--json", "run", "--tenant", "acme", "--source", "canonical", demoLater)
		require.Equal(t, exitOK, r.code, r.stderr)
		third := r.summary(t).Run
		before := stateOf(t, path)
		r = crm(t, nil, "--db", path, "undo", "1", "--cascade", "--plan", shown)
		require.Equal(t, exitPlanChanged, r.code, r.stderr)
		require.Contains(t, r.stderr, "the undo of run 1 was not started: its plan changed since the preview that showed plan "+shown[:12]+"…: it now would remove ")
		require.Contains(t, r.stderr, fmt.Sprintf(" and 2 contacts of run %d; release ", third))
		require.Contains(t, r.stderr, "; nothing was written — look at it again (`crmimport undo 1 --cascade --dry-run`")
		r = crm(t, nil, "--db", path, "--json", "undo", "1", "--plan", shown, "--cascade")
		require.Equal(t, exitPlanChanged, r.code, r.stderr)
		require.Contains(t, r.stdout, `"exit_code":8`)
		require.Equal(t, before, stateOf(t, path), "nothing was written")

		for _, bad := range []string{"abc", strings.Repeat("g", 64)} {
			r = crm(t, nil, "--db", path, "undo", "1", "--cascade", "--plan", bad)
			require.Equal(t, exitUsage, r.code, r.stderr)
			require.Contains(t, r.stderr, "--plan takes the 64 hex digits of a plan's digest, as `crmimport undo 1 --dry-run` prints it")
		}

		r = crm(t, nil, "--db", path, "--json", "undo", "1", "--cascade", "--dry-run")
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &preview), r.stdout)
		require.NotEqual(t, shown, preview.Plan)
		r = crm(t, nil, "--db", path, "--json", "undo", "1", "--cascade", "--plan", preview.Plan)
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Equal(t, "succeeded", r.summary(t).Status)
	})
}

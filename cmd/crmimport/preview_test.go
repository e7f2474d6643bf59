package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/store"
)

// previewExports are an export imported once, and its copy edited since at
// the source: contact c1's title and c2's email, deal d1's amount.
func previewExports(t *testing.T) (first, edited string) {
	t.Helper()
	first = exportOf(t, map[string]string{
		"contacts.csv": "id,first_name,email,title\nc1,Ann,ann@acme.example,Owner\nc2,Bob,bob@acme.example,Baker\nc3,Cy,cy@acme.example,Clerk\n",
		"deals.csv":    "id,name,amount,currency,contact_id\nd1,Bread,4800.00,USD,c1\n",
	})
	edited = exportOf(t, map[string]string{
		"contacts.csv": "id,first_name,email,title\nc1,Ann,ann@acme.example,Founder\nc2,Bob,bob@globex.example,Baker\nc3,Cy,cy@acme.example,Clerk\n",
		"deals.csv":    "id,name,amount,currency,contact_id\nd1,Bread,5200.00,USD,c1\n",
	})
	return first, edited
}

// previewDB imports first into a new database, then edits contact c2's row
// by hand, as a person in a database browser would: c2 is then a conflict.
func previewDB(t *testing.T, first string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "crm.db")
	r := crm(t, nil, "--db", path, "run", "--tenant", "acme", "--source", "canonical", first)
	require.Equal(t, exitOK, r.code, r.stderr)
	db, err := store.Open(context.Background(), path)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(`UPDATE contacts SET title = 'Head Baker' WHERE tenant_id = 'acme' AND email = 'bob@acme.example'`)
	require.NoError(t, err)
	return path
}

// previewSummary is what a test reads of a dry run's --json summary.
type previewSummary struct {
	Plan        string                      `json:"plan"`
	Kinds       map[string]map[string]int64 `json:"kinds"`
	WouldUpdate map[string]int64            `json:"would_update"`
	Next        []string                    `json:"next"`
}

// contactTitle is contact ID's title in the database at path.
func contactTitle(t *testing.T, path, first string) string {
	t.Helper()
	db, err := store.Open(context.Background(), path)
	require.NoError(t, err)
	defer db.Close()
	var title string
	require.NoError(t, db.QueryRow(`SELECT title FROM contacts WHERE tenant_id = 'acme' AND first_name = ?`, first).Scan(&title))
	return title
}

// TestDryRunSaysWhatItWouldUpdate (R17, SPEC §11): a dry run of an export
// edited at the source since its import says, per kind, in its table, its
// "what next" and its --json, how many records its plan would update, are
// outdated and are in conflict — without --update, what --update would
// update — and writes nothing.
func TestDryRunSaysWhatItWouldUpdate(t *testing.T) {
	first, edited := previewExports(t)
	path := previewDB(t, first)
	dry := func(update bool) (previewSummary, string) {
		args := []string{"--db", path, "run", "--dry-run", "--tenant", "acme", "--source", "canonical"}
		if update {
			args = append(args, "--update")
		}
		r := crm(t, nil, append(args, edited)...)
		require.Equal(t, exitOK, r.code, r.stderr)
		text := r.stdout
		r = crm(t, nil, append([]string{"--json"}, append(args, edited)...)...)
		require.Equal(t, exitOK, r.code, r.stderr)
		var s previewSummary
		require.NoError(t, jsonUnmarshal(r.stdout, &s))
		return s, text
	}

	s, text := dry(false)
	require.Equal(t, map[string]int64{"contact": 1, "deal": 1}, s.WouldUpdate, "--update would update c1 and d1, not c2 (edited by hand)")
	require.Equal(t, int64(2), s.Kinds["contact"]["outdated"], "c1 and c2 changed at the source")
	require.Equal(t, int64(1), s.Kinds["contact"]["conflict"])
	require.Equal(t, int64(1), s.Kinds["deal"]["outdated"])
	require.Zero(t, s.Kinds["contact"]["updated"]+s.Kinds["deal"]["updated"], "without --update the plan updates nothing")
	require.Regexp(t, `--update would\s+outdated\s+conflict`, text)
	require.Regexp(t, `contacts\s+0\s+3\s+0\s+0\s+1\s+2\s+1`, text)
	require.Regexp(t, `deals\s+0\s+1\s+0\s+0\s+1\s+1\s+0`, text)
	require.Contains(t, text, "3 records changed at the source since they were imported (2 contacts, 1 deal): this plan leaves them "+
		"as they are (outdated); with --update it would update 2 records (1 contact, 1 deal)")
	require.Contains(t, text, "1 record is in conflict (1 contact): edited by hand since it was imported")

	s, text = dry(true)
	require.Equal(t, map[string]int64{"contact": 1, "deal": 1}, s.WouldUpdate)
	require.Equal(t, int64(1), s.Kinds["contact"]["updated"])
	require.Equal(t, int64(1), s.Kinds["deal"]["updated"])
	require.Equal(t, int64(1), s.Kinds["contact"]["conflict"], "c2 stays a conflict: --update does not overwrite a hand edit")
	require.Regexp(t, `would update\s+outdated\s+conflict`, text)
	require.Regexp(t, `contacts\s+1\s+2\s+0\s+0\s+1\s+1\s+1`, text)
	require.Contains(t, text, "would update 2 records (1 contact, 1 deal): changed at the source since they were imported")
	require.Contains(t, text, "1 record is in conflict (1 contact)")

	require.Equal(t, "Owner", contactTitle(t, path, "Ann"), "a dry run writes nothing")
}

// TestUpdatePlanIsTheDryRunsPlan (SPEC §11: a preview and its commit are
// the same plan): the plan's digest is over the options, --update among
// them, so a dry run without --update does not confirm `run --update
// --plan` (exit 8, nothing written), and one with --update does.
func TestUpdatePlanIsTheDryRunsPlan(t *testing.T) {
	first, edited := previewExports(t)
	path := previewDB(t, first)
	plan := func(update ...string) string {
		args := append([]string{"--json", "--db", path, "run", "--dry-run", "--tenant", "acme", "--source", "canonical"}, update...)
		r := crm(t, nil, append(args, edited)...)
		require.Equal(t, exitOK, r.code, r.stderr)
		var s previewSummary
		require.NoError(t, jsonUnmarshal(r.stdout, &s))
		require.Regexp(t, regexp.MustCompile(`^[0-9a-f]{64}$`), s.Plan)
		return s.Plan
	}
	without, with := plan(), plan("--update")
	require.NotEqual(t, without, with, "--update is part of the plan")

	r := crm(t, nil, "--db", path, "run", "--tenant", "acme", "--source", "canonical", "--update", "--plan", without, edited)
	require.Equal(t, exitPlanChanged, r.code, "a dry run without --update confirms no update: %s", r.stderr)
	require.Contains(t, r.stderr, "its plan changed since the dry run")
	require.Equal(t, "Owner", contactTitle(t, path, "Ann"), "a refused plan writes nothing")

	r = crm(t, nil, "--db", path, "run", "--tenant", "acme", "--source", "canonical", "--update", "--plan", with, edited)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Equal(t, "Founder", contactTitle(t, path, "Ann"), "the plan the dry run showed is imported")
}

// filesOf are the bytes of the database at path and of its WAL, by name
// (the shared-memory index, which a reader maps, aside; an empty WAL,
// which opening a database in WAL mode may leave, holds nothing).
func filesOf(t *testing.T, path string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		require.NoError(t, err)
		if len(b) > 0 {
			out[filepath.Base(p)] = string(b)
		}
	}
	return out
}

// TestInspectComparesItsRowsWithTheLedger (R17, SPEC §5, §11): inspect
// --tenant says of each row shown what it is to the tenant's ledger — new,
// unchanged, outdated with the fields changed at the source, in conflict
// with the fields edited by hand since — as a run decides it, and writes
// nothing; without --tenant it reads no database.
func TestInspectComparesItsRowsWithTheLedger(t *testing.T) {
	first, edited := previewExports(t)
	path := previewDB(t, first)
	contacts, err := os.ReadFile(filepath.Join(edited, "contacts.csv"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(edited, "contacts.csv"), append(contacts, "c4,Dee,dee@acme.example,Cook\n"...), 0o600))
	before := filesOf(t, path)

	r := crm(t, nil, "--db", path, "--json", "inspect", "--source", "canonical", "--tenant", "acme", edited)
	require.Equal(t, exitOK, r.code, r.stderr)
	var ins struct {
		Tenant string         `json:"tenant"`
		Ledger map[string]int `json:"ledger"`
		Files  []struct {
			Kind string `json:"kind"`
			Rows []struct {
				ID      string   `json:"id"`
				Ledger  string   `json:"ledger"`
				Changed []string `json:"changed"`
				Edited  []string `json:"edited"`
				Applies bool     `json:"applicable"`
			} `json:"rows"`
		} `json:"files"`
	}
	require.NoError(t, jsonUnmarshal(r.stdout, &ins))
	require.Equal(t, "acme", ins.Tenant)
	require.Equal(t, map[string]int{"new": 1, "unchanged": 1, "outdated": 2, "conflict": 1}, ins.Ledger)
	got := map[string]string{}
	for _, f := range ins.Files {
		for _, row := range f.Rows {
			got[row.ID] = fmt.Sprintf("%s %v %v %v", row.Ledger, row.Changed, row.Edited, row.Applies)
		}
	}
	require.Equal(t, map[string]string{"c1": "outdated [title] [] true", "c2": "conflict [email] [title] false", "c3": "unchanged [] [] false",
		"c4": "new [] [] false", "d1": "outdated [amount] [] true"}, got)
	require.Equal(t, before, filesOf(t, path), "inspect writes to no database")

	r = crm(t, nil, "--db", path, "inspect", "--source", "canonical", "--tenant", "acme", edited)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "ledger of tenant acme: of the rows shown, 1 new, 1 unchanged, 2 outdated, 1 conflict")
	require.Contains(t, r.stdout, `"c1" · valid · outdated: title changed at the source (run --update would update it)`)
	require.Contains(t, r.stdout, `"c2" · valid · conflict: email changed at the source, title edited by hand since import`)

	r = crm(t, nil, "--db", path, "--json", "inspect", "--source", "canonical", edited)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.NotContains(t, r.stdout, `"ledger"`, "without --tenant, no ledger is read")
	require.Equal(t, before, filesOf(t, path))

	missing := filepath.Join(t.TempDir(), "none.db")
	r = crm(t, nil, "--db", missing, "inspect", "--source", "canonical", "--tenant", "acme", edited)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stderr, "no database at")
	require.NoFileExists(t, missing, "inspect makes no database")
}

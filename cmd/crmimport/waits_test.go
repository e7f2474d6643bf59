package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/forensics"
	"crmimport/store/storetest"
)

// TestSkipsThatWaitForNothing: R6b (issue 23 item 10). Notes and tasks
// linked only to a Salesforce case, which the salesforce profile does not
// import, are never taken over by a run of this export: the summary's
// "what next" does not promise that a fresh run takes them, and names
// them for what they are; doctor does not offer a run to take them over,
// and a rerun skips them again for the same reason. The note that waits
// for an account that is not imported is still promised its run.
func TestSkipsThatWaitForNothing(t *testing.T) {
	t.Parallel()
	export := filepath.Join(fixtureRoot, "bad", "salesforce", "14-linked-only-to-a-case")
	storetest.RunAddress(t, func(t *testing.T, path string) {
		r := crm(t, nil, "--db", path, "--json", "run", "--tenant", "acme", "--source", "salesforce", export)
		require.Equal(t, exitOK, r.code, r.stderr)
		next := r.summary(t).Next
		require.Len(t, next, 3, "%q", next)
		require.Equal(t, "1 record waits for a contact, lead, company or deal that is not imported (1 note): once those are, "+
			"`crmimport run --only notes …` takes them over (a skip is a placeholder, not a verdict)", next[0])
		require.Equal(t, `21 records are linked only to records that cannot hold them under the salesforce profile — not imported, or users (1 note, 20 activities: `+
			`"linked only to a case, which the salesforce profile does not import"): no run of this export takes them over; `+
			`to import them, link them to a contact, lead, company or deal in the CRM and export them again`, next[1])
		for _, n := range next {
			require.NotContains(t, n, "activities …", "no run is promised to take the activities over")
		}

		r = crm(t, nil, "--db", path, "--json", "doctor", "--tenant", "acme")
		require.Equal(t, exitFindings, r.code, r.stderr)
		var diag forensics.Diagnosis
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &diag), r.stdout)
		require.Equal(t, []string{forensics.UniformSkip}, diag.Names())
		f := diag.Findings[0]
		require.Equal(t, int64(20), f.Count)
		require.Len(t, f.Repair, 1, "%q", f.Repair)
		require.NotContains(t, f.Repair[0], "--only", "no run takes them over: none is offered")
		require.Contains(t, f.Repair[0], "ledger why --tenant acme --kind activities --run 1")
		require.Contains(t, f.Repair[0], "linked only to a case, which the salesforce profile does not import: no run of this export takes them over")

		r = crm(t, nil, "--db", path, "--json", "run", "--tenant", "acme", "--source", "salesforce", export)
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Equal(t, []string{"20|linked only to a case, which the salesforce profile does not import|2"}, query(t, path,
			`SELECT count(*), reason, max(migration_id) FROM migration_records WHERE kind = 'activity' GROUP BY reason`),
			"a rerun skips them again, for the same reason (R3: the latest attempt)")
	})
}

// TestSkipsThatWaitForAKindTheProfileDoesNotRead: R6b for a profile of
// one's own that reads notes but no companies: a note linked only to a
// company waits for nothing a run with that profile gives.
func TestSkipsThatWaitForAKindTheProfileDoesNotRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	prof := filepath.Join(dir, "notes-only.yaml")
	export := filepath.Join(dir, "export")
	require.NoError(t, os.Mkdir(export, 0o700))
	write := func(t *testing.T, name, text string) { require.NoError(t, os.WriteFile(name, []byte(text), 0o600)) }
	write(t, prof, "name: notes-only\nkinds:\n  contact:\n    files: [people.csv]\n    fields: {id: id, last_name: name}\n"+
		"  note:\n    files: [notes.csv]\n    fields: {id: id, body: body, contact_id: person, company_id: account}\n")
	write(t, filepath.Join(export, "people.csv"), "id,name\np-1,Ann\n")
	write(t, filepath.Join(export, "notes.csv"), "id,body,person,account\nn-1,On Ann,p-1,\nn-2,On the account,,a-1\nn-3,On Bo,p-2,a-1\n")
	storetest.RunAddress(t, func(t *testing.T, path string) {
		r := crm(t, nil, "--db", path, "--json", "run", "--tenant", "acme", "--source", "own", "--profile", prof, export)
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Equal(t, []string{
			`n-2|linked only to a company, which the notes-only profile does not import|{"company_id":"a-1"}`,
			`n-3|not linked to any record|{"company_id":"a-1","contact_id":"p-2"}`,
		}, query(t, path, `SELECT source_id, reason, detail FROM migration_records WHERE action = 'skipped' ORDER BY source_id`))
		require.Contains(t, strings.Join(r.summary(t).Next, "\n"), "1 record waits for a contact, lead, company or deal")
	})
}

// TestSalesforceFixturePromisesNoRun: the hand-made Salesforce export's
// skips are a note on a user (005: an owner never anchors a note, R6a), an
// event on a case (500): none of them is
// promised a run; its summary says what they are linked to.
func TestSalesforceFixturePromisesNoRun(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "crm.db")
	r := crm(t, nil, "--db", path, "--json", "run", "--tenant", "acme", "--source", "salesforce", filepath.Join(fixtureRoot, "salesforce"))
	require.Equal(t, exitOK, r.code, r.stderr)
	next := r.summary(t).Next
	for _, n := range next {
		require.NotContains(t, n, "takes them over (a skip is a placeholder", "%q", next)
	}
	require.Contains(t, next, `2 records are linked only to records that cannot hold them under the salesforce profile — not imported, or users (1 note, 1 activity: `+
		`"linked only to a case, which the salesforce profile does not import"; `+
		`"linked only to a user (its owner or another): a user never anchors a note, activity or email"): no run of this export takes them over; `+
		`to import them, link them to a contact, lead, company or deal in the CRM and export them again`)
}

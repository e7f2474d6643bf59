package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/runs"
	"crmimport/store/storetest"
)

// TestRunWarnsOfATenantNamedLikeAnother (issue 27 item 3), on both
// engines: a run into a new tenant whose name folds to an existing one's
// (case, spaces, punctuation, width) says so on stderr, naming both and
// the undo that takes it back — and goes on, its --json document whole; a
// run into the tenant itself, or into one named like none, says nothing;
// a dry run says what a run would do.
func TestRunWarnsOfATenantNamedLikeAnother(t *testing.T) {
	t.Parallel()
	exp := writeExport(t, map[string]string{"companies.csv": "id,name\nco-1,Acme Widgets\n"})
	const warning = `differs from it only in case, spaces, punctuation or character width`
	storetest.RunAddress(t, func(t *testing.T, db string) {
		r := crm(t, nil, "--db", db, "--json", "run", "--tenant", "Acme GmbH", "--source", "canonical", exp)
		require.Equal(t, exitOK, r.code, r.stderr)
		require.NotContains(t, r.stderr, warning, "the first tenant is like none")

		r = crm(t, nil, "--db", db, "--json", "run", "--tenant", "acme gmbh", "--source", "canonical", exp)
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Contains(t, r.stderr, `warning: tenant "acme gmbh" is new, but tenant "Acme GmbH" exists and `+warning+
			`: run 2 creates a new tenant "acme gmbh"; if "Acme GmbH" was meant, `+"`crmimport undo 2`"+` takes this run back and --tenant 'Acme GmbH' imports there`)
		require.Equal(t, "acme gmbh", r.summary(t).Tenant, "the run goes on, its one JSON document on stdout")

		r = crm(t, nil, "--db", db, "run", "--tenant", "Acme GmbH", "--source", "canonical", exp)
		require.Equal(t, exitOK, r.code, r.stderr)
		require.NotContains(t, r.stderr, warning, "the tenant itself")
		r = crm(t, nil, "--db", db, "run", "--tenant", "Acme AG", "--source", "canonical", exp)
		require.Equal(t, exitOK, r.code, r.stderr)
		require.NotContains(t, r.stderr, warning, "a tenant named like none")

		r = crm(t, nil, "--db", db, "run", "--dry-run", "--tenant", "ＡＣＭＥ-GmbH", "--source", "canonical", exp)
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Contains(t, r.stderr, `tenant "ＡＣＭＥ-GmbH" is new, but tenant "Acme GmbH" exists and `+warning+
			`: a run with this --tenant creates a new tenant; --tenant 'Acme GmbH' imports into the existing one`)
		require.Equal(t, []string{"Acme AG|1", "Acme GmbH|2", "acme gmbh|1"}, query(t, db,
			`SELECT tenant_id, count(*) FROM migrations GROUP BY tenant_id ORDER BY tenant_id`), "the dry run wrote nothing")
	})
}

// TestWhatIsOpenFollowsTheLatestAttempt (issue 27 item 3), on both
// engines: what a tenant's page counts open is each record's latest
// attempt (ledger.Open) — a skipped note that fails in a later run is
// failed, not skipped too, and skipped again once a later run skips it; a
// row without an id is open until a later run reads its kind again; a
// duplicate of a record that is imported is not (the record is there).
func TestWhatIsOpenFollowsTheLatestAttempt(t *testing.T) {
	t.Parallel()
	const contacts = "id,first_name,email\nc-1,Ann,ann@example.com\nc-1,Ann again,ann.again@example.com\n"
	first := writeExport(t, map[string]string{"contacts.csv": contacts,
		"notes.csv": "id,body,contact_id,created_at\nn-9,Call back,c-404,\n,Kept no id,c-1,\n"})
	broken := writeExport(t, map[string]string{"notes.csv": "id,body,contact_id,created_at\nn-9,Call back,c-404,not a date\n"})
	again := writeExport(t, map[string]string{"notes.csv": "id,body,contact_id,created_at\nn-9,Call back,c-404,\n"})
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		open := func(export string, code int) []string {
			t.Helper()
			r := crm(t, nil, "--db", addr, "--json", "run", "--tenant", "acme", "--source", "canonical", export)
			require.Equal(t, code, r.code, r.stderr)
			db := storetest.Open(t, addr)
			defer db.Close()
			st, err := runs.TenantOf(context.Background(), db, runs.NewEngine(db, nil), "acme")
			require.NoError(t, err)
			var out []string
			for _, g := range st.Open {
				out = append(out, fmt.Sprintf("%s %s run %d: %d %s", g.What, g.Kind, g.Run, g.Count, g.Example))
			}
			return out
		}
		require.Equal(t, []string{"failed note run 1: 1 ", "skipped note run 1: 1 n-9"}, open(first, exitPartial))
		require.Equal(t, []string{"failed note run 2: 1 n-9"}, open(broken, exitFailed),
			"n-9's latest attempt failed; run 2 read the notes again, so the row without an id is decided anew")
		require.Equal(t, []string{"skipped note run 3: 1 n-9"}, open(again, exitOK), "skipped again by run 3")
	})
}

package target_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/importer"
	"crmimport/importer/runopts"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/runs"
	"crmimport/store"
	"crmimport/store/storetest"
	"crmimport/target"
)

// browseExport writes an export of the canonical layout.
func browseExport(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600))
	}
	return dir
}

// The export of browseScenario: its first version, then the source's
// changes since.
const (
	browseCompanies = "id,name,domain\nco-1,Acme,acme.example\nco-2,Globex,globex.example\n"
	browseContacts  = "id,first_name,last_name,email,title,company_id\n" +
		"c-1,Ann,Archer,ann@acme.example,Buyer,co-1\n" +
		"c-2,Bob,Baker,bob@initech.example,Clerk,co-9\n" + // co-9 arrives in run 2: relinked
		"c-3,Cy,Cole,cy@acme.example,Intern,co-1\n" +
		"c-4,Dee,Dunn,dee@globex.example,Analyst,co-2\n" +
		"c-5,Ann,A.,ANN@acme.example,Buyer,co-1\n" + // found, not made: c-1's row (R5)
		"c-6,Eve,Evans,eve@umbrella.example,Chemist,co-77\n" // co-77 never arrives: unlinked
	browseDeals = "id,name,amount,contact_id,company_id,owner_id\n" +
		"d-1,Big deal,1000,c-1,co-1,u-9\n" + // no user u-9: unowned
		"d-2,Small deal,10,c-2,co-9,\n"
	browseNotes = "id,body,contact_id\nn-1,Called Ann,c-1\nn-2,Sent Ann the deck,c-1\n"
)

// browseScenario imports, in tenant acme: run 1, the export; run 2 with
// --update, the source's changes since (co-9 arrives, c-3 is promoted);
// a hand edit of c-4's row; run 3 without --update, more changes (c-1's
// title, c-4's title over its hand edit). It returns a rerun of the last
// export, with its --update.
func browseScenario(t *testing.T, db *sql.DB) (rerun func(update string)) {
	t.Helper()
	ctx := context.Background()
	imp := importer.New(phases.New(db, nil))
	run := func(update string, files map[string]string) {
		t.Helper()
		r, err := imp.Plan(ctx, importer.RunSpec{Tenant: "acme", Source: "canonical", Input: browseExport(t, files), Update: update})
		require.NoError(t, err)
		_, err = imp.Execute(ctx, r.ID)
		require.NoError(t, err)
	}
	files := map[string]string{"companies.csv": browseCompanies, "contacts.csv": browseContacts, "deals.csv": browseDeals, "notes.csv": browseNotes}
	run("", files)
	files["companies.csv"] = browseCompanies + "co-9,Initech,initech.example\n"
	files["contacts.csv"] = strings.Replace(browseContacts, "Cy,Cole,cy@acme.example,Intern", "Cy,Cole,cy@acme.example,Engineer", 1)
	run(runopts.UpdateApply, files)
	_, err := db.ExecContext(ctx, `UPDATE contacts SET title = 'Lead analyst' WHERE email = 'dee@globex.example'`)
	require.NoError(t, err)
	files["contacts.csv"] = strings.Replace(strings.Replace(files["contacts.csv"], "Ann,Archer,ann@acme.example,Buyer", "Ann,Archer,ann@acme.example,Head buyer", 1),
		"dee@globex.example,Analyst", "dee@globex.example,Manager", 1)
	run("", files)
	return func(update string) { run(update, files) }
}

// sourceIDs are the source ids of a page's rows, each row's joined.
func sourceIDs(p *target.Page) []string {
	out := []string{}
	for _, r := range p.Rows {
		id := ""
		for i, s := range r.Slots {
			if i > 0 {
				id += "+"
			}
			id += s.SourceID
		}
		out = append(out, id)
	}
	return out
}

// TestBrowseChecksBeforeCutover (issue 27 item 2): each check a consultant
// makes before cutover selects the rows the ledger says — unlinked (a
// parent never imported, not one relinked since), unowned, matched (R5,
// the row named by both records), updated (R17), outdated (the last word
// of the runs on the record, conflicts included) and conflicts — and a
// page of rows shows each row's links by name, the parent's source id a
// link waits for, and its checks.
func TestBrowseChecksBeforeCutover(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		rerun := browseScenario(t, db)
		d := store.DialectOf(db)
		page := func(q target.Query) *target.Page {
			t.Helper()
			q.Tenant = "acme"
			p, err := target.Browse(ctx, db, d, q)
			require.NoError(t, err)
			return p
		}
		for _, c := range []struct {
			kind   ledger.Kind
			filter ledger.RowFilter
			want   []string
		}{
			{ledger.Contact, "", []string{"c-1+c-5", "c-2", "c-3", "c-4", "c-6"}},
			{ledger.Contact, ledger.Unlinked, []string{"c-6"}},
			{ledger.Contact, ledger.Unowned, []string{}},
			{ledger.Contact, ledger.MatchedRows, []string{"c-1+c-5"}},
			{ledger.Contact, ledger.UpdatedRows, []string{"c-3"}},
			{ledger.Contact, ledger.OutdatedRows, []string{"c-1+c-5", "c-4"}},
			{ledger.Contact, ledger.ConflictedRows, []string{"c-4"}},
			{ledger.Deal, ledger.Unowned, []string{"d-1"}},
			{ledger.Deal, ledger.Unlinked, []string{}},
			{ledger.Company, ledger.MatchedRows, []string{}},
		} {
			p := page(target.Query{Kind: c.kind, Filter: c.filter})
			require.Equal(t, c.want, sourceIDs(p), "%s %s", c.kind.Plural(), c.filter)
			require.Equal(t, int64(len(c.want)), p.Total, "%s %s", c.kind.Plural(), c.filter)
			n, err := target.CountRows(ctx, db, "acme", c.kind, c.filter)
			require.NoError(t, err)
			require.Equal(t, p.Total, n)
		}

		// The rows of a page: links by name, a link waiting, the checks.
		p := page(target.Query{Kind: ledger.Deal})
		require.Equal(t, []string{"d-1", "d-2"}, sourceIDs(p))
		d1 := p.Rows[0]
		require.Equal(t, "Big deal", d1.Name)
		links := map[string]target.LinkTo{}
		for _, l := range d1.Links {
			links[l.Field] = l
		}
		require.Equal(t, "Ann Archer", links["contact_id"].Name)
		require.Equal(t, "Acme", links["company_id"].Name)
		require.Equal(t, target.LinkTo{Field: "owner_id", Kind: ledger.User, Waits: "u-9", Owner: true}, links["owner_id"])
		require.Equal(t, []ledger.RowFilter{ledger.Unowned}, d1.Flags)
		require.Equal(t, []string{"name", "amount", "currency", "stage", "status", "pipeline", "close_date"}[1:], p.Columns,
			"beside its name, a deal's fields but its links and dates of creation")
		c := page(target.Query{Kind: ledger.Contact, Search: "c-6"}).Rows[0]
		require.Equal(t, []ledger.RowFilter{ledger.Unlinked}, c.Flags)
		require.Equal(t, "co-77", c.Links[0].Waits, "the company it waits for")
		c = page(target.Query{Kind: ledger.Contact, Search: "c-1"}).Rows[0]
		require.Equal(t, []ledger.RowFilter{ledger.MatchedRows, ledger.OutdatedRows}, c.Flags)
		require.Equal(t, []ledger.RowSlot{{Source: "canonical", SourceID: "c-1", Action: ledger.Created, Run: 1},
			{Source: "canonical", SourceID: "c-5", Action: ledger.Matched, Run: 1}}, c.Slots)

		// The last word: run 4 applies the changes (--update), c-1's is
		// written and c-4's conflict stays; its undo gives c-1's row its
		// values before back, and c-1 is outdated again (R16, R17).
		rerun(runopts.UpdateApply)
		require.Equal(t, []string{"c-4"}, sourceIDs(page(target.Query{Kind: ledger.Contact, Filter: ledger.OutdatedRows})))
		require.Equal(t, []string{"c-1+c-5", "c-3"}, sourceIDs(page(target.Query{Kind: ledger.Contact, Filter: ledger.UpdatedRows})))
		_, err := runs.Undo(ctx, phases.New(db, nil), runs.UndoOptions{Undo: 4}, runs.Watch{})
		require.NoError(t, err)
		require.Equal(t, []string{"c-1+c-5", "c-4"}, sourceIDs(page(target.Query{Kind: ledger.Contact, Filter: ledger.OutdatedRows})))
		require.Equal(t, []string{"c-3"}, sourceIDs(page(target.Query{Kind: ledger.Contact, Filter: ledger.UpdatedRows})))
	})
}

// TestBrowseSearchesAndPages: a search finds a row by a source id, whole
// (of any of the records that name it), or by part of its name or
// address in any case, never by a part of an id; pages are read by
// keyset, forward and back, with their place among the rows chosen.
func TestBrowseSearchesAndPages(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		browseScenario(t, db)
		d := store.DialectOf(db)
		page := func(q target.Query) *target.Page {
			t.Helper()
			q.Tenant, q.Kind = "acme", ledger.Contact
			p, err := target.Browse(ctx, db, d, q)
			require.NoError(t, err)
			return p
		}
		for search, want := range map[string][]string{
			"c-4":         {"c-4"},
			"c-5":         {"c-1+c-5"}, // the matched record names c-1's row
			"c-":          {},          // a source id is whole
			"archer":      {"c-1+c-5"},
			"ANN ARCHER":  {"c-1+c-5"}, // first and last name, any case
			"@acme.":      {"c-1+c-5", "c-3"},
			"100%":        {},
			"nobody here": {},
		} {
			require.Equal(t, want, sourceIDs(page(target.Query{Search: search})), search)
		}
		require.Equal(t, []string{"c-4"}, sourceIDs(page(target.Query{Search: "dunn", Filter: ledger.ConflictedRows})))
		require.Empty(t, sourceIDs(page(target.Query{Search: "dunn", Filter: ledger.UpdatedRows})))

		first := page(target.Query{Limit: 2})
		require.Equal(t, []string{"c-1+c-5", "c-2"}, sourceIDs(first))
		require.Equal(t, int64(5), first.Total)
		require.Equal(t, int64(1), first.First)
		require.Zero(t, first.Prev)
		second := page(target.Query{Limit: 2, After: first.Next})
		require.Equal(t, []string{"c-3", "c-4"}, sourceIDs(second))
		require.Equal(t, int64(3), second.First)
		last := page(target.Query{Limit: 2, After: second.Next})
		require.Equal(t, []string{"c-6"}, sourceIDs(last))
		require.Equal(t, int64(5), last.First)
		require.Zero(t, last.Next, "the last page")
		back := page(target.Query{Limit: 2, Before: last.Prev})
		require.Equal(t, sourceIDs(second), sourceIDs(back), "back by keyset")

		// The rows that link to one row: a contact's notes.
		c1 := first.Rows[0]
		notes, err := target.Browse(ctx, db, d, target.Query{Tenant: "acme", Kind: ledger.Note, LinkField: "contact_id", LinkID: c1.ID})
		require.NoError(t, err)
		require.Equal(t, []string{"n-1", "n-2"}, sourceIDs(notes))
		det, err := target.ReadDetail(ctx, db, d, "acme", ledger.Contact, c1.ID)
		require.NoError(t, err)
		var kids []string
		for _, ch := range det.Children {
			kids = append(kids, string(ch.Kind)+" "+ch.Field)
			require.Equal(t, ch.Total, int64(len(ch.Rows)))
		}
		require.Equal(t, []string{"deal contact_id", "note contact_id"}, kids)

		for _, bad := range []target.Query{
			{Kind: ledger.Contact, After: 1, Before: 3},
			{Kind: ledger.Contact, Limit: target.MaxPage + 1},
			{Kind: ledger.Contact, LinkField: "deal_id", LinkID: 1},
			{Kind: ledger.Email, Filter: ledger.Unowned},
			{Kind: ledger.Lead, Filter: ledger.MatchedRows},
		} {
			bad.Tenant = "acme"
			_, err := target.Browse(ctx, db, d, bad)
			require.ErrorIs(t, err, target.ErrBadQuery, "%+v", bad)
		}
		_, err = target.ReadDetail(ctx, db, d, "globex", ledger.Contact, c1.ID)
		require.ErrorIs(t, err, target.ErrNoRow, "another tenant's row")
	})
}

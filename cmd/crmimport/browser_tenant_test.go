package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"crmimport/store"
	"crmimport/store/storetest"
)

// tenantExport is a small export of one customer: a company without a
// name and a contact whose email is not an address (failed), a note on
// that contact (skipped: its contact failed), and a contact whose company
// and owner the export does not hold (unlinked, unowned).
var tenantExport = map[string]string{
	"companies.csv": "id,name\nco-1,Acme Widgets\nco-2,\n",
	"contacts.csv": "id,first_name,last_name,email,title,company_id,owner_id\n" +
		"c-1,Ann,Lee,ann@example.com,Buyer,co-1,\n" +
		"c-2,Bob,Ray,bob(at)example.com,CTO,co-1,\n" +
		"c-3,Cara,Fox,cara@example.com,CFO,co-9,u-9\n",
	"notes.csv": "id,body,contact_id\nn-1,Called Ann,c-1\nn-2,Emailed Bob,c-2\n",
}

// TestTenantPageInABrowser (issue 27 item 3), on both engines: a tenant
// driven through a failing run, a fix of its failed rows, a skip taken
// over by doctor's repair clicked on the tenant's page, a change at the
// source applied from the page's "Apply these changes" and that update
// undone — the page's runs in order, marked by what each did, and what is
// still open as the tenant stands after each step (a record failed in two
// runs is one; one failed and imported since is none). Then the New
// import page asks before it makes a tenant named like an existing one,
// and writes nothing until it is answered.
func TestTenantPageInABrowser(t *testing.T) {
	t.Parallel()
	out := shots(t)
	ctx := browser(t)
	exp := writeExport(t, tenantExport)
	// The customer's export again, at cutover: Ann's title changed at the
	// source (R17), Bob's email as the fix corrected it.
	later := map[string]string{}
	for name, content := range tenantExport {
		later[name] = strings.NewReplacer("Buyer", "Head of Buying", "bob(at)example.com", "bob@example.com").Replace(content)
	}
	cutover := writeExport(t, later)
	storetest.RunAddress(t, func(t *testing.T, db string) {
		shot := func(name string) { shoot(ctx, t, out, fmt.Sprintf("tenant-%s-%s", store.DialectAt(db), name)) }
		const tenant = "Acme GmbH"
		r := crm(t, nil, "--db", db, "--json", "run", "--tenant", tenant, "--source", "canonical", exp)
		require.Equal(t, exitPartial, r.code, r.stderr)
		// The fix: the failed rows as a fix folder, Bob's email corrected,
		// the company without a name left as it is (it fails again).
		fix := filepath.Join(t.TempDir(), "fix")
		r = crm(t, nil, "--db", db, "rejects", "1", "--out", fix, "--as-export")
		require.Equal(t, exitOK, r.code, r.stderr)
		b, err := os.ReadFile(filepath.Join(fix, "contacts.csv"))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(fix, "contacts.csv"), []byte(strings.Replace(string(b), "bob(at)", "bob@", 1)), 0o600))
		r = crm(t, nil, "--db", db, "--json", "run", "--tenant", tenant, "--source", "canonical", fix)
		require.Equal(t, exitPartial, r.code, r.stderr)

		s := serve(t, db)
		base := "http://" + s.Addr()
		page := base + "/tenants/Acme%20GmbH"
		do(ctx, t, chromedp.Navigate(s.URL()), chromedp.WaitVisible(chromedp.CSS("table.runs")),
			chromedp.Navigate(base+"/tenants"), chromedp.WaitVisible(chromedp.CSS("table.tenants")))
		shot("01-tenants")
		do(ctx, t, click(`table.tenants tr[data-tenant="Acme GmbH"] a`), chromedp.WaitVisible(chromedp.CSS("[data-tenant-page]")))
		require.Equal(t, tenant, textOf(ctx, t, "h1 [data-field=tenant]"))
		require.Equal(t, []string{"1 import", "2 fix"}, runsDid(ctx, t))
		require.Equal(t, "fix of run 1", textOf(ctx, t, `tr[data-run="2"] span.did`))
		// Open now: co-2 failed in runs 1 and 2 (one record); Bob failed in
		// run 1 and was imported by the fix (not open); his note waits.
		require.Equal(t, map[string]string{
			"company failed": "1", "note skipped": "1", "contact unlinked": "1", "contact unowned": "1",
		}, openCells(ctx, t))
		require.Contains(t, textOf(ctx, t, `tr[data-kind=company] [data-field=failed]`), "co-2")
		require.Equal(t, "Correct the 1 record of run 2", textOf(ctx, t, `article[data-for=failed] .next-buttons a`))
		// Doctor's repair of the note, as a button: a run of notes over the
		// export the tenant's last import read.
		form := `article[data-for=doctor] form.runover[data-do=run]`
		require.Contains(t, textOf(ctx, t, `article[data-for=doctor] h3`), "ready-to-take-over")
		require.Equal(t, exp, valueOf(ctx, t, form+` input[name=path]`))
		require.Equal(t, "Run notes over this export", textOf(ctx, t, form+` button`))
		// Every disabled button says why, in words on the page.
		whys, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("article.next button[disabled]")).map(b =>
			(document.getElementById(b.getAttribute("aria-describedby")) || {textContent: ""}).textContent.trim())`))
		require.NoError(t, err)
		require.NotEmpty(t, whys, "Retry is disabled: no task of the tenant failed")
		for _, why := range whys {
			require.Contains(t, why, "is not offered: ")
		}
		shot("02-failing-and-fixed")

		do(ctx, t, click(form+` button`))
		waitJS(ctx, t, `!!document.querySelector("table.outcomes")`, "the page of the run the repair started")
		waitEnded(ctx, t, "succeeded")
		do(ctx, t, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("[data-tenant-page]")))
		require.Equal(t, []string{"1 import", "2 fix", "3 import"}, runsDid(ctx, t))
		require.Contains(t, textOf(ctx, t, `tr[data-run="3"] td.what`), "notes only")
		require.Equal(t, map[string]string{"company failed": "1", "contact unlinked": "1", "contact unowned": "1"}, openCells(ctx, t),
			"the note the repair took over is not open")
		require.Equal(t, []string{"1"}, query(t, db, `SELECT count(*) FROM migration_records WHERE source_id = 'n-2' AND action = 'created'`))

		// The cutover export: Ann outdated (R17), applied from the page.
		r = crm(t, nil, "--db", db, "--json", "run", "--tenant", tenant, "--source", "canonical", cutover)
		require.Equal(t, exitPartial, r.code, r.stderr) // co-2 fails again
		do(ctx, t, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("[data-tenant-page]")))
		require.Equal(t, "1", openCells(ctx, t)["contact outdated"])
		apply := `article[data-for=outdated] a.button`
		require.Equal(t, "Apply these changes — 1 record", textOf(ctx, t, apply))
		shot("03-outdated")
		do(ctx, t, click(apply), chromedp.WaitVisible(chromedp.CSS("#import-form")))
		checked, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector("input[name=update]").checked`))
		require.NoError(t, err)
		require.True(t, checked, "New import applies the changes (--update)")
		require.Equal(t, cutover, valueOf(ctx, t, "#path"))
		importToRunPage(ctx, t)
		waitEnded(ctx, t, "partial")
		do(ctx, t, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("[data-tenant-page]")))
		require.Equal(t, []string{"1 import", "2 fix", "3 import", "4 import", "5 update"}, runsDid(ctx, t))
		require.NotContains(t, openCells(ctx, t), "contact outdated", "the update applied it")
		require.Equal(t, []string{"Head of Buying"}, query(t, db, `SELECT title FROM contacts WHERE email = 'ann@example.com'`))

		// The update undone: Ann is outdated again, as the tenant stands.
		r = crm(t, nil, "--db", db, "--json", "undo", "5")
		require.Equal(t, exitOK, r.code, r.stderr)
		do(ctx, t, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("[data-tenant-page]")))
		require.Equal(t, []string{"1 import", "2 fix", "3 import", "4 import", "5 update", "6 undo"}, runsDid(ctx, t))
		require.Equal(t, "undo of run 5", textOf(ctx, t, `tr[data-run="6"] span.did`))
		require.Contains(t, textOf(ctx, t, `tr[data-run="5"] td.what`), "undone by run 6")
		require.Equal(t, map[string]string{"company failed": "1", "contact outdated": "1", "contact unlinked": "1", "contact unowned": "1"},
			openCells(ctx, t))
		shot("04-undone")

		// A tenant named like this one is asked about first, on New import.
		do(ctx, t, chromedp.Navigate(base+"/import"), chromedp.WaitVisible(chromedp.CSS("#import-form")),
			chromedp.SendKeys(chromedp.CSS("#path"), exp), chromedp.SendKeys(chromedp.CSS(`input[name=tenant]`), "ACME-GmbH"),
			click("#import"))
		waitJS(ctx, t, `(b => (b && !b.hidden) || !!document.querySelector("table.outcomes"))(document.getElementById("tenant-confirm"))`,
			"the question, or a run's page")
		asked, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!!document.getElementById("tenant-confirm") && !document.getElementById("tenant-confirm").hidden`))
		require.NoError(t, err)
		require.True(t, asked, "the page asks which tenant is meant before it imports")
		require.Contains(t, textOf(ctx, t, "#tenant-confirm"), "“ACME-GmbH” is not a tenant yet, but “Acme GmbH” is")
		require.Equal(t, "Use “Acme GmbH”", textOf(ctx, t, "#tenant-use"))
		require.Equal(t, "Create “ACME-GmbH” as a new tenant", textOf(ctx, t, "#tenant-new"))
		require.Equal(t, []string{"0"}, query(t, db, `SELECT count(*) FROM migrations WHERE tenant_id = 'ACME-GmbH'`), "nothing written yet")
		shot("05-typo-tenant")
		do(ctx, t, click("#tenant-use"), chromedp.WaitVisible(chromedp.CSS("table.outcomes")))
		waitEnded(ctx, t, "partial")
		require.Equal(t, []string{"Acme GmbH|7"}, query(t, db, `SELECT tenant_id, count(*) FROM migrations GROUP BY tenant_id`),
			"the import went to the existing tenant")
	})
}

// runsDid reads the tenant page's runs as "ID did", in the page's order.
func runsDid(ctx context.Context, t *testing.T) []string {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("table.tenant-runs tbody tr")).map(tr =>
		tr.dataset.run + " " + tr.dataset.did)`))
	require.NoError(t, err)
	return got
}

// openCells reads the tenant page's open records as "kind word" → count,
// the cells that are not empty.
func openCells(ctx context.Context, t *testing.T) map[string]string {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]string](`(() => { const o = {};
		for (const tr of document.querySelectorAll("table.open tbody tr")) for (const td of tr.querySelectorAll("td[data-field]")) {
			const n = td.firstChild && td.firstChild.nodeType === Node.TEXT_NODE ? td.firstChild.textContent.trim() : "";
			if (n) o[tr.dataset.kind + " " + td.dataset.field] = n;
		}
		return o; })()`))
	require.NoError(t, err)
	return got
}

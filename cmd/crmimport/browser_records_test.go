package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"crmimport/store"
	"crmimport/store/storetest"
)

// recordsScenario imports into tenant demo at addr: run 1, the demo
// export; run 2 with --update, the demo's CRM a month later (a company
// that three records waited for, a contact promoted, a new deal whose
// owner is no user of the export, a note whose body is a script); a hand
// edit of con-003's row; run 3 without --update, two contacts changed at
// the source since (one of them con-003).
func recordsScenario(t *testing.T, addr string) {
	t.Helper()
	dir := t.TempDir()
	files, err := os.ReadDir(demo)
	require.NoError(t, err)
	read := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(demo, f.Name()))
		require.NoError(t, err)
		read[f.Name()] = string(b)
	}
	write := func() {
		for name, content := range read {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600))
		}
	}
	run := func(code int, args ...string) {
		t.Helper()
		r := crm(t, nil, append([]string{"--db", addr, "run", "--tenant", "demo", "--source", "canonical"}, append(args, dir)...)...)
		require.Equal(t, code, r.code, r.stderr)
	}
	write()
	run(exitPartial)

	read["companies.csv"] += "acc-099,Lakeside Florist,lakeside-florist.example.com,(555) 555-0199,Retail,2024-01-01,,Website\n"
	read["contacts.csv"] = strings.Replace(read["contacts.csv"], "Head Baker", "Master Baker", 1)
	lines := strings.SplitAfter(read["deals.csv"], "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = strings.TrimSuffix(l, "\n") + map[bool]string{true: ",owner_id", false: ","}[i == 0] + "\n"
		}
	}
	read["deals.csv"] = strings.Join(lines, "") + "dl-100,Bakery van lease,9800.00,USD,Proposal,open,New business,2024-09-30,acc-001,con-001,2024-05-01,,u-404\n"
	read["notes.csv"] += "nt-100,<script>window.__pwned=1</script> Van lease: call back on Friday,con-001,,dl-100,2024-05-02,\n"
	write()
	run(exitPartial, "--update")

	edited := query(t, addr, `UPDATE contacts SET phone = '(503) 555-0999' WHERE email = 'grace.lindqvist@harbor-logistics.example.com' RETURNING id`)
	require.Len(t, edited, 1, "a hand edit of con-003's row")
	read["contacts.csv"] = strings.Replace(strings.Replace(read["contacts.csv"], "Operations Manager", "Head of Operations", 1),
		"Warehouse Lead", "Warehouse Manager", 1)
	write()
	run(exitPartial)
}

// TestRecordsBrowserInABrowser (issue 27 item 2), on both engines: the
// run page links to the tenant's records; the browser opens on the first
// kind with rows; the checks before cutover show what the ledger says
// (unlinked but for those relinked since, outdated and conflicts, updated,
// matched); a search by name and by a whole source id; a deal's contact,
// followed from the deal's row, is that contact's page, with the notes on
// it (a note's <script> is text); and a record's ledger story tells its
// creation, its update with the fields before and after, its relink and
// its conflict. A screenshot of each page.
func TestRecordsBrowserInABrowser(t *testing.T) {
	t.Parallel()
	out := shots(t)
	ctx := browser(t)
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		engine := string(store.DialectAt(addr))
		recordsScenario(t, addr)
		s := serve(t, addr)
		base := "http://" + s.Addr()
		ids := func() []string {
			t.Helper()
			got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
				`Array.from(document.querySelectorAll("table.records tbody td.ids")).map(td => td.innerText.trim().replace(/\s+/g, " "))`))
			require.NoError(t, err)
			return got
		}
		check := func(name string) {
			t.Helper()
			do(ctx, t, click(`nav.checks a[data-check="`+name+`"]`),
				chromedp.WaitVisible(chromedp.CSS(`nav.checks a[data-check="`+name+`"][aria-current=page]`)))
		}

		// From the run page to the tenant's records.
		do(ctx, t, chromedp.Navigate(s.URL()), chromedp.WaitVisible(chromedp.CSS("table.runs")),
			chromedp.Navigate(base+"/runs/3"), chromedp.WaitVisible(chromedp.CSS("a[data-records]")))
		require.Equal(t, "Records of tenant demo", textOf(ctx, t, "a[data-records]"))
		shoot(ctx, t, out, "records-"+engine+"-00-run")
		do(ctx, t, click("a[data-records]"), chromedp.WaitVisible(chromedp.CSS("table.records")))
		require.Equal(t, "Companies 27", textOf(ctx, t, `nav.kinds a[aria-current=page]`),
			"the first kind with rows: 27 companies, one of the 28 imported found, not made")
		shoot(ctx, t, out, "records-"+engine+"-01-companies")

		// The checks before cutover.
		do(ctx, t, click(`nav.kinds a[data-kind=contacts]`), chromedp.WaitVisible(chromedp.CSS(`table.records[data-kind=contact]`)))
		check("unlinked")
		require.Equal(t, []string{"con-050", "con-055"}, ids(), "con-045 was relinked by run 2 (R6a)")
		require.Contains(t, textOf(ctx, t, "[data-field=check-words]"), "completes it (R6a)")
		shoot(ctx, t, out, "records-"+engine+"-02-unlinked")
		check("outdated")
		require.Equal(t, []string{"con-003", "con-004"}, ids())
		shoot(ctx, t, out, "records-"+engine+"-03-outdated")
		check("conflict")
		require.Equal(t, []string{"con-003"}, ids())
		check("updated")
		require.Equal(t, []string{"con-002"}, ids())
		check("matched")
		require.Equal(t, []string{"con-008 con-040 (matched)"}, ids())

		// Search: by name, by a whole source id.
		do(ctx, t, click(`nav.checks a[data-check=""]`), chromedp.WaitVisible(chromedp.CSS(`#browse-q`)),
			chromedp.SendKeys(chromedp.CSS(`#browse-q`), "okafor\n"), chromedp.WaitVisible(chromedp.CSS(`#browse-clear`)))
		require.Equal(t, []string{"con-001"}, ids())
		require.Equal(t, "Hannah Okafor", textOf(ctx, t, "table.records tbody th.name"))
		shoot(ctx, t, out, "records-"+engine+"-04-search")
		do(ctx, t, chromedp.Navigate(base+"/tenants/demo/records?kind=contacts&q=con-022"), chromedp.WaitVisible(chromedp.CSS(`[data-field=empty]`)))
		require.Contains(t, textOf(ctx, t, `[data-field=empty]`), "No contacts match", "con-022 failed: no row")

		// From a deal to its contact, and the notes on her (text, never a
		// script).
		do(ctx, t, chromedp.Navigate(base+"/tenants/demo/records?kind=deals"), chromedp.WaitVisible(chromedp.CSS(`table.records`)))
		check("unowned")
		require.Equal(t, []string{"dl-100"}, ids())
		require.Contains(t, textOf(ctx, t, `table.records td[data-field=owner_id]`), "u-404")
		shoot(ctx, t, out, "records-"+engine+"-05-deals-unowned")
		do(ctx, t, click(`table.records a[data-link=contact_id]`), chromedp.WaitVisible(chromedp.CSS(`h1.record-name`)))
		require.Contains(t, textOf(ctx, t, "h1.record-name"), "Hannah Okafor")
		deals := textOf(ctx, t, `[data-children=deal]`)
		require.Contains(t, deals, "Bakery van lease")
		require.Contains(t, deals, "Wholesale bread contract")
		require.Contains(t, textOf(ctx, t, `[data-children=note]`), "<script>window.__pwned=1</script> Van lease")
		pwned, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__pwned === 1`))
		require.NoError(t, err)
		require.False(t, pwned, "the note's script did not run")
		shoot(ctx, t, out, "records-"+engine+"-06-contact")

		// A story: created by run 1, updated by run 2 with its title
		// before and after.
		do(ctx, t, chromedp.Navigate(base+"/tenants/demo/records?kind=contacts&check=updated"), chromedp.WaitVisible(chromedp.CSS(`table.records`)),
			click(`table.records a[data-record]`), chromedp.WaitVisible(chromedp.CSS(`ol.events`)))
		events := textOf(ctx, t, "ol.events")
		require.Contains(t, events, "Run 1 created it")
		require.Contains(t, events, "Run 2 updated it with its changes at the source")
		require.Contains(t, events, "title\nHead Baker → Master Baker")
		shoot(ctx, t, out, "records-"+engine+"-07-story-updated")

		// Relinked, and a conflict.
		do(ctx, t, chromedp.Navigate(base+"/tenants/demo/records?kind=contacts&q=con-045"), chromedp.WaitVisible(chromedp.CSS(`table.records`)),
			click(`table.records a[data-record]`), chromedp.WaitVisible(chromedp.CSS(`ol.events`)))
		require.Contains(t, textOf(ctx, t, "ol.events"), "Run 2 relinked it: its company_id, company acc-099, was imported")
		require.Equal(t, "Lakeside Florist", textOf(ctx, t, `dl.links [data-field=company_id] a`))
		do(ctx, t, chromedp.Navigate(base+"/tenants/demo/records?kind=contacts&check=conflict"), chromedp.WaitVisible(chromedp.CSS(`table.records`)),
			click(`table.records a[data-record]`), chromedp.WaitVisible(chromedp.CSS(`ol.events`)))
		events = textOf(ctx, t, "ol.events")
		require.Contains(t, events, "Run 3 found it changed at the source, and its row edited by hand since (phone): a conflict, left alone")
		require.Contains(t, events, "title\nOperations Manager → Head of Operations")
		require.Contains(t, textOf(ctx, t, "ul.flag-list"), "conflict")
		shoot(ctx, t, out, "records-"+engine+"-08-story-conflict")
	})
}

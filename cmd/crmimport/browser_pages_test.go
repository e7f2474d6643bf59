package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// pagedExport is an export whose run fails 1,230 records — 1,000 contacts
// whose email is no address (one of them holding markup that would run if
// it were not escaped), 200 with neither a name nor an email, 30 deals
// whose amount is no number — imports one contact, and skips 605: 600 notes linked to a contact
// that never comes, and 5 activities linked to c-9, which a later run
// imports (ready to be taken over).
func pagedExport(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var contacts, deals, notes, activities strings.Builder
	contacts.WriteString("id,first_name,last_name,email,title\n")
	for i := 1; i <= 1200; i++ {
		switch {
		case i == 1:
			fmt.Fprintf(&contacts, "c-%04d,Ann,Lee,ann%d(at)example.com,<img src=x onerror=window.pwned=1>\n", i, i)
		case i <= 1000:
			fmt.Fprintf(&contacts, "c-%04d,Ann,Lee,ann%d(at)example.com,Buyer\n", i, i)
		default:
			fmt.Fprintf(&contacts, "c-%04d,,,,Buyer\n", i)
		}
	}
	contacts.WriteString("c-9001,Bob,Ray,bob@example.com,Boss\n")
	deals.WriteString("id,name,amount\n")
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&deals, "d-%03d,Deal %d,%d euros\n", i, i, i)
	}
	notes.WriteString("id,body,contact_id\n")
	for i := 1; i <= 600; i++ {
		fmt.Fprintf(&notes, "n-%04d,Called about the order,c-absent\n", i)
	}
	activities.WriteString("id,type,subject,contact_id\n")
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&activities, "a-%d,call,Call back,c-9\n", i)
	}
	for name, body := range map[string]string{"contacts.csv": contacts.String(), "deals.csv": deals.String(),
		"notes.csv": notes.String(), "activities.csv": activities.String()} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600))
	}
	return dir
}

// TestRecordPagesInABrowser: issue 23 item 15 in Chromium. The Failed
// records of a run of 1,230 failures page by 500 (Next, Previous, where the
// page stands), are searched by source id and by words of the reason and
// filtered by kind and reason with their counts, and show a cell holding
// markup as text; the Skipped records count every skip of the run for
// their kinds and the Ready to take over banner, the ready activities
// past the first page of notes. A screenshot of each (of what the window
// shows: a page of 500 rows is long).
func TestRecordPagesInABrowser(t *testing.T) {
	t.Parallel()
	out := shots(t)
	path := filepath.Join(t.TempDir(), "crm.db")
	r := crm(t, nil, "--db", path, "--json", "run", "--tenant", "acme", "--source", "canonical", pagedExport(t))
	require.Equal(t, exitPartial, r.code, r.stderr)
	later := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(later, "contacts.csv"), []byte("id,first_name,last_name\nc-9,Cleo,Park\n"), 0o600))
	r = crm(t, nil, "--db", path, "--json", "run", "--tenant", "acme", "--source", "canonical", later)
	require.Equal(t, exitOK, r.code, r.stderr)
	s := serve(t, path)
	ctx := browser(t)
	base := "http://" + s.Addr()
	rows := func() int {
		t.Helper()
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("table tbody tr").length`))
		require.NoError(t, err)
		return n
	}

	do(ctx, t, chromedp.Navigate(s.URL()), chromedp.WaitVisible(chromedp.CSS("table.runs")),
		chromedp.Navigate(base+"/runs/1/failed"), chromedp.WaitVisible(chromedp.CSS("table.failed")))
	require.Equal(t, "Rows 1–500 of 1,230", textOf(ctx, t, "nav.pager .count"))
	require.Equal(t, 500, rows())
	title, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`table.failed tbody tr:first-child textarea[data-cell="title"]`)))
	require.NoError(t, err)
	require.Equal(t, "<img src=x onerror=window.pwned=1>", title, "markup from the export is text")
	pwned, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.pwned === 1`))
	require.NoError(t, err)
	require.False(t, pwned, "and never runs")
	options, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("select[name=kind] option, select[name=reason] option")).map(o => o.textContent)`))
	require.NoError(t, err)
	require.Equal(t, []string{"every kind (1,230)", "contact (1,200)", "deal (30)", "every reason",
		`email "…" is not an email address (1,000)`, "contact has neither a name nor an email (200)",
		`amount "…" is not a number (use digits and a dot, e.g. 12000.50) (30)`}, options, "the filters count every failure")
	shootView(ctx, t, out, "40-failed-first-page")

	do(ctx, t, click(`nav.pager a[rel=next]`), chromedp.WaitVisible(chromedp.CSS("table.failed")))
	waitText(ctx, t, "nav.pager .count", "Rows 501–1,000 of 1,230")
	do(ctx, t, click(`nav.pager a[rel=next]`), chromedp.WaitVisible(chromedp.CSS("table.failed")))
	waitText(ctx, t, "nav.pager .count", "Rows 1,001–1,230 of 1,230")
	require.Equal(t, 230, rows())
	last, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!document.querySelector("nav.pager a[rel=next]") && !!document.querySelector("nav.pager [aria-disabled=true]")`))
	require.NoError(t, err)
	require.True(t, last, "the last page has no Next")
	do(ctx, t, chromedp.ScrollIntoView(chromedp.CSS(".scroll-x:has(> table.failed) + nav.pager")))
	shootView(ctx, t, out, "41-failed-last-page")
	do(ctx, t, click(`nav.pager a[rel=prev]`), chromedp.WaitVisible(chromedp.CSS("table.failed")))
	waitText(ctx, t, "nav.pager .count", "Rows 501–1,000 of 1,230")

	// By source id, then by words of the reason within a kind.
	do(ctx, t, chromedp.SendKeys(chromedp.CSS("input[name=id]"), "c-0777"),
		click("form.filters button[type=submit]"), chromedp.WaitVisible(chromedp.CSS("table.failed")))
	waitText(ctx, t, "nav.pager .count", "Rows 1–1 of 1")
	require.Equal(t, "c-0777", textOf(ctx, t, "table.failed tbody td.ids"))
	shoot(ctx, t, out, "42-failed-by-id")
	do(ctx, t, chromedp.Navigate(base+"/runs/1/failed"), chromedp.WaitVisible(chromedp.CSS("table.failed")),
		chromedp.SetValue(chromedp.CSS("select[name=kind]"), "contact"),
		chromedp.SendKeys(chromedp.CSS("input[name=q]"), "NEITHER A NAME"),
		click("form.filters button[type=submit]"), chromedp.WaitVisible(chromedp.CSS("table.failed")))
	waitText(ctx, t, "nav.pager .count", "Rows 1–200 of 200")
	chosen, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("select[name=kind]").selectedOptions[0].textContent`))
	require.NoError(t, err)
	require.Equal(t, "contact (200)", chosen, "the kind chosen, counted within the search")
	shootView(ctx, t, out, "43-failed-searched")

	do(ctx, t, chromedp.Navigate(base+"/runs/1/skipped"), chromedp.WaitVisible(chromedp.CSS("table.skipped")))
	require.Contains(t, textOf(ctx, t, "section.ready"), "5 records wait for parents that are imported now (activity)")
	require.Equal(t, "Rows 1–500 of 605", textOf(ctx, t, "nav.pager .count"))
	kinds, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("select[name=kind] option")).map(o => o.textContent)`))
	require.NoError(t, err)
	require.Equal(t, []string{"every kind (605)", "note (600)", "activity (5)"}, kinds)
	shootView(ctx, t, out, "44-skipped-first-page")
	do(ctx, t, click(`nav.pager a[rel=next]`), chromedp.WaitVisible(chromedp.CSS("table.skipped")))
	waitText(ctx, t, "nav.pager .count", "Rows 501–605 of 605")
	require.Equal(t, 105, rows())
	shoot(ctx, t, out, "45-skipped-last-page")
}

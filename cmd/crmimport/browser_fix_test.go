package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestFixFailedRowsInABrowser: issue 14's loop closed in the page (SPEC
// §9, Failed records) — the demo imported, its failed records filtered to
// contacts, the email of the contact that fails for its email corrected
// in place (the row marked edited), Re-import fixed rows pressed: the row
// shows imported, with a link to the run that imported it; the contact now
// exists with the new email, and nothing already imported changed (R2:
// one slot more, every other as it was). Edits in two files go one file
// per run, the second file's on the next press.
func TestFixFailedRowsInABrowser(t *testing.T) {
	t.Parallel()
	out := shots(t)
	path := filepath.Join(t.TempDir(), "crm.db")
	r := crm(t, nil, "--db", path, "--json", "run", "--tenant", "demo", "--source", "canonical", demo)
	require.Equal(t, exitPartial, r.code, r.stderr)
	slotsOf := func() []string {
		return query(t, path, `SELECT kind, source_id, action, coalesce(reason, ''), migration_id, coalesce(record_id, '')
			FROM migration_records ORDER BY kind, source_id`)
	}
	before := slotsOf()
	failure := query(t, path, `SELECT id FROM record_failures WHERE migration_id = 1 AND source_id = 'con-022'`)
	require.Len(t, failure, 1)
	s := serve(t, path)
	ctx := browser(t)
	base := "http://" + s.Addr()

	do(ctx, t, chromedp.Navigate(s.URL()), chromedp.WaitVisible(chromedp.CSS("table.runs")),
		chromedp.Navigate(base+"/runs/1/failed"), chromedp.WaitVisible(chromedp.CSS("table.failed")),
		chromedp.SetValue(chromedp.CSS("select[name=kind]"), "contact"),
		click("form.filters button[type=submit]"))
	// The unfiltered page has contacts too: read the rows of the filtered
	// one, once the form's answer is loaded.
	var kinds []string
	require.Eventually(t, func() bool {
		k, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`location.search.includes("kind=contact") && document.readyState === "complete" ? `+
			`Array.from(document.querySelectorAll("table.failed tbody tr")).map(tr => tr.getAttribute("data-kind")) : []`))
		kinds = k
		return err == nil && len(k) > 0 // an error: the page is between two
	}, 10*time.Second, 20*time.Millisecond, "the page filtered to contacts")
	require.Equal(t, []string{"contact", "contact", "contact", "contact"}, kinds, "filtered to the demo's four failed contacts")
	require.Equal(t, "Re-import fixed rows", textOf(ctx, t, "#fix-reimport"))
	enabled, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!document.getElementById("fix-reimport").disabled`))
	require.NoError(t, err)
	require.False(t, enabled, "nothing edited yet")

	row := fmt.Sprintf(`table.failed tr[data-failure="%s"]`, failure[0])
	email := row + ` textarea[data-cell="email"]`
	was, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(email)))
	require.NoError(t, err)
	require.Equal(t, "dana.whitfield(at)northgate-dental.example.com", was)
	fixed := "dana.whitfield@northgate-dental.example.com"
	_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const e = document.querySelector(`+"`"+email+"`"+`); e.focus(); e.select(); return true; })()`))
	require.NoError(t, err)
	do(ctx, t, chromedp.SendKeys(chromedp.CSS(email), fixed))
	now, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(email)))
	require.NoError(t, err)
	require.Equal(t, fixed, now)
	require.Equal(t, "edited", textOf(ctx, t, row+" [data-field=fix]"), "the row is marked edited")
	require.Equal(t, "Re-import 1 fixed row of contacts.csv", textOf(ctx, t, "#fix-reimport"))
	shoot(ctx, t, out, "15-failed-edited")

	do(ctx, t, click("#fix-reimport"), chromedp.WaitVisible(chromedp.CSS("#fix-run a")))
	waitText(ctx, t, "#fix-message", "Run 2 succeeded: 1 imported.")
	require.Equal(t, "imported", textOf(ctx, t, row+" [data-field=fix] .fix-badge"))
	require.Contains(t, textOf(ctx, t, "#fix-run"), "Run 2 re-imports 1 row of contacts.csv")
	link, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#fix-run a").getAttribute("href")`))
	require.NoError(t, err)
	require.Equal(t, "/runs/2", link)
	shoot(ctx, t, out, "16-failed-reimported")

	require.Equal(t, []string{fixed}, query(t, path, `SELECT c.email FROM contacts c JOIN migration_records r
		ON r.record_type = 'contacts' AND r.record_id = c.id WHERE r.source_id = 'con-022'`))
	after := slotsOf()
	require.Len(t, after, len(before)+1, "one slot more: the fixed contact's")
	var others []string
	for _, s := range after {
		if !strings.HasPrefix(s, "contact|con-022|") {
			others = append(others, s)
		}
	}
	require.Equal(t, before, others, "nothing already imported changed (R2)")
	require.Equal(t, []string{"contact"}, query(t, path, `SELECT DISTINCT kind FROM migration_tasks WHERE migration_id = 2`), "--only contacts")

	// Edits in two files: one file per run (R13 admits one run per
	// tenant), the other's edits wait for the next press.
	ids := map[string]string{}
	for _, id := range []string{"con-031", "dl-009"} {
		f := query(t, path, `SELECT id FROM record_failures WHERE migration_id = 1 AND source_id = ?`, id)
		require.Len(t, f, 1)
		ids[id] = fmt.Sprintf(`table.failed tr[data-failure="%s"]`, f[0])
	}
	do(ctx, t, chromedp.Navigate(base+"/runs/1/failed"), chromedp.WaitVisible(chromedp.CSS(ids["dl-009"])))
	for _, e := range []struct{ row, cell, value string }{{ids["dl-009"], "amount", "12000.00"}, {ids["con-031"], "first_name", "Ana"}} {
		sel := e.row + ` textarea[data-cell="` + e.cell + `"]`
		_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const e = document.querySelector(`+"`"+sel+"`"+`); e.focus(); e.select(); return true; })()`))
		require.NoError(t, err)
		do(ctx, t, chromedp.SendKeys(chromedp.CSS(sel), e.value))
	}
	require.Equal(t, "Re-import 1 fixed row of contacts.csv", textOf(ctx, t, "#fix-reimport"))
	require.Contains(t, textOf(ctx, t, "#fix-message"), "the edits of deals.csv wait for the next re-import")
	do(ctx, t, click("#fix-reimport"))
	waitText(ctx, t, "#fix-message", "Run 3 succeeded: 1 imported.")
	require.Equal(t, "Re-import 1 fixed row of deals.csv", textOf(ctx, t, "#fix-reimport"))
	do(ctx, t, click("#fix-reimport"))
	waitText(ctx, t, "#fix-message", "Run 4 succeeded: 1 imported.")
	require.Equal(t, "imported", textOf(ctx, t, ids["con-031"]+" [data-field=fix] .fix-badge"))
	require.Equal(t, "imported", textOf(ctx, t, ids["dl-009"]+" [data-field=fix] .fix-badge"))
	shoot(ctx, t, out, "17-failed-two-files")
	require.Equal(t, []string{"3|contact", "4|deal"}, query(t, path, `SELECT migration_id, kind FROM migration_tasks WHERE migration_id > 2 ORDER BY 1`))
	require.Equal(t, []string{"Ana"}, query(t, path, `SELECT c.first_name FROM contacts c JOIN migration_records r
		ON r.record_type = 'contacts' AND r.record_id = c.id WHERE r.source_id = 'con-031'`))

	// The new run's page, through the link.
	do(ctx, t, click("#fix-run a"), chromedp.WaitVisible(chromedp.CSS("table.outcomes")))
	require.Contains(t, textOf(ctx, t, "h1"), "Run 4")
}

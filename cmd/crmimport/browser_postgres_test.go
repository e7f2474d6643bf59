package main

import (
	"encoding/json"
	"path/filepath"

	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"crmimport/forensics"
	"crmimport/report"
	"crmimport/store/storetest"
)

// TestDesktopOverPostgresInABrowser: the desktop over a PostgreSQL
// database (issue 17), in Chromium — an import of the demo export started
// on New import, its page watched to its end and agreeing with `report`,
// Undo offered; the runs page; the Ledger page's doctor finding what
// `doctor` finds (a note skipped before the import is ready to take
// over), its repairs naming the server's address without its password,
// which the header shows hidden. A screenshot of each page.
func TestDesktopOverPostgresInABrowser(t *testing.T) {
	t.Parallel()
	out := shots(t)
	// The test cluster trusts its socket: the password is never asked for,
	// and must be seen nowhere.
	const password = "s3cret-pw"
	dsn := storetest.PostgresDSN(t)
	require.True(t, strings.HasPrefix(dsn, "postgres://postgres@"), dsn)
	dsn = strings.Replace(dsn, "postgres://postgres@", "postgres://postgres:"+password+"@", 1)
	// A note that waits for a contact of the demo export: once the page's
	// import brings it, doctor finds the note ready to take over (R3).
	waiting := writeExport(t, map[string]string{"notes.csv": "id,body,contact_id\nn-pg,Call back,con-001\n"})
	r := crm(t, nil, "--db", dsn, "--json", "run", "--tenant", "demo", "--source", "canonical", waiting)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Equal(t, int64(1), r.summary(t).Kinds["note"].Skipped)
	s := serve(t, dsn)
	ctx := browser(t)
	base := "http://" + s.Addr()

	demoPath, err := filepath.Abs(demo)
	require.NoError(t, err)
	do(ctx, t, chromedp.Navigate(s.URL()), chromedp.WaitVisible(chromedp.CSS("header .db")),
		chromedp.Navigate(base+"/import"), chromedp.WaitVisible(chromedp.CSS("#import-form")),
		chromedp.SendKeys(chromedp.CSS("#path"), demoPath), chromedp.SendKeys(chromedp.CSS(`input[name=tenant]`), "demo"))
	importToRunPage(ctx, t)
	header := textOf(ctx, t, "header .db")
	require.True(t, strings.HasPrefix(header, "postgres://postgres:xxxxx@"), header)
	require.NotContains(t, header, password)
	waitEnded(ctx, t, "partial") // the demo export has failed records
	require.Contains(t, textOf(ctx, t, "h1"), "Run 2")
	rep := crm(t, nil, "--db", dsn, "--json", "report", "2")
	require.Equal(t, exitOK, rep.code, rep.stderr)
	for kind, c := range rep.summary(t).Kinds {
		require.Equal(t, report.Count(c.Imported), textOf(ctx, t, "table.outcomes tr[data-kind="+kind+"] [data-field=imported]"),
			"%s: the page shows what report shows", kind)
	}
	undo, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(b => b.disabled ? "disabled: " + b.title : "enabled")(document.querySelector("#undo"))`))
	require.NoError(t, err)
	require.Equal(t, "enabled", undo, "Undo is offered, as the engine would accept it (R16)")
	shoot(ctx, t, out, "pg-01-run")

	do(ctx, t, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("table.runs")))
	require.Contains(t, textOf(ctx, t, "table.runs"), "demo")
	shoot(ctx, t, out, "pg-02-runs")

	// The Ledger page's doctor finds what the command line's finds.
	r = crm(t, nil, "--db", dsn, "--json", "doctor")
	require.Equal(t, exitFindings, r.code, r.stderr)
	var d forensics.Diagnosis
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &d), r.stdout)
	do(ctx, t, chromedp.Navigate(base+"/ledger"), chromedp.WaitVisible(chromedp.CSS("#doctor-h")))
	names, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
		`Array.from(document.querySelectorAll("article.finding h3")).map(h => h.firstChild.textContent.trim())`))
	require.NoError(t, err)
	require.Contains(t, d.Names(), forensics.ReadyToTakeOver)
	require.Equal(t, d.Names(), names, "the page's findings are doctor's")
	require.Contains(t, textOf(ctx, t, "pre.repair"), "crmimport --db '"+strings.Replace(dsn, ":"+password+"@", "@", 1)+"' run",
		"a repair names the server's address, without its password")
	html, err := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("html")))
	require.NoError(t, err)
	require.NotContains(t, html, password)
	shoot(ctx, t, out, "pg-03-ledger")
}

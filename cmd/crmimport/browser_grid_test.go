package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"

	"crmimport/desktop"
	"crmimport/store/storetest"
)

// gridFile opens the review grid of run 1 on file and waits for its rows.
func gridFile(ctx context.Context, t *testing.T, url, file string) {
	t.Helper()
	do(ctx, t, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("table.grid tbody tr")))
	_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(`(() => { const s = document.getElementById("g-file");
		s.value = %q; s.dispatchEvent(new Event("change")); return true; })()`, file)))
	require.NoError(t, err)
	waitJS(ctx, t, fmt.Sprintf(`document.getElementById("g-status").textContent.endsWith(" of %s")`, file), "the grid of "+file)
}

// gridCell is the selector of a cell of the row of a source id.
func gridCell(ctx context.Context, t *testing.T, sourceID, column string) string {
	t.Helper()
	return gridRow(ctx, t, sourceID) + fmt.Sprintf(` td[data-column="%s"]`, column)
}

// gridRow is the selector of the row of a source id.
func gridRow(ctx context.Context, t *testing.T, sourceID string) string {
	t.Helper()
	id, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(() => { for (const tr of document.querySelectorAll("table.grid tbody tr"))
		if (tr.children[2].textContent === %q) return tr.getAttribute("data-failure"); return ""; })()`, sourceID)))
	require.NoError(t, err)
	require.NotEmpty(t, id, "a row of %s", sourceID)
	return fmt.Sprintf(`table.grid tr[data-failure="%s"]`, id)
}

// TestReviewGridEditsInABrowser (issue 27 item 1; SPEC §9, Failed
// records), on both engines: the demo's failed deals in the review grid,
// one row per record with its file's columns and the failing cell marked
// with its reason; a cell edited from the keyboard (arrows, Enter, typing,
// Enter), an edit cancelled with Esc, Tab moving right, the focus visible;
// the edit kept in the database and shown again by a restarted server;
// Re-import runs it through the ledger and the row shows it imported.
func TestReviewGridEditsInABrowser(t *testing.T) {
	t.Parallel()
	out := shots(t)
	ctx := browser(t)
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		r := crm(t, nil, "--db", addr, "--json", "run", "--tenant", "demo", "--source", "canonical", demo)
		require.Equal(t, exitPartial, r.code, r.stderr)
		first, err := desktop.New(context.Background(), desktop.Config{DBPath: addr, Folder: t.TempDir()})
		require.NoError(t, err)
		go func() { _ = first.Serve() }()
		do(ctx, t, chromedp.Navigate(first.URL()), chromedp.WaitVisible(chromedp.CSS("table.runs")))
		gridFile(ctx, t, "http://"+first.Addr()+"/runs/1/grid", "deals.csv")
		head, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("table.grid thead th")).map(th => th.textContent)`))
		require.NoError(t, err)
		require.Equal(t, []string{"Line", "Kind", "Source id", "Reason", "id", "name", "amount", "currency", "stage", "status", "pipeline",
			"close_date", "company_id", "contact_id", "created_at", "deleted", "Re-import"}, head, "the file's columns")
		amount := gridCell(ctx, t, "dl-009", "amount")
		require.Equal(t, "12,000.00", textOf(ctx, t, amount))
		failing, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("table.grid td.failing")).map(td => td.getAttribute("data-column") + ": " + td.title)`))
		require.NoError(t, err)
		require.Equal(t, []string{
			`amount: amount "12,000.00" is not a number (use digits and a dot, e.g. 12000.50)`,
			`amount: amount "TBD" is not a number (use digits and a dot, e.g. 12000.50)`,
			`close_date: close_date "31/12/2024" is not a date (expected ISO 8601, e.g. 2024-03-01 or 2024-03-01T10:00:00Z)`,
		}, failing, "each row's failing cell, with its reason")
		shoot(ctx, t, out, "grid-01-"+t.Name()[len("TestReviewGridEditsInABrowser/"):])

		// The keyboard: from the row's id, two cells right, Enter edits.
		do(ctx, t, click(gridCell(ctx, t, "dl-009", "id")), chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent(kb.ArrowRight))
		require.Equal(t, "amount", activeColumn(ctx, t))
		outline, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.activeElement).outlineStyle`))
		require.NoError(t, err)
		require.Equal(t, "solid", outline, "the focus is visible")
		do(ctx, t, chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS(amount+" input")))
		do(ctx, t, chromedp.KeyEvent("12000.00"))
		shoot(ctx, t, out, "grid-02-editing-"+t.Name()[len("TestReviewGridEditsInABrowser/"):])
		do(ctx, t, chromedp.KeyEvent(kb.Enter))
		waitJS(ctx, t, fmt.Sprintf(`(c => !!c && c.classList.contains("edited") && !c.classList.contains("saving") && c.textContent === "12000.00")(document.querySelector(%q))`+
			` && (b => !!b && b.textContent === "edited")(document.querySelector(%q))`, amount, gridRow(ctx, t, "dl-009")+" .fix-badge"), "the edited cell, kept")
		require.Equal(t, []string{"12000.00"}, query(t, addr, `SELECT e.value FROM record_edits e JOIN record_failures f ON f.id = e.failure_id WHERE f.source_id = 'dl-009'`),
			"the edit is in the database")

		// Esc cancels; Tab moves right.
		tbd := gridCell(ctx, t, "dl-017", "amount")
		do(ctx, t, click(tbd), chromedp.KeyEvent(kb.F2), chromedp.WaitVisible(chromedp.CSS(tbd+" input")),
			chromedp.KeyEvent("999"), chromedp.KeyEvent(kb.Escape))
		require.Equal(t, "TBD", textOf(ctx, t, tbd), "Esc cancels")
		require.Equal(t, []string{"0"}, query(t, addr, `SELECT count(*) FROM record_edits e JOIN record_failures f ON f.id = e.failure_id WHERE f.source_id = 'dl-017'`))
		do(ctx, t, chromedp.KeyEvent(kb.Tab))
		require.Equal(t, "currency", activeColumn(ctx, t), "Tab moves right")

		// A restart loses nothing: the edit is the database's.
		stop, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		require.NoError(t, first.Shutdown(stop))
		cancel()
		s := serve(t, addr)
		do(ctx, t, chromedp.Navigate(s.URL()), chromedp.WaitVisible(chromedp.CSS("table.runs")))
		gridFile(ctx, t, "http://"+s.Addr()+"/runs/1/grid", "deals.csv")
		amount = gridCell(ctx, t, "dl-009", "amount")
		require.Equal(t, "12000.00", textOf(ctx, t, amount), "after a restart")
		require.Equal(t, "edited", textOf(ctx, t, gridRow(ctx, t, "dl-009")+" .fix-badge"))
		require.Equal(t, "Re-import 1 row of deals.csv", textOf(ctx, t, "#r-go"))

		// Re-import: through the ledger, and the row shows what it became.
		do(ctx, t, click("#r-go"))
		waitText(ctx, t, "#r-message", "Run 2 succeeded: 1 imported.")
		waitJS(ctx, t, `Array.from(document.querySelectorAll("table.grid .fix-badge")).some(b => b.textContent === "imported")`, "the row imported")
		require.Equal(t, "imported", textOf(ctx, t, gridRow(ctx, t, "dl-009")+" .fix-badge"))
		require.Equal(t, "No edits wait.", textOf(ctx, t, "#r-waiting"))
		got := query(t, addr, `SELECT d.amount FROM deals d JOIN migration_records r
			ON r.record_type = 'deals' AND r.record_id = d.id WHERE r.source_id = 'dl-009'`)
		require.Len(t, got, 1, "the deal is imported")
		require.Contains(t, []string{"12000", "12000.00"}, got[0], "with the edited amount (as each engine writes an exact amount)")
		shoot(ctx, t, out, "grid-03-reimported-"+t.Name()[len("TestReviewGridEditsInABrowser/"):])
	})
}

// activeColumn is the column of the cell that has the focus.
func activeColumn(ctx context.Context, t *testing.T) string {
	t.Helper()
	c, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement.getAttribute("data-column") || document.activeElement.tagName`))
	require.NoError(t, err)
	return c
}

// TestReviewGridBulkAndSkipsInABrowser (issue 27 item 1), on both
// engines: a find and replace and a date format, each previewed on the
// rows it changes (count, before and after) and saved as shown; the
// encoding of a file, which the ledger cannot re-decode, says what to do
// and saves nothing; the skipped records say what they wait for and the
// parent they name.
func TestReviewGridBulkAndSkipsInABrowser(t *testing.T) {
	t.Parallel()
	out := shots(t)
	ctx := browser(t)
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		engine := t.Name()[len("TestReviewGridBulkAndSkipsInABrowser/"):]
		r := crm(t, nil, "--db", addr, "--json", "run", "--tenant", "demo", "--source", "canonical", demo)
		require.Equal(t, exitPartial, r.code, r.stderr)
		s := serve(t, addr)
		do(ctx, t, chromedp.Navigate(s.URL()), chromedp.WaitVisible(chromedp.CSS("table.runs")))
		gridFile(ctx, t, "http://"+s.Addr()+"/runs/1/grid", "deals.csv")
		set := func(id, value string) {
			_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(`(() => { const e = document.getElementById(%q);
				e.value = %q; e.dispatchEvent(new Event(e.tagName === "SELECT" ? "change" : "input")); return true; })()`, id, value)))
			require.NoError(t, err)
		}
		edits := func(column string) []string {
			return query(t, addr, `SELECT f.source_id || ' ' || e.value FROM record_edits e JOIN record_failures f ON f.id = e.failure_id
				WHERE e.column_name = ? ORDER BY f.source_id`, column)
		}
		require.Equal(t, "true", fmt.Sprint(evalBool(ctx, t, `document.getElementById("b-save").disabled`)), "nothing to save before a preview")

		set("b-op", "replace")
		set("b-column", "amount")
		set("b-find", ",")
		set("b-replace", "")
		do(ctx, t, click("#b-preview"))
		waitText(ctx, t, "#b-message", "Preview: 1 cell of amount would change (2 rows left as they are)")
		require.Equal(t, "dl-009 10 12,000.00 12000.00", rowText(ctx, t, "#b-examples tbody tr"))
		require.Equal(t, "Save 1 change", textOf(ctx, t, "#b-save"))
		require.Empty(t, edits("amount"), "a preview keeps nothing")
		shoot(ctx, t, out, "grid-04-bulk-preview-"+engine)
		do(ctx, t, click("#b-save"))
		waitText(ctx, t, "#b-message", "Saved: 1 cell of amount changed")
		require.Equal(t, []string{"dl-009 12000.00"}, edits("amount"), "saved as previewed")

		set("b-op", "date")
		set("b-column", "close_date")
		set("b-format", "DD/MM/YYYY")
		do(ctx, t, click("#b-preview"))
		waitText(ctx, t, "#b-message", "Preview: 1 cell of close_date would change")
		require.Equal(t, "dl-023 24 31/12/2024 2024-12-31", rowText(ctx, t, "#b-examples tbody tr"))
		do(ctx, t, click("#b-save"))
		waitText(ctx, t, "#b-message", "Saved: 1 cell of close_date changed")
		require.Equal(t, []string{"dl-023 2024-12-31"}, edits("close_date"))
		waitText(ctx, t, "#r-go", "Re-import 2 rows of deals.csv")

		set("b-op", "encoding")
		set("b-encoding", "windows-1252")
		do(ctx, t, click("#b-preview"))
		waitText(ctx, t, "#b-message", "cannot be decoded again as windows-1252 here, and nothing was changed")
		require.Contains(t, textOf(ctx, t, "#b-command"), "--encoding windows-1252")
		require.NotContains(t, textOf(ctx, t, "#b-command"), "--update", "never written over unseen: a stray byte's file read otherwise changes rows that imported well")
		require.True(t, evalBool(ctx, t, `document.getElementById("b-save").disabled`))
		require.Equal(t, "Nothing to save: this file's rows cannot be decoded again here.", textOf(ctx, t, "#b-save-why"))
		shoot(ctx, t, out, "grid-05-encoding-"+engine)

		do(ctx, t, click("#tab-skipped"), chromedp.WaitVisible(chromedp.CSS(`table.grid tr[data-skip="email:em-006"]`)))
		row := `table.grid tr[data-skip="email:em-006"]`
		require.Equal(t, "a contact", textOf(ctx, t, row+" [data-field=waits]"))
		require.Equal(t, "contact_id con-031", textOf(ctx, t, row+" [data-field=parent]"))
		require.True(t, evalBool(ctx, t, `document.getElementById("bulk").hidden`), "no bulk change of skips: the ledger keeps no row of them")
		shoot(ctx, t, out, "grid-06-skipped-"+engine)
	})
}

func evalBool(ctx context.Context, t *testing.T, expr string) bool {
	t.Helper()
	b, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
	require.NoError(t, err)
	return b
}

// rowText is a table row's cells' texts, joined by spaces.
func rowText(ctx context.Context, t *testing.T, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`Array.from(document.querySelector(%q).cells).map(c => c.textContent).join(" ")`, sel)))
	require.NoError(t, err)
	return s
}

package main

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestImportPreviewsWhatItWouldUpdateInABrowser (R17, SPEC §9, §11): New
// import's Preview says of each row shown what it is to the tenant's
// ledger (outdated, in conflict, with their fields), and its Dry run of an export edited at the source since its import shows
// per kind what its plan would update — without "Apply changes at the
// source", what --update would — and how many records are outdated and in
// conflict, as `run --dry-run` says them.
func TestImportPreviewsWhatItWouldUpdateInABrowser(t *testing.T) {
	t.Parallel()
	first, edited := previewExports(t)
	path := previewDB(t, first)
	s := serve(t, path)
	ctx := browser(t)
	out := shots(t)
	cell := func(kind, field string) string {
		return textOf(ctx, t, "#dry-body tr[data-kind="+kind+"] [data-field="+field+"]")
	}

	do(ctx, t, chromedp.Navigate(s.URL()), chromedp.WaitVisible(chromedp.CSS("#main")),
		chromedp.Navigate("http://"+s.Addr()+"/import"), chromedp.WaitVisible(chromedp.CSS("#import-form")),
		chromedp.SendKeys(chromedp.CSS("#path"), edited), chromedp.SendKeys(chromedp.CSS(`input[name=tenant]`), "acme"),
		click("#inspect"), chromedp.WaitVisible(chromedp.CSS("#preview")))
	waitText(ctx, t, "#inspect-ledger", "Compared with the ledger of tenant acme: of the rows shown, 1 unchanged, 2 outdated, 1 conflict.")
	preview := textOf(ctx, t, "#preview-body")
	require.Contains(t, preview, "outdated: title changed at the source (--update would update it)")
	require.Contains(t, preview, "conflict: email changed at the source, title edited by hand since import")
	require.Contains(t, preview, "outdated: amount changed at the source")
	shoot(ctx, t, out, "44-import-preview-ledger")

	do(ctx, t, click("#dry-run"), chromedp.WaitVisible(chromedp.CSS("#dry-result")))
	waitText(ctx, t, "#import-message", "Import now imports exactly this plan")
	waitText(ctx, t, "#dry-body thead", "--update would")
	require.Equal(t, []string{"1", "2", "1"}, []string{cell("contact", "would_update"), cell("contact", "outdated"), cell("contact", "conflict")})
	require.Equal(t, []string{"1", "1", "0"}, []string{cell("deal", "would_update"), cell("deal", "outdated"), cell("deal", "conflict")})
	require.Contains(t, textOf(ctx, t, "#dry-body"), "with --update it would update 2 records (1 contact, 1 deal)")
	shoot(ctx, t, out, "45-import-dry-run-outdated")

	do(ctx, t, click(`input[name=update]`), click("#dry-run"))
	waitText(ctx, t, "#dry-body thead", "would update")
	waitText(ctx, t, "#dry-body", "would update 2 records (1 contact, 1 deal)")
	require.Equal(t, []string{"1", "1", "1", "1"},
		[]string{cell("contact", "imported"), cell("contact", "would_update"), cell("contact", "outdated"), cell("contact", "conflict")},
		"c1 is updated; c2, edited by hand since, stays outdated and in conflict")
	require.Contains(t, textOf(ctx, t, "#dry-body"), "1 record is in conflict (1 contact)")
	shoot(ctx, t, out, "46-import-dry-run-update")
	require.Equal(t, "Owner", contactTitle(t, path, "Ann"), "a dry run writes nothing")
}

package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"crmimport/desktop"
	"crmimport/report"
	"crmimport/store"
	"crmimport/store/storetest"
)

// salesforceZip zips the Salesforce fixture (its ContentVersion folder
// too) as the Data Export hands it out.
func salesforceZip(t *testing.T) string {
	t.Helper()
	src := "../../fixtures/salesforce"
	var names []string
	require.NoError(t, filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(src, p)
			names = append(names, rel)
		}
		return err
	}))
	dst := filepath.Join(t.TempDir(), "WE_00D5g000000ExAmple_1.zip")
	zipFiles(t, dst, src, names)
	return dst
}

// latin1Contacts is a canonical contacts.csv as Excel on a Western
// European Windows saves it: é, í and ü one byte each (Windows-1252),
// which no UTF-8 reader reads.
const latin1Contacts = "id,first_name,last_name,email\n" +
	"c-1,Jos\xe9,Mart\xednez,jose@example.com\n" +
	"c-2,J\xfcrgen,M\xfcller,juergen@example.com\n" +
	"c-3,Ann,Lee,ann@example.com\n"

// dropBytes drops one file of these bytes onto New import's drop zone.
func dropBytes(name string, content []byte) string {
	nums := make([]string, len(content))
	for i, b := range content {
		nums[i] = fmt.Sprint(b)
	}
	return fmt.Sprintf(`(() => { const dt = new DataTransfer();
		dt.items.add(new File([new Uint8Array([%s])], %q, { type: "text/csv" }));
		return document.getElementById("drop").dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true })); })()`,
		strings.Join(nums, ","), name)
}

// TestNewImportKnowsTheExportInABrowser (issue 27 item 4), on both
// engines: New import says source from profile in a line; an export no
// built-in profile reads (a Zoho one) is said so, with the mapping editor
// offered for it; a Salesforce zip chosen with the file picker is
// recognised — source and profile salesforce proposed, with the reason
// (Account.csv and Contact.csv with 001/003 ids) — and previewed; its dry
// run shows its progress, then its result in the run page's columns,
// each count what `run --dry-run --json` says, scrolled into view; a
// Latin-1 file dropped brings the encoding field with the guess and what
// it means, and the encoding chosen goes with the dry run (read as UTF-8,
// its two rows with é and ü fail); the uploads are listed with their size
// and age, and one is deleted.
func TestNewImportKnowsTheExportInABrowser(t *testing.T) {
	t.Parallel()
	out := shots(t)
	ctx := browser(t)
	sfZip := salesforceZip(t)
	zoho, err := filepath.Abs("../../fixtures/suggest/zoho")
	require.NoError(t, err)
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		engine := string(store.DialectAt(addr))
		shot := func(n string) { shoot(ctx, t, out, "newimport-"+engine+"-"+n) }
		want := crm(t, nil, "--db", addr, "--json", "run", "--tenant", "acme", "--source", "salesforce", "--dry-run", sfZip).summary(t)
		folder := t.TempDir()
		s, err := desktop.New(context.Background(), desktop.Config{DBPath: addr, Folder: folder})
		require.NoError(t, err)
		go func() { _ = s.Serve() }()
		t.Cleanup(func() {
			sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			require.NoError(t, s.Shutdown(sctx))
		})
		uploads := folder + "/uploads"
		if store.DialectAt(addr) == store.SQLite {
			uploads = addr + ".uploads"
		}
		kept := func() int {
			entries, err := os.ReadDir(uploads)
			require.NoError(t, err)
			return len(entries)
		}

		do(ctx, t, chromedp.Navigate(s.URL()), chromedp.WaitVisible(chromedp.CSS("h1")),
			chromedp.Navigate("http://"+s.Addr()+"/import"), chromedp.WaitVisible(chromedp.CSS("#import-form")))
		require.Contains(t, textOf(ctx, t, "#source-profile"), "Source: the name this tenant's records are kept under in the ledger")
		require.Contains(t, textOf(ctx, t, "#source-profile"), "Profile: how the files are read")
		require.Empty(t, valueOf(ctx, t, `input[name=source]`), "no source before the export is read: none is defaulted")

		// An export no built-in profile reads: said so, the mapping editor
		// offered for it.
		do(ctx, t, chromedp.SendKeys(chromedp.CSS("#path"), zoho+"\t"))
		waitText(ctx, t, "#recognised", "No built-in profile reads this export")
		require.Contains(t, textOf(ctx, t, "#recognised"), "the closest, hubspot, reads 1 of the 2 files")
		editor, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS("#open-editor"), "href"))
		require.NoError(t, err)
		require.Equal(t, "/profiles/new?path="+url.QueryEscape(zoho), editor.Value)
		require.Empty(t, valueOf(ctx, t, `input[name=source]`))
		shot("01-nothing-fits")

		// A Salesforce zip chosen with the file picker: uploaded, recognised,
		// previewed.
		do(ctx, t, chromedp.SendKeys(chromedp.CSS(`input[name=tenant]`), "acme"),
			chromedp.SetUploadFiles(chromedp.CSS("#pick"), []string{sfZip}))
		waitText(ctx, t, "#recognised", "a Salesforce export")
		why := textOf(ctx, t, "#recognised [data-field=why]")
		require.True(t, strings.HasPrefix(why, "Account.csv, Contact.csv, Lead.csv and 6 more with 001/003/00Q ids: a Salesforce export"), why)
		require.Equal(t, "salesforce", textOf(ctx, t, "#recognised code[data-field=source]"))
		require.Equal(t, "salesforce", valueOf(ctx, t, `input[name=source]`))
		require.Equal(t, "salesforce", valueOf(ctx, t, `select[name=profile]`))
		path := valueOf(ctx, t, "#path")
		require.Equal(t, uploads, filepath.Dir(path), "the chosen zip is saved as a drop is")
		waitText(ctx, t, "#preview-body", "Account.csv")
		require.Contains(t, textOf(ctx, t, "#preview-body"), "User.csv")
		shootView(ctx, t, out, "newimport-"+engine+"-02-salesforce-recognised")

		// The dry run: its progress while it works, then its result in the
		// run page's columns, scrolled into view.
		do(ctx, t, click("#dry-run"))
		waitText(ctx, t, "#import-message", "Dry run succeeded: nothing was written")
		waitJS(ctx, t, `(r => Math.abs(r.top) < 30)(document.getElementById("dry-result").getBoundingClientRect())`, "the dry run's result scrolled into view")
		steps, err := chromedp.Run(ctx, chromedp.Evaluate[int](`Number(document.getElementById("dry-progress").getAttribute("data-steps"))`))
		require.NoError(t, err)
		require.Greater(t, steps, 1, "the dry run showed its planning, then its tasks at work")
		heads, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#dry-body table.outcomes thead th")).map(th => th.textContent)`))
		require.NoError(t, err)
		require.Equal(t, []string{"Kind", "Outcomes", "Imported", "Unchanged", "Skipped", "Failed", "Matched", "Unlinked", "Unowned", "Relinked", "Duplicate", "Excluded"}, heads,
			"the run page's columns: unowned and excluded, as this export has some")
		rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#dry-body table.outcomes tbody tr")).map(tr => tr.getAttribute("data-kind"))`))
		require.NoError(t, err)
		require.Equal(t, []string{"user", "company", "contact", "lead", "deal", "note", "activity", "email"}, rows, "the kinds in plan order")
		for kind, c := range want.Kinds {
			for field, n := range map[string]int64{"imported": c.Imported, "unchanged": c.Unchanged, "skipped": c.Skipped, "failed": c.Failed,
				"matched": c.Matched, "unlinked": c.Unlinked, "unowned": c.Unowned, "relinked": c.Relinked, "duplicate": c.Duplicate, "excluded": c.Excluded} {
				require.Equal(t, report.Count(n), textOf(ctx, t, fmt.Sprintf("#dry-body tr[data-kind=%s] [data-field=%s]", kind, field)),
					"%s %s: what `run --dry-run` says", kind, field)
			}
		}
		shootView(ctx, t, out, "newimport-"+engine+"-03-dry-run")

		// A Latin-1 file dropped: the encoding field, with the guess and
		// what it means; the encoding chosen goes with the dry run.
		_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](dropBytes("contacts.csv", []byte(latin1Contacts))))
		require.NoError(t, err)
		waitText(ctx, t, "#recognised", "crmimport's canonical layout")
		require.Equal(t, "canonical", valueOf(ctx, t, `select[name=profile]`), "a new export, a new proposal")
		waitText(ctx, t, "#encoding-why", "contacts.csv is read as windows-1252, a guess")
		require.Contains(t, textOf(ctx, t, "#encoding-why"), "what Excel on a Western European or American Windows saves as CSV")
		guess, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#encoding option[value='']").textContent`))
		require.NoError(t, err)
		require.Equal(t, "as guessed, file by file (windows-1252 for contacts.csv)", guess)
		waitText(ctx, t, "#preview-body", "José")
		shot("04-encoding-guessed")
		_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`(s => { s.value = "utf-8"; return s.dispatchEvent(new Event("change")); })(document.getElementById("encoding"))`))
		require.NoError(t, err)
		do(ctx, t, click("#dry-run"))
		waitText(ctx, t, "#import-message", "Dry run partial")
		waitJS(ctx, t, `(r => Math.abs(r.top) < 30)(document.getElementById("dry-result").getBoundingClientRect())`, "the dry run's result scrolled into view")
		require.Equal(t, []string{"1", "2"}, []string{textOf(ctx, t, "#dry-body tr[data-kind=contact] [data-field=imported]"),
			textOf(ctx, t, "#dry-body tr[data-kind=contact] [data-field=failed]")}, "read as UTF-8, the rows with é and ü fail")

		// The uploads, with their size and age; one deleted.
		do(ctx, t, chromedp.ScrollIntoView(chromedp.CSS("#uploads")))
		waitJS(ctx, t, `document.querySelectorAll("table.uploads tbody tr").length === 2`, "both uploads listed")
		require.Equal(t, 2, kept())
		latin := filepath.Base(valueOf(ctx, t, "#path"))
		row := fmt.Sprintf(`table.uploads tr[data-upload=%q]`, latin)
		require.Equal(t, "just now", textOf(ctx, t, row+" td.age"))
		require.Equal(t, fmt.Sprintf("%d bytes", len(latin1Contacts)), textOf(ctx, t, row+" td.num"))
		do(ctx, t, click(row+" button[data-delete]"))
		waitText(ctx, t, "#uploads-message", "Click again to delete")
		shot("05-uploads")
		do(ctx, t, click(row+" button[data-delete]"))
		waitText(ctx, t, "#uploads-message", "Deleted 1 file")
		waitJS(ctx, t, `document.querySelectorAll("table.uploads tbody tr").length === 1`, "the deleted upload gone from the list")
		require.Equal(t, 1, kept(), "and from the disk")
	})
}

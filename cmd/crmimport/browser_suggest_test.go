package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"crmimport/importer/reader/readertest"
)

// TestMappingEditorInABrowser: issue 15 item 3 in the page (SPEC §9,
// Profiles) — an export of a CRM no profile was written for opened from
// the Profiles page; the suggestion keeps Designation (a contact's job
// title, in no profile's spellings) in extra; the user gives it the field
// title from its list and the first rows, mapped again, show it there;
// the profile is saved (0600) and New import opens with it and the export;
// the import puts the Designation of each contact in its title. A column
// whose name and values are markup is shown as text, never as HTML.
func TestMappingEditorInABrowser(t *testing.T) {
	t.Parallel()
	out := shots(t)
	dir := t.TempDir()
	for name, body := range map[string]string{
		"Accounts_2024_08_27.csv": "Record Id,Account Name,Website,Industry,Created Time\n" +
			"3652397000000624046,Brightwater Bakery,brightwater-bakery.example.com,Food,2021-03-04 08:00:00\n",
		"Contacts_2024_08_27.csv": "Record Id,First Name,Last Name,Email,Designation,Account Id,Created Time,<b>Remark</b>\n" +
			"3652397000000624101,Hannah,Okafor,hannah.okafor@brightwater-bakery.example.com,Head of Sales,3652397000000624046,2022-03-14 10:00:00,<img src=x>\n" +
			"3652397000000624102,Grace,Lindqvist,grace@brightwater-bakery.example.com,Baker,3652397000000624046,2023-01-19 16:45:00,\n",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600))
	}
	path := filepath.Join(t.TempDir(), "crm.db")
	s := serve(t, path)
	ctx := browser(t)
	base := "http://" + s.Addr()

	do(ctx, t, chromedp.Navigate(s.URL()), chromedp.WaitVisible(chromedp.CSS("h1")),
		chromedp.Navigate(base+"/profiles"), chromedp.WaitVisible(chromedp.CSS("#suggest-entry")),
		click("#suggest-entry"), chromedp.WaitVisible(chromedp.CSS("#suggest-form")),
		chromedp.SetValue(chromedp.CSS("#path"), dir), click("#suggest"),
		chromedp.WaitVisible(chromedp.CSS(`section.file table.mapped-rows`)))
	card := `section.file[data-ref$="Contacts_2024_08_27.csv"]`
	require.Equal(t, "contact", value(ctx, t, card+" select[data-field=kind]"))
	require.Equal(t, "", value(ctx, t, card+` tr[data-column="Designation"] select`), "the suggestion keeps Designation in extra")
	waitText(ctx, t, card+` table.mapped-rows tr[data-line="2"] td.extra`, "Head of Sales")
	waitText(ctx, t, "#check", "nothing wrong")

	// Markup from the export is text.
	require.Equal(t, "<b>Remark</b>", textOf(ctx, t, card+` tr[data-column="<b>Remark</b>"] th`))
	markup, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#files b, #files img").length`))
	require.NoError(t, err)
	require.Zero(t, markup, "no element made from the export's text")
	shoot(ctx, t, out, "18-editor-suggested")

	// Designation gives title, chosen from its list.
	sel := card + ` tr[data-column="Designation"] select`
	options, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelector(`+"`"+sel+"`"+`).options).map(o => o.value)`))
	require.NoError(t, err)
	require.Equal(t, []string{"", "id", "first_name", "last_name", "email", "phone", "title", "company_id", "owner_id", "created_at", "deleted"}, options,
		"extra and a contact's canonical fields")
	// As a person picks from the list: the option chosen, then change.
	_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const s = document.querySelector(`+"`"+sel+"`"+`); s.focus();
		s.value = "title"; return s.dispatchEvent(new Event("change", { bubbles: true })); })()`))
	require.NoError(t, err)
	waitText(ctx, t, card+` table.mapped-rows tr[data-line="2"] td[data-field=title]`, "Head of Sales")
	require.Equal(t, "Baker", textOf(ctx, t, card+` table.mapped-rows tr[data-line="3"] td[data-field=title]`))
	require.Equal(t, "3652397000000624046", textOf(ctx, t, card+` table.mapped-rows tr[data-line="2"] td[data-field=company_id]`), "the link under its field")
	require.Equal(t, "chosen", textOf(ctx, t, card+` tr[data-column="Designation"] [data-field=sure]`))
	require.NotContains(t, textOf(ctx, t, card+` table.mapped-rows tr[data-line="2"] td.extra`), "Head of Sales")
	shoot(ctx, t, out, "19-editor-remapped")

	// Saved, then New import with it.
	_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const e = document.getElementById("draft-name"); e.focus(); e.select(); return true; })()`))
	require.NoError(t, err)
	do(ctx, t, chromedp.SendKeys(chromedp.CSS("#draft-name"), "zoho"),
		chromedp.SetValue(chromedp.CSS("#save-file"), "zoho.yaml"), click("#save"),
		chromedp.WaitVisible(chromedp.CSS("#go-import")))
	file := path + ".profiles/zoho.yaml"
	waitText(ctx, t, "#save-message", "Saved to "+file)
	st, err := os.Stat(file)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	shoot(ctx, t, out, "20-editor-saved")

	do(ctx, t, click("#go-import"), chromedp.WaitVisible(chromedp.CSS("#import-form")))
	require.Equal(t, file, value(ctx, t, "input[name=profile_file]"))
	require.Equal(t, dir, value(ctx, t, "#path"))
	require.Equal(t, "zoho", value(ctx, t, "input[name=source]"))
	do(ctx, t, chromedp.SendKeys(chromedp.CSS("input[name=tenant]"), "acme"))
	shoot(ctx, t, out, "21-import-with-saved-profile")
	importToRunPage(ctx, t)
	waitEnded(ctx, t, "succeeded")

	require.Equal(t, []string{"3652397000000624101|Head of Sales", "3652397000000624102|Baker"}, query(t, path, `SELECT r.source_id, c.title
		FROM contacts c JOIN migration_records r ON r.record_type = 'contacts' AND r.record_id = c.id ORDER BY r.source_id`),
		"the title of each contact is its Designation")
	require.Equal(t, []string{"zoho|" + file}, query(t, path, `SELECT source, json_extract(options, '$.profile_file') FROM migrations`))
}

// value reads the value of the form control sel matches.
func value(ctx context.Context, t *testing.T, sel string) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(sel)))
	require.NoError(t, err, sel)
	return v
}

// pick chooses value in the select sel matches, as a person does: the
// option chosen, then change.
func pick(ctx context.Context, t *testing.T, sel, value string) {
	t.Helper()
	ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(`(() => { const s = document.querySelector(%q); if (!s) return false;
		s.focus(); s.value = %q; if (s.value !== %q) return false; return s.dispatchEvent(new Event("change", { bubbles: true })); })()`, sel, value, value)))
	require.NoError(t, err, sel)
	require.True(t, ok, "%s: no such select, or no option %q", sel, value)
}

// count is how many nodes sel matches.
func count(ctx context.Context, t *testing.T, sel string) int {
	t.Helper()
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, sel)))
	require.NoError(t, err, sel)
	return n
}

// zohoExport is the Zoho-style export of fixtures/suggest/zoho, copied
// with an account whose name is markup (every byte of an export is
// hostile in a page).
func zohoExport(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"Accounts_2024_08_27.csv", "Deals_2024_08_27.csv"} {
		b, err := os.ReadFile(filepath.Join(fixtureRoot, "suggest", "zoho", name))
		require.NoError(t, err)
		if strings.HasPrefix(name, "Accounts") {
			b = append(b, "\"3652397000000624052\",\"Sam Ito\",\"<img src=x onerror=alert(1)>\",\"555-0107\",\"\",\"Food\",\"2021-07-04 08:00:00\",\"2024-08-27 10:00:00\"\r\n"...)
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o600))
	}
	return dir
}

// TestEditorLinksByNameAndAsksDatesInABrowser: issue 26 item 5 in the
// page. A Zoho-style export whose deals name their account (Account
// Name) and whose Closing Date reads two ways: the page asks the date
// question visibly, as a choice; Account Name chosen as a company link is
// by id at first, and the preview marks every deal's link unlinked (it
// said valid while a run imported 20 of 20 deals unlinked); read by name,
// the links resolve. Closing Date placed without a format makes Check name
// the column and a value; the answer is written into the profile, and a
// run with the saved profile links every deal and reads its closing date
// day first.
func TestEditorLinksByNameAndAsksDatesInABrowser(t *testing.T) {
	t.Parallel()
	out := shots(t)
	dir := zohoExport(t)
	path := filepath.Join(t.TempDir(), "crm.db")
	s := serve(t, path)
	ctx := browser(t)
	base := "http://" + s.Addr()

	do(ctx, t, chromedp.Navigate(s.URL()), chromedp.WaitVisible(chromedp.CSS("h1")),
		chromedp.Navigate(base+"/profiles/new?path="+url.QueryEscape(dir)),
		chromedp.WaitVisible(chromedp.CSS(`section.file table.mapped-rows`)))
	deals := `section.file[data-ref$="Deals_2024_08_27.csv"]`
	accounts := `section.file[data-ref$="Accounts_2024_08_27.csv"]`
	waitText(ctx, t, deals+" p.counts", "8 imported")
	waitText(ctx, t, accounts+` table.mapped-rows tr[data-line="8"] td[data-field=name]`, "<img src=x onerror=alert(1)>")
	markup, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#files img").length`))
	require.NoError(t, err)
	require.Zero(t, markup, "the account's name is text")

	// The question, asked visibly as a choice.
	closing := deals + ` tr[data-column="Closing Date"]`
	require.Equal(t, "", value(ctx, t, closing+" select[data-field=field]"))
	require.Contains(t, textOf(ctx, t, closing+" [data-field=question]"), `Is "Closing Date" (close_date) written day first (DD/MM/YYYY) or month first (MM/DD/YYYY)?`)
	require.Equal(t, []string{"", "DD/MM/YYYY", "MM/DD/YYYY"}, options(ctx, t, closing+" select[data-field=date-answer]"))
	shoot(ctx, t, out, "60-editor-date-question")

	// Account Name as a company link: by id, as the page made it.
	account := deals + ` tr[data-column="Account Name"]`
	pick(ctx, t, account+" select[data-field=field]", "company_id")
	require.Equal(t, "id", value(ctx, t, account+" select[data-field=by]"))
	waitText(ctx, t, deals+" p.counts", "8 imported (8 unlinked)")
	require.Equal(t, 8, count(ctx, t, deals+" table.mapped-rows td[data-field=company_id] .badge.unlinked"),
		"an account's name is no account's id: every deal's link is unlinked")
	require.Equal(t, "Brightwater Bakeryunlinked", textOf(ctx, t, deals+` table.mapped-rows tr[data-line="2"] td[data-field=company_id]`))
	waitText(ctx, t, account+" [data-field=by-hint]", "None of its values shown is the id of one of the export’s companies: if they are names, read them by name")
	shoot(ctx, t, out, "61-editor-link-by-id-unlinked")

	// By name: every link resolves.
	pick(ctx, t, account+" select[data-field=by]", "name")
	waitText(ctx, t, deals+" p.counts", "8 imported ·")
	require.Zero(t, count(ctx, t, deals+" table.mapped-rows td[data-field=company_id] .badge.unlinked"))
	require.Equal(t, 8, count(ctx, t, deals+` table.mapped-rows td[data-field=owner_id] .badge.unlinked`),
		"each Deal Owner is a name no users file gives: unowned, so badged")
	require.Zero(t, count(ctx, t, account+" [data-field=by-hint]"))
	require.Equal(t, "Harbor Logistics", textOf(ctx, t, deals+` table.mapped-rows tr[data-line="3"] td[data-field=company_id]`))

	// Closing Date placed with no format: Check names the column and a
	// value, and the preview fails every deal.
	pick(ctx, t, closing+" select[data-field=field]", "close_date")
	waitText(ctx, t, "#check", `column "Closing Date" gives close_date, but 12 of its 12 values shown are not dates the profile reads, such as "01/01/2021": choose the column's date format`)
	waitText(ctx, t, deals+" p.counts", "8 failed")
	require.True(t, disabled(ctx, t, "#save"))
	shoot(ctx, t, out, "62-editor-check-dates")

	// The answer: day first.
	pick(ctx, t, closing+" select[data-field=date-answer]", "DD/MM/YYYY")
	waitText(ctx, t, "#check", "nothing wrong")
	waitText(ctx, t, closing+" [data-field=answered]", "Answered: close_date written DD/MM/YYYY.")
	waitText(ctx, t, deals+` table.mapped-rows tr[data-line="3"] td[data-field=close_date]`, "2021-06-02")
	waitText(ctx, t, deals+" p.counts", "8 imported")
	shoot(ctx, t, out, "63-editor-link-by-name-dates-answered")

	do(ctx, t, chromedp.SetValue(chromedp.CSS("#save-file"), "zoho.yaml"), click("#save"),
		chromedp.WaitVisible(chromedp.CSS("#go-import")))
	file := path + ".profiles/zoho.yaml"
	text, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Contains(t, string(text), `- {column: "Account Name", kind: company, by: name}`)
	require.Contains(t, string(text), `close_date: {columns: ["Closing Date"], dates: ["DD/MM/YYYY"]}`)

	db := filepath.Join(t.TempDir(), "run.db")
	r := crm(t, nil, "--db", db, "--json", "run", "--tenant", "acme", "--source", "zoho", "--profile", file, dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Equal(t, []string{"20|20"}, query(t, db, `SELECT count(*), count(company_id) FROM deals`), "every deal linked to its account")
	require.Equal(t, []string{"2021-06-02"}, query(t, db, `SELECT d.close_date FROM deals d JOIN migration_records r
		ON r.record_type = 'deals' AND r.record_id = d.id WHERE r.source_id = '3652397000000625011'`))
}

// TestEditorSheetsAndValueMapsInABrowser: issue 26 item 5 in the page. A
// workbook whose sheets hold organizations, people and deals is a card per
// sheet, each named by its sheet and previewed from it (the preview used
// to show the first sheet's rows for every sheet); the people's emails
// joined by ", " show their separator; the deals' Status in the export's
// words (Gewonnen, Verloren, Offen) is refused by Check until its value map
// gives open, won and lost, and the preview reads it through the map.
func TestEditorSheetsAndValueMapsInABrowser(t *testing.T) {
	t.Parallel()
	out := shots(t)
	book := filepath.Join(t.TempDir(), "crm-export.xlsx")
	wb := readertest.Workbook{Sheets: []readertest.Sheet{
		sheetRows("Organizations", [][]string{{"Organization ID", "Organization name", "Website", "Industry"},
			{"1", "Brightwater Bakery", "brightwater-bakery.example.com", "Food"}, {"2", "Harbor Logistics", "harbor-logistics.example.com", "Transport"},
			{"3", "Northwind Florists", "northwind-florists.example.com", "Retail"}}),
		sheetRows("People", [][]string{{"Person ID", "First name", "Last name", "Email", "Organization ID"},
			{"11", "Hannah", "Okafor", "hannah@brightwater-bakery.example.com, h.okafor@example.com", "1"},
			{"12", "Grace", "Lindqvist", "grace@harbor-logistics.example.com", "2"},
			{"13", "Tomasz", "Brandt", "tomasz@northwind-florists.example.com, tb@example.com", "3"}}),
		sheetRows("Deals", [][]string{{"Deal ID", "Title", "Value", "Status", "Organization ID", "Person ID"},
			{"21", "Ovens", "4800", "Gewonnen", "1", "11"}, {"22", "Trucks", "125000", "Offen", "2", "12"},
			{"23", "Tulips", "900", "Verloren", "3", "13"}, {"24", "Rye flour", "1200", "Gewonnen", "1", "11"}}),
	}}
	require.NoError(t, wb.WriteFile(book))
	path := filepath.Join(t.TempDir(), "crm.db")
	s := serve(t, path)
	ctx := browser(t)
	base := "http://" + s.Addr()
	do(ctx, t, chromedp.Navigate(s.URL()), chromedp.WaitVisible(chromedp.CSS("h1")),
		chromedp.Navigate(base+"/profiles/new?path="+url.QueryEscape(book)),
		chromedp.WaitVisible(chromedp.CSS(`section.file[data-sheet="Deals"] [data-field=preview] p.counts, section.file[data-sheet="Deals"] [data-field=preview] p.error`)))

	require.Equal(t, 3, count(ctx, t, "section.file"), "a card per sheet")
	people := `section.file[data-sheet="People"]`
	orgs := `section.file[data-sheet="Organizations"]`
	dealsCard := `section.file[data-sheet="Deals"]`
	require.Equal(t, "crm-export.xlsx › sheet People", textOf(ctx, t, people+" h2"))
	require.Equal(t, "contact", value(ctx, t, people+" select[data-field=kind]"))
	require.Equal(t, "company", value(ctx, t, orgs+" select[data-field=kind]"))
	require.Equal(t, "deal", value(ctx, t, dealsCard+" select[data-field=kind]"))
	waitText(ctx, t, people+` table.mapped-rows tr[data-line="2"] td[data-field=id]`, "11")
	require.Equal(t, "Okafor", textOf(ctx, t, people+` table.mapped-rows tr[data-line="2"] td[data-field=last_name]`), "the People sheet's rows")
	waitText(ctx, t, orgs+` table.mapped-rows tr[data-line="2"] td[data-field=name]`, "Brightwater Bakery")
	require.Contains(t, textOf(ctx, t, people+` tr[data-column="Email"] [data-field=multi]`), "several values joined by “, ”")

	// The deals' status in the export's words: Check refuses it; the map
	// gives each word a status.
	status := dealsCard + ` tr[data-column="Status"]`
	if value(ctx, t, status+" select[data-field=field]") != "status" {
		pick(ctx, t, status+" select[data-field=field]", "status")
	}
	waitText(ctx, t, "#check", `column "Status" gives status, but "Gewonnen" is not open, won or lost`)
	require.Equal(t, 3, count(ctx, t, status+" table.value-map tr"))
	shoot(ctx, t, out, "64-editor-sheets-status-unmapped")
	for word, to := range map[string]string{"Gewonnen": "won", "Verloren": "lost", "Offen": "open"} {
		pick(ctx, t, status+fmt.Sprintf(` table.value-map tr[data-value=%q] select`, word), to)
	}
	waitText(ctx, t, "#check", "nothing wrong")
	waitText(ctx, t, dealsCard+` table.mapped-rows tr[data-line="4"] td[data-field=status]`, "lost")
	require.Equal(t, "won", textOf(ctx, t, dealsCard+` table.mapped-rows tr[data-line="2"] td[data-field=status]`))
	waitText(ctx, t, dealsCard+" p.counts", "4 imported")
	shoot(ctx, t, out, "65-editor-sheets-status-mapped")
}

// sheetRows writes a table as a worksheet's rows of inline strings.
func sheetRows(name string, table [][]string) readertest.Sheet {
	var b strings.Builder
	for r, row := range table {
		fmt.Fprintf(&b, `<row r="%d">`, r+1)
		for c, v := range row {
			fmt.Fprintf(&b, `<c r="%c%d" t="inlineStr"><is><t>%s</t></is></c>`, 'A'+c, r+1, v)
		}
		b.WriteString(`</row>`)
	}
	return readertest.Sheet{Name: name, Rows: b.String()}
}

// options are the values of the options of the select sel matches.
func options(ctx context.Context, t *testing.T, sel string) []string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](fmt.Sprintf(`Array.from(document.querySelector(%q).options).map(o => o.value)`, sel)))
	require.NoError(t, err, sel)
	return v
}

// disabled reports whether the control sel matches is disabled.
func disabled(ctx context.Context, t *testing.T, sel string) bool {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(`document.querySelector(%q).disabled`, sel)))
	require.NoError(t, err, sel)
	return v
}

// TestEditorShowsPrefixLinksInABrowser: a Salesforce export's WhatId
// links by id prefix; the editor shows the prefixes and their kinds on the
// column (read only), not a choice between id and name.
func TestEditorShowsPrefixLinksInABrowser(t *testing.T) {
	t.Parallel()
	export, err := filepath.Abs(filepath.Join(fixtureRoot, "salesforce"))
	require.NoError(t, err)
	s := serve(t, filepath.Join(t.TempDir(), "crm.db"))
	ctx := browser(t)
	do(ctx, t, chromedp.Navigate(s.URL()), chromedp.WaitVisible(chromedp.CSS("h1")),
		chromedp.Navigate("http://"+s.Addr()+"/profiles/new?path="+url.QueryEscape(export)),
		chromedp.WaitVisible(chromedp.CSS(`section.file[data-ref$="Task.csv"] table.mapped-rows`)))
	what := `section.file[data-ref$="Task.csv"] tr[data-column="WhatId"]`
	require.Equal(t, "company_id", value(ctx, t, what+" select[data-field=field]"))
	require.Equal(t, "by id prefix: 001… company, 006… deal", textOf(ctx, t, what+" [data-field=prefixes]"))
	require.Zero(t, count(ctx, t, what+" select[data-field=by]"))
}

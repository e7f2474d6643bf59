package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
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
		chromedp.Click(chromedp.CSS("#suggest-entry")), chromedp.WaitVisible(chromedp.CSS("#suggest-form")),
		chromedp.SetValue(chromedp.CSS("#path"), dir), chromedp.Click(chromedp.CSS("#suggest")),
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
		chromedp.SetValue(chromedp.CSS("#save-file"), "zoho.yaml"), chromedp.Click(chromedp.CSS("#save")),
		chromedp.WaitVisible(chromedp.CSS("#go-import")))
	file := path + ".profiles/zoho.yaml"
	waitText(ctx, t, "#save-message", "Saved to "+file)
	st, err := os.Stat(file)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	shoot(ctx, t, out, "20-editor-saved")

	do(ctx, t, chromedp.Click(chromedp.CSS("#go-import")), chromedp.WaitVisible(chromedp.CSS("#import-form")))
	require.Equal(t, file, value(ctx, t, "input[name=profile_file]"))
	require.Equal(t, dir, value(ctx, t, "#path"))
	require.Equal(t, "zoho", value(ctx, t, "input[name=source]"))
	do(ctx, t, chromedp.SendKeys(chromedp.CSS("input[name=tenant]"), "acme"))
	shoot(ctx, t, out, "21-import-with-saved-profile")
	do(ctx, t, chromedp.Click(chromedp.CSS("#import")), chromedp.WaitVisible(chromedp.CSS("table.outcomes")))
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

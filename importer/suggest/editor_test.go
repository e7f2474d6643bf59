package suggest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/importer/input"
	"crmimport/importer/profile"
	"crmimport/importer/reader/readertest"
	"crmimport/ledger"
)

// preview is Preview of a draft's file (name, or name!sheet), every row.
func preview(t *testing.T, d *Draft, key string) *Mapped {
	t.Helper()
	f := fileOf(t, d, key)
	m, err := Preview(context.Background(), d, f.Ref, f.Sheet, maxPreviewRows, input.DefaultLimits())
	require.NoError(t, err)
	require.Empty(t, m.Problem)
	return m
}

// TestPreviewShowsALinkByIDThatNamesNothingAsUnlinked: issue 26 item 5.
// Zoho's deals name their account in Account Name. Chosen by hand as a
// company link by id (what the editor could say), the preview called
// every deal valid and linked while a run imported all 20 unlinked: now
// each row says its company_id is unlinked. By name, each deal links to
// its account, and the draft writes `by: name`.
func TestPreviewShowsALinkByIDThatNamesNothingAsUnlinked(t *testing.T) {
	t.Parallel()
	d, err := Suggest(context.Background(), []string{fixture("suggest/zoho")}, Options{Name: "zoho"})
	require.NoError(t, err)
	deals := fileOf(t, d, "Deals_2024_08_27.csv")
	account := columnOf(t, deals, "Account Name")
	require.Empty(t, account.Field, "suggest leaves a deal's account name unplaced: the consultant chooses")

	account.Field, account.Why, account.Sure = "company_id", "chosen in the editor", Sure
	m := preview(t, d, "Deals_2024_08_27.csv")
	require.Len(t, m.Rows, 20)
	require.Equal(t, 20, m.Imported, "a deal whose link does not resolve still imports (SPEC §4 step 7)")
	for _, r := range m.Rows {
		require.Equal(t, RowImported, r.Outcome)
		account := linkOf(t, r.Links, "company_id")
		require.Contains(t, r.Unlinked, MappedLink{Field: "company_id", Value: account.Value},
			"line %d: an account's name is no account's id: unlinked", r.Line)
		require.Contains(t, r.Unlinked, MappedLink{Field: "owner_id", Value: linkOf(t, r.Links, "owner_id").Value},
			"line %d: its Deal Owner, whom no users file names: unowned", r.Line)
	}

	account.ByName = true
	require.Contains(t, string(d.YAML()), `- {column: "Account Name", kind: company, by: name}`)
	require.NoError(t, d.Check())
	m = preview(t, d, "Deals_2024_08_27.csv")
	require.Equal(t, 20, m.Imported)
	for _, r := range m.Rows {
		for _, u := range r.Unlinked {
			require.Equal(t, "owner_id", u.Field, "line %d: linked by its account's name; only its owner is open", r.Line)
		}
		require.Contains(t, []string{"Brightwater Bakery", "Harbor Logistics", "Old Mill Supplies", "Lindqvist & Okafor Legal",
			"Northwind Florists", "Tidewater Print Co."}, linkOf(t, r.Links, "company_id").Value)
	}
}

// linkOf is a row's link value of field.
func linkOf(t *testing.T, links []MappedLink, field string) MappedLink {
	t.Helper()
	for _, l := range links {
		if l.Field == field {
			return l
		}
	}
	t.Fatalf("no %s among %v", field, links)
	return MappedLink{}
}

// TestPreviewSkipsWhatARunSkips: a note none of whose links resolves is
// skipped as a run skips it, a repeated id fails as a duplicate, and a
// deleted record is skipped, never "valid".
func TestPreviewSkipsWhatARunSkips(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, body := range map[string]string{
		"companies.csv": "id,name,deleted\nc1,Brightwater Bakery,false\nc2,Old Mill Supplies,true\n",
		"notes.csv": "id,body,company_id\nn1,Called about rye,c1\nn2,Asked for a quote,c2\nn3,Left a message,c9\nn1,Again,c1\n" +
			"n4,,c1\n",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600))
	}
	d, err := Suggest(context.Background(), []string{dir}, Options{Name: "notes"})
	require.NoError(t, err)
	m := preview(t, d, "notes.csv")
	var got []string
	for _, r := range m.Rows {
		got = append(got, r.ID+" "+r.Outcome+" "+r.Reason)
	}
	require.Equal(t, []string{
		"n1 imported ",
		"n2 skipped " + ledger.ReasonNotLinked, // its company is deleted in the source: no final slot
		"n3 skipped " + ledger.ReasonNotLinked,
		"n1 failed duplicate source_id, first at notes.csv:2",
		"n4 skipped " + ledger.ReasonEmptyBody,
	}, got)
	require.Equal(t, []int{1, 1, 3}, []int{m.Imported, m.Failed, m.Skipped})
	require.Equal(t, []MappedLink{{Field: "company_id", Value: "c9"}}, m.Rows[2].Unlinked)
}

// TestPreviewOfASheet: a workbook whose sheets hold different kinds is a
// file per sheet in the draft, and the preview of each sheet maps that
// sheet's rows (it mapped the first sheet's, whichever was asked).
func TestPreviewOfASheet(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "crm.xlsx")
	wb := readertest.Workbook{Sheets: []readertest.Sheet{
		sheetOf("Organizations", [][]string{{"Company ID", "Company name", "Website", "Industry"},
			{"1", "Brightwater Bakery", "brightwater-bakery.example.com", "Food"}, {"2", "Harbor Logistics", "harbor-logistics.example.com", "Transport"},
			{"3", "Northwind Florists", "northwind-florists.example.com", "Retail"}}),
		sheetOf("People", [][]string{{"Contact ID", "First name", "Last name", "Email", "Company ID"},
			{"11", "Hannah", "Okafor", "hannah@brightwater-bakery.example.com", "1"},
			{"12", "Grace", "Lindqvist", "grace@harbor-logistics.example.com", "2"},
			{"13", "Tomasz", "Brandt", "tomasz@example.com", "7"}}),
	}}
	require.NoError(t, wb.WriteFile(p))
	d, err := Suggest(context.Background(), []string{p}, Options{Name: "book"})
	require.NoError(t, err)
	require.Len(t, d.Files, 2, "a file per sheet")
	people := fileOf(t, d, "crm.xlsx!People")
	require.Equal(t, ledger.Contact, people.Kind, people.KindWhy)
	require.Equal(t, ledger.Company, fileOf(t, d, "crm.xlsx!Organizations").Kind)

	m := preview(t, d, "crm.xlsx!People")
	require.Equal(t, "People", m.Sheet)
	var ids []string
	for _, r := range m.Rows {
		ids = append(ids, r.ID)
	}
	require.Equal(t, []string{"11", "12", "13"}, ids, "the People sheet's rows")
	require.Empty(t, m.Rows[0].Unlinked)
	require.Equal(t, []MappedLink{{Field: "company_id", Value: "7"}}, m.Rows[2].Unlinked, "no organization 7 in the export")
	m = preview(t, d, "crm.xlsx!Organizations")
	require.Equal(t, "Brightwater Bakery", m.Rows[0].Fields["name"])

	_, err = Preview(context.Background(), d, p, "Deals", 10, input.DefaultLimits())
	require.ErrorContains(t, err, `the draft has no sheet "Deals"`)
}

// TestAnsweredDateQuestionIsTheFieldsFormat: the question a draft asks of
// a column whose dates read two ways, answered (the field and the format
// chosen), is written as the field's own dates and read so; a format
// chosen wrong, or no format, fails most of the column's values, and Check
// names the column and a value (every 08/03/2021 failed while Check said
// nothing).
func TestAnsweredDateQuestionIsTheFieldsFormat(t *testing.T) {
	t.Parallel()
	d, err := Suggest(context.Background(), []string{fixture("suggest/zoho")}, Options{Name: "zoho"})
	require.NoError(t, err)
	deals := fileOf(t, d, "Deals_2024_08_27.csv")
	closing := columnOf(t, deals, "Closing Date")
	require.Equal(t, []string{"DD/MM/YYYY", "MM/DD/YYYY"}, closing.DateChoices)
	require.NotEmpty(t, closing.Question)

	closing.Field = "close_date" // placed, no format chosen
	err = d.Check()
	require.Error(t, err)
	require.Contains(t, err.Error(), `Deals_2024_08_27.csv: column "Closing Date" gives close_date, but 12 of its 12 values shown are not dates the profile reads, such as "01/01/2021": choose the column's date format`)
	m := preview(t, d, "Deals_2024_08_27.csv")
	require.Equal(t, 20, m.Failed)

	closing.DateFormat = "DD/MM/YYYY"
	require.NoError(t, d.Check())
	y := string(d.YAML())
	require.Contains(t, y, `close_date: {columns: ["Closing Date"], dates: ["DD/MM/YYYY"]}`)
	prof, err := profile.Load("zoho.yaml", d.YAML())
	require.NoError(t, err)
	require.Empty(t, prof.DateProblem(ledger.Deal, "close_date", "02/06/2021"))
	m = preview(t, d, "Deals_2024_08_27.csv")
	require.Equal(t, 20, m.Imported)
	require.Equal(t, "2021-06-02", m.Rows[1].Fields["close_date"], "02/06/2021 day first")

	closing.DateFormat = "YYYY.MM.DD"
	require.ErrorContains(t, d.Check(), `"Closing Date" gives close_date`)
}

// TestValueMapOfAStatus: a deal's status column in the export's own words
// is refused by Check until its map turns them into open, won and lost;
// the map is written on the field and a preview reads the words through it.
func TestValueMapOfAStatus(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "deals-4321-20240827.csv"), []byte("ID,Titel,Wert,Status\n"+
		"1,Brot,100,Gewonnen\n2,Blumen,200,Verloren\n3,Druck,300,Offen\n4,Mehl,400,Gewonnen\n"), 0o600))
	d, err := Suggest(context.Background(), []string{dir}, Options{Name: "pipedrive-de"})
	require.NoError(t, err)
	deals := fileOf(t, d, "deals-4321-20240827.csv")
	deals.Kind = ledger.Deal
	status := columnOf(t, deals, "Status")
	require.Equal(t, []string{"Gewonnen", "Verloren", "Offen"}, status.Values, "the column's few values, for a map")
	for _, c := range deals.Columns {
		switch c.Name {
		case "ID":
			c.Field = "id"
		case "Titel":
			c.Field = "name"
		case "Status":
			c.Field = "status"
		}
	}
	require.ErrorContains(t, d.Check(), `column "Status" gives status, but "Gewonnen" is not open, won or lost`)
	status.Map = map[string]string{"Gewonnen": "won", "Verloren": "lost", "Offen": "open"}
	require.NoError(t, d.Check())
	require.Contains(t, string(d.YAML()), `status: {columns: ["Status"], map: {"Gewonnen": "won", "Offen": "open", "Verloren": "lost"}}`)
	m := preview(t, d, "deals-4321-20240827.csv")
	var got []string
	for _, r := range m.Rows {
		got = append(got, r.Fields["status"])
	}
	require.Equal(t, "won lost open won", strings.Join(got, " "))
}

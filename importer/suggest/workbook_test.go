package suggest

import (
	"archive/zip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/importer/input"
	"crmimport/importer/profile"
	"crmimport/importer/reader"
	"crmimport/importer/reader/readertest"
	"crmimport/ledger"
)

// TestSuggestAndPreviewAWorkbookInAZip: a workbook deflated in an
// export's zip is suggested from and previewed as a run reads it (issue
// 15 items 1 and 3): its first sheet's header, the sheet's rows, values
// as Excel shows them, and the row whose id the spreadsheet rewrote
// failing as a run fails it.
func TestSuggestAndPreviewAWorkbookInAZip(t *testing.T) {
	wb, err := os.ReadFile(filepath.Join(readertest.XLSXFixtureDir(t), "contacts.xlsx"))
	require.NoError(t, err)
	z := filepath.Join(t.TempDir(), "export.zip")
	f, err := os.Create(z)
	require.NoError(t, err)
	zw := zip.NewWriter(f)
	w, err := zw.Create("contacts.xlsx")
	require.NoError(t, err)
	_, err = w.Write(wb)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, f.Close())

	d, err := Suggest(context.Background(), []string{z}, Options{Name: "sheet"})
	require.NoError(t, err)
	require.Len(t, d.Files, 1)
	file := d.Files[0]
	require.Equal(t, ledger.Contact, file.Kind, file.KindWhy)
	var names []string
	for _, c := range file.Columns {
		names = append(names, c.Name)
	}
	require.Equal(t, []string{"id", "first_name", "last_name", "email", "phone", "created_at", "signed_up", "score", "vip", "company_id", "note"}, names,
		"the first sheet's header; the Archived sheet's rows are not sampled under it")

	m, err := Preview(context.Background(), d, file.Ref, "", 10, input.DefaultLimits())
	require.NoError(t, err)
	require.Empty(t, m.Problem)
	var lines []int
	byID := map[string]MappedRow{}
	for _, r := range m.Rows {
		lines = append(lines, r.Line)
		byID[r.ID] = r
	}
	require.Equal(t, []int{2, 3, 5, 6, 7, 8, 10, 2, 3}, lines, "the sheets' rows: Contacts, then Archived")
	require.Equal(t, "Ann", byID["20676798568"].Fields["first_name"])
	require.Equal(t, "2024-02-05T13:51:00", byID["20676798568"].Fields["created_at"])
	require.Contains(t, byID["9.91214E+18"].Error, "a spreadsheet rewrote")
}

// TestSampleOfAWorkbookWithGapsInItsHeader: a workbook's row holds the
// header's named columns and the cells it holds (issue 23 item 19), not
// one column for each of the header's: the sample puts each value under
// the header column it stands in, an unnamed one's too.
func TestSampleOfAWorkbookWithGapsInItsHeader(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "contacts.xlsx")
	str := func(ref, s string) string { return `<c r="` + ref + `" t="inlineStr"><is><t>` + s + `</t></is></c>` }
	wb := readertest.Workbook{Sheets: []readertest.Sheet{{Name: "Sheet1", Rows: `<row r="1">` + str("A1", "id") + str("C1", "first_name") +
		str("D1", "email") + str("XFD1", "checked") + `</row>` +
		`<row r="2">` + str("A2", "c1") + str("C2", "Ann") + str("D2", "ann@example.com") + `</row>` +
		`<row r="3">` + str("A3", "c2") + str("B3", "stray") + str("C3", "Bob") + str("XFD3", "yes") + `</row>`}}}
	require.NoError(t, wb.WriteFile(p))
	s, err := readSample(&File{Ref: p, Name: "contacts.xlsx", Format: reader.FormatXLSX}, 10, input.DefaultLimits())
	require.NoError(t, err)
	require.Equal(t, 2, s.rows)
	require.Len(t, s.cols, 1<<14)
	byName := map[string][]string{}
	for i, c := range s.cols {
		if c != "" || i == 1 {
			byName[c] = s.vals[i]
		}
	}
	require.Equal(t, map[string][]string{"id": {"c1", "c2"}, "": {"", "stray"}, "first_name": {"Ann", "Bob"},
		"email": {"ann@example.com", ""}, "checked": {"", "yes"}}, byName)
	for i := 4; i < 1<<14-1; i++ {
		require.Equal(t, []string{"", ""}, s.vals[i], "column %d", i)
	}
}

// sheetOf writes a table as a worksheet's rows of inline strings.
func sheetOf(name string, table [][]string) readertest.Sheet {
	var b strings.Builder
	for r, row := range table {
		fmt.Fprintf(&b, `<row r="%d">`, r+1)
		for c, v := range row {
			if v != "" {
				fmt.Fprintf(&b, `<c r="%c%d" t="inlineStr"><is><t>%s</t></is></c>`, 'A'+c, r+1, v)
			}
		}
		b.WriteString(`</row>`)
	}
	return readertest.Sheet{Name: name, Rows: b.String()}
}

// TestSuggestJudgesEverySheet: a workbook with a tab per kind (issue 26:
// the draft read its first sheet only, the preview said nothing was wrong
// and the dry run failed) gives the draft a file per sheet, each with its
// kind, its sheet named in the profile's files; links cross the sheets;
// a sheet that holds no records is left out, saying why.
func TestSuggestJudgesEverySheet(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "crm.xlsx")
	wb := readertest.Workbook{Sheets: []readertest.Sheet{
		sheetOf("Companies", [][]string{{"Company ID", "Company name", "Website", "Industry"},
			{"1", "Brightwater Bakery", "brightwater.example.com", "Food"}, {"2", "Harbor Logistics", "harbor.example.com", "Transport"},
			{"3", "Northwind Dental", "northwind.example.com", "Health"}}),
		sheetOf("People", [][]string{{"Contact ID", "First name", "Last name", "Email", "Company ID", "Open deals"},
			{"11", "Hannah", "Okafor", "hannah@example.com", "1", "2"}, {"12", "Grace", "Lindqvist", "grace@example.com", "2", "3"},
			{"13", "Tomas", "Berg", "tomas@example.com", "2", "1"}}),
		sheetOf("Deals", [][]string{{"Deal ID", "Deal name", "Amount", "Stage", "Company ID", "Contact ID"},
			{"21", "Ovens", "4800", "Won", "1", "11"}, {"22", "Trucks", "125000", "Proposal", "2", "12"}}),
		sheetOf("Read me", [][]string{{"Exported by", "On"}, {"Jane Admin", "today"}}),
	}}
	require.NoError(t, wb.WriteFile(p))
	d, err := Suggest(context.Background(), []string{p}, Options{Name: "book"})
	require.NoError(t, err)
	kinds := map[string]ledger.Kind{}
	for _, f := range d.Files {
		kinds[draftKey(f)] = f.Kind
	}
	require.Equal(t, map[string]ledger.Kind{"crm.xlsx!Companies": ledger.Company, "crm.xlsx!People": ledger.Contact,
		"crm.xlsx!Deals": ledger.Deal, "crm.xlsx!Read me": ""}, kinds)
	people := fileOf(t, d, "crm.xlsx!People")
	require.Equal(t, "company_id", columnOf(t, people, "Company ID").Field)
	require.Empty(t, columnOf(t, people, "Open deals").Field, "a count is no link")
	deals := fileOf(t, d, "crm.xlsx!Deals")
	require.Equal(t, "contact_id", columnOf(t, deals, "Contact ID").Field)

	require.NoError(t, d.Check())
	prof, err := profile.Load("book.yaml", d.YAML())
	require.NoError(t, err, "%s", d.YAML())
	require.Equal(t, "People", prof.Sheet(ledger.Contact, "crm.xlsx"))
	require.Equal(t, "Deals", prof.Sheet(ledger.Deal, "crm.xlsx"))
	require.Contains(t, string(d.YAML()), `files: [{file: "crm.xlsx", sheet: "Companies"}]`)
}

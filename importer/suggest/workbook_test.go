package suggest

import (
	"archive/zip"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/importer/input"
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

	m, err := Preview(context.Background(), d, file.Ref, 10, input.DefaultLimits())
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

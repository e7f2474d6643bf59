package readertest

import (
	"io"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// BadFixtureDir is fixtures/bad.
func BadFixtureDir(tb testing.TB) string {
	tb.Helper()
	_, self, _, ok := runtime.Caller(0)
	require.True(tb, ok)
	return filepath.Join(filepath.Dir(self), "..", "..", "..", "fixtures", "bad")
}

// BadWorkbooks are the workbooks of fixtures/bad, by their path there,
// written as the program each folder's README names writes them.
// TestBadWorkbookFixtures writes them with -update and checks, without,
// that the committed files hold exactly these parts.
func BadWorkbooks() map[string]Workbook {
	return map[string]Workbook{
		"canonical/48-workbook-formulas-without-values/contacts.xlsx": openpyxlContacts(),
		"canonical/49-workbook-bomb/contacts.xlsx":                    workbookBomb(),
	}
}

// BadCompoundFiles are the files of fixtures/bad named .xlsx that are no
// zip but a compound file (cfb.go), by their path there. Their bytes are
// CompoundFile's: TestBadWorkbookFixtures writes them with -update and
// checks them, without.
func BadCompoundFiles() map[string][]byte {
	return map[string][]byte{
		"canonical/50-workbook-password-protected/contacts.xlsx": EncryptedWorkbook(),
		"canonical/51-xls-renamed-xlsx/contacts.xlsx":            XLSWorkbook(false),
	}
}

// workbookBomb: a sheet whose part inflates a thousandfold — 4 MiB of
// blanks between its rows, which deflate to 4 KiB — as a workbook made to
// exhaust a reader's memory would.
func workbookBomb() Workbook {
	rows := func(w io.Writer) error {
		if _, err := io.WriteString(w, `<row r="1"><c r="A1" t="inlineStr"><is><t>id</t></is></c><c r="B1" t="inlineStr"><is><t>first_name</t></is></c></row>`); err != nil {
			return err
		}
		blanks := strings.Repeat(" ", 64<<10)
		for range 64 {
			if _, err := io.WriteString(w, blanks); err != nil {
				return err
			}
		}
		_, err := io.WriteString(w, `<row r="2"><c r="A2" t="inlineStr"><is><t>con-4901</t></is></c><c r="B2" t="inlineStr"><is><t>Hannah</t></is></c></row>`)
		return err
	}
	return Workbook{Sheets: []Sheet{{Name: "contacts", WriteRows: rows}}}
}

// openpyxlContacts: a consultant's script (openpyxl) added a sheet
// "contacts" in the canonical layout to a CRM's export (Pipedrive's
// "Person - …" columns), each of its cells a formula that reads the
// export's sheet ("Export"). openpyxl computes
// no formula: every cell of the contacts is a formula without a value.
// The Export sheet, none of whose columns the canonical profile reads, is
// left unread.
func openpyxlContacts() Workbook {
	str := func(ref, s string) string { return `<c r="` + ref + `" t="inlineStr"><is><t>` + s + `</t></is></c>` }
	num := func(ref, n string) string { return `<c r="` + ref + `" t="n"><v>` + n + `</v></c>` }
	formula := func(ref, f string) string { return `<c r="` + ref + `"><f>` + f + `</f><v></v></c>` }
	contacts := `<row r="1">` + str("A1", "id") + str("B1", "first_name") + str("C1", "last_name") + str("D1", "email") + `</row>`
	export := `<row r="1">` + str("A1", "Person - ID") + str("B1", "Person - First name") + str("C1", "Person - Last name") +
		str("D1", "Person - Email - Work") + `</row>`
	people := [][3]string{{"Hannah", "Okafor", "hannah.okafor@example.com"}, {"Grace", "Lindqvist", "grace@example.com"}, {"Nadia", "Haddad", "nadia.haddad@example.com"}}
	for i, p := range people {
		r := strconv.Itoa(i + 2)
		contacts += `<row r="` + r + `">` + formula("A"+r, `"con-"&amp;Export!A`+r) + formula("B"+r, "Export!B"+r) +
			formula("C"+r, "Export!C"+r) + formula("D"+r, "LOWER(Export!D"+r+")") + `</row>`
		export += `<row r="` + r + `">` + num("A"+r, strconv.Itoa(4801+i)) + str("B"+r, p[0]) + str("C"+r, p[1]) + str("D"+r, p[2]) + `</row>`
	}
	return Workbook{Openpyxl: true, Sheets: []Sheet{
		{Name: "contacts", Dimension: "A1:D4", Rows: contacts},
		{Name: "Export", Dimension: "A1:D4", Rows: export},
	}}
}

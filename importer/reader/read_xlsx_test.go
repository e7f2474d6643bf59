package reader_test

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/importer/input"
	"crmimport/importer/reader"
	"crmimport/importer/reader/readertest"
)

var update = flag.Bool("update", false, "write fixtures/xlsx from readertest.XLSXFixtures")

// TestXLSXFixtures: the committed workbooks hold exactly the parts that
// readertest.XLSXFixtures writes (-update writes them).
func TestXLSXFixtures(t *testing.T) {
	dir := readertest.XLSXFixtureDir(t)
	for name, wb := range readertest.XLSXFixtures() {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name)
			if *update {
				require.NoError(t, wb.WriteFile(p))
			}
			got, err := os.ReadFile(p)
			require.NoError(t, err)
			require.Equal(t, xlsxParts(t, wb.Bytes(t)), xlsxParts(t, got), "run go test ./importer/reader -run TestXLSXFixtures -update")
		})
	}
}

// xlsxParts is a zip's parts, uncompressed, by name, in order.
func xlsxParts(t *testing.T, data []byte) [][2]string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	var out [][2]string
	for _, f := range zr.File {
		rc, err := f.Open()
		require.NoError(t, err)
		b, err := io.ReadAll(rc)
		require.NoError(t, err)
		require.NoError(t, rc.Close())
		out = append(out, [2]string{f.Name, string(b)})
	}
	return out
}

// readXLSX reads every row of a workbook; err is NewXLSXReader's or the
// last error of Next other than io.EOF.
func readXLSX(t *testing.T, data []byte, opt reader.ReadOptions) (rows []reader.Row, headers map[string][]string, err error) {
	t.Helper()
	rr, err := reader.NewXLSXReader(bytes.NewReader(data), int64(len(data)), opt)
	if err != nil {
		return nil, nil, err
	}
	headers = map[string][]string{}
	for range len(data) + 2 {
		if s := rr.Sheet(); s != "" {
			headers[s] = rr.Header()
		}
		row, err := rr.Next()
		if err != nil {
			again, err2 := rr.Next()
			require.Equal(t, reader.Row{}, again)
			require.Equal(t, err, err2, "Next must keep returning its final error")
			require.Empty(t, rr.Sheet())
			if errors.Is(err, io.EOF) {
				require.Equal(t, int64(len(data)), min(rr.BytesRead(), int64(len(data))))
				return rows, headers, nil
			}
			return rows, headers, err
		}
		rows = append(rows, row)
	}
	t.Fatal("more rows than bytes: reading does not end")
	return nil, nil, nil
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(readertest.XLSXFixtureDir(t), name))
	require.NoError(t, err)
	return data
}

// xrow is a row of sheet: its values under header, in order.
func xrow(sheet string, line int, header []string, values ...string) reader.Row {
	cols := make([]reader.Col, len(header))
	for i, h := range header {
		cols[i] = reader.Col{Name: h}
		if i < len(values) {
			cols[i].Value = values[i]
		}
	}
	return reader.Row{Line: line, Sheet: sheet, Cols: cols}
}

var contactsHeader = []string{"id", "first_name", "last_name", "email", "phone", "created_at", "signed_up", "score", "vip", "company_id", "note"}

// TestReadXLSXContacts: every value as a person sees it in Excel, rows
// under their header, the empty row skipped, the second sheet after the
// first, the empty third left out.
func TestReadXLSXContacts(t *testing.T) {
	t.Parallel()
	rows, headers, err := readXLSX(t, fixture(t, "contacts.xlsx"), reader.ReadOptions{Name: "contacts.xlsx", Format: reader.FormatXLSX})
	require.NoError(t, err)
	archived := []string{"id", "first_name", "email"}
	require.Equal(t, map[string][]string{"Contacts": contactsHeader, "Archived": archived}, headers)

	stray := xrow("Contacts", 7, contactsHeader, "20676798570", "Eve")
	stray.Cols = append(stray.Cols, reader.Col{Name: "(column L)", Value: "stray"})
	stray.Err = &reader.RowError{File: "contacts.xlsx!Contacts", Line: 7,
		Reason: "cell H7 is a formula without a value: open and save the workbook in a spreadsheet, which computes it; " +
			"L7 holds a value in a column the header does not name (the header has 11 columns)"}
	want := []reader.Row{
		// An id as its digits; a date-time, a date; 0.1 without float noise;
		// a boolean; a leading space kept; _x000D_ a carriage return.
		xrow("Contacts", 2, contactsHeader, "20676798568", "Ann", "Lee", "ann@example.com", " +1 555 0100",
			"2024-02-05T13:51:00", "2024-01-01", "0.1", "true", "1234", "Called twice\r\nno answer"),
		// Rich-text runs joined; a formula's cached text; a missing cell
		// empty; a custom date-time format; day 60, Excel's 1900-02-29; an
		// error cell (#N/A) empty; an inline string.
		xrow("Contacts", 3, contactsHeader, "20676798569", "Bob", "Stone", "bob@example.com", "",
			"2024-02-06T06:00:00", "1900-02-29", "0.3", "false", "", "Met at the fair"),
		// Row 4 is empty (a styled cell, a formula giving ""): skipped.
		// A 19-digit id Excel kept 15 digits of: as Excel shows it; a
		// phonetic run left out; day 61 is 1900-03-01, day 1 1900-01-01; a
		// boolean formula; #REF! empty; an escaped underscore.
		xrow("Contacts", 5, contactsHeader, "9.91214E+18", "Hiro", "太田", "", "",
			"1900-03-01T00:00:00", "1900-01-01", "", "true", "", "snake_x000D_case"),
		// 15 digits, still exact; a time of day; a number format that is not
		// a date leaves the number as it is; #DIV/0! empty.
		xrow("Contacts", 6, contactsHeader, "123456789012345", "Dana", "", "dana@example.com", "",
			"18:00:00", "", "-1234.5", "", "", ""),
		stray,
		xrow("Contacts", 8, contactsHeader, "20676798571", "Fay", "", "fay@example.com", "", "", "9999-12-31", "1E-07"),
		xrow("Contacts", 10, contactsHeader, "20676798572", "Ann"),
		xrow("Archived", 2, archived, "20676798580", "Gus", "gus@example.com"),
		xrow("Archived", 3, archived, "20676798581", "Hal", ""),
	}
	require.Equal(t, want, rows)
	require.Equal(t, "contacts.xlsx!Contacts:7", reader.Where("contacts.xlsx", rows[4]))
	require.Equal(t, "contacts.xlsx!Contacts:7: cell H7 is a formula without a value: open and save the workbook in a spreadsheet, which computes it; "+
		"L7 holds a value in a column the header does not name (the header has 11 columns)", rows[4].Err.Error())
	require.Equal(t, "a.csv:3", reader.Where("a.csv", reader.Row{Line: 3}))

	// The id Excel rewrote fails as a CSV's 9.91214E+15 does; the ids it
	// kept do not.
	require.Contains(t, canon.MangledID("id", rows[2].Cols[0].Value), "a spreadsheet rewrote in scientific notation")
	for _, r := range append(rows[:2:2], rows[3:]...) {
		require.Empty(t, canon.MangledID("id", r.Cols[0].Value), r.Cols[0].Value)
	}
}

// TestReadXLSXDeals1904: the 1904 date system, custom formats.
func TestReadXLSXDeals1904(t *testing.T) {
	t.Parallel()
	rows, _, err := readXLSX(t, fixture(t, "deals-1904.xlsx"), reader.ReadOptions{Name: "deals-1904.xlsx"})
	require.NoError(t, err)
	h := []string{"id", "name", "amount", "close_date", "closed_at", "won"}
	require.Equal(t, []reader.Row{
		xrow("Deals", 2, h, "4001", "Big deal", "125000.5", "2024-02-01", "2024-02-01T13:30:00", "true"),
		xrow("Deals", 3, h, "4002", "Small deal", "0.1", "1904-01-01", "1904-01-02T00:00:01", "false"),
		// A negative "date" Excel shows as ####: the number is kept.
		xrow("Deals", 4, h, "4003", "Day zero", "250001", "-1", "", ""),
	}, rows)
}

// TestReadXLSXResume: reading from a checkpoint (rows consumed) gives the
// rows an uninterrupted read gives after it, across sheets.
func TestReadXLSXResume(t *testing.T) {
	t.Parallel()
	data := fixture(t, "contacts.xlsx")
	all, _, err := readXLSX(t, data, reader.ReadOptions{Name: "contacts.xlsx"})
	require.NoError(t, err)
	for k := range len(all) + 1 {
		rr, err := reader.NewXLSXReader(bytes.NewReader(data), int64(len(data)), reader.ReadOptions{Name: "contacts.xlsx"})
		require.NoError(t, err)
		for range k {
			_, err := rr.Next()
			require.NoError(t, err)
		}
		var rest []reader.Row
		for {
			row, err := rr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			rest = append(rest, row)
		}
		require.Equal(t, all[k:], append([]reader.Row{}, rest...)[:len(all)-k], "from checkpoint %d", k)
	}
}

// TestReadXLSXSheet: a named sheet alone; a name the workbook lacks fails
// the file, naming the sheets it has.
func TestReadXLSXSheet(t *testing.T) {
	t.Parallel()
	data := fixture(t, "contacts.xlsx")
	rows, _, err := readXLSX(t, data, reader.ReadOptions{Name: "contacts.xlsx", Sheet: "Archived"})
	require.NoError(t, err)
	require.Len(t, rows, 2)
	require.Equal(t, "Archived", rows[0].Sheet)

	_, _, err = readXLSX(t, data, reader.ReadOptions{Name: "contacts.xlsx", Sheet: "Deals"})
	var fe *reader.FileError
	require.ErrorAs(t, err, &fe)
	require.EqualError(t, err, `contacts.xlsx: has no worksheet named "Deals" (its sheets: "Contacts", "Archived", "Empty")`)

	rows, headers, err := readXLSX(t, data, reader.ReadOptions{Name: "contacts.xlsx", Sheet: "Empty"})
	require.NoError(t, err)
	require.Empty(t, rows)
	require.Empty(t, headers)
}

// sheetWorkbook is a workbook of one sheet holding rows, with the shared
// strings given.
func sheetWorkbook(t *testing.T, rows string, strs ...string) []byte {
	return readertest.Workbook{Strings: strs, Sheets: []readertest.Sheet{{Name: "Sheet1", Rows: rows}}}.Bytes(t)
}

// TestReadXLSXBad: what makes a workbook unreadable fails its file, naming
// it; what makes a row unreadable fails the row alone.
func TestReadXLSXBad(t *testing.T) {
	t.Parallel()
	hdr := `<row r="1"><c r="A1" t="inlineStr"><is><t>id</t></is></c><c r="B1" t="inlineStr"><is><t>name</t></is></c></row>`
	deep := strings.Repeat("<x>", 100) + strings.Repeat("</x>", 100)
	tests := []struct {
		name     string
		data     []byte
		opt      reader.ReadOptions
		wantRows []reader.Row
		wantErr  string
	}{
		{"NotAZip", []byte("id,name\n1,Ann\n"), reader.ReadOptions{}, nil, "w.xlsx: is not an xlsx workbook (zip: not a valid zip file)"},
		{"PNG", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00"), reader.ReadOptions{}, nil, "w.xlsx: is a PNG image, not an xlsx workbook"},
		{"ZipWithoutWorkbook", zipOf(t, map[string]string{"contacts.csv": "id\n1\n"}), reader.ReadOptions{}, nil,
			"w.xlsx: is a zip but not an xlsx workbook: it holds no xl/workbook.xml"},
		{"DeepXML", sheetWorkbook(t, hdr+`<row r="2"><c r="A2"><v>1</v>`+deep+`</c></row>`), reader.ReadOptions{}, nil,
			"w.xlsx!Sheet1:2: read: its XML nests more than 64 elements deep"},
		{"CellTooLong", sheetWorkbook(t, hdr+`<row r="2"><c r="A2" t="inlineStr"><is><t>`+strings.Repeat("x", 300<<10)+`</t></is></c></row>`),
			reader.WithXLSXLimits(reader.ReadOptions{}, 256<<10, 0), nil, "w.xlsx!Sheet1:2: a cell after row 2 holds more than 0 MiB of text, more than a record may"},
		// Text between cells, which no value holds: xml.Decoder would gather
		// it whole, and only the guard under it stops it.
		{"TokenTooLong", sheetWorkbook(t, hdr+`<row r="2">`+strings.Repeat("1", 2<<20)+`<c r="A2"><v>1</v></c></row>`),
			reader.WithXLSXLimits(reader.ReadOptions{}, 1<<20, 0), nil, "w.xlsx!Sheet1:2: a cell after row 2 holds more than 1 MiB of text, more than a record may"},
		{"SharedStringsTooLarge", sheetWorkbook(t, hdr, `<t>`+strings.Repeat("x", 2<<20)+`</t>`, `<t>b</t>`),
			reader.WithXLSXLimits(reader.ReadOptions{}, 4<<20, 1<<20), nil,
			"w.xlsx: its shared strings hold more than 1 MiB of text, more than crmimport keeps in memory for one workbook: save each sheet as CSV (UTF-8) and import those"},
		{"PartOverTheEntryLimit", sheetWorkbook(t, hdr+`<row r="2"><c r="A2" t="inlineStr"><is><t>`+strings.Repeat("x", 2<<20)+`</t></is></c></row>`),
			reader.ReadOptions{Guard: input.Limits{Entry: 1 << 20, Total: 1 << 30, Ratio: 1 << 20}.ZipGuard()}, nil,
			"w.xlsx: part xl/worksheets/sheet1.xml: uncompresses to 2.0 MiB, more than the limit of 1.0 MiB for one entry: refused as a possible zip bomb"},
		{"PartOverTheRatio", sheetWorkbook(t, hdr+`<row r="2"><c r="A2" t="inlineStr"><is><t>`+strings.Repeat("x", 8<<20)+`</t></is></c></row>`),
			reader.ReadOptions{Guard: input.DefaultLimits().ZipGuard()}, nil, "refused as a possible zip bomb"},
		{"WorkbookOverTheZipLimit", sheetWorkbook(t, hdr), reader.ReadOptions{Guard: input.Limits{Entry: 1 << 20, Total: 4 << 10, Ratio: 200}.ZipGuard()}, nil,
			"w.xlsx: the workbook: its entries would uncompress to more than 4.0 KiB (the limit for one zip): refused as a possible zip bomb"},
		{"BrokenXML", sheetWorkbook(t, hdr+`<row r="2"><c r="A2"><v>1</c></row>`), reader.ReadOptions{}, nil,
			"w.xlsx!Sheet1:2: broken XML: element <v> closed by </c>"},
		{"RowsOutOfOrder", sheetWorkbook(t, hdr+`<row r="3"><c r="A3"><v>1</v></c></row><row r="2"><c r="A2"><v>2</v></c></row>`), reader.ReadOptions{},
			[]reader.Row{xrow("Sheet1", 3, []string{"id", "name"}, "1")},
			"w.xlsx!Sheet1:3: row 2 comes after row 3: the sheet's rows are out of order, which Excel never writes"},
		{"RowsWithoutNumbers", sheetWorkbook(t, `<row><c t="inlineStr"><is><t>id</t></is></c><c t="inlineStr"><is><t>name</t></is></c></row><row><c><v>7</v></c><c t="b"><v>1</v></c></row>`),
			reader.ReadOptions{}, []reader.Row{xrow("Sheet1", 2, []string{"id", "name"}, "7", "true")}, ""},
		{"BadCells", sheetWorkbook(t, hdr+`<row r="2"><c r="A2" t="s"><v>9</v></c><c r="B2"><v>abc</v></c></row>`+
			`<row r="3"><c r="B3"><v>1</v></c><c r="A3"><v>2</v></c></row><row r="4"><c r="A5"><v>1</v></c><c r="B4" t="b"><v>2</v></c></row>`+
			`<row r="5"><c r="A5" t="x"><v>1</v></c><c r="B5" t="inlineStr"><is><t>a_x0000_b</t></is></c></row>`), reader.ReadOptions{},
			[]reader.Row{
				badRow(xrow("Sheet1", 2, []string{"id", "name"}), "cell A2 names shared string 9, which the workbook does not hold; cell B2 is a number holding \"abc\""),
				badRow(xrow("Sheet1", 3, []string{"id", "name"}, "", "1"), "cell A3 comes after cell B3 in its row (a cell given twice?)"),
				badRow(xrow("Sheet1", 4, []string{"id", "name"}, "1"), "cell A5 stands in row 4; cell B4 is a boolean holding \"2\""),
				// A NUL character is the profile's to judge (SPEC §4): the row
				// says where it is.
				withNUL(badRow(xrow("Sheet1", 5, []string{"id", "name"}, "", "a\x00b"), "cell A5 has type \"x\", which is no cell type of a workbook"),
					reader.NULField{Col: 1, Where: ", in cell B5"}),
			}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.opt.Name = "w.xlsx"
			rows, _, err := readXLSX(t, tt.data, tt.opt)
			require.Equal(t, tt.wantRows, rows)
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			var fe *reader.FileError
			require.ErrorAs(t, err, &fe)
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}

func badRow(r reader.Row, reason string) reader.Row {
	r.Err = &reader.RowError{File: "w.xlsx!" + r.Sheet, Line: r.Line, Reason: reason}
	return r
}

func zipOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		w, err := zw.Create(n)
		require.NoError(t, err)
		_, err = io.WriteString(w, files[n])
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return b.Bytes()
}

// TestReadXLSXSheetNamesTwice: Excel never writes two sheets of one name
// (in any case); such a workbook fails its file.
func TestReadXLSXSheetNamesTwice(t *testing.T) {
	t.Parallel()
	data := readertest.Workbook{Sheets: []readertest.Sheet{{Name: "Sheet1"}, {Name: "SHEET1"}}}.Bytes(t)
	_, _, err := readXLSX(t, data, reader.ReadOptions{Name: "w.xlsx"})
	require.EqualError(t, err, `w.xlsx: has two sheets named "SHEET1", which Excel never writes`)
}

// TestReadXLSXFormulasWithoutValues: a formula cell holds the value a
// spreadsheet computed for it, beside the formula (<f>…</f><v>…</v>); a
// workbook written by a program that computes nothing (openpyxl writes
// <f>…</f><v></v>, others no <v> at all) holds none. Such a cell is no
// value, not an empty one: its row fails saying so, naming the cells, and
// a header that holds one fails the file (issue 23 item 5: read as empty,
// rows of formulas were blank and skipped, and the run ended green with
// every count at 0; a row with one such cell imported without it). A
// formula whose value is the empty text (t="str", <v></v>, as Excel
// writes ="") has a value: it is empty.
func TestReadXLSXFormulasWithoutValues(t *testing.T) {
	t.Parallel()
	const fix = "open and save the workbook in a spreadsheet"
	h := []string{"id", "first_name", "email"}
	openpyxl := readertest.Workbook{Openpyxl: true, Sheets: []readertest.Sheet{{Name: "contacts", Dimension: "A1:C4",
		Rows: `<row r="1"><c r="A1" t="inlineStr"><is><t>id</t></is></c><c r="B1" t="inlineStr"><is><t>first_name</t></is></c>` +
			`<c r="C1" t="inlineStr"><is><t>email</t></is></c></row>` +
			`<row r="2"><c r="A2" t="n"><v>4801</v></c><c r="B2" t="inlineStr"><is><t>Ann</t></is></c>` +
			`<c r="C2"><f>LOWER(B2)&amp;"@example.com"</f><v></v></c></row>` +
			`<row r="3"><c r="A3"><f>Export!A3</f><v/></c><c r="B3"><f>Export!B3</f><v/></c><c r="C3"><f>Export!D3</f><v/></c></row>` +
			`<row r="4"><c r="A4" t="n"><v>4803</v></c><c r="B4" t="inlineStr"><is><t>Cy</t></is></c></row>`}}}
	rows, _, err := readXLSX(t, openpyxl.Bytes(t), reader.ReadOptions{Name: "w.xlsx"})
	require.NoError(t, err)
	bad := func(r reader.Row, reason string) reader.Row {
		r.Err = &reader.RowError{File: "w.xlsx!contacts", Line: r.Line, Reason: reason}
		return r
	}
	require.Equal(t, []reader.Row{
		bad(xrow("contacts", 2, h, "4801", "Ann", ""), "cell C2 is a formula without a value: "+fix+", which computes it"),
		bad(xrow("contacts", 3, h), "cells A3, B3 and C3 are formulas without a value: "+fix+", which computes them"),
		xrow("contacts", 4, h, "4803", "Cy"),
	}, rows)

	// As Excel and others write formulas: a cached value, a shared
	// formula's, Excel's empty text, an error; and no <v> at all, or an
	// empty one where a number or a boolean should be.
	rows, _, err = readXLSX(t, sheetWorkbook(t,
		`<row r="1"><c r="A1" t="inlineStr"><is><t>id</t></is></c><c r="B1" t="inlineStr"><is><t>name</t></is></c></row>`+
			`<row r="2"><c r="A2"><f t="shared" ref="A2:A3" si="0">ROW()*10</f><v>20</v></c><c r="B2" t="str"><f>""</f><v></v></c></row>`+
			`<row r="3"><c r="A3"><f t="shared" si="0"/><v>30</v></c><c r="B3" t="e"><f>1/0</f><v>#DIV/0!</v></c></row>`+
			`<row r="4"><c r="A4"><v>40</v></c><c r="B4"><f>A4*2</f></c></row>`+
			`<row r="5"><c r="A5"><v>50</v></c><c r="B5" t="b"><f>TRUE()</f><v></v></c></row>`), reader.ReadOptions{Name: "w.xlsx"})
	require.NoError(t, err)
	bad = func(r reader.Row, reason string) reader.Row {
		r.Err = &reader.RowError{File: "w.xlsx!Sheet1", Line: r.Line, Reason: reason}
		return r
	}
	hn := []string{"id", "name"}
	require.Equal(t, []reader.Row{
		xrow("Sheet1", 2, hn, "20", ""),
		xrow("Sheet1", 3, hn, "30", ""),
		bad(xrow("Sheet1", 4, hn, "40", ""), "cell B4 is a formula without a value: "+fix+", which computes it"),
		bad(xrow("Sheet1", 5, hn, "50", ""), "cell B5 is a formula without a value: "+fix+", which computes it"),
	}, rows)

	// A header's formula without a value fails the file: the header would
	// miss a column.
	_, _, err = readXLSX(t, sheetWorkbook(t, `<row r="1"><c r="A1" t="inlineStr"><is><t>id</t></is></c><c r="B1"><f>Export!B1</f><v></v></c></row>`+
		`<row r="2"><c r="A2"><v>1</v></c></row>`), reader.ReadOptions{Name: "w.xlsx"})
	var fe *reader.FileError
	require.ErrorAs(t, err, &fe)
	require.EqualError(t, err, "w.xlsx!Sheet1:1: header: cell B1 is a formula without a value: "+fix+", which computes it")
}

// TestBadWorkbookFixtures: the workbooks of fixtures/bad hold exactly the
// parts that readertest.BadWorkbooks writes (-update writes them).
func TestBadWorkbookFixtures(t *testing.T) {
	dir := readertest.BadFixtureDir(t)
	for name, wb := range readertest.BadWorkbooks() {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, wb.WriteFile(p))
			}
			got, err := os.ReadFile(p)
			require.NoError(t, err)
			require.Equal(t, xlsxParts(t, wb.Bytes(t)), xlsxParts(t, got), "run go test ./importer/reader -run TestBadWorkbookFixtures -update")
		})
	}
	for name, want := range readertest.BadCompoundFiles() {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, os.WriteFile(p, want, 0o644))
			}
			got, err := os.ReadFile(p)
			require.NoError(t, err)
			require.Equal(t, want, got, "run go test ./importer/reader -run TestBadWorkbookFixtures -update")
		})
	}
}

// TestReadXLSXCompoundFiles: a file named .xlsx that is a compound file
// (OLE2) — a password-protected workbook, which Office writes as one, or
// an Excel 97–2003 workbook renamed — is told by the names in its
// directory, each with what to do (issue 23 item 20: both had one message
// that fitted neither). A compound file whose directory cannot be read
// (cut short, a chain that loops) keeps the message that covers both.
func TestReadXLSXCompoundFiles(t *testing.T) {
	t.Parallel()
	xls := readertest.XLSWorkbook(false)
	loop := append([]byte(nil), xls...)
	binary.LittleEndian.PutUint32(loop[512+4:], 1) // the directory's sector 1 is followed by itself
	emptyLoop := append([]byte(nil), loop...)
	for e := 1024; e < 1536; e += 128 {
		emptyLoop[e+66] = 0 // no entry in use: a loop that finds no name
	}
	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"PasswordProtected": {readertest.EncryptedWorkbook(), "w.xlsx: is password-protected: remove the password in the spreadsheet and save again"},
		"XLS":               {xls, "w.xlsx: is an Excel 97–2003 .xls workbook: save it as .xlsx or CSV"},
		"XLSVersion4":       {readertest.XLSWorkbook(true), "w.xlsx: is an Excel 97–2003 .xls workbook: save it as .xlsx or CSV"},
		// The directory past the sectors the header's 109 FAT sectors
		// cover: found through the DIFAT.
		"XLSPastTheHeadersFAT": {readertest.CompoundFileAt([]readertest.CFBEntry{{Name: "Workbook"}}, false, 109*128+50),
			"w.xlsx: is an Excel 97–2003 .xls workbook: save it as .xlsx or CSV"},
		"WordDocument": {readertest.CompoundFile([]readertest.CFBEntry{{Name: "WordDocument"}, {Name: "1Table"}}, false),
			"w.xlsx: is an Office 97–2003 document that holds no workbook, not an xlsx workbook"},
		"CutShort":  {xls[:512], "w.xlsx: is an Excel 97-2003 workbook (xls) or another Office document, not an xlsx workbook"},
		"Loop":      {loop, "w.xlsx: is an Excel 97-2003 workbook (xls) or another Office document, not an xlsx workbook"},
		"EmptyLoop": {emptyLoop, "w.xlsx: is an Excel 97-2003 workbook (xls) or another Office document, not an xlsx workbook"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, _, err := readXLSX(t, c.data, reader.ReadOptions{Name: "w.xlsx"})
			var fe *reader.FileError
			require.ErrorAs(t, err, &fe)
			require.EqualError(t, err, c.want)
		})
	}
}

// TestReadXLSXRowsSizedByTheirCells: a row holds the header's named
// columns and the cells it holds, not a column for every column up to the
// header's last (issue 23 item 19: one header cell at XFD gave every row
// 16,384 columns — 55 times slower, 650 MiB). An unnamed column within
// the header appears only up to the last one where the row holds a value,
// so that repeated names number as in the header ("", "#2", "#3", as the
// mapper and a raw row name them); a value past the header still fails
// its row.
func TestReadXLSXRowsSizedByTheirCells(t *testing.T) {
	const rows = 2000
	var b strings.Builder
	b.WriteString(`<row r="1"><c r="A1" t="inlineStr"><is><t>id</t></is></c><c r="B1" t="inlineStr"><is><t>first_name</t></is></c>` +
		`<c r="D1" t="inlineStr"><is><t>email</t></is></c><c r="G1" t="inlineStr"><is><t>note</t></is></c>` +
		`<c r="XFD1" t="inlineStr"><is><t>checked</t></is></c></row>`)
	b.WriteString(`<row r="2"><c r="A2"><v>2</v></c><c r="F2" t="inlineStr"><is><t>x</t></is></c>` +
		`<c r="XFD2" t="inlineStr"><is><t>a_x0000_b</t></is></c></row>`)
	for i := 3; i < rows+3; i++ {
		fmt.Fprintf(&b, `<row r="%d"><c r="A%d"><v>%d</v></c><c r="B%d" t="inlineStr"><is><t>Ann</t></is></c>`+
			`<c r="D%d" t="inlineStr"><is><t>ann%d@example.com</t></is></c></row>`, i, i, i, i, i, i)
	}
	data := sheetWorkbook(t, b.String())
	rr, err := reader.NewXLSXReader(bytes.NewReader(data), int64(len(data)), reader.ReadOptions{Name: "w.xlsx"})
	require.NoError(t, err)
	require.Len(t, rr.Header(), 1<<14, "the header names its columns where they stand")

	row, err := rr.Next()
	require.NoError(t, err)
	require.Equal(t, []reader.Col{{Name: "id", Value: "2"}, {Name: "first_name"}, {Name: ""}, {Name: "email"}, {Name: ""}, {Name: "", Value: "x"},
		{Name: "note"}, {Name: "checked", Value: "a\x00b"}}, row.Cols, "C and E, unnamed, before F's value; G and XFD named")
	require.Equal(t, []reader.NULField{{Col: 7, Where: ", in cell XFD2"}}, row.NUL, "a NUL is named by its place in the row's columns")
	require.Nil(t, row.Err)

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 3; i < rows+3; i++ {
		row, err := rr.Next()
		require.NoError(t, err)
		require.Equal(t, i, row.Line)
		require.Equal(t, []reader.Col{{Name: "id", Value: strconv.Itoa(i)}, {Name: "first_name", Value: "Ann"},
			{Name: "email", Value: fmt.Sprintf("ann%d@example.com", i)}, {Name: "note"}, {Name: "checked"}}, row.Cols)
	}
	runtime.ReadMemStats(&after)
	perRow := (after.TotalAlloc - before.TotalAlloc) / rows
	require.Less(t, perRow, uint64(16<<10), "bytes allocated per row: sized by the header's last column (XFD) instead of the cells it holds")
	_, err = rr.Next()
	require.ErrorIs(t, err, io.EOF)
}

// TestReadXLSXSharedStringsHeldOnce: a workbook's shared strings are held
// in memory once, bounded (maxSharedStrings), and reading them allocates
// little more than they hold (issue 23 item 20: a table near its bound of
// 128 MiB cost over 256 MiB, as the slice that held it grew by copies of
// itself and each string was gathered in a buffer of its own). A sheet
// then names any of them.
func TestReadXLSXSharedStringsHeldOnce(t *testing.T) {
	const n, size = 32 << 10, 1000 // 32,000 strings of 1,000 bytes: 31 MiB
	pad := strings.Repeat("x", size-len("note 00000 "))
	strs := func(w io.Writer) error {
		if _, err := io.WriteString(w, "<si><t>id</t></si><si><t>note</t></si>"); err != nil {
			return err
		}
		for i := range n {
			if _, err := fmt.Fprintf(w, "<si><t>note %05d %s</t></si>", i, pad); err != nil {
				return err
			}
		}
		return nil
	}
	rows := `<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>`
	for i, s := range []int{0, 1, n / 2, n - 1} {
		rows += fmt.Sprintf(`<row r="%d"><c r="A%d"><v>%d</v></c><c r="B%d" t="s"><v>%d</v></c></row>`, i+2, i+2, i, i+2, s+2)
	}
	var b bytes.Buffer
	require.NoError(t, readertest.Workbook{WriteStrings: strs, Sheets: []readertest.Sheet{{Name: "Notes", Rows: rows}}}.Write(&b))
	data := b.Bytes()

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rr, err := reader.NewXLSXReader(bytes.NewReader(data), int64(len(data)), reader.ReadOptions{Name: "notes.xlsx"})
	require.NoError(t, err)
	runtime.ReadMemStats(&after)
	table := uint64(n * (size + 4))
	allocated := after.TotalAlloc - before.TotalAlloc
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := after.HeapAlloc - before.HeapAlloc
	t.Logf("shared strings of %.1f MiB: %.1f MiB allocated to read them, %.1f MiB held", float64(table)/(1<<20), float64(allocated)/(1<<20), float64(held)/(1<<20))
	// What is allocated beyond the table is the XML decoder's garbage
	// (about 400 bytes a string), which the collector takes back.
	require.Less(t, allocated, 2*table, "bytes allocated to read the shared strings, against what they hold")
	require.Less(t, held, table+4<<20, "bytes held once the shared strings are read")

	for i, s := range []int{0, 1, n / 2, n - 1} {
		row, err := rr.Next()
		require.NoError(t, err)
		require.Equal(t, []reader.Col{{Name: "id", Value: strconv.Itoa(i)}, {Name: "note", Value: fmt.Sprintf("note %05d %s", s, pad)}}, row.Cols)
	}
	_, err = rr.Next()
	require.ErrorIs(t, err, io.EOF)
}

// withNUL is row, saying which of its fields hold a NUL character.
func withNUL(row reader.Row, nul ...reader.NULField) reader.Row {
	row.NUL = nul
	return row
}

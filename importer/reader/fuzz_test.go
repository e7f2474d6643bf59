package reader_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/importer/reader"
	"crmimport/importer/reader/readertest"
)

// FuzzReadCSV: whatever the bytes, reading ends, never panics, and lines
// only go forward; a footer, when one is told apart, comes after every row
// read.
func FuzzReadCSV(f *testing.F) {
	for _, seed := range []string{
		"id,name\n1,Ann\n", "a;b\n\"x\n", "a,b\n1,\"2\"3\n", "\xef\xbb\xbf\n\n", "a\tb\n\"\"\"\n",
		"id,note\r\n1,\"a\r\nb\"\r\n", "a,b\n\"", "\"a\nb\",c\n1,2", "a,b\n1,\xe9\n", "x\n \n\"\"x",
		"sep=;\na;b\r1;\"x\ry\"\r\n\n;total\r", "id,n\n1,a\x00b\n\n\"Copyright (c) 2024 salesforce.com\"\n",
		"id,n\n1,a\r2,\"b\"c,\"\r3,d\n,,\n\n,e\n",
	} {
		f.Add([]byte(seed))
	}
	readertest.FixtureSeeds(f, reader.FormatCSV, func(data []byte, _ string, _ reader.Format) { f.Add(data) })
	f.Fuzz(func(t *testing.T, in []byte) {
		rr, err := reader.NewRowReader(bytes.NewReader(in), reader.ReadOptions{Name: "fuzz.csv", Format: reader.FormatCSV})
		if err != nil {
			var fe *reader.FileError
			require.ErrorAs(t, err, &fe)
			return
		}
		if len(in)%2 == 0 {
			rr.WatchFooter(func(r reader.Row) bool { return len(r.Cols) > 0 && strings.TrimSpace(r.Cols[0].Value) != "" })
		}
		last := 0
		for range len(in) + 2 {
			row, err := rr.Next()
			if err != nil {
				var fe *reader.FileError
				if !errors.Is(err, io.EOF) {
					require.ErrorAs(t, err, &fe)
				} else if ft := rr.Footer(); ft != nil {
					require.Greater(t, ft.First, max(last, ft.Blank))
					require.GreaterOrEqual(t, ft.Last, ft.First)
				}
				return
			}
			require.Greater(t, row.Line, last)
			if len(row.Cols) != len(rr.Header()) {
				// A ragged row keeps every field it has (R4's raw row) and
				// fails alone.
				require.NotNil(t, row.Err, "a row of %d fields under a header of %d", len(row.Cols), len(rr.Header()))
			}
			last = row.Line
		}
		t.Fatal("reading does not end")
	})
}

// FuzzReadJSON: whatever the bytes, reading ends, never panics, and lines
// never go backwards.
func FuzzReadJSON(f *testing.F) {
	for _, seed := range []string{
		`[{"a":1},{"b":[1,{"c":null}]}]`, `{"records":[{"a":"x"},2]}`, "{\"a\":1}\n\n{\"b\":2}", `[1,"x",[],{}]`,
		`{"data":{"x":1},"data":[{}]}`, "[\n{\"a\":\n", `{"a":1}]`, `[{"a":1}] x`, "{\"a\":\"\xe9\"}",
		`{"records":[{"a":1}],"data":[{"b":2}]}`, "{\"a\":1,\n{\"b\":2}\n{\"c\" 3}\n", "{\n \"a\": 1\n}\n{\n \"b\": 2\n}\n",
	} {
		f.Add([]byte(seed), false)
		f.Add([]byte(seed), true)
	}
	readertest.FixtureSeeds(f, reader.FormatJSON, func(data []byte, _ string, ff reader.Format) { f.Add(data, ff == reader.FormatJSONL) })
	f.Fuzz(func(t *testing.T, in []byte, lines bool) {
		format := reader.FormatJSON
		if lines {
			format = reader.FormatJSONL
		}
		rr, err := reader.NewRowReader(bytes.NewReader(in), reader.ReadOptions{Name: "fuzz.json", Format: format})
		if err != nil {
			var fe *reader.FileError
			require.ErrorAs(t, err, &fe)
			return
		}
		last := 0
		for range len(in) + 2 {
			row, err := rr.Next()
			if err != nil {
				var fe *reader.FileError
				if !errors.Is(err, io.EOF) {
					require.ErrorAs(t, err, &fe)
					require.Positive(t, fe.Line)
				}
				return
			}
			require.GreaterOrEqual(t, row.Line, last)
			require.Positive(t, row.Line)
			last = row.Line
		}
		t.Fatal("reading does not end")
	})
}

// FuzzReadXLSX: whatever the bytes of a workbook, reading ends, never
// panics, and a sheet's rows only go forward.
func FuzzReadXLSX(f *testing.F) {
	readertest.XLSXSeeds(f, func(data []byte) { f.Add(data) })
	f.Add([]byte("PK\x05\x06" + strings.Repeat("\x00", 18)))
	for _, cfb := range readertest.BadCompoundFiles() { // compound files named .xlsx (cfb.go)
		f.Add(cfb)
	}
	f.Add(readertest.XLSWorkbook(true))
	f.Fuzz(func(t *testing.T, in []byte) { checkXLSX(t, in) })
}

// FuzzReadXLSXSheet: whatever a sheet's XML and its shared strings, in a
// workbook otherwise as Excel writes it, reading ends, never panics, and
// rows only go forward. (Fuzzing a whole workbook's bytes mostly breaks
// its checksums: this reaches the sheet's reader.)
func FuzzReadXLSXSheet(f *testing.F) {
	for _, wb := range readertest.XLSXFixtures() {
		for _, sh := range wb.Sheets {
			f.Add(sh.Rows, strings.Join(wb.Strings, "</si><si>"), wb.Date1904)
		}
	}
	f.Add(`<row r="1"><c r="A1" t="inlineStr"><is><r><t>a</t></r><rPh><t>b</t></rPh></is></c></row><row r="2"><c r="B2" s="1"><v>60</v></c></row>`, "<t>x</t>", false)
	f.Fuzz(func(t *testing.T, rows, strs string, date1904 bool) {
		wb := readertest.Workbook{Date1904: date1904, Strings: []string{strs}, CellXfs: []int{0, 14, 22, 21, 164},
			NumFmts: []readertest.NumFmt{{ID: 164, Code: `yyyy\-mm\-dd\ hh:mm:ss`}},
			Sheets:  []readertest.Sheet{{Name: "Sheet1", Rows: rows}, {Name: "Sheet2", Rows: rows}}}
		checkXLSX(t, wb.Bytes(t))
	})
}

func checkXLSX(t *testing.T, in []byte) {
	rr, err := reader.NewXLSXReader(bytes.NewReader(in), int64(len(in)), reader.ReadOptions{Name: "fuzz.xlsx"})
	if err != nil {
		var fe *reader.FileError
		require.ErrorAs(t, err, &fe)
		return
	}
	sheet, last := "", 0
	for range len(in) + 2 {
		row, err := rr.Next()
		if err != nil {
			var fe *reader.FileError
			if !errors.Is(err, io.EOF) {
				require.ErrorAs(t, err, &fe)
			}
			return
		}
		if row.Sheet != sheet {
			sheet, last = row.Sheet, 0
		}
		require.Greater(t, row.Line, last)
		require.GreaterOrEqual(t, len(row.Cols), len(rr.Header()))
		if len(row.Cols) > len(rr.Header()) {
			require.NotNil(t, row.Err, "a value past the header fails its row")
		}
		last = row.Line
	}
	t.Fatal("reading does not end")
}

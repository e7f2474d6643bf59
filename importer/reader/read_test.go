package reader

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// readAll reads every row of in. err is the error of NewRowReader or the
// last error of Next other than io.EOF. It fails the test if reading does
// not end (a loop) or if Next does not keep returning its final error.
func readAll(t *testing.T, in []byte, opt ReadOptions) (rr *RowReader, rows []Row, err error) {
	t.Helper()
	rr, err = NewRowReader(bytes.NewReader(in), opt)
	if err != nil {
		return nil, nil, err
	}
	for range len(in) + 2 {
		row, err := rr.Next()
		if err != nil {
			again, err2 := rr.Next()
			require.Equal(t, Row{}, again)
			require.Equal(t, err, err2, "Next must keep returning its final error")
			if errors.Is(err, io.EOF) {
				return rr, rows, nil
			}
			return rr, rows, err
		}
		row.Start, row.End = 0, 0 // where a row stands is TestRecordAtSpan's
		rows = append(rows, row)
	}
	t.Fatalf("more rows than bytes in the input: reading does not end")
	return nil, nil, nil
}

// ok is a good row: name, value, name, value…
func ok(line int, nameValues ...string) Row {
	return Row{Line: line, Cols: cols(nameValues...)}
}

// bad is a row with an error.
func bad(file string, line int, reason string, nameValues ...string) Row {
	return Row{Line: line, Cols: cols(nameValues...), Err: &RowError{File: file, Line: line, Reason: reason}}
}

func cols(nameValues ...string) []Col {
	if len(nameValues) == 0 {
		return nil
	}
	out := make([]Col, 0, len(nameValues)/2)
	for i := 0; i+1 < len(nameValues); i += 2 {
		out = append(out, Col{Name: nameValues[i], Value: nameValues[i+1]})
	}
	return out
}

func TestReadErrorsFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"RowError", &RowError{File: "Contact.csv", Line: 12, Reason: "row has 5 fields, the header has 7"}, "Contact.csv:12: row has 5 fields, the header has 7"},
		{"FileErrorWithLine", &FileError{File: "a.json", Line: 3, Reason: "invalid JSON"}, "a.json:3: invalid JSON"},
		{"FileErrorWithoutLine", &FileError{File: "a.csv", Reason: "is a zip archive, not CSV"}, "a.csv: is a zip archive, not CSV"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.EqualError(t, tt.err, tt.want)
		})
	}
}

func TestReadOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		opt     ReadOptions
		want    []Row
		wantErr string
	}{
		{"EncodingUTF8UpperCase", "id,name\n1,Ren\xc3\xa9\n", ReadOptions{Format: FormatCSV, Encoding: "UTF-8"}, []Row{ok(2, "id", "1", "name", "René")}, ""},
		{"EncodingUTF8NoDash", "id,name\n1,Ren\xc3\xa9\n", ReadOptions{Format: FormatCSV, Encoding: "utf8"}, []Row{ok(2, "id", "1", "name", "René")}, ""},
		{"EncodingCP1252", "id,name\n1,Ren\xe9 \x80\n", ReadOptions{Format: FormatCSV, Encoding: "CP1252"}, []Row{ok(2, "id", "1", "name", "René €")}, ""},
		{"EncodingLatin1IsWindows1252", "id,name\n1,\x93q\x94\n", ReadOptions{Format: FormatCSV, Encoding: "latin1"}, []Row{ok(2, "id", "1", "name", "“q”")}, ""},
		{"EncodingISO885915", "id,price\n1,5\xa4\n", ReadOptions{Format: FormatCSV, Encoding: "iso-8859-15"}, []Row{ok(2, "id", "1", "price", "5€")}, ""},
		{"EncodingUTF16LE", "\xff\xfei\x00d\x00,\x00n\x00\n\x001\x00,\x00\xe9\x00\n\x00", ReadOptions{Format: FormatCSV, Encoding: "utf-16le"}, []Row{ok(2, "id", "1", "n", "é")}, ""},
		{"EncodingWindows1252JSON", `[{"name":"Ren` + "\xe9" + `"}]`, ReadOptions{Format: FormatJSON, Encoding: "windows-1252"}, []Row{ok(1, "name", "René")}, ""},
		{"EncodingWindows1252WithBOM", "\xef\xbb\xbfid\n\xe9\n", ReadOptions{Format: FormatCSV, Encoding: "windows-1252"}, []Row{ok(2, "id", "é")}, ""},
		// SPEC §4: the five bytes Windows-1252 leaves undefined are the C1
		// controls of the same code points, as the Encoding Standard decodes
		// them (issue 23 item 7: they were U+FFFD, without a word).
		{"EncodingWindows1252Undefined", "id,name\n1,\x81\x8d\x8f\x90\x9d\n", ReadOptions{Format: FormatCSV, Encoding: "windows-1252"},
			[]Row{ok(2, "id", "1", "name", "\u0081\u008d\u008f\u0090\u009d")}, ""},
		{"EncodingWindows1252UndefinedJSON", `[{"name":"\u00c3` + "\x81" + `"}]`, ReadOptions{Format: FormatJSON, Encoding: "windows-1252"},
			[]Row{ok(1, "name", "Ã\u0081")}, ""},
		{"EncodingWindows1250Undefined", "id,name\n1,\x81\x8a\n", ReadOptions{Format: FormatCSV, Encoding: "windows-1250"},
			[]Row{ok(2, "id", "1", "name", "\u0081Š")}, ""},
		{"UnknownEncoding", "id\n1\n", ReadOptions{Format: FormatCSV, Encoding: "klingon-8"}, nil, `unknown encoding "klingon-8"`},
		{"UnknownFormat", "id\n1\n", ReadOptions{Format: "xls"}, nil, `unknown format "xls"`},
		{"XLSXIsNotAStream", "id\n1\n", ReadOptions{Format: FormatXLSX}, nil, `a workbook is read in place with NewXLSXReader`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.opt.Name = "t"
			_, rows, err := readAll(t, []byte(tt.in), tt.opt)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				var fe *FileError
				require.False(t, errors.As(err, &fe), "a bad option is not a bad file")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, rows)
		})
	}
}

// TestReadMagic: what is not the expected format is named before parsing.
func TestReadMagic(t *testing.T) {
	t.Parallel()
	zipHead := "PK\x03\x04\x14\x00\x00\x00\x08\x00"
	tests := []struct {
		name   string
		in     string
		format Format
		want   string
	}{
		{"ZipAsCSV", zipHead + "Contact.csv\x00\x00", FormatCSV, "is a zip archive, not CSV"},
		{"EmptyZipAsCSV", "PK\x05\x06" + strings.Repeat("\x00", 18), FormatCSV, "is a zip archive, not CSV"},
		{"XLSXAsCSV", zipHead + "[Content_Types].xml", FormatCSV, "is an Excel workbook (xlsx), not CSV"},
		{"GzipAsCSV", "\x1f\x8b\x08\x00\x00\x00\x00\x00", FormatCSV, "is a gzip archive, not CSV"},
		{"JSONObjectAsCSV", "  \n{\"error\": \"INVALID_SESSION_ID\"}", FormatCSV, "looks like JSON, not CSV (an error message saved as .csv?)"},
		{"JSONArrayAsCSV", "[{\"message\":\"Session expired\"}]", FormatCSV, "looks like JSON, not CSV"},
		{"JSONAfterBOMAsCSV", "\xef\xbb\xbf{}", FormatCSV, "looks like JSON, not CSV"},
		{"HTMLAsCSV", "<!DOCTYPE html>\n<html><body>Login</body></html>", FormatCSV, "looks like an HTML page, not CSV"},
		{"PNGAsCSV", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01", FormatCSV, "is a PNG image, not CSV"},
		{"JPEGAsCSV", "\xff\xd8\xff\xe0\x00\x10JFIF\x00", FormatCSV, "is a JPEG image, not CSV"},
		{"GIFAsCSV", "GIF89a\x01\x00\x01\x00", FormatCSV, "is a GIF image, not CSV"},
		{"PDFAsCSV", "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", FormatCSV, "is a PDF document, not CSV"},
		{"SQLiteAsCSV", "SQLite format 3\x00\x10\x00", FormatCSV, "is an SQLite database, not CSV"},
		{"XLSAsCSV", "\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1\x00\x00", FormatCSV, "is an Excel 97-2003 workbook (xls) or another Office document, not CSV (save or export it as CSV)"},
		{"UTF32LEWithBOMAsCSV", "\xff\xfe\x00\x00i\x00\x00\x00d\x00\x00\x00", FormatCSV, "is UTF-32 text, not CSV (crmimport reads UTF-8, UTF-16"},
		{"UTF32BEWithBOMAsCSV", "\x00\x00\xfe\xff\x00\x00\x00i\x00\x00\x00d", FormatCSV, "is UTF-32 text, not CSV"},
		{"UTF32LEAsCSV", "i\x00\x00\x00d\x00\x00\x00,\x00\x00\x00n\x00\x00\x00\n\x00\x00\x00", FormatCSV, "is UTF-32 text, not CSV"},
		{"UTF32BEAsCSV", "\x00\x00\x00i\x00\x00\x00d\x00\x00\x00,\x00\x00\x00n", FormatCSV, "is UTF-32 text, not CSV"},
		{"BinaryNoiseAsCSV", noise(512), FormatCSV, "is binary data ("},
		{"UTF16WithoutEncoding", "\xff\xfei\x00d\x00", FormatCSV, "is UTF-16 text (try --encoding utf-16)"},
		{"UTF16LEWithoutBOMWithoutEncoding", "i\x00d\x00\t\x00n\x00\r\x00\n\x001\x00\t\x00A\x00", FormatCSV,
			"is UTF-16LE text without a byte-order mark (try --encoding utf-16le)"},
		{"UTF16BEWithoutBOMWithoutEncoding", "\x00i\x00d\x00\t\x00n\x00\r\x00\n\x001\x00\t\x00A", FormatCSV,
			"is UTF-16BE text without a byte-order mark (try --encoding utf-16be)"},
		{"ZipAsJSON", zipHead, FormatJSON, "is a zip archive, not JSON"},
		{"GzipAsJSONL", "\x1f\x8b\x08", FormatJSONL, "is a gzip archive, not JSON"},
		{"CSVAsJSON", "id,name\n1,Ann\n", FormatJSON, `does not look like JSON (it starts with "id,name")`},
		{"BinaryAsJSON", "[" + noise(512), FormatJSON, "is binary data ("},
		{"PNGAsJSON", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", FormatJSON, "is a PNG image, not JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewRowReader(strings.NewReader(tt.in), ReadOptions{Name: "x", Format: tt.format})
			var fe *FileError
			require.ErrorAs(t, err, &fe)
			require.Contains(t, fe.Reason, tt.want)
			require.Equal(t, "x", fe.File)
		})
	}
}

// TestReadNULIsTheMappersToJudge: a NUL byte inside a field, in the first
// bytes of the file or far after them, is read as it is, the row saying
// which of its fields hold one and where the first of each stands: the
// file is not "binary data" for it (issue 11 item 17), and whether it costs
// the row is the profile's to say, which knows the fields it maps (SPEC §4,
// issue 23 item 8: a NUL in a column kept in extra no longer fails it).
func TestReadNULIsTheMappersToJudge(t *testing.T) {
	t.Parallel()
	in := "id,name,note\n1,a\x00b,c\x00\x00d\x00\n" + strings.Repeat("2,a,\n", 2000) + "3,\"x\ny\x00\",\"\x00\"\n4,ok,\n"
	_, rows, err := readAll(t, []byte(in), ReadOptions{Name: "t.csv", Format: FormatCSV})
	require.NoError(t, err)
	require.Len(t, rows, 2003)
	first := ok(2, "id", "1", "name", "a\x00b", "note", "c\x00\x00d\x00")
	first.NUL = []NULField{{Col: 1, Where: ", at line 2, column 4"}, {Col: 2, Where: ", at line 2, column 8"}}
	require.Equal(t, first, rows[0])
	require.Equal(t, ok(3, "id", "2", "name", "a", "note", ""), rows[1])
	multiLine := ok(2003, "id", "3", "name", "x\ny\x00", "note", "\x00")
	multiLine.NUL = []NULField{{Col: 1, Where: ", at line 2004, column 2"}, {Col: 2, Where: ", at line 2004, column 6"}}
	require.Equal(t, multiLine, rows[2001])
	require.Equal(t, ok(2005, "id", "4", "name", "ok", "note", ""), rows[2002])
}

// TestSniffBinary: a file that is mostly binary is refused whole, saying
// what it looks like; text with a few NUL bytes is text (its rows fail
// alone); UTF-16 without a byte-order mark is told by where its NULs are.
func TestSniffBinary(t *testing.T) {
	t.Parallel()
	utf16le := func(s string) string {
		var b strings.Builder
		for _, r := range s {
			b.WriteByte(byte(r))
			b.WriteByte(byte(r >> 8))
		}
		return b.String()
	}
	tests := []struct {
		name, in, want, encoding string
	}{
		{"ASCII", "id,name\n1,Ann\n", "", ""},
		{"AStrayNUL", "id,name\n1,a\x00b\n2,Bob\n", "", ""},
		{"NULsInALongText", strings.Repeat("id,name\n1,a\x00b\n", 100), "", ""},
		{"UTF16LEWithBOM", "\xff\xfe" + utf16le("id\tname\r\n"), "", ""},
		{"UTF16LEWithoutBOM", utf16le("id\tname\tcity\r\n1\tJosé\tZürich\r\n"), "UTF-16LE text without a byte-order mark", "utf-16le"},
		{"UTF16LEMostlyCyrillic", utf16le("id\tимя\r\n1\tАнна Петрова\r\n2\tБорис\r\n"), "UTF-16LE text without a byte-order mark", "utf-16le"},
		{"UTF32LE", "i\x00\x00\x00d\x00\x00\x00\n\x00\x00\x00", "UTF-32 text", ""},
		{"PNG", "\x89PNG\r\n\x1a\n", "a PNG image", ""},
		{"Noise", noise(4096), "binary data (", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := sniffBinary([]byte(tt.in))
			if tt.want == "" {
				require.Empty(t, got.name)
			} else {
				require.Contains(t, got.name, tt.want)
			}
			require.Equal(t, tt.encoding, got.encoding)
		})
	}
}

// noise is n bytes that look like compressed data: every byte value alike.
func noise(n int) string {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return string(b)
}

// TestReadBytesRead: the progress counter grows and ends at the size of
// the file, for each format.
func TestReadBytesRead(t *testing.T) {
	t.Parallel()
	var csvIn, jsonIn, jsonlIn strings.Builder
	csvIn.WriteString("id,note\n")
	jsonIn.WriteString("[\n")
	for i := range 20000 {
		fmt.Fprintf(&csvIn, "%d,\"note %d, with a comma\"\n", i, i)
		if i > 0 {
			jsonIn.WriteString(",\n")
		}
		fmt.Fprintf(&jsonIn, `{"id": "%d", "note": "note %d"}`, i, i)
		fmt.Fprintf(&jsonlIn, `{"id": "%d", "note": "note %d"}`+"\n", i, i)
	}
	jsonIn.WriteString("\n]\n")
	tests := []struct {
		name   string
		in     string
		format Format
	}{
		{"CSV", csvIn.String(), FormatCSV},
		{"JSON", jsonIn.String(), FormatJSON},
		{"JSONL", jsonlIn.String(), FormatJSONL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "in."+string(tt.format))
			require.NoError(t, os.WriteFile(path, []byte(tt.in), 0o600))
			f, err := os.Open(path)
			require.NoError(t, err)
			defer f.Close()
			st, err := f.Stat()
			require.NoError(t, err)

			rr, err := NewRowReader(f, ReadOptions{Name: "in", Format: tt.format})
			require.NoError(t, err)
			var last int64
			var rows int
			var sawPartial bool
			for {
				row, err := rr.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				require.NoError(t, err)
				require.Nil(t, row.Err)
				rows++
				n := rr.BytesRead()
				require.GreaterOrEqual(t, n, last)
				require.Positive(t, n)
				sawPartial = sawPartial || n < st.Size()
				last = n
			}
			require.Equal(t, 20000, rows)
			require.True(t, sawPartial, "BytesRead must grow while reading, not jump to the size")
			require.Equal(t, st.Size(), rr.BytesRead())
		})
	}
}

// TestReadUnderlyingError: a failing reader fails the file, and the cause
// stays reachable.
func TestReadUnderlyingError(t *testing.T) {
	t.Parallel()
	boom := errors.New("disk on fire")
	for _, format := range []Format{FormatCSV, FormatJSON} {
		t.Run(string(format), func(t *testing.T) {
			t.Parallel()
			head := "id,name\n1,Ann\n"
			if format == FormatJSON {
				head = `[{"id":"1"},`
			}
			// The first 64 KiB arrive, then the read fails.
			in := io.MultiReader(strings.NewReader(head+strings.Repeat(" ", 70000)), failingReader{boom})
			rr, err := NewRowReader(in, ReadOptions{Name: "f", Format: format})
			require.NoError(t, err)
			var last error
			for range 10 {
				if _, last = rr.Next(); last != nil {
					break
				}
			}
			var fe *FileError
			require.ErrorAs(t, last, &fe)
			require.ErrorIs(t, last, boom)
			require.Contains(t, fe.Reason, "disk on fire")
		})
	}
}

type failingReader struct{ err error }

func (f failingReader) Read([]byte) (int, error) { return 0, f.err }

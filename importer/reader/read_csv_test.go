package reader

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

func TestReadCSV(t *testing.T) {
	t.Parallel()
	const f = "t.csv"
	note64k := strings.Repeat("A long note, with commas and \"\"quotes\"\".\n", 64<<10/40+1)
	note5m := strings.Repeat("<p>HTML body, \"\"quoted\"\"</p>\r\n", 5<<20/30+1)
	unquote := func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, `""`, `"`), "\r\n", "\n") }
	tests := []struct {
		name       string
		in         string
		encoding   string
		wantHeader []string
		wantDelim  rune
		want       []Row
		wantErr    string // of the *FileError that ends reading
		wantLine   int    // of that error
		wantFooter *Footer
	}{
		{
			name:       "Plain",
			in:         "id,name\n1,Ann\n2,Bob\n",
			wantHeader: []string{"id", "name"}, wantDelim: ',',
			want: []Row{ok(2, "id", "1", "name", "Ann"), ok(3, "id", "2", "name", "Bob")},
		},
		{
			name:       "BOM",
			in:         "\xef\xbb\xbfId,Name\n1,Ann\n",
			wantHeader: []string{"Id", "Name"}, wantDelim: ',',
			want: []Row{ok(2, "Id", "1", "Name", "Ann")},
		},
		{
			name:       "BOMBeforeQuotedHeader",
			in:         "\xef\xbb\xbf\"Id\",\"Name\"\n\"1\",\"Ann\"\n",
			wantHeader: []string{"Id", "Name"}, wantDelim: ',',
			want: []Row{ok(2, "Id", "1", "Name", "Ann")},
		},
		{
			name:       "CRLFRows",
			in:         "id,name\r\n1,Ann\r\n2,Bob\r\n",
			wantHeader: []string{"id", "name"}, wantDelim: ',',
			want: []Row{ok(2, "id", "1", "name", "Ann"), ok(3, "id", "2", "name", "Bob")},
		},
		{
			name:       "CRLFInsideQuotes",
			in:         "id,note\r\n1,\"first\r\nsecond\"\r\n2,x\r\n",
			wantHeader: []string{"id", "note"}, wantDelim: ',',
			want: []Row{ok(2, "id", "1", "note", "first\nsecond"), ok(4, "id", "2", "note", "x")},
		},
		{
			name:       "MacCRLineBreaks",
			in:         "id,name\r1,Ann\r2,\"multi\rline\"\r\r3,Cy\r",
			wantHeader: []string{"id", "name"}, wantDelim: ',',
			want: []Row{ok(2, "id", "1", "name", "Ann"), ok(3, "id", "2", "name", "multi\nline"), ok(6, "id", "3", "name", "Cy")},
		},
		{
			name:       "MacCRAfterBlankLines",
			in:         "\r\r id;name\r1;Ann",
			wantHeader: []string{" id", "name"}, wantDelim: ';',
			want: []Row{ok(4, " id", "1", "name", "Ann")},
		},
		{
			name:       "LoneCRInQuotedHeaderIsData",
			in:         "\"a\rb\",c\n1,\"x\ry\"\n",
			wantHeader: []string{"a\rb", "c"}, wantDelim: ',',
			want: []Row{ok(2, "a\rb", "1", "c", "x\ry")},
		},
		{
			// Lone CRs after an LF header: line ends too (they merged three
			// records into one).
			name:       "LoneCRLinesAfterAnLFHeader",
			in:         "id,name\n1,Ann\r2,Bob\r3,Cy\r",
			wantHeader: []string{"id", "name"}, wantDelim: ',',
			want: []Row{ok(2, "id", "1", "name", "Ann"), ok(3, "id", "2", "name", "Bob"), ok(4, "id", "3", "name", "Cy")},
		},
		{
			// LF, CRLF and lone CR in one file; a lone CR inside quotes of an
			// LF file is data, a CRLF inside quotes a line break.
			name:       "MixedLineEnds",
			in:         "id,name\n1,Ann\r\n2,Bob\r3,\"Cy\rDe\"\n4,\"Di\r\nEd\"\r5,\"\"\"Fa\"\"\"\r6,Gu",
			wantHeader: []string{"id", "name"}, wantDelim: ',',
			want: []Row{ok(2, "id", "1", "name", "Ann"), ok(3, "id", "2", "name", "Bob"), ok(4, "id", "3", "name", "Cy\rDe"),
				ok(5, "id", "4", "name", "Di\nEd"), ok(7, "id", "5", "name", `"Fa"`), ok(8, "id", "6", "name", "Gu")},
		},
		{
			// A bare quote makes encoding/csv drop the rest of its line: the
			// quote opened after it opens nothing, and the lone CR after it
			// still ends the line.
			name:       "LoneCRAfterABareQuote",
			in:         "id,name\n1,a\"b,\"x\r2,Bob\r3,\"Cy\"z,\"\r4,Di\r",
			wantHeader: []string{"id", "name"}, wantDelim: ',',
			want: []Row{
				text(bad(f, 2, `bare " in an unquoted field at line 2, column 4 (a field holding " must be quoted, with each " doubled)`, "id", "1"), `1,a"b,"x`),
				ok(3, "id", "2", "name", "Bob"),
				text(bad(f, 4, `extraneous " in a quoted field at line 4, column 6 (a " inside a quoted field must be doubled)`, "id", "3"), `3,"Cy"z,"`),
				ok(5, "id", "4", "name", "Di"),
			},
		},
		{
			name:       "SepLineSemicolon",
			in:         "sep=;\nid;name\n1;Doe, Ann\n",
			wantHeader: []string{"id", "name"}, wantDelim: ';',
			want: []Row{ok(3, "id", "1", "name", "Doe, Ann")},
		},
		{
			// sep= says what the sniff would not guess: commas in the
			// header's names, one real delimiter.
			name:       "SepLineCommaOverridesTheSniff",
			in:         "\xef\xbb\xbfSEP=,\r\nid;a;b,name\r\n1;2;3,Ann\r\n",
			wantHeader: []string{"id;a;b", "name"}, wantDelim: ',',
			want: []Row{ok(3, "id;a;b", "1;2;3", "name", "Ann")},
		},
		{
			name:       "SepLineTab",
			in:         "sep=\t\rid\tname\r1\tAnn\r",
			wantHeader: []string{"id", "name"}, wantDelim: '\t',
			want: []Row{ok(3, "id", "1", "name", "Ann")},
		},
		{
			name:       "SepLinePipeThenBlankLines",
			in:         "sep=|\n\n\nid|name\n1|Ann\n",
			wantHeader: []string{"id", "name"}, wantDelim: '|',
			want: []Row{ok(5, "id", "1", "name", "Ann")},
		},
		{
			name:       "SepLineOnly",
			in:         "sep=;\n",
			wantHeader: nil, wantDelim: ';',
		},
		{
			name:       "NotASepLine",
			in:         "sep=;x\n1\n",
			wantHeader: []string{"sep=", "x"}, wantDelim: ';',
			want: []Row{bad(f, 2, "row has 1 field, the header has 2", "sep=", "1")},
		},
		{
			name:       "NoFinalNewline",
			in:         "id,name\n1,Ann",
			wantHeader: []string{"id", "name"}, wantDelim: ',',
			want: []Row{ok(2, "id", "1", "name", "Ann")},
		},
		{
			name:       "SemicolonWithCommasInQuotes",
			in:         "id;name;note\n1;\"Doe, Jane\";\"a, b, c, d\"\n",
			wantHeader: []string{"id", "name", "note"}, wantDelim: ';',
			want: []Row{ok(2, "id", "1", "name", "Doe, Jane", "note", "a, b, c, d")},
		},
		{
			name:       "SemicolonHeaderWithQuotedCommas",
			in:         "\"Name, first\";\"Name, last\";\"a,b,c\"\nAnn;Lee;x\n",
			wantHeader: []string{"Name, first", "Name, last", "a,b,c"}, wantDelim: ';',
			want: []Row{ok(2, "Name, first", "Ann", "Name, last", "Lee", "a,b,c", "x")},
		},
		{
			name:       "Tab",
			in:         "id\tname\tnote\n1\tAnn\tfoo, bar; baz\n",
			wantHeader: []string{"id", "name", "note"}, wantDelim: '\t',
			want: []Row{ok(2, "id", "1", "name", "Ann", "note", "foo, bar; baz")},
		},
		{
			name:       "TabWithEmptyFirstHeader",
			in:         "\tname\n1\tAnn\n",
			wantHeader: []string{"", "name"}, wantDelim: '\t',
			want: []Row{ok(2, "", "1", "name", "Ann")},
		},
		{
			name:       "TieMeansComma",
			in:         "a;b,c\n1;2,3\n",
			wantHeader: []string{"a;b", "c"}, wantDelim: ',',
			want: []Row{ok(2, "a;b", "1;2", "c", "3")},
		},
		{
			name:       "TieSemicolonTabMeansComma",
			in:         "a;b\tc\n1;2\t3\n",
			wantHeader: []string{"a;b\tc"}, wantDelim: ',',
			want: []Row{ok(2, "a;b\tc", "1;2\t3")},
		},
		{
			name:       "SingleColumnMeansComma",
			in:         "email\nann@example.com\n",
			wantHeader: []string{"email"}, wantDelim: ',',
			want: []Row{ok(2, "email", "ann@example.com")},
		},
		{
			name:       "DelimiterSniffedAcrossQuotedLineBreakInHeader",
			in:         "\"Note\nText, long\";id;owner\n\"a\nb\";1;x\n",
			wantHeader: []string{"Note\nText, long", "id", "owner"}, wantDelim: ';',
			want: []Row{ok(3, "Note\nText, long", "a\nb", "id", "1", "owner", "x")},
		},
		{
			name: "MultiLineNotesAndLineNumbers",
			in: "id,note,owner\n" +
				"1,\"Line one, with a comma\nHe said \"\"hi\"\"\nthird line\",ann\n" +
				"2,plain,bob\n" +
				"3,\"\",\"\"\"quoted\"\"\"\n",
			wantHeader: []string{"id", "note", "owner"}, wantDelim: ',',
			want: []Row{
				ok(2, "id", "1", "note", "Line one, with a comma\nHe said \"hi\"\nthird line", "owner", "ann"),
				ok(5, "id", "2", "note", "plain", "owner", "bob"),
				ok(6, "id", "3", "note", "", "owner", `"quoted"`),
			},
		},
		{
			name:       "Note64KiB",
			in:         "id,note\n1,\"" + note64k + "\"\n2,x\n",
			wantHeader: []string{"id", "note"}, wantDelim: ',',
			want: []Row{ok(2, "id", "1", "note", unquote(note64k)), ok(2+strings.Count(note64k, "\n")+1, "id", "2", "note", "x")},
		},
		{
			name:       "Note5MiB",
			in:         "id,note\r\n1,\"" + note5m + "\"\r\n2,x\r\n",
			wantHeader: []string{"id", "note"}, wantDelim: ',',
			want: []Row{ok(2, "id", "1", "note", unquote(note5m)), ok(2+strings.Count(note5m, "\n")+1, "id", "2", "note", "x")},
		},
		{
			name:       "DuplicateHeaderNames",
			in:         "Record ID,Phone Number,Create Date,Phone Number,Create Date\n1,+1 555,2024-01-01,+1 666,2024-02-02\n",
			wantHeader: []string{"Record ID", "Phone Number", "Create Date", "Phone Number", "Create Date"}, wantDelim: ',',
			want: []Row{ok(2, "Record ID", "1", "Phone Number", "+1 555", "Create Date", "2024-01-01", "Phone Number", "+1 666", "Create Date", "2024-02-02")},
		},
		{
			name:       "HeaderNamesRaw",
			in:         " Id ,First Name\n1,Ann\n",
			wantHeader: []string{" Id ", "First Name"}, wantDelim: ',',
			want: []Row{ok(2, " Id ", "1", "First Name", "Ann")},
		},
		{
			name:       "ValuesRaw",
			in:         "id,phone,empty\n1, +33 1 23 ,\n",
			wantHeader: []string{"id", "phone", "empty"}, wantDelim: ',',
			want: []Row{ok(2, "id", "1", "phone", " +33 1 23 ", "empty", "")},
		},
		{
			name:       "RaggedRows",
			in:         "a,b,c\n1,2\n3,4,5,6\n7,8,9\n10\n",
			wantHeader: []string{"a", "b", "c"}, wantDelim: ',',
			want: []Row{
				bad(f, 2, "row has 2 fields, the header has 3", "a", "1", "b", "2"),
				bad(f, 3, "row has 4 fields, the header has 3", "a", "3", "b", "4", "c", "5", "(column 4)", "6"),
				ok(4, "a", "7", "b", "8", "c", "9"),
				bad(f, 5, "row has 1 field, the header has 3", "a", "10"),
			},
		},
		{
			name:       "FooterAfterEmptyRow",
			in:         "id,name\n1,Ann\n\n\"Report total\"\n\"Generated by Salesforce\"\n",
			wantHeader: []string{"id", "name"}, wantDelim: ',',
			want: []Row{
				ok(2, "id", "1", "name", "Ann"),
				bad(f, 4, "row has 1 field, the header has 2", "id", "Report total"),
				bad(f, 5, "row has 1 field, the header has 2", "id", "Generated by Salesforce"),
			},
		},
		{
			// Without the task's ids, only Salesforce's footer is told
			// apart: it is not read, and said so.
			name: "SalesforceReportFooter",
			in: "id,name\n1,Ann\n\n\"Copyright (c) 2000-2024 salesforce.com, inc. All rights reserved.\"\n" +
				"\"Confidential Information - Do Not Distribute\"\n\n\"Acme\"\n",
			wantHeader: []string{"id", "name"}, wantDelim: ',',
			want:       []Row{ok(2, "id", "1", "name", "Ann")},
			wantFooter: &Footer{Blank: 3, First: 4, Last: 7, Salesforce: true},
		},
		{
			// Records after it are records: the block was no footer.
			name:       "SalesforceFooterThenRecords",
			in:         "id,name\n1,Ann\n\n\"Copyright (c) 2000-2024 salesforce.com, inc. All rights reserved.\"\n2,Bob\n",
			wantHeader: []string{"id", "name"}, wantDelim: ',',
			want: []Row{ok(2, "id", "1", "name", "Ann"),
				bad(f, 4, "row has 1 field, the header has 2", "id", "Copyright (c) 2000-2024 salesforce.com, inc. All rights reserved."),
				ok(5, "id", "2", "name", "Bob")},
		},
		{
			// Excel writes an empty row as its delimiters: blank, as an
			// empty line is.
			name:       "ExcelEmptyRowIsBlank",
			in:         "id,name,x\n1,Ann,y\n,,\n , ,\n2,Bob,z\n",
			wantHeader: []string{"id", "name", "x"}, wantDelim: ',',
			want: []Row{ok(2, "id", "1", "name", "Ann", "x", "y"), ok(5, "id", "2", "name", "Bob", "x", "z")},
		},
		{
			name:       "BareQuote",
			in:         "id,name\n1,Ann \"the\" Doe\n2,Bob\n",
			wantHeader: []string{"id", "name"}, wantDelim: ',',
			want: []Row{
				text(bad(f, 2, `bare " in an unquoted field at line 2, column 7 (a field holding " must be quoted, with each " doubled)`, "id", "1"), `1,Ann "the" Doe`),
				ok(3, "id", "2", "name", "Bob"),
			},
		},
		{
			name:       "ExtraneousQuote",
			in:         "id,name,x\n1,\"Ann\" Doe,y\n2,Bob,z\n",
			wantHeader: []string{"id", "name", "x"}, wantDelim: ',',
			want: []Row{
				text(bad(f, 2, `extraneous " in a quoted field at line 2, column 7 (a " inside a quoted field must be doubled)`, "id", "1"), `1,"Ann" Doe,y`),
				ok(3, "id", "2", "name", "Bob", "x", "z"),
			},
		},
		{
			name:       "ExtraneousQuoteOnLastLine",
			in:         "id,name\n1,\"Ann\"x\n",
			wantHeader: []string{"id", "name"}, wantDelim: ',',
			want: []Row{text(bad(f, 2, `extraneous " in a quoted field at line 2, column 7 (a " inside a quoted field must be doubled)`, "id", "1"), `1,"Ann"x`)},
		},
		{
			name:       "ExtraneousQuoteOnLastLineNoNewline",
			in:         "id,name\n1,\"Ann\"x",
			wantHeader: []string{"id", "name"}, wantDelim: ',',
			want: []Row{text(bad(f, 2, `extraneous " in a quoted field at line 2, column 7 (a " inside a quoted field must be doubled)`, "id", "1"), `1,"Ann"x`)},
		},
		{
			name:       "UnterminatedQuoteAtEnd",
			in:         "id,name\n1,Ann\n2,\"Bob\n3,Carl\n4,Dan\n",
			wantHeader: []string{"id", "name"}, wantDelim: ',',
			want: []Row{
				ok(2, "id", "1", "name", "Ann"),
				text(bad(f, 3, "quoted field starting at line 3 is never closed (the rest of the file was read into it)", "id", "2"), "2,\"Bob\n3,Carl\n4,Dan"),
			},
		},
		{
			name:       "UnterminatedQuoteNoFinalNewline",
			in:         "id,name\r\n1,\"Bob",
			wantHeader: []string{"id", "name"}, wantDelim: ',',
			want: []Row{text(bad(f, 2, "quoted field starting at line 2 is never closed (the rest of the file was read into it)", "id", "1"), "1,\"Bob")},
		},
		{
			name:       "UnterminatedQuoteFirstField",
			in:         "id,name\n\"1,Bob\n\n",
			wantHeader: []string{"id", "name"}, wantDelim: ',',
			want: []Row{text(bad(f, 2, "quoted field starting at line 2 is never closed (the rest of the file was read into it)"), "\"1,Bob")},
		},
		{
			name:       "EmptyFile",
			in:         "",
			wantHeader: nil, wantDelim: ',',
		},
		{
			name:       "BOMOnly",
			in:         "\xef\xbb\xbf",
			wantHeader: nil, wantDelim: ',',
		},
		{
			name:       "WhitespaceLinesOnly",
			in:         "\n  \r\n\t\n\n",
			wantHeader: nil, wantDelim: ',',
		},
		{
			name:       "HeaderOnly",
			in:         "Id,IsDeleted,Name\n",
			wantHeader: []string{"Id", "IsDeleted", "Name"}, wantDelim: ',',
		},
		{
			name:       "HeaderOnlyNoNewline",
			in:         "\xef\xbb\xbfId;Name",
			wantHeader: []string{"Id", "Name"}, wantDelim: ';',
		},
		{
			name:       "BlankLinesBeforeHeaderAndBetweenRows",
			in:         "\n \r\nid,name\n\n1,Ann\n   \n\r\n2,Bob\n\n",
			wantHeader: []string{"id", "name"}, wantDelim: ',',
			want: []Row{ok(5, "id", "1", "name", "Ann"), ok(8, "id", "2", "name", "Bob")},
		},
		{
			name:       "BracketHeaderIsNotJSON",
			in:         "[Id],[Name]\n1,Ann\n",
			wantHeader: []string{"[Id]", "[Name]"}, wantDelim: ',',
			want: []Row{ok(2, "[Id]", "1", "[Name]", "Ann")},
		},
		{
			name:       "Windows1252Decoded",
			in:         "id,name,price\n1,Ren\xe9 \x93L\xe9on\x94,\x80 5\n",
			encoding:   "windows-1252",
			wantHeader: []string{"id", "name", "price"}, wantDelim: ',',
			want: []Row{ok(2, "id", "1", "name", "René “Léon”", "price", "€ 5")},
		},
		{
			name:       "InvalidUTF8Flagged",
			in:         "id,name\n1,Ren\xe9\n2,Ok\n",
			wantHeader: []string{"id", "name"}, wantDelim: ',',
			want: []Row{
				bad(f, 2, `not valid UTF-8: byte 0xE9 in field 2 ("name"), at line 2, column 6 `+encodingHint, "id", "1", "name", "Ren\uFFFD"),
				ok(3, "id", "2", "name", "Ok"),
			},
		},
		{
			name:       "InvalidUTF8AndRagged",
			in:         "id,name\n1,Ren\xe9,x\n",
			wantHeader: []string{"id", "name"}, wantDelim: ',',
			want: []Row{
				bad(f, 2, `row has 3 fields, the header has 2; not valid UTF-8: byte 0xE9 in field 2 ("name"), at line 2, column 6 `+encodingHint,
					"id", "1", "name", "Ren\uFFFD", "(column 3)", "x"),
			},
		},
		{
			name:     "InvalidUTF8Header",
			in:       "id,Pr\xe9nom\n1,Ann\n",
			wantErr:  "header is not valid UTF-8 (field 2) " + encodingHint,
			wantLine: 1,
		},
		{
			name:     "BrokenHeader",
			in:       "\nid,na\"me\n1,Ann\n",
			wantErr:  `header: bare " in an unquoted field at line 2, column 6`,
			wantLine: 2,
		},
		{
			name:     "UnterminatedHeader",
			in:       "id,\"name\n1,Ann\n",
			wantErr:  "header: quoted field starting at line 1 is never closed",
			wantLine: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rr, rows, err := readAll(t, []byte(tt.in), ReadOptions{Name: f, Format: FormatCSV, Encoding: tt.encoding})
			if tt.wantErr != "" {
				var fe *FileError
				require.ErrorAs(t, err, &fe)
				require.Contains(t, fe.Reason, tt.wantErr)
				require.Equal(t, tt.wantLine, fe.Line)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.wantHeader, rr.Header())
			require.Equal(t, tt.wantDelim, rr.Delimiter())
			require.Equal(t, len(tt.want), len(rows))
			for i := range tt.want { // one by one: a 5 MiB diff is unreadable
				require.Equal(t, tt.want[i], rows[i], "row %d", i)
			}
			require.Equal(t, tt.wantFooter, rr.Footer())
		})
	}
}

// TestReadCSVFooter: a block after an empty row to the end of the file
// whose rows have no id is a footer, not read; rows with ids after a stray
// blank line are read as usual, and so is a block too long for a footer
// (issue 11 item 18).
func TestReadCSVFooter(t *testing.T) {
	t.Parallel()
	const f = "t.csv"
	hasID := func(r Row) bool { return len(r.Cols) > 0 && strings.TrimSpace(r.Cols[0].Value) != "" }
	long := strings.Repeat(",Total,9\n", maxFooterRows+1)
	tests := []struct {
		name   string
		in     string
		lines  []int // of the rows read
		footer *Footer
	}{
		{"TotalsWithoutIDs", "id,name,n\n1,Ann,4\n2,Bob,5\n\n,Total,9\n,,\n,\"Filtered by: all\",\n", []int{2, 3}, &Footer{Blank: 4, First: 5, Last: 7}},
		{"IDsAfterAStrayBlankLine", "id,name,n\n1,Ann,4\n\n\n2,Bob,5\n3,Cy,6\n", []int{2, 5, 6}, nil},
		{"IDlessRowsThenIDs", "id,name,n\n1,Ann,4\n\n,Subtotal,4\n2,Bob,5\n", []int{2, 4, 5}, nil},
		{"IDlessRowsThenIDsThenAFooter", "id,name,n\n1,Ann,4\n\n,Sub,4\n2,Bob,5\n\n,Total,9\n", []int{2, 4, 5}, &Footer{Blank: 6, First: 7, Last: 7}},
		{"AMultiLineFooterRow", "id,name\n1,Ann\n\n,\"Total\nof all\"\n", []int{2}, &Footer{Blank: 3, First: 4, Last: 5}},
		{"TooLongForAFooter", "id,name,n\n1,Ann,4\n\n" + long, func() []int {
			out := []int{2}
			for i := range maxFooterRows + 1 {
				out = append(out, 4+i)
			}
			return out
		}(), nil},
		{"NoEmptyRowBefore", "id,name,n\n1,Ann,4\n,Total,4\n", []int{2, 3}, nil},
		{"ABrokenRowIsHeldToo", "id,name\n1,Ann\n\n,\"Total\" 4\n", []int{2}, &Footer{Blank: 3, First: 4, Last: 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rr, err := NewRowReader(strings.NewReader(tt.in), ReadOptions{Name: f, Format: FormatCSV})
			require.NoError(t, err)
			rr.WatchFooter(hasID)
			var lines []int
			for {
				row, err := rr.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				require.NoError(t, err)
				lines = append(lines, row.Line)
			}
			require.Equal(t, tt.lines, lines)
			require.Equal(t, tt.footer, rr.Footer())
		})
	}
	ft := &Footer{Blank: 4, First: 5, Last: 8, Salesforce: true}
	require.Equal(t, `contacts.csv: lines 5–8, after the empty row at line 4, are Salesforce's report footer (copyright, "Generated By"), `+
		"not records: 4 lines not read (give them ids if they are records)", ft.Notice("contacts.csv"))
	require.Equal(t, "a.csv: line 7, after the empty row at line 6, hold no id: a footer, not records: 1 line not read (give them ids if they are records)",
		(&Footer{Blank: 6, First: 7, Last: 7}).Notice("a.csv"))
}

// TestReadCSVHugeField: a field as long as the bound for one record
// allows (HTML, quotes and line breaks) is read whole, and so is the
// record after it, at its line.
func TestReadCSVHugeField(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	b.WriteString("id,body\n1,\"")
	chunk := "<div>HTML, with \"\"quotes\"\"\nand line breaks</div>"
	for b.Len()+len(chunk)+len(`"`) <= len("id,body\n")+MaxRecordBytes {
		b.WriteString(chunk)
	}
	b.WriteString("\"\n2,x\n")
	rr, err := NewRowReader(bytes.NewReader(b.Bytes()), ReadOptions{Name: "huge.csv", Format: FormatCSV})
	require.NoError(t, err)
	row, err := rr.Next()
	require.NoError(t, err)
	require.Nil(t, row.Err)
	require.Greater(t, len(row.Cols[1].Value), MaxRecordBytes*15/16)
	require.True(t, strings.HasPrefix(row.Cols[1].Value, `<div>HTML, with "quotes"`+"\n"))
	next := 3 + strings.Count(row.Cols[1].Value, "\n")
	row, err = rr.Next()
	require.NoError(t, err)
	require.Equal(t, next, row.Line)
	require.Equal(t, []Col{{Name: "id", Value: "2"}, {Name: "body", Value: "x"}}, row.Cols)
	_, err = rr.Next()
	require.ErrorIs(t, err, io.EOF)
}

// text gives a bad row the text of its record as it stands in the file.
func text(r Row, t string) Row {
	r.Text = t
	return r
}

// TestReadCSVLongRecordText: of a record longer than maxKeptText that
// cannot be parsed, its start is kept with a note of what is left out; the
// text of a broken record after a long one is whole.
func TestReadCSVLongRecordText(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("<p>a \"\"quoted\"\" line</p>\n", 3*maxKeptText/25)
	in := "id,body\n" +
		"1,\"" + long + "\"\n" + // long and fine
		"2,\"x\"y\n" + // a stray quote: its text is whole
		"3,ok\n" +
		"4,\"" + long + "\"z\n" // long and broken
	rr, err := NewRowReader(strings.NewReader(in), ReadOptions{Name: "long.csv", Format: FormatCSV})
	require.NoError(t, err)

	row, err := rr.Next()
	require.NoError(t, err)
	require.Nil(t, row.Err)
	require.Equal(t, strings.ReplaceAll(long, `""`, `"`), row.Cols[1].Value)

	row, err = rr.Next()
	require.NoError(t, err)
	require.NotNil(t, row.Err)
	require.Equal(t, `2,"x"y`, row.Text)

	row, err = rr.Next()
	require.NoError(t, err)
	require.Equal(t, []Col{{Name: "id", Value: "3"}, {Name: "body", Value: "ok"}}, row.Cols)

	row, err = rr.Next()
	require.NoError(t, err)
	require.NotNil(t, row.Err)
	record := "4,\"" + long + "\"z"
	require.Less(t, len(row.Text), maxKeptText+100)
	require.True(t, strings.HasPrefix(row.Text, record[:maxKeptText]), "the record's start is kept")
	require.Regexp(t, `\n\[… \d+ more bytes of this record, not kept\]$`, row.Text)
	_, err = rr.Next()
	require.ErrorIs(t, err, io.EOF)
}

// TestReadCSVKeptTextAgainstWhole reads random files, with long records
// and broken ones, twice: keeping every record's text, and keeping 100
// bytes of it. The rows are the same; the text of a broken record is the
// same (it may be, up to 100 bytes and twice tailKept), or its first 100
// bytes and a note of how many more there were.
func TestReadCSVKeptTextAgainstWhole(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(4, 2))
	cut, after := 0, 0 // texts cut short, broken rows read after a cut one
	for n := range 30 {
		var b strings.Builder
		b.WriteString("id,body,x\n")
		for i := range 1 + rnd.IntN(40) {
			body := strings.Repeat(fmt.Sprintf("line %d, \"\"q\"\"\n", i), rnd.IntN(16000))
			switch rnd.IntN(6) {
			case 0: // a stray quote after the field
				fmt.Fprintf(&b, "%d,\"%s\"oops,y\n", i, body)
			case 1: // a bare quote in an unquoted field
				fmt.Fprintf(&b, "%d,a\"b,y\n", i)
			case 2: // a ragged row
				fmt.Fprintf(&b, "%d,\"%s\"\n", i, body)
			default:
				fmt.Fprintf(&b, "%d,\"%s\",y\n", i, body)
			}
		}
		if rnd.IntN(4) == 0 {
			b.WriteString("99,\"never closed\n" + strings.Repeat("z", rnd.IntN(20000)))
		}
		in := b.String()
		whole := readAllRows(t, in, 1<<40)
		kept := readAllRows(t, in, 100)
		require.Len(t, kept, len(whole), "file %d", n)
		sawCut := false
		for i := range whole {
			w, k := whole[i], kept[i]
			require.Equal(t, w.Cols, k.Cols, "file %d row %d", n, i)
			require.Equal(t, w.Err, k.Err, "file %d row %d", n, i)
			if sawCut && w.Err != nil {
				after++
			}
			if len(w.Text) <= 100+2*tailKept && k.Text == w.Text {
				continue // short enough to be kept whole
			}
			cut++
			sawCut = true
			require.True(t, strings.HasPrefix(k.Text, w.Text[:100]), "file %d row %d", n, i)
			require.Regexp(t, `^\n\[… \d+ more bytes of this record, not kept\]$`, k.Text[100:], "file %d row %d", n, i)
		}
	}
	require.Greater(t, cut, 5, "texts cut short")
	require.Greater(t, after, 5, "broken rows read after a long one")
}

func readAllRows(t *testing.T, in string, keptText int64) []Row {
	t.Helper()
	rr, err := NewRowReader(strings.NewReader(in), ReadOptions{Name: "r.csv", Format: FormatCSV, keptText: keptText})
	require.NoError(t, err)
	var rows []Row
	for {
		row, err := rr.Next()
		if errors.Is(err, io.EOF) {
			return rows
		}
		require.NoError(t, err)
		row.Start, row.End = 0, 0 // where a row stands is TestRecordAtSpan's
		rows = append(rows, row)
	}
}

// TestLineEndsAgainstByteByByte: lineEnds, which jumps from quote to quote
// and "\r" to "\r", gives what a byte-by-byte reading of encoding/csv's
// states gives, whatever the input and however it arrives.
func TestLineEndsAgainstByteByByte(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(11, 18))
	const alphabet = `ab,;""` + "\r\r\n\n "
	for n := range 3000 {
		in := make([]byte, rnd.IntN(60))
		for i := range in {
			in[i] = alphabet[rnd.IntN(len(alphabet))]
		}
		comma := byte(",;"[rnd.IntN(2)])
		inQuotes := rnd.IntN(2) == 0
		want := lineEndsByteByByte(in, comma, inQuotes)
		for _, r := range []io.Reader{bytes.NewReader(in), iotest.OneByteReader(bytes.NewReader(in)), iotest.HalfReader(bytes.NewReader(in))} {
			got, err := io.ReadAll(&lineEnds{r: bufio.NewReaderSize(r, 16), comma: comma, inQuotes: inQuotes})
			require.NoError(t, err)
			require.Equal(t, string(want), string(got), "input %d: %q (comma %q, inQuotes %v)", n, in, comma, inQuotes)
		}
	}
}

// lineEndsByteByByte is lineEnds written the plain way, for the test above.
func lineEndsByteByByte(in []byte, comma byte, inQuotes bool) []byte {
	out := bytes.Clone(in)
	state := atField
	for i := 0; i < len(out); i++ {
		b := out[i]
		if b == '\r' {
			if i+1 < len(out) && out[i+1] == '\n' {
				continue
			}
			if state == inQuoted {
				if inQuotes {
					out[i] = '\n'
				}
				continue
			}
			out[i], b = '\n', '\n'
		}
		switch {
		case state == atField && b == '"', state == quoteSeen && b == '"':
			state = inQuoted
		case state == inQuoted && b == '"':
			state = quoteSeen
		case (state == atField || state == inField || state == quoteSeen) && (b == comma || b == '\n'), state == toLineEnd && b == '\n':
			state = atField
		case state == atField:
			state = inField
		case state == inField && b == '"', state == quoteSeen:
			state = toLineEnd
		}
	}
	return out
}

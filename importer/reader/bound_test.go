package reader

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The bound on one record (maxRecordBytes, issue 23 item 21): a record
// over it fails alone (R4), its raw row a bounded start of its text, and
// the records after it are read as usual, at their own lines; a quoted
// field or a value that runs to the end of the file over the bound fails
// the file. The tests read with a bound of testBound bytes and keep
// keptBound bytes of a failure's text.
const (
	testBound = 1000
	keptBound = 100
)

// overTheBound is the row of a record over the bound, whose text in the
// file (its line end aside) is record, from line to last.
func overTheBound(file string, line, last int, record string) Row {
	lines := fmt.Sprintf("line %d", line)
	if last > line {
		lines = fmt.Sprintf("lines %d–%d", line, last)
	}
	reason := fmt.Sprintf("the record holds %s bytes (%s), more than the bound of 1000 bytes for one record: "+
		"it is not read, and its raw row keeps only its start; shorten its longest field (or split the record) and run again",
		thousands(int64(len(record))), lines)
	return Row{Line: line, Err: &RowError{File: file, Line: line, Reason: reason},
		Text: record[:keptBound] + fmt.Sprintf("\n[… %d more bytes of this record, not kept]", len(record)-keptBound), over: true}
}

// readBounded reads in whole under the test's bound, and returns the rows
// and the error that ended the reading (nil for io.EOF).
func readBounded(t *testing.T, in string, opt ReadOptions) ([]Row, error) {
	t.Helper()
	// A new csv.Reader or decoder reads on after each record of more than
	// 300 bytes (renewAfter): what it reads is what the first would.
	opt.recordLimit, opt.keptText, opt.renewAt = testBound, keptBound, 300
	rr, err := NewRowReader(strings.NewReader(in), opt)
	require.NoError(t, err)
	// A footer is told by its rows without ids: a record over the bound,
	// whose id is not read, is never one.
	rr.WatchFooter(func(r Row) bool { return len(r.Cols) > 0 && strings.TrimSpace(r.Cols[0].Value) != "" })
	var rows []Row
	for {
		row, err := rr.Next()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
		require.Less(t, len(row.Text), 2*keptBound, "line %d: a failure keeps a bounded start of its text", row.Line)
		rows = append(rows, row)
	}
}

func TestReadCSVRecordOverTheBound(t *testing.T) {
	t.Parallel()
	const f = "b.csv"
	quoted := strings.Repeat("a line with \"\"quotes\"\", and a comma\n", 40) // 1,480 bytes, 40 line breaks
	unquoted := strings.Repeat("x", 1500)
	at := func(n int) string { // a record of n bytes: 2,"…",b
		return `2,"` + strings.Repeat("y", n-len(`2,"",b`)) + `",b`
	}
	tests := []struct {
		name string
		in   string
		want []Row
	}{
		{
			name: "QuotedLineBreaks",
			in:   "id,body,n\n1,short,a\n2,\"" + quoted + "\",b\n3,after,c\n",
			want: []Row{ok(2, "id", "1", "body", "short", "n", "a"), overTheBound(f, 3, 43, "2,\""+quoted+"\",b"),
				ok(44, "id", "3", "body", "after", "n", "c")},
		},
		{
			name: "OneLongLine",
			in:   "id,body,n\n1,short,a\n2," + unquoted + ",b\n3,after,c\n",
			want: []Row{ok(2, "id", "1", "body", "short", "n", "a"), overTheBound(f, 3, 3, "2,"+unquoted+",b"),
				ok(4, "id", "3", "body", "after", "n", "c")},
		},
		{
			name: "CRLFAndBlankLinesBefore",
			in:   "id,body,n\r\n1,short,a\r\n\r\n\r\n2,\"" + strings.ReplaceAll(quoted, "\n", "\r\n") + "\",b\r\n3,after,c\r\n",
			want: []Row{ok(2, "id", "1", "body", "short", "n", "a"), overTheBound(f, 5, 45, "2,\""+strings.ReplaceAll(quoted, "\n", "\r\n")+"\",b"),
				ok(46, "id", "3", "body", "after", "n", "c")},
		},
		{
			name: "MacLineEnds",
			in:   "id,body,n\r1,short,a\r2," + unquoted + ",b\r3,after,c\r",
			want: []Row{ok(2, "id", "1", "body", "short", "n", "a"), overTheBound(f, 3, 3, "2,"+unquoted+",b"),
				ok(4, "id", "3", "body", "after", "n", "c")},
		},
		{
			name: "LastWithoutLineEnd",
			in:   "id,body,n\n1,short,a\n2,\"" + quoted + "\",b",
			want: []Row{ok(2, "id", "1", "body", "short", "n", "a"), overTheBound(f, 3, 43, "2,\""+quoted+"\",b")},
		},
		{
			name: "AfterAnEmptyRowAtTheEnd", // never a footer: it is a record, and fails
			in:   "id,body,n\n1,short,a\n\n2," + unquoted + ",b\n",
			want: []Row{ok(2, "id", "1", "body", "short", "n", "a"), overTheBound(f, 4, 4, "2,"+unquoted+",b")},
		},
		{
			name: "BrokenAndOver", // a stray quote: over the bound, it fails as too large
			in:   "id,body,n\n2,\"" + quoted + "\"oops,b\n3,after,c\n",
			want: []Row{overTheBound(f, 2, 42, "2,\""+quoted+"\"oops,b"), ok(43, "id", "3", "body", "after", "n", "c")},
		},
		{
			name: "AtTheBound",
			in:   "id,body,n\n" + at(testBound) + "\n" + at(testBound) + "\r\n3,after,c\n",
			want: []Row{ok(2, "id", "2", "body", at(testBound)[3:testBound-3], "n", "b"), ok(3, "id", "2", "body", at(testBound)[3:testBound-3], "n", "b"),
				ok(4, "id", "3", "body", "after", "n", "c")},
		},
		{
			name: "OneByteOver",
			in:   "id,body,n\n" + at(testBound+1) + "\r\n3,after,c\n",
			want: []Row{overTheBound(f, 2, 2, at(testBound+1)), ok(3, "id", "3", "body", "after", "n", "c")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rows, err := readBounded(t, tt.in, ReadOptions{Name: f, Format: FormatCSV})
			require.NoError(t, err)
			for i := range rows {
				if rows[i].Err != nil {
					require.Zero(t, rows[i].End, "a record over the bound has no place to be read again from")
					continue
				}
				// Where a record after it stands is where it is in the file.
				require.True(t, strings.HasPrefix(strings.TrimLeft(tt.in[rows[i].Start:rows[i].End], "\r\n"), rows[i].Cols[0].Value+","),
					"line %d", rows[i].Line)
				rows[i].Start, rows[i].End = 0, 0
			}
			require.Equal(t, tt.want, rows)
		})
	}
}

// TestReadCSVQuoteNeverClosedOverTheBound: a quoted field that is never
// closed makes the rest of the file one record; over the bound, the file
// fails, saying so (the records before it are read).
func TestReadCSVQuoteNeverClosedOverTheBound(t *testing.T) {
	t.Parallel()
	in := "id,note\n1,ok\n2,\"never closed\n" + strings.Repeat("3,more data\n", 10000)
	rows, err := readBounded(t, in, ReadOptions{Name: "big.csv", Format: FormatCSV})
	require.Len(t, rows, 1)
	rows[0].Start, rows[0].End = 0, 0
	require.Equal(t, ok(2, "id", "1", "note", "ok"), rows[0])
	var fe *FileError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, &FileError{File: "big.csv", Line: 3, Reason: "a quoted field of the record at line 3 is never closed: " +
		"the rest of the file (117.2 KiB, more than the bound of 1000 bytes for one record) was read into it; close the quote " +
		"(and double each quote inside a quoted field) and run again"}, fe)
}

// TestReadCSVBoundAgainstWhole reads random files, with long records and
// broken ones, twice: with no bound, and with the test's. Every record
// whose text is within the bound is the same row (line, values, reason,
// place); every one over it fails alone as too large; a quote never closed
// that runs over the bound fails the file after the same rows.
func TestReadCSVBoundAgainstWhole(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(23, 21))
	over, after, unclosed := 0, 0, 0
	for n := range 60 {
		var b strings.Builder
		b.WriteString("id,body,x\n")
		for i := range 1 + rnd.IntN(30) {
			body := strings.Repeat(fmt.Sprintf("l%d \"\"q\"\"", i), rnd.IntN(120))
			if rnd.IntN(2) == 0 {
				body = strings.ReplaceAll(body, " ", []string{"\n", "\r\n", "\r"}[rnd.IntN(3)])
			}
			for range rnd.IntN(3) {
				b.WriteString([]string{"\n", "\r\n"}[rnd.IntN(2)])
			}
			switch rnd.IntN(6) {
			case 0: // a stray quote after the field
				fmt.Fprintf(&b, "%d,\"%s\"oops,y\n", i, body)
			case 1: // a long unquoted field
				fmt.Fprintf(&b, "%d,%s,y\r\n", i, strings.Repeat("u", rnd.IntN(2*testBound)))
			case 2: // a ragged row
				fmt.Fprintf(&b, "%d,\"%s\"\n", i, body)
			default:
				fmt.Fprintf(&b, "%d,\"%s\",y\n", i, body)
			}
		}
		if rnd.IntN(4) == 0 {
			b.WriteString("99,\"never closed\n" + strings.Repeat("z", rnd.IntN(3*testBound)))
		}
		in := b.String()
		whole := readWithSpans(t, in, ReadOptions{Name: "r.csv", Format: FormatCSV})
		rr, err := NewRowReader(strings.NewReader(in), ReadOptions{Name: "r.csv", Format: FormatCSV, keptText: keptBound, recordLimit: testBound, renewAt: 300})
		require.NoError(t, err)
		sawOver := false
		for i, w := range whole {
			row, err := rr.Next()
			// What the bound bounds: the record's text from its first line
			// to its end, its line end aside.
			size := len(strings.TrimRight(strings.TrimLeft(in[w.Start:w.End], "\r\n"), "\r\n"))
			if size > testBound && i == len(whole)-1 && w.Err != nil && strings.Contains(w.Err.Reason, "never closed") {
				var fe *FileError
				require.ErrorAs(t, err, &fe, "file %d line %d", n, w.Line)
				require.Contains(t, fe.Reason, "is never closed")
				unclosed++
				break
			}
			require.NoError(t, err, "file %d line %d", n, w.Line)
			if size > testBound {
				over++
				sawOver = true
				require.Equal(t, w.Line, row.Line, "file %d", n)
				require.NotNil(t, row.Err, "file %d line %d", n, w.Line)
				require.Contains(t, row.Err.Reason, "more than the bound of 1000 bytes for one record", "file %d line %d", n, w.Line)
				require.Nil(t, row.Cols)
				continue
			}
			if sawOver {
				after++
			}
			require.Equal(t, w, row, "file %d line %d", n, w.Line)
		}
	}
	require.Greater(t, over, 20, "records over the bound")
	require.Greater(t, after, 20, "records read after one over the bound")
	require.Positive(t, unclosed, "quotes never closed over the bound")
}

// readWithSpans reads every row of in, where each stands included.
func readWithSpans(t *testing.T, in string, opt ReadOptions) []Row {
	t.Helper()
	rr, err := NewRowReader(strings.NewReader(in), opt)
	require.NoError(t, err)
	var rows []Row
	for {
		row, err := rr.Next()
		if errors.Is(err, io.EOF) {
			return rows
		}
		require.NoError(t, err)
		rows = append(rows, row)
	}
}

func TestReadJSONRecordOverTheBound(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("x", 2*testBound)
	pretty := "{\n  \"id\": \"2\",\n  \"body\": \"" + body + "\",\n  \"n\": [1,\n 2]\n}" // six lines
	line := `{"id": "2", "body": "` + body + `"}`
	at := func(n int) string { // an object of n bytes
		return `{"id": "2", "body": "` + strings.Repeat("y", n-len(`{"id": "2", "body": ""}`)) + `"}`
	}
	tests := []struct {
		name   string
		file   string
		format Format
		in     string
		want   []Row
	}{
		{
			name: "Array", file: "a.json", format: FormatJSON,
			in:   "[\n{\"id\": \"1\"},\n" + pretty + ",\n{\"id\": \"3\"}\n]\n",
			want: []Row{ok(2, "id", "1"), overTheBound("a.json", 3, 8, pretty), ok(9, "id", "3")},
		},
		{
			name: "Wrapped", file: "w.json", format: FormatJSON,
			in:   "{\"records\": [\n{\"id\": \"1\"},\n" + pretty + ", {\"id\": \"3\"}],\n\"done\": true}\n",
			want: []Row{ok(2, "id", "1"), overTheBound("w.json", 3, 8, pretty), ok(8, "id", "3")},
		},
		{
			name: "Stream", file: "s.json", format: FormatJSON,
			in:   "{\n\"id\": \"1\"\n}\n" + pretty + "\n{\"id\": \"3\"}\n",
			want: []Row{ok(1, "id", "1"), overTheBound("s.json", 4, 9, pretty), ok(10, "id", "3")},
		},
		{
			name: "NotAnObject", file: "a.json", format: FormatJSON,
			in:   "[{\"id\": \"1\"},\n\"" + body + "\",\n{\"id\": \"3\"}]",
			want: []Row{ok(1, "id", "1"), overTheBound("a.json", 2, 2, `"`+body+`"`), ok(3, "id", "3")},
		},
		{
			name: "ArrayAtTheBound", file: "a.json", format: FormatJSON,
			in: "[" + at(testBound) + ",\n" + at(testBound+1) + "\n,{\"id\": \"3\"}]",
			want: []Row{ok(1, "id", "2", "body", at(testBound)[len(`{"id": "2", "body": "`):testBound-2]), overTheBound("a.json", 2, 2, at(testBound+1)),
				ok(3, "id", "3")},
		},
		{
			name: "JSONLines", file: "l.jsonl", format: FormatJSONL,
			in:   "{\"id\": \"1\"}\n" + line + "\r\n{\"id\": \"3\"}\n",
			want: []Row{ok(1, "id", "1"), overTheBound("l.jsonl", 2, 2, line), ok(3, "id", "3")},
		},
		{
			name: "JSONLinesFirst", file: "l.jsonl", format: FormatJSONL,
			in:   line + "\n{\"id\": \"3\"}\n",
			want: []Row{overTheBound("l.jsonl", 1, 1, line), ok(2, "id", "3")},
		},
		{
			name: "JSONLinesInAJSONFile", file: "l.json", format: FormatJSON,
			in:   "{\"id\": \"1\"}\n" + line + "\n{\"id\": \"3\"}\n",
			want: []Row{ok(1, "id", "1"), overTheBound("l.json", 2, 2, line), ok(3, "id", "3")},
		},
		{
			name: "JSONLinesAtTheBound", file: "l.jsonl", format: FormatJSONL,
			in: at(testBound) + "\r\n" + at(testBound+1) + "\n{\"id\": \"3\"}",
			want: []Row{ok(1, "id", "2", "body", at(testBound)[len(`{"id": "2", "body": "`):testBound-2]), overTheBound("l.jsonl", 2, 2, at(testBound+1)),
				ok(3, "id", "3")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rows, err := readBounded(t, tt.in, ReadOptions{Name: tt.file, Format: tt.format})
			require.NoError(t, err)
			require.Equal(t, tt.want, rows)
		})
	}
}

// TestReadJSONValueNeverEndsOverTheBound: a value that runs to the end of
// the file over the bound fails the file, saying where it starts.
func TestReadJSONValueNeverEndsOverTheBound(t *testing.T) {
	t.Parallel()
	in := "[{\"id\": \"1\"},\n{\"id\": \"2\", \"body\": \"" + strings.Repeat("x\\n", 2*testBound)
	rows, err := readBounded(t, in, ReadOptions{Name: "cut.json", Format: FormatJSON})
	require.Equal(t, []Row{ok(1, "id", "1")}, rows)
	var fe *FileError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, &FileError{File: "cut.json", Line: 2, Reason: "the value starting at line 2 runs to the end of the file " +
		"(5.9 KiB, more than the bound of 1000 bytes for one record): is the file cut short?"}, fe)
}

// TestSurveyJSONOverTheBound: the outline of a file whose array holds a
// record over the bound is read through it (the record fails alone when
// the records are read).
func TestSurveyJSONOverTheBound(t *testing.T) {
	t.Parallel()
	in := "{\"results\": [{\"id\": \"1\"},\n{\"id\": \"2\", \"body\": \"" + strings.Repeat("x", 2*testBound) + "\"}],\n\"paging\": {}}"
	require.NoError(t, SurveyJSON(strings.NewReader(in), ReadOptions{Name: "s.json", Format: FormatJSON, recordLimit: testBound}))
	in = strings.Replace(in, "\"paging\": {}", "\"data\": [{\"id\": \"3\"}]", 1)
	var fe *FileError
	require.ErrorAs(t, SurveyJSON(strings.NewReader(in), ReadOptions{Name: "s.json", Format: FormatJSON, recordLimit: testBound}), &fe)
	require.Contains(t, fe.Reason, `holds two arrays of records, "results" at line 1 and "data" at line 3`)
}

// TestReadJSONBoundAgainstWhole reads random files of each layout (an
// array, a wrapper object, concatenated objects, JSON Lines) twice: with no
// bound, and with the test's. Every record within the bound is the same
// row; every one over it fails alone at its line, and the reading goes on.
func TestReadJSONBoundAgainstWhole(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(21, 23))
	over, after := 0, 0
	for n := range 80 {
		layout := rnd.IntN(4)
		var recs []string
		for i := range 1 + rnd.IntN(20) {
			body := strings.Repeat(`a \"quoted\" ] } \\ text `, rnd.IntN(90))
			rec := fmt.Sprintf(`{"id": "%d", "body": "%s", "tags": [1, {"a": "]"}], "n": null}`, i, body)
			if layout != 3 && rnd.IntN(2) == 0 {
				rec = strings.ReplaceAll(rec, ", ", ",\n  ") // pretty, over several lines
			}
			recs = append(recs, rec)
		}
		var in, file string
		format := FormatJSON
		switch layout {
		case 0:
			in, file = "[\n"+strings.Join(recs, ",\n")+"\n]\n", "a.json"
		case 1:
			in, file = "{\"data\": [\n"+strings.Join(recs, ",\n")+"\n],\n\"more\": false}", "w.json"
		case 2:
			in, file = "{\n}\n"+strings.Join(recs, "\n")+"\n", "s.json"
		default:
			in, file, format = strings.Join(recs, "\n")+"\n", "l.jsonl", FormatJSONL
		}
		whole := readWithSpans(t, in, ReadOptions{Name: file, Format: format})
		if layout == 2 {
			whole = whole[1:] // the empty object first, which makes the file a stream
		}
		require.Len(t, whole, len(recs), "file %d", n)
		bounded, err := readBounded(t, in, ReadOptions{Name: file, Format: format})
		require.NoError(t, err, "file %d", n)
		if layout == 2 {
			bounded = bounded[1:]
		}
		require.Len(t, bounded, len(recs), "file %d", n)
		sawOver := false
		for i, w := range whole {
			row := bounded[i]
			if len(recs[i]) > testBound {
				over++
				sawOver = true
				require.Equal(t, overTheBound(file, w.Line, w.Line+strings.Count(recs[i], "\n"), recs[i]), row, "file %d record %d", n, i)
				continue
			}
			if sawOver {
				after++
			}
			require.Equal(t, w, row, "file %d record %d", n, i)
		}
	}
	require.Greater(t, over, 50, "records over the bound")
	require.Greater(t, after, 50, "records read after one over the bound")
}

// TestReadJSONFirstObjectOverTheBound: a .json file that does not start
// with an array starts with an object read key by key, to find a wrapper's
// array of records; over the bound, it cannot be read past as one record,
// and the file fails, saying what to do.
func TestReadJSONFirstObjectOverTheBound(t *testing.T) {
	t.Parallel()
	in := "\n{\"id\": \"1\", \"body\": \"" + strings.Repeat("x", 2*testBound) + "\"}\n{\"id\": \"2\"}\n"
	rows, err := readBounded(t, in, ReadOptions{Name: "l.json", Format: FormatJSON})
	require.Empty(t, rows)
	var fe *FileError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, 2, fe.Line)
	require.Contains(t, fe.Reason, "the object at line 2 is over the bound of 1000 bytes for one record")
	require.Contains(t, fe.Reason, "name it .jsonl and run again")
	rows, err = readBounded(t, in, ReadOptions{Name: "l.jsonl", Format: FormatJSONL})
	require.NoError(t, err)
	require.Len(t, rows, 2)
	require.True(t, rows[0].over)
	require.Equal(t, ok(3, "id", "2"), rows[1])
}

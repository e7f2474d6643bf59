package reader

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReadJSON(t *testing.T) {
	t.Parallel()
	const f = "t.json"
	bigNote := strings.Repeat(`line \"quoted\" \u00e9\n`, 300000) // about 6 MB of JSON text
	tests := []struct {
		name     string
		in       string
		format   Format
		encoding string
		want     []Row
		wantErr  string // of the *FileError that ends reading
		wantLine int    // of that error
	}{
		{
			name:   "Array",
			in:     `[{"id":"1","name":"Ann"},{"id":"2","name":"Bob"}]`,
			format: FormatJSON,
			want:   []Row{ok(1, "id", "1", "name", "Ann"), ok(1, "id", "2", "name", "Bob")},
		},
		{
			name: "PrettyArrayLines",
			in: "[\n" +
				"  {\n    \"id\": \"1\",\n    \"note\": \"a\"\n  },\n" +
				"  {\"id\": \"2\"},\n" +
				"\n" +
				"  {\n    \"id\": \"3\"\n  }\n" +
				"]\n",
			format: FormatJSON,
			want:   []Row{ok(2, "id", "1", "note", "a"), ok(6, "id", "2"), ok(8, "id", "3")},
		},
		{
			name:   "BOM",
			in:     "\xef\xbb\xbf[{\"id\":\"1\"}]",
			format: FormatJSON,
			want:   []Row{ok(1, "id", "1")},
		},
		{
			name:   "KeyOrderAndDuplicateKeys",
			in:     `[{"z":"1","a":"2","m":"3","a":"4"}]`,
			format: FormatJSON,
			want:   []Row{ok(1, "z", "1", "a", "2", "m", "3", "a", "4")},
		},
		{
			name:   "WrapperRecords",
			in:     "{\n\"records\": [\n{\"attributes\": {\"type\": \"Account\", \"referenceId\": \"AccountRef1\"}, \"Name\": \"Acme\"},\n{\"Name\": \"Globex\", \"ParentId\": \"@AccountRef1\"}\n]\n}\n",
			format: FormatJSON,
			want: []Row{
				ok(3, "attributes", `{"type":"Account","referenceId":"AccountRef1"}`, "Name", "Acme"),
				ok(4, "Name", "Globex", "ParentId", "@AccountRef1"),
			},
		},
		{
			name:   "WrapperResultsAfterOtherKeys",
			in:     `{"total": 2, "paging": {"next": {"after": "2"}}, "results": [{"id": "101", "properties": {"email": "a@example.com", "n": 1.50}}, {"id": "102"}], "extra": [1, 2]}`,
			format: FormatJSON,
			want: []Row{
				ok(1, "id", "101", "properties", `{"email":"a@example.com","n":1.50}`),
				ok(1, "id", "102"),
			},
		},
		{
			name:   "WrapperData",
			in:     `{"data": [{"id": 7}]}`,
			format: FormatJSON,
			want:   []Row{ok(1, "id", "7")},
		},
		{
			name:   "WrapperFirstKeyHoldingAnArray",
			in:     `{"data": {"note": "not the records"}, "records": [{"id": "1"}], "results": "none", "data": null}`,
			format: FormatJSON,
			want:   []Row{ok(1, "id", "1")},
		},
		{
			// Was: the records of "data" were dropped silently.
			name:     "WrapperTwoArraysOfRecords",
			in:       "{\"total\": 2,\n \"results\": [\n{\"id\": \"1\"}\n],\n \"paging\": {\"data\": [1]},\n \"data\": [\n{\"id\": \"2\"}]}",
			format:   FormatJSON,
			want:     []Row{ok(3, "id", "1")},
			wantErr:  `holds two arrays of records, "results" at line 2 and "data" at line 6: crmimport reads one array per file and cannot tell which one holds the records; keep the one that does (or put each in a file of its own) and run again`,
			wantLine: 6,
		},
		{
			// Was: the records of the second "data" were dropped silently
			// (a JSON parser that keeps the last key would read only those).
			name:     "WrapperKeyTwice",
			in:       "{\"data\": [{\"id\": \"1\"}],\n\"data\": []}",
			format:   FormatJSON,
			want:     []Row{ok(1, "id", "1")},
			wantErr:  `holds the key "data" twice, each an array of records (at lines 1 and 2): crmimport reads one array per file`,
			wantLine: 2,
		},
		{
			name:   "WrapperEmpty",
			in:     `{"records": []}`,
			format: FormatJSON,
		},
		{
			name:     "WrapperFollowedByMoreObjects",
			in:       "{\"id\": \"1\", \"data\": [{\"x\": 1}]}\n{\"id\": \"2\"}\n",
			format:   FormatJSON,
			want:     []Row{ok(1, "x", "1")},
			wantErr:  "unexpected data after the object holding the records (JSON Lines? name the file .jsonl)",
			wantLine: 2,
		},
		{
			name:   "JSONLInJSONFile",
			in:     "{\"id\": \"1\", \"name\": \"Ann\"}\n{\"id\": \"2\"}\n",
			format: FormatJSON,
			want:   []Row{ok(1, "id", "1", "name", "Ann"), ok(2, "id", "2")},
		},
		{
			name:   "JSONLInJSONFileWithWrapperKeyNotArray",
			in:     "{\"id\": \"1\", \"data\": {\"b\": [1, 2], \"a\": \"<x>\"}, \"results\": \"none\", \"records\": null}\n{\"id\": \"2\", \"data\": 5}\n",
			format: FormatJSON,
			want: []Row{
				ok(1, "id", "1", "data", `{"b":[1,2],"a":"<x>"}`, "results", "none", "records", ""),
				ok(2, "id", "2", "data", "5"),
			},
		},
		{
			name:   "JSONLBlankLines",
			in:     "{\"id\":\"1\"}\n\n{\"id\":\"2\"}\r\n\r\n\n{\"id\":\"3\"}\n\n",
			format: FormatJSONL,
			want:   []Row{ok(1, "id", "1"), ok(3, "id", "2"), ok(6, "id", "3")},
		},
		{
			name:   "JSONLWrapperKeyIsARecordField",
			in:     "{\"id\":\"1\",\"data\":[{\"a\":1}]}\n{\"id\":\"2\"}\n",
			format: FormatJSONL,
			want:   []Row{ok(1, "id", "1", "data", `[{"a":1}]`), ok(2, "id", "2")},
		},
		{
			name:   "JSONLArrayTolerated",
			in:     "[{\"id\":\"1\"},\n{\"id\":\"2\"}]\n",
			format: FormatJSONL,
			want:   []Row{ok(1, "id", "1"), ok(2, "id", "2")},
		},
		{
			name:   "Values",
			in:     `[{"s": "a\nb\u00e9 \"q\"", "n": 1.50, "big": 12345678901234567890, "e": 1e-7, "neg": -0.0, "t": true, "f": false, "null": null, "obj": {"b": 1, "a": [true, null, "x"]}, "arr": [ 1 , 2 ], "empty": ""}]`,
			format: FormatJSON,
			want: []Row{ok(1,
				"s", "a\nbé \"q\"", "n", "1.50", "big", "12345678901234567890", "e", "1e-7", "neg", "-0.0",
				"t", "true", "f", "false", "null", "", "obj", `{"b":1,"a":[true,null,"x"]}`, "arr", "[1,2]", "empty", "")},
		},
		{
			name:   "EmptyObject",
			in:     `[{}]`,
			format: FormatJSON,
			want:   []Row{{Line: 1}},
		},
		{
			name:   "NonObjectElements",
			in:     "[{\"id\":\"1\"},\n 42,\n \"x\",\n null,\n [1, [2, {\"a\": 3}]],\n true,\n {\"id\":\"2\"}]",
			format: FormatJSON,
			want: []Row{
				ok(1, "id", "1"),
				bad(f, 2, "expected an object, found number"),
				bad(f, 3, "expected an object, found string"),
				bad(f, 4, "expected an object, found null"),
				bad(f, 5, "expected an object, found array"),
				bad(f, 6, "expected an object, found boolean"),
				ok(7, "id", "2"),
			},
		},
		{
			// A line of JSON Lines is one record: an array that goes on to
			// the next line is two broken lines.
			name:   "JSONLNonObject",
			in:     "{\"id\":\"1\"}\n[1,\n2]\n\"s\"\n[{\"id\": \"x\"}]\n{\"id\":\"2\"}\n",
			format: FormatJSONL,
			want: []Row{
				ok(1, "id", "1"),
				text(bad(f, 2, "the line ends inside its record (cut short? a line of JSON Lines holds one whole record)"), "[1,"),
				text(bad(f, 3, `unexpected data after the record ("]"): a line of JSON Lines holds one record`), "2]"),
				text(bad(f, 4, "expected an object, found string"), `"s"`),
				text(bad(f, 5, "expected an object, found array"), `[{"id": "x"}]`),
				ok(6, "id", "2"),
			},
		},
		{
			name:     "SyntaxErrorInValue",
			in:       "[\n{\"id\":\"1\"},\n{\"id\": oops}\n]",
			format:   FormatJSON,
			want:     []Row{ok(2, "id", "1")},
			wantErr:  "invalid JSON: invalid character 'o' looking for beginning of value",
			wantLine: 3,
		},
		{
			name:     "SyntaxErrorDeepInNestedValue",
			in:       "[\n{\"id\": \"1\",\n \"nested\": {\n   \"a\": 1,\n   \"b\": [1,\n     2,,\n   3]\n }}\n]",
			format:   FormatJSON,
			wantErr:  "invalid JSON: invalid character ','",
			wantLine: 6,
		},
		{
			name:     "SyntaxErrorMissingComma",
			in:       "[\n{\"id\":\"1\"}\n{\"id\":\"2\"}\n]",
			format:   FormatJSON,
			want:     []Row{ok(2, "id", "1")},
			wantErr:  "invalid JSON: expected comma after array element",
			wantLine: 3,
		},
		{
			// Was: the whole file failed at line 3. A broken line fails
			// alone, and reading goes on at the next line.
			name:   "SyntaxErrorJSONL",
			in:     "{\"id\":\"1\"}\n{\"id\":\"2\"}\n{\"id\" \"3\"}\n{\"id\":\"4\"}\n",
			format: FormatJSONL,
			want: []Row{ok(1, "id", "1"), ok(2, "id", "2"),
				text(bad(f, 3, "invalid JSON: expected colon after object key"), `{"id" "3"}`), ok(4, "id", "4")},
		},
		{
			// Each broken line fails alone with its line, what could be read
			// of it and its text; reading goes on at the next line.
			name: "JSONLBrokenLines",
			in: "{\"id\":\"1\"}\n" +
				"{\"id\":\"2\", \"name\": \"Bo\n" + // cut short inside a string
				"{\"id\":\"3\", \"name\": \"Cy\"\r\n" + // the closing brace missing
				"{\"id\":\"4\"}\r\n" +
				"not json at all\n" +
				"{\"id\":\"5\"} {\"id\":\"6\"}\n" + // two records on one line
				"{\"id\":\"7\", \"n\": 1 2}\n" +
				"\n" +
				"{\"id\":\"8\"}\n" +
				"{\"id\":\"9\",", // the last line, cut short
			format: FormatJSONL,
			want: []Row{
				ok(1, "id", "1"),
				text(bad(f, 2, "the line ends inside its record (cut short? a line of JSON Lines holds one whole record)", "id", "2"),
					`{"id":"2", "name": "Bo`),
				text(bad(f, 3, "the line ends inside its record (cut short? a line of JSON Lines holds one whole record)", "id", "3", "name", "Cy"),
					`{"id":"3", "name": "Cy"`),
				ok(4, "id", "4"),
				text(bad(f, 5, "invalid JSON: invalid character 'o' in literal null (expecting 'u')"), "not json at all"),
				text(bad(f, 6, `unexpected data after the record ("{\"id\":\"6\"}"): a line of JSON Lines holds one record`, "id", "5"),
					`{"id":"5"} {"id":"6"}`),
				text(bad(f, 7, "invalid JSON: invalid character '2' after object key:value pair", "id", "7", "n", "1"), `{"id":"7", "n": 1 2}`),
				ok(9, "id", "8"),
				text(bad(f, 10, "the line ends inside its record (cut short? a line of JSON Lines holds one whole record)", "id", "9"), `{"id":"9",`),
			},
		},
		{
			// The first line broken, and no record ending on a later line
			// either: it fails alone, and reading goes back to line 2.
			name:   "JSONLFirstLineBroken",
			in:     "\n{\"id\":\"1\", \"tags\": [\n{\"id\":\"2\"}\n{\"id\":\"3\"}\n",
			format: FormatJSONL,
			want: []Row{
				text(bad(f, 2, "the line ends inside its record (cut short? a line of JSON Lines holds one whole record)", "id", "1"), `{"id":"1", "tags": [`),
				ok(3, "id", "2"),
				ok(4, "id", "3"),
			},
		},
		{
			// Pretty-printed objects one after the other (jq without -c) in
			// a .jsonl file: the first record ends on a later line, so the
			// file is read as a stream of values, as before.
			name:   "JSONLPrettyPrinted",
			in:     "{\n  \"id\": \"1\",\n  \"tags\": [\"a\"]\n}\n{\n  \"id\": \"2\"\n}\n",
			format: FormatJSONL,
			want:   []Row{ok(1, "id", "1", "tags", `["a"]`), ok(5, "id", "2")},
		},
		{
			// ... where a syntax error ends the file: no line tells where
			// the next record starts.
			name:     "JSONLPrettyPrintedSyntaxError",
			in:       "{\n  \"id\": \"1\"\n}\n{\n  \"id\": \"2\"\n  \"x\": 1\n}\n",
			format:   FormatJSONL,
			want:     []Row{ok(1, "id", "1")},
			wantErr:  "invalid JSON: invalid character '\"' after object key:value pair",
			wantLine: 6,
		},
		{
			// JSON Lines in a .json file: after its first record, line by
			// line, a broken line failing alone.
			name:   "JSONLInJSONFileBrokenLine",
			in:     "{\"id\": \"1\"}\n{\"id\": \"2\" \"x\"}\n{\"id\": \"3\"} \n",
			format: FormatJSON,
			want: []Row{ok(1, "id", "1"), text(bad(f, 2, "invalid JSON: invalid character '\"' after object key:value pair", "id", "2"), `{"id": "2" "x"}`),
				ok(3, "id", "3")},
		},
		{
			name:     "SyntaxErrorBadLiteral",
			in:       "[{\"id\": 1},\n{\"id\": tru}]",
			format:   FormatJSON,
			want:     []Row{ok(1, "id", "1")},
			wantErr:  "invalid JSON: invalid character '}' in literal true (expecting 'e')",
			wantLine: 2,
		},
		{
			name:     "SyntaxErrorAfterBigValue",
			in:       "[{\"id\": \"1\", \"note\": \"" + bigNote + "\"},\n{\"id\": \"2\"},\n{\"id\": \"3\",}]",
			format:   FormatJSON,
			want:     []Row{ok(1, "id", "1", "note", strings.Repeat("line \"quoted\" é\n", 300000)), ok(2, "id", "2")},
			wantErr:  "invalid JSON: invalid character '}' looking for beginning of object key string",
			wantLine: 3,
		},
		{
			name:     "Truncated",
			in:       "[{\"id\":\"1\"},\n{\"id\":\"2\", \"name\": \"Bo",
			format:   FormatJSON,
			want:     []Row{ok(1, "id", "1")},
			wantErr:  "unexpected end of the file inside a value",
			wantLine: 2,
		},
		{
			name:     "TruncatedBetweenElements",
			in:       "[{\"id\":\"1\"},\n",
			format:   FormatJSON,
			want:     []Row{ok(1, "id", "1")},
			wantErr:  "unexpected end of the file inside a value",
			wantLine: 1,
		},
		{
			name:     "DataAfterArray",
			in:       "[{\"id\":\"1\"}]\n[{\"id\":\"2\"}]",
			format:   FormatJSON,
			want:     []Row{ok(1, "id", "1")},
			wantErr:  "unexpected data after the closing ] of the array",
			wantLine: 2,
		},
		{name: "EmptyFile", in: "", format: FormatJSON},
		{name: "WhitespaceOnly", in: " \n\t\r\n", format: FormatJSONL},
		{name: "EmptyArray", in: "[ ]\n", format: FormatJSON},
		{name: "BOMOnly", in: "\xef\xbb\xbf", format: FormatJSON},
		{
			name:   "InvalidUTF8Flagged",
			in:     "[{\"id\":\"1\",\"name\":\"Ren\xe9\"},{\"id\":\"2\"}]",
			format: FormatJSON,
			want:   []Row{bad(f, 1, "not valid UTF-8 (try --encoding windows-1252)", "id", "1", "name", "Ren\uFFFD"), ok(1, "id", "2")},
		},
		{
			name:     "Windows1252Decoded",
			in:       "[{\"name\":\"Ren\xe9 \x80\"}]",
			format:   FormatJSON,
			encoding: "windows-1252",
			want:     []Row{ok(1, "name", "René €")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rr, rows, err := readAll(t, []byte(tt.in), ReadOptions{Name: f, Format: tt.format, Encoding: tt.encoding})
			require.Equal(t, len(tt.want), len(rows))
			markNested(tt.want)
			for i := range tt.want {
				require.Equal(t, tt.want[i], rows[i], "row %d", i)
			}
			if tt.wantErr != "" {
				var fe *FileError
				require.ErrorAs(t, err, &fe)
				require.Contains(t, fe.Reason, tt.wantErr)
				require.Equal(t, tt.wantLine, fe.Line)
				require.Equal(t, f, fe.File)
				return
			}
			require.NoError(t, err)
			require.Nil(t, rr.Header())
			require.Zero(t, rr.Delimiter())
		})
	}
}

// TestReadJSONLineCounterBounded: the line counter forgets what it has
// counted, so its memory stays about one record however long the file.
func TestReadJSONLineCounterBounded(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	b.WriteString("[\n")
	for i := range 50000 {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString(`{"id": "x", "note": "some text to make the file bigger than the buffers"}`)
	}
	b.WriteString("\n]\n")
	rr, err := NewRowReader(bytes.NewReader(b.Bytes()), ReadOptions{Name: "big.json", Format: FormatJSON})
	require.NoError(t, err)
	n := 0
	for {
		row, err := rr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		n++
		require.Equal(t, n+1, row.Line)
		require.Less(t, cap(rr.src.(*jsonSource).lines.nl), 1<<10, "the line counter keeps the whole file's line breaks")
	}
	require.Equal(t, 50000, n)
}

// markNested marks the expected values written as JSON objects or arrays:
// in these cases no string value starts with { or [ (NestedFlag checks that
// one which does is not marked).
func markNested(rows []Row) {
	for _, r := range rows {
		for i, c := range r.Cols {
			if strings.HasPrefix(c.Value, "{") || strings.HasPrefix(c.Value, "[") {
				r.Cols[i].Nested = true
			}
		}
	}
}

func TestReadJSONNestedFlag(t *testing.T) {
	t.Parallel()
	_, rows, _ := readAll(t, []byte(`[{"a":"[not nested]","b":{"x":1},"c":[1,2],"d":"{}"}]`), ReadOptions{Name: "n.json", Format: FormatJSON})
	require.Len(t, rows, 1)
	require.Equal(t, []Col{{Name: "a", Value: "[not nested]"}, {Name: "b", Value: `{"x":1}`, Nested: true},
		{Name: "c", Value: "[1,2]", Nested: true}, {Name: "d", Value: "{}"}}, rows[0].Cols)
}

// TestSurveyJSON: the outline of a JSON file says, before any record is
// read, whether reading its records would end in a second array of
// records (or data after the wrapper object); of an array or JSON Lines it
// reads the first token only.
func TestSurveyJSON(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		in       string
		format   Format
		wantErr  string
		wantLine int
	}{
		"Array":             {in: "[{\"id\": \"1\"},\n{\"id\": oops}]", format: FormatJSON},
		"JSONLines":         {in: "{\"id\": \"1\"}\n{\"id\" \"2\"}\n", format: FormatJSON},
		"JSONLinesFile":     {in: "{\"data\": [1]}\n{\"data\": [2]}\n", format: FormatJSONL},
		"OneArrayOfRecords": {in: "{\"results\": [{\"id\": \"1\"}, {\"id\": \"2\"}], \"paging\": {\"next\": null}}", format: FormatJSON},
		"CSV":               {in: "id\n1\n", format: FormatCSV},
		"TwoArraysOfRecords": {in: "{\"results\": [{\"id\": \"1\"},\n{\"id\": \"2\"}],\n\"data\": [{\"id\": \"3\"}]}", format: FormatJSON,
			wantErr: `holds two arrays of records, "results" at line 1 and "data" at line 3`, wantLine: 3},
		"KeyTwice": {in: "{\"records\": [],\n\n\"records\": [{\"id\": \"1\"}]}", format: FormatJSON,
			wantErr: `holds the key "records" twice, each an array of records (at lines 1 and 3)`, wantLine: 3},
		"MoreAfterTheWrapper": {in: "{\"id\": \"1\", \"data\": [{\"x\": 1}]}\n{\"id\": \"2\"}\n", format: FormatJSON,
			wantErr: "unexpected data after the object holding the records (JSON Lines? name the file .jsonl)", wantLine: 2},
		"SyntaxErrorInTheRecords": {in: "{\"records\": [{\"id\": \"1\"},\n{\"id\": 1 2}]}", format: FormatJSON,
			wantErr: "invalid JSON", wantLine: 2},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			err := SurveyJSON(strings.NewReader(c.in), ReadOptions{Name: "s.json", Format: c.format})
			if c.wantErr == "" {
				require.NoError(t, err)
				return
			}
			var fe *FileError
			require.ErrorAs(t, err, &fe)
			require.Contains(t, fe.Reason, c.wantErr)
			require.Equal(t, c.wantLine, fe.Line)
			require.Equal(t, "s.json", fe.File)
		})
	}
}

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

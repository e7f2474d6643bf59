package suggest

// Reading an export as a run does (folders, zips, .gz, single files), the
// header and the first rows of each file.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"

	"crmimport/importer/input"
	"crmimport/importer/profile"
	"crmimport/importer/reader"
	"crmimport/ledger"
)

// sample is one file as read: its columns (a CSV header, or a JSON file's
// keys in the order they first appear, objects flattened into dotted
// names) and the values of its first rows, per column.
type sample struct {
	file  *File
	sheet string // a workbook's sheet, or ""
	cols  []string
	vals  [][]string // per column, the values of the rows read ("" when absent)
	rows  int
	at    map[string]int // a column's index by its name (profile.RawNames)
	// The kind guessed from it, why, and how sure (guessKind).
	kind     ledger.Kind
	kindWhy  string
	kindSure Sureness
}

// listFiles lists the export's files as a run finds them; a file whose
// format crmimport does not read comes back with a reason.
func listFiles(paths []string, lim input.Limits) ([]input.File, error) {
	ls, err := input.List(paths, input.Want{NotRead: func(string) string { return "" }}, lim)
	if err != nil {
		return nil, err
	}
	return ls.Files, nil
}

// matchName is the name a profile's patterns match: the base name,
// lower-cased, without .gz.
func matchName(name string) string {
	base := strings.ToLower(path.Base(filepath.ToSlash(name)))
	return strings.TrimSuffix(base, ".gz")
}

// openSample opens a file as a run reads it: a workbook in place, any
// other file in the encoding its first bytes show.
func openSample(f *File, lim input.Limits) (*reader.RowReader, io.Closer, error) {
	opt := reader.ReadOptions{Name: input.Name(f.Ref), Format: f.Format, Sheet: f.Sheet}
	if f.Format == reader.FormatXLSX {
		rr, in, err := input.OpenRows(f.Ref, opt, lim)
		return rr, in, err
	}
	in, err := input.Open(f.Ref, lim)
	if err != nil {
		return nil, nil, err
	}
	br := bufio.NewReaderSize(in, 1<<16)
	head, _ := br.Peek(1 << 16)
	ev := reader.NewEvidenceScanner()
	ev.Scan(head, len(head) < 1<<16)
	opt.Encoding = reader.ChooseEncoding(input.Name(f.Ref), head[:min(len(head), reader.SniffSize)], ev.Evidence(), "").Encoding
	rr, err := reader.NewRowReader(br, opt)
	if err != nil {
		in.Close()
		return nil, nil, err
	}
	return rr, in, nil
}

// maxSheetRows bounds the rows a workbook's sample reads past its
// sheets' first rows, to reach the sheets after a long one.
const maxSheetRows = 100_000

// readSample reads a file's header and its first n rows (a workbook's: of
// its first sheet with a header).
func readSample(f *File, n int, lim input.Limits) (*sample, error) {
	ss, err := readSamples(f, n, lim)
	if err != nil {
		return nil, err
	}
	return ss[0], nil
}

// readSamples reads a file's header and its first n rows; a workbook's,
// of each sheet with a header, each sheet a sample of its own (issue 26
// item 5: every sheet judged on its own), its name in the sample's sheet.
func readSamples(f *File, n int, lim input.Limits) ([]*sample, error) {
	g := *f
	g.Sheet = "" // every sheet
	rr, closer, err := openSample(&g, lim)
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	s := newSample(f, rr.Header(), rr.Sheet())
	out := []*sample{s}
	for read := 0; read < maxSheetRows; read++ {
		row, err := rr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if s.rows == 0 && len(s.cols) == 0 {
				return nil, err
			}
			break // the rest cannot be read: judge what was
		}
		if row.Err != nil && row.Cols == nil {
			continue
		}
		if row.Sheet != s.sheet {
			// A workbook's next sheet, with a header of its own.
			s = newSample(f, rr.Header(), row.Sheet)
			out = append(out, s)
		}
		if s.rows >= n {
			if f.Format != reader.FormatXLSX {
				break // one table: the sample is read
			}
			continue // a workbook: on to its next sheet
		}
		s.add(f.Format, row)
	}
	return out, nil
}

func newSample(f *File, header []string, sheet string) *sample {
	s := &sample{file: f, sheet: sheet, at: map[string]int{}}
	if header != nil {
		s.cols = append(s.cols, header...)
		s.vals = make([][]string, len(header))
		// A CSV row names its columns as the header does; a workbook's
		// holds the header's named columns and the cells it holds
		// (reader.Row): a value goes under the header's column of its
		// name, a repeated name by its place (profile.RawNames).
		for i, name := range profile.RawNames(header) {
			s.at[name] = i
		}
	}
	return s
}

// add puts a row's values under the sample's columns: a CSV's or a
// workbook's by the header's names, a JSON object's by its flattened keys,
// a key first seen making a column.
func (s *sample) add(format reader.Format, row reader.Row) {
	if format == reader.FormatCSV || format == reader.FormatXLSX {
		names := make([]string, len(row.Cols))
		for j, c := range row.Cols {
			names[j] = c.Name
		}
		for i := range s.vals {
			s.vals[i] = append(s.vals[i], "")
		}
		for j, name := range profile.RawNames(names) {
			if i, ok := s.at[name]; ok {
				s.vals[i][s.rows] = row.Cols[j].Value
			}
		}
		s.rows++
		return
	}
	cols := profile.FlattenAll(row.Cols)
	seen := make([]bool, len(s.cols))
	for _, c := range cols {
		i, ok := s.at[c.Name]
		if !ok {
			i = len(s.cols)
			s.at[c.Name] = i
			s.cols = append(s.cols, c.Name)
			s.vals = append(s.vals, make([]string, s.rows))
			seen = append(seen, false)
		}
		if !seen[i] {
			seen[i] = true
			s.vals[i] = append(s.vals[i], c.Value)
		}
	}
	for i, ok := range seen {
		if !ok {
			s.vals[i] = append(s.vals[i], "")
		}
	}
	s.rows++
}

// jsonList reads the values of a JSON array: each element's text, or an
// object's "id" (as a profile's json list links read them); ok=false when
// the text is not an array.
func jsonList(s string) ([]string, bool) {
	var elems []json.RawMessage
	if err := json.Unmarshal([]byte(s), &elems); err != nil {
		return nil, false
	}
	var out []string
	for _, e := range elems {
		var obj map[string]json.RawMessage
		if json.Unmarshal(e, &obj) == nil {
			id, ok := obj["id"]
			if !ok {
				continue
			}
			e = id
		}
		var str string
		if json.Unmarshal(e, &str) == nil {
			out = append(out, str)
			continue
		}
		out = append(out, strings.TrimSpace(string(e)))
	}
	return out, true
}

// leftOutReason says why a file of the export is not read, or "".
func leftOutReason(name string) string {
	return fmt.Sprintf("left out: %s is not a .csv, .xlsx, .json, .jsonl or .ndjson file", name)
}

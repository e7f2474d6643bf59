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
)

// sample is one file as read: its columns (a CSV header, or a JSON file's
// keys in the order they first appear, objects flattened into dotted
// names) and the values of its first rows, per column.
type sample struct {
	file *File
	cols []string
	vals [][]string // per column, the values of the rows read ("" when absent)
	rows int
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
	opt := reader.ReadOptions{Name: input.Name(f.Ref), Format: f.Format}
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

// readSample reads a file's header and its first n rows (a workbook's: of
// its first sheet with a header).
func readSample(f *File, n int, lim input.Limits) (*sample, error) {
	rr, closer, err := openSample(f, lim)
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	sheet := rr.Sheet() // a workbook's first sheet with a header: the one judged
	s := &sample{file: f}
	at := map[string]int{}
	if h := rr.Header(); h != nil {
		s.cols = append(s.cols, h...)
		s.vals = make([][]string, len(h))
		// A CSV row names its columns as the header does; a workbook's
		// holds the header's named columns and the cells it holds
		// (reader.Row): a value goes under the header's column of its
		// name, a repeated name by its place (profile.RawNames).
		for i, name := range profile.RawNames(h) {
			at[name] = i
		}
	}
	for s.rows < n {
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
		if row.Sheet != sheet {
			break // a workbook's next sheet has a header of its own
		}
		if f.Format == reader.FormatCSV || f.Format == reader.FormatXLSX {
			names := make([]string, len(row.Cols))
			for j, c := range row.Cols {
				names[j] = c.Name
			}
			for i := range s.vals {
				s.vals[i] = append(s.vals[i], "")
			}
			for j, name := range profile.RawNames(names) {
				if i, ok := at[name]; ok {
					s.vals[i][s.rows] = row.Cols[j].Value
				}
			}
			s.rows++
			continue
		}
		cols := profile.FlattenAll(row.Cols)
		seen := make([]bool, len(s.cols))
		for _, c := range cols {
			i, ok := at[c.Name]
			if !ok {
				i = len(s.cols)
				at[c.Name] = i
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
	return s, nil
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

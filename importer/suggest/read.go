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

// readSample reads a file's header and its first n rows.
func readSample(f *File, n int, lim input.Limits) (*sample, error) {
	in, err := input.Open(f.Ref, lim)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	br := bufio.NewReaderSize(in, 1<<16)
	head, _ := br.Peek(1 << 16)
	ev := reader.NewEvidenceScanner()
	ev.Scan(head, len(head) < 1<<16)
	enc := reader.ChooseEncoding(input.Name(f.Ref), head[:min(len(head), reader.SniffSize)], ev.Evidence(), "")
	rr, err := reader.NewRowReader(br, reader.ReadOptions{Name: input.Name(f.Ref), Format: f.Format, Encoding: enc.Encoding})
	if err != nil {
		return nil, err
	}
	s := &sample{file: f}
	at := map[string]int{}
	if h := rr.Header(); h != nil {
		s.cols = append(s.cols, h...)
		s.vals = make([][]string, len(h))
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
		if f.Format == reader.FormatCSV {
			for i := range s.cols {
				v := ""
				if i < len(row.Cols) {
					v = row.Cols[i].Value
				}
				s.vals[i] = append(s.vals[i], v)
			}
			s.rows++
			continue
		}
		cols := flattenAll(row.Cols)
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

// flattenAll turns every JSON object of a row into dotted columns
// ({"properties":{"email":…}} gives properties.email), as a profile's
// mapper does for the objects its columns name; arrays stay whole.
func flattenAll(cols []reader.Col) []reader.Col {
	var out []reader.Col
	for _, c := range cols {
		if c.Nested && strings.HasPrefix(c.Value, "{") {
			out = flattenObject(out, c.Name, c.Value)
			continue
		}
		out = append(out, c)
	}
	return out
}

func flattenObject(out []reader.Col, prefix, obj string) []reader.Col {
	dec := json.NewDecoder(strings.NewReader(obj))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return append(out, reader.Col{Name: prefix, Value: obj, Nested: true})
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			break
		}
		name := prefix + "." + key
		switch raw[0] {
		case '{':
			out = flattenObject(out, name, string(raw))
		case '[':
			out = append(out, reader.Col{Name: name, Value: string(raw), Nested: true})
		case '"':
			var s string
			_ = json.Unmarshal(raw, &s)
			out = append(out, reader.Col{Name: name, Value: s})
		case 'n':
			out = append(out, reader.Col{Name: name})
		default:
			out = append(out, reader.Col{Name: name, Value: string(raw)})
		}
	}
	return out
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
	if strings.EqualFold(path.Ext(matchName(name)), ".xlsx") {
		return "left out: an Excel workbook, which planning does not read yet: save its sheets as CSV"
	}
	return fmt.Sprintf("left out: %s is not a .csv, .json, .jsonl or .ndjson file", name)
}

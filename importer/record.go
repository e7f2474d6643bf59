package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"crmimport/ledger"
)

// Record is one row mapped onto its kind's canonical fields.
type Record struct {
	Kind   ledger.Kind
	File   string
	Line   int
	ID     string            // trimmed; "" when missing
	Fields map[string]string // canonical field -> value as read
	Extra  map[string]any    // columns the profile does not map (non-empty): text, or json.RawMessage for nested JSON
	Raw    string            // the row as read, a JSON object in file order
	Err    *RowError         // the row could not be read as it is
}

// mapper maps rows of one file of one kind onto canonical fields.
type mapper struct {
	kind  ledger.Kind
	file  string
	index map[string]string // normalised header -> canonical field
}

func newMapper(p *Profile, k ledger.Kind, file string) *mapper {
	m := &mapper{kind: k, file: file, index: map[string]string{}}
	for _, f := range p.Fields(k) {
		m.index[normaliseHeader(f)] = f
	}
	return m
}

// checkHeader refuses a CSV header that cannot be read safely: no id
// column, or a canonical field given by two columns.
func (m *mapper) checkHeader(header []string) error {
	if header == nil {
		return nil // an empty file: no rows
	}
	at := map[string]int{}
	for i, h := range header {
		f, ok := m.index[normaliseHeader(h)]
		if !ok {
			continue
		}
		if j, dup := at[f]; dup {
			return &FileError{File: m.file, Line: 1, Reason: fmt.Sprintf(
				"columns %d (%q) and %d (%q) both give %s: rename or remove one", j+1, header[j], i+1, h, f)}
		}
		at[f] = i
	}
	if _, ok := at["id"]; !ok {
		return &FileError{File: m.file, Line: 1, Reason: fmt.Sprintf(
			"no id column: the header has %d columns (%s) and none of them is \"id\"", len(header), preview(header))}
	}
	return nil
}

func preview(h []string) string {
	var b bytes.Buffer
	for i, s := range h {
		if i == 6 {
			b.WriteString(", …")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(s))
	}
	return b.String()
}

// mapRow maps one row. Unknown columns go to Extra; nothing is dropped.
// A repeated header keeps every value: the second "Phone" is "Phone#2",
// counted by position whatever the values, as in the raw row.
func (m *mapper) mapRow(row Row) Record {
	r := Record{Kind: m.kind, File: m.file, Line: row.Line, Fields: map[string]string{}, Err: row.Err}
	seen := map[string]bool{}
	used := map[string]int{}
	for _, c := range row.Cols {
		used[c.Name]++
		name := c.Name
		if n := used[c.Name]; n > 1 {
			name = fmt.Sprintf("%s#%d", c.Name, n)
		}
		if f, ok := m.index[normaliseHeader(c.Name)]; ok && !seen[f] {
			seen[f] = true
			v := c.Value
			if c.Nested && r.Err == nil {
				r.Err = &RowError{File: m.file, Line: row.Line, Reason: fmt.Sprintf(
					"%s holds a JSON %s, not a value", f, map[bool]string{true: "object", false: "array"}[strings.HasPrefix(v, "{")])}
			}
			if valueFields[f] && emptySpelling(v) {
				v = ""
			}
			r.Fields[f] = v
			continue
		}
		if c.Value == "" {
			continue
		}
		if r.Extra == nil {
			r.Extra = map[string]any{}
		}
		if c.Nested {
			r.Extra[name] = json.RawMessage(c.Value)
		} else {
			r.Extra[name] = c.Value
		}
	}
	r.ID = trimID(r.Fields["id"])
	r.Raw = rawJSON(row)
	return r
}

// rawJSON writes the row as a JSON object in file order (a repeated header
// name gets "#2", "#3"); a record that could not be parsed also keeps its
// text as it stands in the file, under "(text)".
func rawJSON(row Row) string {
	var b bytes.Buffer
	b.WriteByte('{')
	used := map[string]int{}
	cols := row.Cols
	if row.Text != "" {
		cols = append(append([]Col(nil), cols...), Col{Name: "(text)", Value: row.Text})
	}
	for i, c := range cols {
		name := c.Name
		if n := used[c.Name]; n > 0 {
			name = fmt.Sprintf("%s#%d", c.Name, n+1)
		}
		used[c.Name]++
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(name)
		v, _ := json.Marshal(c.Value)
		if c.Nested && json.Valid([]byte(c.Value)) {
			v = []byte(c.Value)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.String()
}

func trimID(s string) string { return strings.TrimSpace(s) }

// valueFields hold ids, links, dates, numbers, flags and addresses, where
// an export's spellings of "nothing" mean empty. Free text (names, bodies,
// phone numbers) is kept as written: somebody may be called Null.
var valueFields = map[string]bool{
	"id": true, "company_id": true, "contact_id": true, "deal_id": true,
	"created_at": true, "close_date": true, "due_at": true, "sent_at": true,
	"amount": true, "done": true, "deleted": true, "email": true, "domain": true, "from": true, "to": true,
}

// emptySpelling: the ways exports and spreadsheets write an empty value.
func emptySpelling(s string) bool {
	switch strings.TrimSpace(s) {
	case "null", "NULL", "Null", "#N/A", "#NULL!", "N/A", "n/a":
		return true
	}
	return false
}

// excelNumber matches an id that a spreadsheet rewrote in scientific
// notation (9.91214E+15): the digits it dropped are gone for good.
var excelNumber = regexp.MustCompile(`^[+-]?[0-9]+(\.[0-9]+)?[eE][+-]?[0-9]+$`)

// mangledID says why an id or link value cannot be trusted, or "".
func mangledID(field, v string) string {
	if excelNumber.MatchString(strings.TrimSpace(v)) {
		return fmt.Sprintf("%s %q looks like a number a spreadsheet rewrote in scientific notation: the real id is lost; "+
			"export the file again and do not open it in a spreadsheet before importing", field, v)
	}
	return ""
}

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
	Kind  ledger.Kind
	File  string
	Line  int
	ID    string         // trimmed; "" when missing
	Extra map[string]any // columns the profile does not map (non-empty): text, or json.RawMessage for nested JSON
	Err   *RowError      // the row could not be read as it is

	kf   *kindFields // the kind's canonical fields
	vals []string    // value as read per canonical field, in kf order
	row  Row         // the row as read, for the raw row of a failure (RawJSON)

	// What prepare works out ahead, off the writing goroutine.
	prepared  bool
	values    Values // the validated values to write
	invalid   string // why the record is invalid, or ""
	extraJSON string // Extra as JSON, or ""
}

// get is the value of canonical field f as read ("" when absent).
func (r *Record) get(f string) string {
	if i, ok := r.kf.index[f]; ok {
		return r.vals[i]
	}
	return ""
}

// kindFields are a kind's canonical fields, with what each one is.
type kindFields struct {
	names   []string
	index   map[string]int
	isValue []bool // an id, link, date, number, flag or address (see valueFields)
}

func newKindFields(names []string) *kindFields {
	kf := &kindFields{names: names, index: map[string]int{}, isValue: make([]bool, len(names))}
	for i, f := range names {
		kf.index[f] = i
		kf.isValue[i] = valueFields[f]
	}
	return kf
}

// mapper maps rows of one file of one kind onto canonical fields.
type mapper struct {
	kind  ledger.Kind
	file  string
	kf    *kindFields
	index map[string]int // normalised header -> canonical field position
	last  *layout        // the column layout of the last row (CSV: the header)
}

// layout is what each column of a row is: a canonical field (or -1), and
// the name its value takes in extra ("Phone#2" for a repeated header).
type layout struct {
	names     []string
	field     []int
	extraName []string
}

func newMapper(p *Profile, k ledger.Kind, file string) *mapper {
	m := &mapper{kind: k, file: file, kf: newKindFields(p.Fields(k)), index: map[string]int{}}
	for i, f := range m.kf.names {
		m.index[normaliseHeader(f)] = i
	}
	return m
}

// layoutOf returns the layout of a row's columns; rows of a CSV file, and
// most JSON objects of a file, share one.
func (m *mapper) layoutOf(cols []Col) *layout {
	if l := m.last; l != nil && len(l.names) == len(cols) {
		same := true
		for i := range cols {
			if cols[i].Name != l.names[i] {
				same = false
				break
			}
		}
		if same {
			return l
		}
	}
	l := &layout{names: make([]string, len(cols)), field: make([]int, len(cols)), extraName: make([]string, len(cols))}
	taken := map[int]bool{}
	used := map[string]int{}
	for i, c := range cols {
		l.names[i] = c.Name
		used[c.Name]++
		l.extraName[i] = c.Name
		if n := used[c.Name]; n > 1 {
			l.extraName[i] = fmt.Sprintf("%s#%d", c.Name, n)
		}
		l.field[i] = -1
		if f, ok := m.index[normaliseHeader(c.Name)]; ok && !taken[f] {
			taken[f] = true
			l.field[i] = f
		}
	}
	m.last = l
	return l
}

// checkHeader refuses a CSV header that cannot be read safely: no id
// column, or a canonical field given by two columns.
func (m *mapper) checkHeader(header []string) error {
	if header == nil {
		return nil // an empty file: no rows
	}
	at := map[int]int{}
	for i, h := range header {
		f, ok := m.index[normaliseHeader(h)]
		if !ok {
			continue
		}
		if j, dup := at[f]; dup {
			return &FileError{File: m.file, Line: 1, Reason: fmt.Sprintf(
				"columns %d (%q) and %d (%q) both give %s: rename or remove one", j+1, header[j], i+1, h, m.kf.names[f])}
		}
		at[f] = i
	}
	if _, ok := at[m.kf.index["id"]]; !ok {
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
	r := Record{Kind: m.kind, File: m.file, Line: row.Line, Err: row.Err, kf: m.kf, vals: make([]string, len(m.kf.names)), row: row}
	l := m.layoutOf(row.Cols)
	for i, c := range row.Cols {
		if f := l.field[i]; f >= 0 {
			v := c.Value
			if c.Nested && r.Err == nil {
				what := "array"
				if strings.HasPrefix(v, "{") {
					what = "object"
				}
				r.Err = &RowError{File: m.file, Line: row.Line, Reason: fmt.Sprintf("%s holds a JSON %s, not a value", m.kf.names[f], what)}
			}
			if m.kf.isValue[f] && emptySpelling(v) {
				v = ""
			}
			r.vals[f] = v
			continue
		}
		if c.Value == "" {
			continue
		}
		if r.Extra == nil {
			r.Extra = map[string]any{}
		}
		if c.Nested {
			r.Extra[l.extraName[i]] = json.RawMessage(c.Value)
		} else {
			r.Extra[l.extraName[i]] = c.Value
		}
	}
	// The id is kept in the run's indexes: a copy of its own, so that it
	// does not hold the whole record's text in memory (encoding/csv cuts
	// a record's fields out of one string).
	r.ID = strings.Clone(trimID(r.get("id")))
	return r
}

// prepare validates the record and writes its extra columns as JSON, ahead
// of deciding it (decide uses both only if the record gets that far).
func (r *Record) prepare() {
	r.values, r.invalid = validate(*r)
	if len(r.Extra) > 0 {
		if b, err := json.Marshal(r.Extra); err == nil {
			r.extraJSON = string(b)
		}
	}
	r.prepared = true
}

// RawJSON is the row as read, a JSON object in file order: what
// record_failures keeps of a failed record (R4). It is made only for
// failures.
func (r Record) RawJSON() string { return rawJSON(r.row) }

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
	if len(s) > 8 {
		return false
	}
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
	if !strings.ContainsAny(v, "Ee") {
		return ""
	}
	if excelNumber.MatchString(strings.TrimSpace(v)) {
		return fmt.Sprintf("%s %q looks like a number a spreadsheet rewrote in scientific notation: the real id is lost; "+
			"export the file again and do not open it in a spreadsheet before importing", field, v)
	}
	return ""
}

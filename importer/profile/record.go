package profile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"crmimport/canon"
	"crmimport/importer/reader"
	"crmimport/ledger"
)

// Record is one row mapped onto its kind's canonical fields.
type Record struct {
	Kind  ledger.Kind
	File  string
	Line  int
	ID    string           // trimmed; "" when missing
	Extra map[string]any   // columns the profile does not map (non-empty): text, or json.RawMessage for nested JSON
	Err   *reader.RowError // the row could not be read as it is
	// Excluded: the row is not a record of its kind (a profile's where),
	// so it has no outcome; it still counts as read for the checkpoint.
	Excluded bool
	// Untaken: the row is a record of no kind the profile gives its file
	// (SPEC §4: counted in a warning per file). Only the mapper of the
	// file's first planned kind says so, so that it is counted once.
	Untaken bool

	fields *canon.FieldSet // the kind's canonical fields
	vals   []string        // value as read per canonical field, in fields order
	row    reader.Row      // the row as read, for the raw row of a failure (RawJSON)
	beyond *beyondFields   // what a profile gives beyond the plain fields; nil for most records

	// What Validate works out ahead, off the writing goroutine.
	validated bool
	values    canon.Values // the validated values to write
	invalid   string       // why the record is invalid, or ""
	extraJSON string       // Extra as JSON, or ""
	hashes    canon.Hashes // R17: the record's hashes by field (Hashes), once asked for
	digest    int64        // R17: what a slot keeps of the record (Digest), once made
	hashText  string
	hashed    bool
}

// beyondFields is what some profiles give a record beyond its plain
// fields: kept out of Record itself, which is copied as it goes from
// reading to writing.
type beyondFields struct {
	links    []LinkValue // link values beyond the plain link fields, in order of preference
	ignored  []string    // what the values of ignored prefixes name ("a user"), each once
	bodyFile string      // the file that holds the body (a profile's body_file), to read when completed
	nulKept  []string    // the columns kept in extra that hold a NUL byte (SPEC §4), in file order
}

// add adds link values, keeping those of ignored prefixes apart: no link,
// only what they name.
func (b *beyondFields) add(vals []LinkValue) {
	for _, v := range vals {
		switch {
		case !v.Ignored:
			b.links = append(b.links, v)
		case !slices.Contains(b.ignored, v.Never):
			b.ignored = append(b.ignored, v.Never)
		}
	}
}

// Span is where the record stands in its raw file (reader.Row's Start and
// End); end is 0 when the reader does not know.
func (r *Record) Span() (start, end int64) { return r.row.Start, r.row.End }

// Links are the record's link values beyond its plain link fields, in
// order of preference.
func (r *Record) Links() []LinkValue {
	if r.beyond == nil {
		return nil
	}
	return r.beyond.links
}

// Ignored names what the record's values of ignored prefixes link to ("a
// user"): no link, but a record linked only to those is skipped saying so
// (R6b).
func (r *Record) Ignored() []string {
	if r.beyond == nil {
		return nil
	}
	return r.beyond.ignored
}

// NULKept names the columns kept in extra that hold a NUL byte, which
// text never holds: kept all the same (JSON \u0000), for the run to count
// in a warning (SPEC §4); nil for most records.
func (r *Record) NULKept() []string {
	if r.beyond == nil {
		return nil
	}
	return r.beyond.nulKept
}

// Get is the value of canonical field f as read ("" when absent).
func (r *Record) Get(f string) string {
	if i, ok := r.fields.Index[f]; ok {
		return r.vals[i]
	}
	return ""
}

// Mapper maps rows of one file of one kind onto canonical fields. What the
// profile says is resolved once per file (valueFuncs, the columns each link
// reads) and once per header (layout), not per row.
type Mapper struct {
	kind     ledger.Kind
	file     string
	fields   *canon.FieldSet
	p        *Profile
	kindSpec *kindSpec // what the profile says of the kind
	fileSpec *fileSpec // the file's pattern, with its where, defaults, joins and body
	// siblings are the kinds the profile gives the file, in plan order,
	// the mapper's own at self: each its own task over the file (SPEC §4).
	siblings  []sibling
	self      int
	wheres    bool              // a sibling reads only some rows (a where): which kinds take a row is told per row
	index     map[string]colRef // normalised column name -> the field it gives
	last      *layout           // the column layout of the last row (CSV: the header)
	sheet     string            // the workbook sheet of the last row, and the file name its records take
	sheetFile string

	valueFuncs    []valueFunc     // per field; nil when the profile changes no value
	dateOnly      map[string]bool // normalised names of the columns that hold a date (date_only); nil for none
	roots         map[string]bool // JSON keys whose objects are flattened into dotted columns
	rowRules      bool            // links, joins, where, defaults, bodies or alternate columns to work out per row
	emptyExtra    bool            // the profile's spellings of empty also leave extra
	side          *sideFiles      // name lookups, joined rows, body files (ReadSideFiles)
	columnsByName picker          // for joins and body files
	body          template        // the file's body_file
	outcome       *outcomeFlags   // a deal's status read from two flags; nil for none
	outcomeField  int             // the status's place among the fields
	idFrom        []string        // the columns whose values make the id (idfrom.go); nil for an id column
}

// sibling is a kind the profile gives the mapper's file: the pattern it
// matched (its where), the columns it maps, and whether a task of the run
// reads the file for it.
type sibling struct {
	kind    ledger.Kind
	spec    *fileSpec
	maps    map[string]bool // normalised names of the columns its fields and links read
	planned bool
}

// colRef is what a column gives: a canonical field, as its rank-th alternate.
type colRef struct {
	field int
	rank  int
}

// layout is what each column of a row is: a canonical field (or colExtra,
// or colPerRow), and the name its value takes in extra ("Phone#2" for a
// repeated header).
type layout struct {
	names     []string
	field     []int
	extraName []string
	alts      []altGroup // fields that several columns of this layout may give
	linkCols  [][]int    // per link of the kind, the columns that hold it, in order of preference
	dateOnly  []bool     // per column: it holds a date (date_only); nil for none
	whereAt   [][]int    // per sibling, per condition of its where, its column or -1
	sharedBy  [][]int    // per colShared column, the siblings that map it
	repeated  [2]int     // a mapped column given twice (positions), when the profile fails on it
	outcomeAt [2]int     // the columns of a status's won and closed flags, or -1 (Mapper.outcome)
	idMissing bool
	rowRules  bool // the mapper's, or alternates in this layout
}

type altGroup struct {
	field int
	cols  []int
}

// What a column of a layout is when it gives no field by itself: kept in
// extra, or read per row (applyRowRules): one of several alternates for a
// field, or a link column; or a column another kind of the file maps, kept
// in extra only when no kind that maps it takes the row (SPEC §4: a kind's
// extra holds only the columns no kind of the file maps — and nothing is
// dropped from a row that kind does not take).
const (
	colExtra  = -1
	colPerRow = -2
	colShared = -3
)

// NewMapper returns the mapper of rows of file onto kind k. Every kind the
// profile gives the file is planned until Planned says otherwise.
func NewMapper(p *Profile, k ledger.Kind, file string) *Mapper {
	m := &Mapper{kind: k, file: file, fields: canon.FieldsOf(k), p: p, kindSpec: p.kinds[k], index: map[string]colRef{}}
	if m.kindSpec == nil {
		m.kindSpec = &kindSpec{kind: k, fields: map[string]*fieldSpec{}}
	}
	m.self = -1
	kfs, _ := p.fileKinds(file)
	for i, kf := range kfs {
		if kf.kind == k {
			m.self = i
		}
		m.siblings = append(m.siblings, sibling{kind: kf.kind, spec: kf.spec, maps: p.kinds[kf.kind].columns(), planned: true})
		m.wheres = m.wheres || len(kf.spec.where) > 0
	}
	if m.self < 0 { // not a file of the kind: its rows are the kind's alone
		m.siblings, m.self, m.wheres = []sibling{{kind: k, spec: &fileSpec{}, planned: true}}, 0, false
	}
	m.fileSpec = m.siblings[m.self].spec
	for i, f := range m.fields.Names {
		spec := m.kindSpec.fields[f]
		if spec == nil {
			continue
		}
		for rank, c := range spec.columns {
			n := normaliseHeader(c)
			if _, taken := m.index[n]; !taken {
				m.index[n] = colRef{field: i, rank: rank}
			}
			m.addRoot(c)
		}
		if len(spec.columns) > 1 || spec.def != "" || m.fileSpec.defaults[f] != "" {
			m.rowRules = true
		}
		if spec.outcome != nil {
			m.outcome, m.outcomeField, m.rowRules = spec.outcome, i, true
			for _, c := range append(slices.Clone(spec.outcome.won), spec.outcome.closed...) {
				m.addRoot(c)
			}
		}
		for _, c := range spec.dateOnly {
			if ref, ok := m.index[normaliseHeader(c)]; ok && ref.field == i {
				if m.dateOnly == nil {
					m.dateOnly = map[string]bool{}
				}
				m.dateOnly[normaliseHeader(c)] = true
			}
		}
	}
	if spec := m.kindSpec.fields["id"]; spec != nil && spec.from != nil {
		m.idFrom = spec.from
		for _, c := range spec.from {
			m.addRoot(c)
		}
	}
	for _, ls := range m.kindSpec.links {
		for _, c := range ls.columns {
			m.addRoot(c)
		}
		m.rowRules = true
	}
	for _, sib := range m.siblings {
		for _, w := range sib.spec.where {
			m.addRoot(w.column)
		}
	}
	if len(m.fileSpec.joins) > 0 || m.fileSpec.bodyFile != "" {
		m.rowRules = true
	}
	m.body = parseTemplate(m.fileSpec.bodyFile)
	for i, f := range m.fields.Names {
		if x := m.valueFunc(f); x != nil {
			if m.valueFuncs == nil {
				m.valueFuncs = make([]valueFunc, len(m.fields.Names))
			}
			m.valueFuncs[i] = x
		}
	}
	m.emptyExtra = len(p.empty) > 0
	return m
}

// columns are the normalised names of the columns the kind's fields and
// links read.
func (spec *kindSpec) columns() map[string]bool {
	out := map[string]bool{}
	for _, f := range spec.fields {
		for _, c := range f.columns {
			out[normaliseHeader(c)] = true
		}
		if o := f.outcome; o != nil {
			for _, c := range append(slices.Clone(o.won), o.closed...) {
				out[normaliseHeader(c)] = true
			}
		}
	}
	for _, ls := range spec.links {
		for _, c := range ls.columns {
			out[normaliseHeader(c)] = true
		}
	}
	return out
}

// Planned says which kinds of the file the run reads it for (--only may
// leave some out): the first of them counts the rows no kind takes, and a
// flag that cannot be read fails its row in the first of them that reads
// it. Which kinds take a row, and so what extra keeps, does not change.
func (m *Mapper) Planned(kinds []ledger.Kind) {
	for i := range m.siblings {
		m.siblings[i].planned = slices.Contains(kinds, m.siblings[i].kind)
	}
	m.siblings[m.self].planned = true
}

// addRoot notes the first part of a dotted column (properties.email): a
// JSON object under that key is flattened into dotted columns.
func (m *Mapper) addRoot(col string) {
	root, _, ok := strings.Cut(col, ".")
	if !ok || root == "" {
		return
	}
	if m.roots == nil {
		m.roots = map[string]bool{}
	}
	m.roots[root] = true
}

// layoutOf returns the layout of a row's columns; rows of a CSV file, and
// most JSON objects of a file, share one.
func (m *Mapper) layoutOf(cols []reader.Col) *layout {
	if l := m.last; l != nil && l.fits(cols) {
		return l
	}
	l, byField := m.nameColumns(cols)
	m.placeFields(l, byField)
	if m.idFrom != nil {
		l.idMissing = len(m.idFromMissing(cols)) > 0
	} else if id := m.fields.Index["id"]; byField[id] == nil {
		l.idMissing = true
	}
	m.placeLinks(l, cols)
	m.placeOutcome(l, cols)
	m.placeWhere(l, cols)
	m.placeShared(l, cols)
	l.rowRules = m.rowRules || len(l.alts) > 0
	m.last = l
	return l
}

// fits reports whether cols are the columns of l, by name and in order.
func (l *layout) fits(cols []reader.Col) bool {
	if len(l.names) != len(cols) {
		return false
	}
	for i := range cols {
		if cols[i].Name != l.names[i] {
			return false
		}
	}
	return true
}

// fieldCand is a column that may give a field, and its rank among the
// field's spellings (0: the first).
type fieldCand struct{ col, rank int }

// nameColumns starts the layout of cols: each column's name, its name in
// extra (a name given twice numbered), whether it holds a date only, and
// every column kept in extra for now; and it returns the columns that may
// give each field.
func (m *Mapper) nameColumns(cols []reader.Col) (*layout, map[int][]fieldCand) {
	l := &layout{names: make([]string, len(cols)), field: make([]int, len(cols)), extraName: make([]string, len(cols)), repeated: [2]int{-1, -1}}
	used := map[string]int{}
	var byField map[int][]fieldCand
	for i, c := range cols {
		l.names[i] = c.Name
		used[c.Name]++
		l.extraName[i] = c.Name
		if n := used[c.Name]; n > 1 {
			l.extraName[i] = fmt.Sprintf("%s#%d", c.Name, n)
		}
		l.field[i] = colExtra
		if m.dateOnly[normaliseHeader(c.Name)] {
			if l.dateOnly == nil {
				l.dateOnly = make([]bool, len(cols))
			}
			l.dateOnly[i] = true
		}
		if ref, ok := m.index[normaliseHeader(c.Name)]; ok {
			if byField == nil {
				byField = map[int][]fieldCand{}
			}
			byField[ref.field] = append(byField[ref.field], fieldCand{i, ref.rank})
		}
	}
	return l, byField
}

// placeFields gives each field its column: the one of its best rank, or,
// when several spellings of it are columns, alternates read per row
// (l.alts). A column name given twice leaves the field to the first.
func (m *Mapper) placeFields(l *layout, byField map[int][]fieldCand) {
	fields := make([]int, 0, len(byField))
	for f := range byField {
		fields = append(fields, f)
	}
	sort.Ints(fields)
	for _, f := range fields {
		cs := byField[f]
		sort.SliceStable(cs, func(a, b int) bool { return cs[a].rank < cs[b].rank })
		var keep []int
		for j, c := range cs {
			if j > 0 && c.rank == cs[j-1].rank {
				// The same column name twice (after normalising): the
				// first gives the field; a profile may fail on it.
				if !m.p.repeatedFirst && l.repeated[0] < 0 {
					l.repeated = [2]int{min(cs[j-1].col, c.col), max(cs[j-1].col, c.col)}
				}
				continue
			}
			keep = append(keep, c.col)
		}
		if len(keep) == 1 {
			l.field[keep[0]] = f
			continue
		}
		for _, c := range keep {
			l.field[c] = colPerRow
		}
		l.alts = append(l.alts, altGroup{field: f, cols: keep})
	}
	sort.Slice(l.alts, func(a, b int) bool { return l.alts[a].field < l.alts[b].field })
}

// placeLinks finds, for each link of the kind, the columns that hold it,
// in order of preference: read as links, kept out of extra.
func (m *Mapper) placeLinks(l *layout, cols []reader.Col) {
	if len(m.kindSpec.links) > 0 {
		l.linkCols = make([][]int, len(m.kindSpec.links))
		for li, ls := range m.kindSpec.links {
			for _, c := range ls.columns {
				n := normaliseHeader(c)
				for i, col := range cols {
					if normaliseHeader(col.Name) == n {
						l.linkCols[li] = append(l.linkCols[li], i)
						if l.field[i] == colExtra {
							l.field[i] = colPerRow // read as a link, kept out of extra
						}
						break
					}
				}
			}
		}
	}
}

// placeOutcome finds the columns of a status's flags (Mapper.outcome):
// for each, the first of its spellings that is a column; read per row,
// kept out of extra.
func (m *Mapper) placeOutcome(l *layout, cols []reader.Col) {
	l.outcomeAt = [2]int{-1, -1}
	if m.outcome == nil {
		return
	}
	for fi, names := range [2][]string{m.outcome.won, m.outcome.closed} {
	spellings:
		for _, name := range names {
			n := normaliseHeader(name)
			for i, col := range cols {
				if normaliseHeader(col.Name) == n && l.field[i] == colExtra {
					l.outcomeAt[fi], l.field[i] = i, colPerRow
					break spellings
				}
			}
		}
	}
}

// readOutcome gives r its status from the flags (Mapper.outcome): won
// when the won flag is true, else lost when the closed flag is, else open;
// none when the file has neither column. A flag that cannot be read fails
// the row, naming it (SPEC §4: a flag that cannot be read fails its row).
func (m *Mapper) readOutcome(r *Record, cols []reader.Col, l *layout) {
	if l.outcomeAt == [2]int{-1, -1} || strings.TrimSpace(r.vals[m.outcomeField]) != "" {
		return
	}
	var flags [2]bool
	for fi, at := range l.outcomeAt {
		if at < 0 {
			continue
		}
		v := cols[at].Value
		b, ok := m.readFlag(v)
		if !ok {
			if r.Err == nil {
				r.Err = &reader.RowError{File: r.File, Line: r.Line, Reason: fmt.Sprintf(
					"%s %s is neither true nor false: the %s profile reads the deal's status from it", cols[at].Name, strconv.Quote(strings.TrimSpace(v)), m.p.Name)}
			}
			return
		}
		flags[fi] = b
	}
	switch {
	case flags[0]:
		r.vals[m.outcomeField] = "won"
	case flags[1]:
		r.vals[m.outcomeField] = "lost"
	default:
		r.vals[m.outcomeField] = "open"
	}
}

// placeWhere finds the column of each condition of each sibling's where
// (-1: none).
func (m *Mapper) placeWhere(l *layout, cols []reader.Col) {
	l.whereAt = make([][]int, len(m.siblings))
	for si, sib := range m.siblings {
		for _, w := range sib.spec.where {
			at := -1
			for i, col := range cols {
				if normaliseHeader(col.Name) == normaliseHeader(w.column) {
					at = i
					break
				}
			}
			l.whereAt[si] = append(l.whereAt[si], at)
		}
	}
}

// placeShared marks the columns this kind keeps in extra that another kind
// of the file maps (colShared), with the siblings that map them.
func (m *Mapper) placeShared(l *layout, cols []reader.Col) {
	if len(m.siblings) > 1 {
		for i, col := range cols {
			if l.field[i] != colExtra {
				continue
			}
			n := normaliseHeader(col.Name)
			for si, sib := range m.siblings {
				if si != m.self && sib.maps[n] {
					if l.sharedBy == nil {
						l.sharedBy = make([][]int, len(cols))
					}
					l.field[i] = colShared
					l.sharedBy[i] = append(l.sharedBy[i], si)
				}
			}
		}
	}
}

// File is the name of the file the mapper maps, as failures name it.
func (m *Mapper) File() string { return m.file }

// Kind is the kind the mapper maps rows to.
func (m *Mapper) Kind() ledger.Kind { return m.kind }

// Recognises tells whether a header holds any column the profile reads
// for the kind (a field or a link): a workbook's sheet that holds none (a
// cover sheet, a pivot) is no table of the kind.
func (m *Mapper) Recognises(header []string) bool {
	cols := make([]reader.Col, len(header))
	for i, h := range header {
		cols[i] = reader.Col{Name: h}
	}
	l := m.layoutOf(cols)
	for _, f := range l.field {
		if f >= 0 || f == colPerRow {
			return true
		}
	}
	return false
}

// CheckHeader refuses a CSV header that cannot be read safely: no id
// column, or a canonical field given by two columns of one name (unless
// the profile keeps the first).
func (m *Mapper) CheckHeader(header []string) error {
	if header == nil {
		return nil // an empty file: no rows
	}
	cols := make([]reader.Col, len(header))
	for i, h := range header {
		cols[i] = reader.Col{Name: h}
	}
	l := m.layoutOf(cols)
	if i, j := l.repeated[0], l.repeated[1]; i >= 0 {
		f := m.index[normaliseHeader(header[i])].field
		return &reader.FileError{File: m.file, Line: 1, Reason: fmt.Sprintf(
			"columns %d (%q) and %d (%q) both give %s: rename or remove one", i+1, header[i], j+1, header[j], m.fields.Names[f])}
	}
	for wi, at := range l.whereAt[m.self] {
		if at < 0 {
			w := m.fileSpec.where[wi]
			return &reader.FileError{File: m.file, Line: 1, Reason: fmt.Sprintf(
				"no %q column: the %s profile reads only the rows whose %s", w.column, m.p.Name, w.describe())}
		}
	}
	if l.idMissing && m.idFrom != nil {
		missing := m.idFromMissing(cols)
		return &reader.FileError{File: m.file, Line: 1, Reason: fmt.Sprintf(
			"the header lacks %s: the %s profile makes each %s's id from the values of %s, and the header has %d columns (%s)",
			Preview(missing), m.p.Name, m.kind, strings.Join(m.idFrom, ", "), len(header), Preview(header))}
	}
	if l.idMissing {
		var ids []string
		if spec := m.kindSpec.fields["id"]; spec != nil {
			ids = spec.columns
		}
		return &reader.FileError{File: m.file, Line: 1, Reason: fmt.Sprintf(
			"no id column: the header has %d columns (%s) and none of them is %s", len(header), Preview(header), orList(ids))}
	}
	return nil
}

// orList quotes names and joins them with commas and a final "or".
func orList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	switch len(q) {
	case 0:
		return `"id"`
	case 1:
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// Preview quotes the first names of a header, for messages.
func Preview(h []string) string {
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

// Map maps one row. Unknown columns go to Extra; nothing is dropped.
// A repeated header keeps every value: the second "Phone" is "Phone#2",
// counted by position whatever the values, as in the raw row.
func (m *Mapper) Map(row reader.Row) Record {
	r := Record{Kind: m.kind, File: m.file, Line: row.Line, Err: row.Err, fields: m.fields, vals: make([]string, len(m.fields.Names)), row: row}
	if row.Sheet != "" { // a workbook's row: "contacts.xlsx!Sheet1", line 14 (reader.Where)
		if row.Sheet != m.sheet {
			m.sheet, m.sheetFile = row.Sheet, m.file+"!"+row.Sheet
		}
		r.File = m.sheetFile
	}
	cols := row.Cols
	if m.roots != nil {
		cols = flatten(cols, m.roots)
	}
	l := m.layoutOf(cols)
	var takes []take
	if m.wheres {
		takes = m.takes(&r, cols, l)
	}
	var nulKept []string
	nulRead := false
	for i, c := range cols {
		if strings.IndexByte(c.Value, 0) >= 0 {
			// SPEC §4: a NUL in a column the profile reads fails the row
			// (R4), said for the first; one in a column kept in extra is
			// kept, and counted.
			switch f := l.field[i]; {
			case f == colShared && sharedTaken(l.sharedBy[i], takes):
				// Another kind's value for this row (SPEC §4): its task
				// reads it, and judges it.
			case (f == colExtra || f == colShared) && !slices.Contains(l.whereAt[m.self], i):
				nulKept = append(nulKept, l.extraName[i])
			case !nulRead:
				r.Err, nulRead = m.nulError(r.Err, r.File, row, cols, l, i), true
			}
		}
		if f := l.field[i]; f >= 0 {
			v := c.Value
			if c.Nested && r.Err == nil {
				r.Err = m.nestedError(row.Line, f, v)
			}
			if m.fields.IsValue[f] && emptySpelling(v) {
				v = ""
			}
			if m.valueFuncs != nil && m.valueFuncs[f] != nil {
				var keep bool
				if v, keep = m.valueFuncs[f](v); keep {
					r.addExtra(l.extraName[i], c)
				}
			}
			if l.dateOnly != nil && l.dateOnly[i] {
				v = dateOnly(v)
			}
			r.vals[f] = v
			continue
		} else if f == colPerRow || f == colShared && sharedTaken(l.sharedBy[i], takes) {
			continue
		}
		if c.Value == "" || m.emptyExtra && m.p.empty[strings.TrimSpace(c.Value)] {
			continue
		}
		r.addExtra(l.extraName[i], c)
	}
	if m.idFrom != nil {
		r.vals[m.fields.Index["id"]] = m.idFromRow(cols) // SPEC §4: an id made of columns
	}
	if l.rowRules {
		m.applyRowRules(&r, cols, l)
	}
	if nulKept != nil {
		if r.beyond == nil {
			r.beyond = &beyondFields{}
		}
		r.beyond.nulKept = nulKept
	}
	// The id is kept in the run's indexes: a copy of its own, so that it
	// does not hold the whole record's text in memory (encoding/csv cuts
	// a record's fields out of one string). An id holding a NUL is none:
	// its row fails (above), and no database text can hold it; the raw
	// row keeps it.
	if id := trimID(r.Get("id")); strings.IndexByte(id, 0) < 0 {
		r.ID = strings.Clone(id)
	}
	return r
}

// nulError is the error of a row of file whose column i, which the profile
// reads, holds a NUL byte (SPEC §4: the row fails, R4), joined to the one
// the row has already, if any: naming the field, and where the byte stands
// when the reader knows it.
func (m *Mapper) nulError(prev *reader.RowError, file string, row reader.Row, cols []reader.Col, l *layout, i int) *reader.RowError {
	where := fmt.Sprintf("column %q", cols[i].Name) // a JSON object flattened into columns
	if len(cols) == len(row.Cols) {
		where = fmt.Sprintf("field %d (%q)", i+1, cols[i].Name)
		for _, n := range row.NUL {
			if n.Col == i {
				where += n.Where
			}
		}
	}
	reads := "reads this column"
	if f := l.field[i]; f >= 0 {
		reads += " as " + m.fields.Names[f]
	}
	reason := fmt.Sprintf("a NUL byte in %s: text never holds one (binary data in the export?); the profile %s "+
		"(a NUL in a column kept in extra is kept)", where, reads)
	if prev != nil {
		reason = prev.Reason + "; " + reason
	}
	return &reader.RowError{File: file, Line: row.Line, Reason: reason}
}

func (r *Record) addExtra(name string, c reader.Col) {
	if r.Extra == nil {
		r.Extra = map[string]any{}
	}
	if c.Nested {
		r.Extra[name] = json.RawMessage(c.Value)
	} else {
		r.Extra[name] = c.Value
	}
}

func (m *Mapper) nestedError(line, f int, v string) *reader.RowError {
	what := "array"
	if strings.HasPrefix(v, "{") {
		what = "object"
	}
	return &reader.RowError{File: m.file, Line: line, Reason: fmt.Sprintf("%s holds a JSON %s, not a value", m.fields.Names[f], what)}
}

// applyRowRules does what a profile asks beyond one column per field, for
// a row that is a record of the kind: alternate columns, defaults, links,
// joined rows and body files.
func (m *Mapper) applyRowRules(r *Record, cols []reader.Col, l *layout) {
	if r.Excluded {
		return
	}
	m.chooseAlternates(r, cols, l)
	if m.outcome != nil {
		m.readOutcome(r, cols, l)
	}
	for i, f := range m.fields.Names {
		if strings.TrimSpace(r.vals[i]) != "" {
			continue
		}
		if d := m.fileSpec.defaults[f]; d != "" {
			r.vals[i] = d
		} else if spec := m.kindSpec.fields[f]; spec != nil && spec.def != "" {
			r.vals[i] = spec.def
		}
	}
	var beyond beyondFields
	for li, ls := range m.kindSpec.links {
		if ls.byName && hasIDFor(beyond.links, canon.LinkField(ls.kind)) {
			continue // an id where there is one; the name only where there is none
		}
		for _, i := range l.linkCols[li] {
			c := cols[i]
			if strings.TrimSpace(c.Value) == "" {
				continue
			}
			vals := m.linkValues(ls, c, l.names[i])
			beyond.add(vals)
			if ls.list != "" && len(vals) > 1 {
				r.addExtra(l.extraName[i], c) // only one of them becomes the link: all are kept
			}
			break
		}
	}
	m.joinRows(&beyond, r, cols)
	if m.fileSpec.bodyFile != "" {
		beyond.bodyFile = m.body.expand(&m.columnsByName, cols)
	}
	if beyond.links != nil || beyond.ignored != nil || beyond.bodyFile != "" {
		r.beyond = &beyond
	}
}

// chooseAlternates gives each field of alternate columns (l.alts) the
// first of them that holds a value, in order of preference; the others
// that hold one are kept in extra.
func (m *Mapper) chooseAlternates(r *Record, cols []reader.Col, l *layout) {
	for _, g := range l.alts {
		chosen := false
		for _, i := range g.cols {
			c := cols[i]
			v := c.Value
			if m.fields.IsValue[g.field] && emptySpelling(v) {
				v = ""
			}
			keep := false
			if m.valueFuncs != nil && m.valueFuncs[g.field] != nil {
				v, keep = m.valueFuncs[g.field](v)
			}
			if l.dateOnly != nil && l.dateOnly[i] {
				v = dateOnly(v)
			}
			switch {
			case !chosen && strings.TrimSpace(v) != "":
				if c.Nested && r.Err == nil {
					r.Err = m.nestedError(r.Line, g.field, c.Value)
				}
				r.vals[g.field], chosen = v, true
				if keep {
					r.addExtra(l.extraName[i], c)
				}
			case c.Value != "" && !(m.emptyExtra && m.p.empty[strings.TrimSpace(c.Value)]):
				r.addExtra(l.extraName[i], c) // an alternate not taken: kept
			}
		}
	}
}

// joinRows adds to b what the rows of the joined files (side files) that
// r joins say: by its id, or by the first column of a join's "on" that
// holds a value.
func (m *Mapper) joinRows(b *beyondFields, r *Record, cols []reader.Col) {
	if len(m.fileSpec.joins) > 0 && m.side != nil {
		for _, js := range m.fileSpec.joins {
			key := r.vals[m.fields.Index["id"]]
			if js.on != nil {
				key = ""
				for _, on := range js.on {
					if v := m.columnsByName.value(cols, normaliseHeader(on)); v != "" {
						key = v
						break
					}
				}
			}
			key = m.normID(key)
			if idx := m.side.joins[js]; idx != nil && key != "" {
				b.add(idx.rows[key])
			}
		}
	}
}

// Validate validates the record and writes its extra columns as JSON,
// ahead of deciding it (a decision uses both only if the record gets that
// far). Extra columns that cannot be written fail the record: nothing in
// the export is dropped silently (SPEC §4).
func (r *Record) Validate() {
	r.values, r.invalid = canon.Validate(r.Kind, r.vals)
	if len(r.Extra) > 0 {
		b, err := json.Marshal(r.Extra)
		if err != nil && r.invalid == "" {
			r.invalid = fmt.Sprintf("its extra columns cannot be kept as JSON: %v", err)
		}
		r.extraJSON = string(b)
	}
	r.hashed = false // made from the values validated now, when asked for
	r.validated = true
}

// Validated reports whether Validate has run.
func (r *Record) Validated() bool { return r.validated }

// Values are what Validate found: the values to write, and why the record
// is invalid ("" when it is not).
func (r *Record) Values() (canon.Values, string) { return r.values, r.invalid }

// ExtraJSON is Extra as JSON, as Validate wrote it ("" for none).
func (r *Record) ExtraJSON() string { return r.extraJSON }

// Complete reads what the record needs from the export beyond its row (its
// body file), then validates it. A body file that cannot be read makes the
// record invalid (SPEC §4 step 5): its row was read, so its id counts.
func (m *Mapper) Complete(r *Record) {
	var bodyErr error
	if r.beyond != nil && r.beyond.bodyFile != "" && r.Err == nil {
		body, err := m.side.readBody(r.beyond.bodyFile)
		if err != nil {
			bodyErr = err
		} else if i, ok := r.fields.Index["body"]; ok {
			r.vals[i] = body
		}
	}
	r.Validate()
	if bodyErr != nil {
		r.invalid = bodyErr.Error()
	}
}

// RawJSON is the row as read, a JSON object in file order: what
// record_failures keeps of a failed record (R4). It is made only for
// failures.
func (r Record) RawJSON() string { return rawJSON(r.row) }

// RawText is the key under which a raw row keeps the text of a record that
// could not be parsed, as it stands in the file.
const RawText = "(text)"

// RawNames are the keys a raw row gives columns of these names, in order:
// a name as it is, a repeated one with "#2", "#3" (the second "Phone" is
// "Phone#2").
func RawNames(names []string) []string {
	out := make([]string, len(names))
	used := map[string]int{}
	for i, name := range names {
		out[i] = name
		if n := used[name]; n > 0 {
			out[i] = fmt.Sprintf("%s#%d", name, n+1)
		}
		used[name]++
	}
	return out
}

// rawJSON writes the row as a JSON object in file order (a repeated header
// name gets "#2", "#3"); a record that could not be parsed also keeps its
// text as it stands in the file, under "(text)".
func rawJSON(row reader.Row) string {
	var b bytes.Buffer
	b.WriteByte('{')
	cols := row.Cols
	if row.Text != "" {
		cols = append(append([]reader.Col(nil), cols...), reader.Col{Name: RawText, Value: row.Text})
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	names = RawNames(names)
	for i, c := range cols {
		name := names[i]
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

// NamesAnAnchor reports whether the record holds a value in one of its
// link fields to a parent that may anchor it, or a link value beyond them
// (a lead's id, a name: unresolved, but kept in a skip's detail) that is
// not its owner — an owner never anchors a record (R6a).
func (r *Record) NamesAnAnchor() bool {
	for _, l := range canon.Parents(r.Kind) {
		if canon.Anchors(l.Kind) && strings.TrimSpace(r.Get(l.Field)) != "" {
			return true
		}
	}
	for _, l := range r.Links() {
		if !canon.IsOwner(l.Field) {
			return true
		}
	}
	return false
}

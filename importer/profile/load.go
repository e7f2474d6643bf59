package profile

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"crmimport/canon"
	"crmimport/importer/reader"
	"crmimport/ledger"
)

// Error is one thing wrong in a profile file: where (the file, the
// line, the path of keys) and what.
type Error struct {
	Source string // the file's name
	Line   int
	Path   string // kinds.contact.fields.emial
	Msg    string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Source)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Load reads a profile (YAML, or JSON, which is YAML too) and
// validates it strictly: an unknown key, kind or field, a bad pattern or
// date format, a link to a kind that cannot be a parent… each is a
// *Error naming the key and what is wrong; all of them are
// returned, joined.
func Load(source string, text []byte) (*Profile, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil {
		return nil, &Error{Source: source, Msg: "not YAML or JSON: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	l := &profileLoader{source: source}
	p := &Profile{text: append([]byte(nil), text...), kinds: map[ledger.Kind]*kindSpec{}}
	if len(doc.Content) == 0 {
		return nil, &Error{Source: source, Msg: "the file is empty"}
	}
	l.profile(p, doc.Content[0])
	if len(l.errs) > 0 {
		return nil, errors.Join(l.errs...)
	}
	return p, nil
}

type profileLoader struct {
	source string
	errs   []error
}

func (l *profileLoader) fail(n *yaml.Node, at, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	l.errs = append(l.errs, &Error{Source: l.source, Line: line, Path: at, Msg: fmt.Sprintf(format, args...)})
}

// entry is one key of a mapping.
type entry struct {
	key  string
	node *yaml.Node // the key's node, for its line
	val  *yaml.Node
}

// mapping returns the keys of a mapping node in order, refusing keys not in
// allowed (when given).
func (l *profileLoader) mapping(n *yaml.Node, at string, allowed ...string) []entry {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		l.fail(n, at, "expected a mapping of keys, found %s", describeNode(n))
		return nil
	}
	var out []entry
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			l.fail(k, at, "a key must be text, found %s", describeNode(k))
			continue
		}
		if len(allowed) > 0 && !slices.Contains(allowed, k.Value) {
			l.fail(k, join(at, k.Value), "unknown key %q (known here: %s)", k.Value, strings.Join(allowed, ", "))
			continue
		}
		out = append(out, entry{key: k.Value, node: k, val: v})
	}
	return out
}

func (l *profileLoader) str(n *yaml.Node, at string) (string, bool) {
	n = deref(n)
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		l.fail(n, at, "expected a text value, found %s", describeNode(n))
		return "", false
	}
	return n.Value, true
}

// strs reads one text or a list of texts.
func (l *profileLoader) strs(n *yaml.Node, at string) ([]string, bool) {
	n = deref(n)
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		return []string{n.Value}, true
	}
	if n.Kind != yaml.SequenceNode {
		l.fail(n, at, "expected a text or a list of texts, found %s", describeNode(n))
		return nil, false
	}
	var out []string
	for i, c := range n.Content {
		s, ok := l.str(c, fmt.Sprintf("%s[%d]", at, i))
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// columns reads a column or a list of alternate columns: none empty.
func (l *profileLoader) columns(n *yaml.Node, at string) ([]string, bool) {
	cols, ok := l.strs(n, at)
	if !ok {
		return nil, false
	}
	if len(cols) == 0 {
		l.fail(n, at, "names no column")
		return nil, false
	}
	for _, c := range cols {
		if normaliseHeader(c) == "" {
			l.fail(n, at, "a column name is empty")
			return nil, false
		}
	}
	return cols, true
}

// deref follows a YAML alias (*name) to the node it names.
func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return strconv.Quote(n.Value)
	}
	return "something else"
}

func join(at, key string) string {
	if at == "" {
		return key
	}
	return at + "." + key
}

var profileNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

func (l *profileLoader) profile(p *Profile, n *yaml.Node) {
	var kindsNode *yaml.Node
	seen := map[string]bool{}
	for _, e := range l.mapping(n, "", "name", "description", "match", "ids", "empty", "booleans", "dates", "repeated_headers", "kinds_by_id_prefix", "kinds") {
		seen[e.key] = true
		switch e.key {
		case "name":
			if s, ok := l.str(e.val, "name"); ok {
				if !profileNameRE.MatchString(s) {
					l.fail(e.val, "name", "%q is not a profile name (lower-case letters, digits, - and _)", s)
				}
				p.Name = s
			}
		case "description":
			p.Description, _ = l.str(e.val, "description")
		case "match":
			l.matchKeys(p, e.val)
		case "ids":
			l.idRule(p, e.val)
		case "empty":
			if list, ok := l.strs(e.val, "empty"); ok {
				p.empty = map[string]bool{}
				for _, s := range list {
					p.empty[strings.TrimSpace(s)] = true
				}
			}
		case "booleans":
			l.booleanWords(p, e.val)
		case "dates":
			l.dateFormats(p, e.val)
		case "repeated_headers":
			l.repeatedRule(p, e.val)
		case "kinds_by_id_prefix":
			p.kindPrefixes = map[string]ledger.Kind{}
			for _, pr := range l.mapping(e.val, "kinds_by_id_prefix") {
				s, ok := l.str(pr.val, "kinds_by_id_prefix."+pr.key)
				if !ok {
					continue
				}
				k, err := canon.ParseKind(s)
				if err != nil || s != string(k) || pr.key == "" {
					l.fail(pr.val, "kinds_by_id_prefix."+pr.key, "%q is not a kind (one of: %s), or its prefix is empty", s, kindWords(canon.Kinds()))
					continue
				}
				p.kindPrefixes[pr.key] = k
			}
		case "kinds":
			kindsNode = e.val
		}
	}
	if !seen["name"] {
		l.fail(n, "name", "missing: every profile has a name")
	}
	if kindsNode == nil {
		l.fail(n, "kinds", "missing: a profile says which files hold which kind")
		return
	}
	for _, e := range l.mapping(kindsNode, "kinds") {
		k, err := canon.ParseKind(e.key)
		if err != nil || e.key != string(k) {
			l.fail(e.node, join("kinds", e.key), "unknown kind (one of: %s)", kindWords(canon.Kinds()))
			continue
		}
		p.kinds[k] = l.kind(p, k, e.val, join("kinds", e.key))
	}
	if len(p.kinds) == 0 && len(l.errs) == 0 {
		l.fail(kindsNode, "kinds", "names no kind")
	}
	// Links by name need the parent kind's files in the export.
	for _, k := range p.Kinds() {
		for i, ls := range p.kinds[k].links {
			if ls.byName && p.kinds[ls.kind] == nil {
				l.fail(kindsNode, fmt.Sprintf("kinds.%s.links[%d]", k, i), "links by name to %s, which the profile does not read", ls.kind)
			}
		}
	}
}

// matchKeys reads the natural keys a profile matches by (R5): email for
// contacts, domain for companies.
func (l *profileLoader) matchKeys(p *Profile, n *yaml.Node) {
	keys, _ := l.strs(n, "match")
	for _, k := range keys {
		switch k {
		case "email":
			p.MatchEmail = true
		case "domain":
			p.MatchDomain = true
		default:
			l.fail(n, "match", "unknown natural key %q (email: contacts, domain: companies)", k)
		}
	}
}

// idRule reads how a profile's ids are read: plain, or Salesforce's.
func (l *profileLoader) idRule(p *Profile, n *yaml.Node) {
	if s, ok := l.str(n, "ids"); ok {
		switch s {
		case "plain":
			p.ids = idsPlain
		case "salesforce":
			p.ids = idsSalesforce
		default:
			l.fail(n, "ids", "unknown id rule %q (plain, or salesforce: 15-character ids made 18, 000000000000000AAA empty, @Ref references)", s)
		}
	}
}

// booleanWords reads the words a profile reads as true and as false.
func (l *profileLoader) booleanWords(p *Profile, n *yaml.Node) {
	for _, b := range l.mapping(n, "booleans", "true", "false") {
		words, ok := l.strs(b.val, "booleans."+b.key)
		if !ok {
			continue
		}
		m := map[string]bool{}
		for _, w := range words {
			m[strings.ToLower(strings.TrimSpace(w))] = true
		}
		if b.key == "true" {
			p.trueWords = m
		} else {
			p.falseWords = m
		}
	}
}

// dateFormats reads the date formats a profile reads dates in.
func (l *profileLoader) dateFormats(p *Profile, n *yaml.Node) {
	specs, _ := l.strs(n, "dates")
	for i, s := range specs {
		layout, hasTime, err := dateLayout(s)
		if err != nil {
			l.fail(n, fmt.Sprintf("dates[%d]", i), "%v", err)
			continue
		}
		p.dates = append(p.dates, dateFormat{spec: s, layout: layout, hasTime: hasTime})
	}
}

// fieldDates reads a field's own date formats (dates: [DD/MM/YYYY]),
// tried for its columns before the profile's.
func (l *profileLoader) fieldDates(n *yaml.Node, at string) []dateFormat {
	specs, _ := l.strs(n, at)
	var out []dateFormat
	for i, s := range specs {
		layout, hasTime, err := dateLayout(s)
		if err != nil {
			where := deref(n)
			if where.Kind == yaml.SequenceNode {
				where = where.Content[i] // the line of the format itself
			}
			l.fail(where, fmt.Sprintf("%s[%d]", at, i), "%v", err)
			continue
		}
		out = append(out, dateFormat{spec: s, layout: layout, hasTime: hasTime})
	}
	return out
}

// repeatedRule reads what a profile does with a mapped column given twice.
func (l *profileLoader) repeatedRule(p *Profile, n *yaml.Node) {
	if s, ok := l.str(n, "repeated_headers"); ok {
		switch s {
		case "fail":
		case "first":
			p.repeatedFirst = true
		default:
			l.fail(n, "repeated_headers", "unknown rule %q (fail, or first: the first column gives the field, the others go to extra)", s)
		}
	}
}

func (l *profileLoader) kind(p *Profile, k ledger.Kind, n *yaml.Node, at string) *kindSpec {
	spec := &kindSpec{kind: k, fields: map[string]*fieldSpec{}}
	var filesNode *yaml.Node
	for _, e := range l.mapping(n, at, "files", "fields", "links") {
		switch e.key {
		case "files":
			filesNode = e.val
		case "fields":
			for _, f := range l.mapping(e.val, join(at, "fields")) {
				fat := join(at, "fields."+f.key)
				if !slices.Contains(canon.Fields(k), f.key) {
					l.fail(f.node, fat, "unknown field of %s (its fields: %s)", k, strings.Join(canon.Fields(k), ", "))
					continue
				}
				if field := l.field(k, f.val, fat, f.key); field != nil {
					spec.fields[f.key] = field
				}
			}
			if spec.fields["id"] == nil {
				l.fail(e.val, join(at, "fields"), "no id: every kind says which column holds the record's id")
			}
			gives := map[string]string{}
			for _, f := range canon.Fields(k) {
				if field := spec.fields[f]; field != nil {
					for _, c := range field.columns {
						n := normaliseHeader(c)
						if other, ok := gives[n]; ok && other != f {
							l.fail(e.val, join(at, "fields."+f), "column %q also gives %s: a column gives one field", c, other)
						}
						gives[n] = f
					}
				}
			}
		case "links":
			spec.links = l.links(k, e.val, join(at, "links"))
		}
	}
	if filesNode == nil {
		l.fail(n, join(at, "files"), "missing: which files hold %s records", k.Plural())
	} else {
		spec.files = l.files(k, filesNode, join(at, "files"))
	}
	if _, ok := spec.fields["id"]; !ok && len(spec.fields) == 0 {
		l.fail(n, join(at, "fields"), "missing: which column gives each field (at least the id)")
	}
	return spec
}

func (l *profileLoader) field(k ledger.Kind, n *yaml.Node, at, field string) *fieldSpec {
	n = deref(n)
	if field == "id" {
		if spec, ok := l.idFromSpec(n, at); ok {
			return spec // SPEC §4: an id made of columns (idfrom.go)
		}
	}
	if n.Kind == yaml.MappingNode {
		spec := &fieldSpec{}
		var dateOnly *entry // read once the columns are known
		for _, e := range l.mapping(n, at, "columns", "multi", "map", "default", "date_only", "dates", "flags") {
			switch e.key {
			case "dates":
				if !canon.IsDateField(field) {
					l.fail(e.node, join(at, "dates"), "%s is not a date", field)
				}
				spec.dates = l.fieldDates(e.val, join(at, "dates"))
			case "flags":
				spec.outcome = l.outcome(k, e.val, join(at, "flags"), field)
			case "date_only":
				if !canon.IsDateField(field) {
					l.fail(e.node, join(at, "date_only"), "%s is not a date", field)
				}
				dateOnly = &e
			case "columns":
				spec.columns, _ = l.columns(e.val, join(at, "columns"))
			case "multi":
				if s, ok := l.str(e.val, join(at, "multi")); ok {
					if s == "" {
						l.fail(e.val, join(at, "multi"), "the separator is empty")
					}
					spec.multi = s
				}
			case "map":
				spec.valueMap = map[string]string{}
				for _, m := range l.mapping(e.val, join(at, "map")) {
					if v, ok := l.str(m.val, join(at, "map."+m.key)); ok {
						if why := canon.ValueProblem(k, field, v); why != "" {
							// A map that gives a value its field cannot hold
							// would fail every row it maps.
							l.fail(m.val, join(at, "map."+m.key), "%s", why)
						}
						spec.valueMap[strings.ToLower(strings.TrimSpace(m.key))] = v
					}
				}
			case "default":
				if field == "id" {
					l.fail(e.node, join(at, "default"), "an id has no default: every record has its own")
				}
				spec.def, _ = l.str(e.val, join(at, "default"))
			}
		}
		switch {
		case spec.outcome != nil && len(spec.columns) > 0:
			l.fail(n, at, "columns and flags both give %s: one or the other", field)
			return nil
		case spec.outcome != nil:
			return spec
		case len(spec.columns) == 0:
			l.fail(n, join(at, "columns"), "missing: which column gives %s", field)
			return nil
		}
		if dateOnly != nil {
			spec.dateOnly = l.dateOnly(dateOnly.val, join(at, "date_only"), spec.columns)
		}
		return spec
	}
	cols, ok := l.columns(n, at)
	if !ok {
		return nil
	}
	return &fieldSpec{columns: cols}
}

// outcome reads a deal's status's flags: {won: COLUMN, closed: COLUMN},
// each column a name or a list of its spellings (SPEC §4: Salesforce's
// IsWon and IsClosed).
func (l *profileLoader) outcome(k ledger.Kind, n *yaml.Node, at, field string) *outcomeFlags {
	if field != "status" || k != ledger.Deal {
		l.fail(n, at, "flags give a deal's status alone, not %s", field)
		return nil
	}
	o := &outcomeFlags{}
	for _, e := range l.mapping(n, at, "won", "closed") {
		cols, _ := l.columns(e.val, join(at, e.key))
		switch e.key {
		case "won":
			o.won = cols
		case "closed":
			o.closed = cols
		}
	}
	if len(o.won) == 0 || len(o.closed) == 0 {
		l.fail(n, at, "expected {won: COLUMN, closed: COLUMN}: a deal is won when the first is true, lost when only the second is, open when neither")
		return nil
	}
	return o
}

// dateOnly reads a field's date_only: true (each of its columns holds a
// date), false, or the columns among them that hold a date, beside others
// that hold a date-time (Salesforce's Task.ActivityDate beside
// Event.ActivityDateTime). It returns the columns that hold a date.
func (l *profileLoader) dateOnly(n *yaml.Node, at string, columns []string) []string {
	n = deref(n)
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		switch n.Value {
		case "true":
			return columns
		case "false":
			return nil
		}
		l.fail(n, at, "expected true, false or a list of the field's columns that hold a date, found %q", n.Value)
		return nil
	}
	cols, ok := l.columns(n, at)
	if !ok {
		return nil
	}
	for _, c := range cols {
		if !slices.ContainsFunc(columns, func(f string) bool { return normaliseHeader(f) == normaliseHeader(c) }) {
			l.fail(n, at, "%q is not one of the field's columns (%s)", c, strings.Join(columns, ", "))
			return nil
		}
	}
	return cols
}

func (l *profileLoader) files(k ledger.Kind, n *yaml.Node, at string) []*fileSpec {
	n = deref(n)
	if n.Kind == yaml.ScalarNode {
		n = &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{n}, Line: n.Line}
	}
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		l.fail(n, at, "expected a list of file name patterns, found %s", describeNode(n))
		return nil
	}
	var out []*fileSpec
	for i, c := range n.Content {
		c = deref(c)
		fat := fmt.Sprintf("%s[%d]", at, i)
		fsp := &fileSpec{}
		if c.Kind == yaml.ScalarNode {
			fsp.pattern = l.pattern(c, fat, c.Value)
			out = append(out, fsp)
			continue
		}
		for _, e := range l.mapping(c, fat, "file", "sheet", "where", "defaults", "join", "body_file") {
			switch e.key {
			case "sheet":
				if s, ok := l.str(e.val, join(fat, "sheet")); ok {
					if strings.TrimSpace(s) == "" {
						l.fail(e.val, join(fat, "sheet"), "names no sheet")
					}
					fsp.sheet = s
				}
			case "file":
				if s, ok := l.str(e.val, join(fat, "file")); ok {
					fsp.pattern = l.pattern(e.val, join(fat, "file"), s)
				}
			case "where":
				for _, w := range l.mapping(e.val, join(fat, "where")) {
					if normaliseHeader(w.key) == "" {
						l.fail(w.node, join(fat, "where"), "a column name is empty")
						continue
					}
					fsp.where = append(fsp.where, l.where(w, join(fat, "where."+w.key)))
				}
			case "defaults":
				fsp.defaults = map[string]string{}
				for _, d := range l.mapping(e.val, join(fat, "defaults")) {
					if !slices.Contains(canon.Fields(k), d.key) || d.key == "id" {
						l.fail(d.node, join(fat, "defaults."+d.key), "not a field of %s that can have a default", k)
						continue
					}
					fsp.defaults[d.key], _ = l.str(d.val, join(fat, "defaults."+d.key))
				}
			case "join":
				fsp.joins = l.joins(k, e.val, join(fat, "join"))
			case "body_file":
				if s, ok := l.str(e.val, join(fat, "body_file")); ok {
					if !slices.Contains(canon.Fields(k), "body") {
						l.fail(e.node, join(fat, "body_file"), "%s has no body", k)
					} else if err := checkBodyTemplate(s); err != nil {
						l.fail(e.val, join(fat, "body_file"), "%v", err)
					}
					fsp.bodyFile = s
				}
			}
		}
		if fsp.pattern == "" {
			l.fail(c, join(fat, "file"), "missing: the file name pattern")
		}
		if f, _ := reader.FormatOf(fsp.pattern); fsp.sheet != "" && !tableFormat(f) {
			l.fail(c, join(fat, "sheet"), "%q is not a spreadsheet's pattern (.xlsx or .csv): only a workbook has sheets", fsp.pattern)
		}
		out = append(out, fsp)
	}
	return out
}

// where reads one condition of a file pattern's where: an unquoted true
// or false (a YAML or JSON boolean) makes the column a flag, read as the
// profile reads flags; any other value, or a list of them, is matched as
// written.
func (l *profileLoader) where(w entry, at string) whereCond {
	c := whereCond{column: w.key}
	if n := deref(w.val); n.Kind == yaml.ScalarNode && n.Tag == "!!bool" {
		c.isFlag, c.flag = true, strings.EqualFold(n.Value, "true")
		return c
	}
	vals, ok := l.strs(w.val, at)
	if ok && len(vals) == 0 {
		l.fail(w.val, at, "lists no value")
	}
	for i, v := range vals {
		vals[i] = strings.TrimSpace(v)
	}
	c.values = vals
	return c
}

// pattern checks a file name pattern: a valid glob ending in a format's
// extension.
func (l *profileLoader) pattern(n *yaml.Node, at, s string) string {
	p := strings.ToLower(strings.TrimSpace(s))
	if _, err := path.Match(p, ""); err != nil || strings.Contains(p, "/") {
		l.fail(n, at, "%q is not a file name pattern (a name with * and ? as wildcards, no folder)", s)
		return p
	}
	if _, ok := reader.FormatOf(p); !ok {
		l.fail(n, at, "%q does not end in .csv, .xlsx, .json, .jsonl or .ndjson: the extension tells how to read the file", s)
	}
	return p
}

func checkBodyTemplate(s string) error {
	if strings.Contains(s, "..") || strings.HasPrefix(s, "/") || strings.Contains(s, "\\") {
		return fmt.Errorf("%q: a body file is a path inside the export (a folder and a {Column}), no .. and no leading /", s)
	}
	open := strings.Count(s, "{")
	if open == 0 || open != strings.Count(s, "}") {
		return fmt.Errorf("%q: name the file with the row's columns in braces, e.g. ContentVersion/{Id}", s)
	}
	return nil
}

func (l *profileLoader) joins(k ledger.Kind, n *yaml.Node, at string) []*joinSpec {
	n = deref(n)
	if n.Kind != yaml.SequenceNode {
		l.fail(n, at, "expected a list of joined files, found %s", describeNode(n))
		return nil
	}
	var out []*joinSpec
	for i, c := range n.Content {
		c = deref(c)
		jat := fmt.Sprintf("%s[%d]", at, i)
		js := &joinSpec{}
		for _, e := range l.mapping(c, jat, "file", "key", "on", "prefer", "deleted", "links") {
			switch e.key {
			case "file":
				if s, ok := l.str(e.val, join(jat, "file")); ok {
					js.file = l.pattern(e.val, join(jat, "file"), s)
				}
			case "key":
				js.key, _ = l.str(e.val, join(jat, "key"))
			case "on":
				js.on, _ = l.columns(e.val, join(jat, "on"))
			case "prefer":
				js.prefer, _ = l.str(e.val, join(jat, "prefer"))
			case "deleted":
				js.deleted, _ = l.str(e.val, join(jat, "deleted"))
			case "links":
				js.links = l.links(k, e.val, join(jat, "links"))
			}
		}
		if js.file == "" {
			l.fail(c, join(jat, "file"), "missing: the pattern of the joined file")
		}
		if js.key == "" {
			l.fail(c, join(jat, "key"), "missing: the joined file's column that holds this record's key")
		}
		if len(js.links) == 0 {
			l.fail(c, join(jat, "links"), "missing: the links the joined rows give")
		}
		for _, ls := range js.links {
			if ls.byName {
				l.fail(c, join(jat, "links"), "a joined file's links are ids, not names")
			}
		}
		out = append(out, js)
	}
	return out
}

func (l *profileLoader) links(k ledger.Kind, n *yaml.Node, at string) []*linkSpec {
	n = deref(n)
	if n.Kind != yaml.SequenceNode {
		l.fail(n, at, "expected a list of link columns, found %s", describeNode(n))
		return nil
	}
	var out []*linkSpec
	for i, c := range n.Content {
		c = deref(c)
		lat := fmt.Sprintf("%s[%d]", at, i)
		ls := &linkSpec{}
		hasKind, hasPrefixes := false, false
		for _, e := range l.mapping(c, lat, "column", "kind", "prefixes", "list", "by", "name") {
			switch e.key {
			case "column":
				ls.columns, _ = l.columns(e.val, join(lat, "column"))
			case "kind":
				hasKind = true
				if s, ok := l.str(e.val, join(lat, "kind")); ok {
					ls.kind = l.parentKind(k, e.val, join(lat, "kind"), s)
				}
			case "prefixes":
				hasPrefixes = true
				ls.prefixes = l.prefixes(k, e.val, lat, ls.prefixes)
			case "list":
				if s, ok := l.str(e.val, join(lat, "list")); ok {
					if s == "" {
						l.fail(e.val, join(lat, "list"), `the separator is empty (a text such as ";", or json for a JSON array)`)
					}
					ls.list = s
				}
			case "by":
				if s, ok := l.str(e.val, join(lat, "by")); ok {
					if s != "name" && s != "id" {
						l.fail(e.val, join(lat, "by"), "unknown %q (id, the default, or name: the parent's exact name within the export)", s)
					}
					ls.byName = s == "name"
				}
			case "name":
				ls.nameColumns, _ = l.columns(e.val, join(lat, "name"))
			}
		}
		l.checkLink(c, lat, ls, hasKind, hasPrefixes)
		out = append(out, ls)
	}
	return out
}

// prefixes reads a link's prefixes (lat: the link's place) into rules:
// per id prefix, the parent's kind, ignore, or the object of ids the
// profile does not import (R6b), longest prefix first.
func (l *profileLoader) prefixes(k ledger.Kind, n *yaml.Node, lat string, rules []prefixRule) []prefixRule {
	for _, pr := range l.mapping(n, join(lat, "prefixes")) {
		if pr.key == "" {
			l.fail(pr.node, join(lat, "prefixes"), "an empty prefix matches every id")
			continue
		}
		rule := prefixRule{prefix: pr.key}
		if v := deref(pr.val); v.Kind == yaml.MappingNode {
			// R6b: the ids of an object the profile does not
			// import ("500": {not_imported: case}): a link to
			// one is kept, and waits for nothing a run of the
			// export gives; {ignore: user} is ignore, naming
			// the object for a record linked only to one.
			keys := l.mapping(v, join(lat, "prefixes."+pr.key), "not_imported", "ignore")
			for _, o := range keys {
				if name, ok := l.str(o.val, join(lat, "prefixes."+pr.key+"."+o.key)); ok {
					rule.object, rule.ignore = strings.TrimSpace(name), o.key == "ignore"
				}
			}
			if len(keys) != 1 || rule.object == "" {
				l.fail(v, join(lat, "prefixes."+pr.key), "names no object: {not_imported: case} names the object of the ids "+
					"the profile does not import, {ignore: user} the object of the ids it ignores")
				continue
			}
			rules = append(rules, rule)
			continue
		}
		s, ok := l.str(pr.val, join(lat, "prefixes."+pr.key))
		if !ok {
			continue
		}
		if rule.ignore = s == "ignore"; !rule.ignore {
			rule.kind = l.parentKind(k, pr.val, join(lat, "prefixes."+pr.key), s)
			if rule.kind == "" {
				continue
			}
		}
		rules = append(rules, rule)
	}
	sort.SliceStable(rules, func(a, b int) bool { return len(rules[a].prefix) > len(rules[b].prefix) })
	return rules
}

// checkLink refuses a link that names no column, both or neither of kind
// and prefixes, prefixes by name, or name columns not by name.
func (l *profileLoader) checkLink(c *yaml.Node, lat string, ls *linkSpec, hasKind, hasPrefixes bool) {
	switch {
	case len(ls.columns) == 0:
		l.fail(c, join(lat, "column"), "missing: the column that holds the link")
	case hasKind == hasPrefixes:
		l.fail(c, lat, "say either kind (the parent's kind) or prefixes (the parent's kind by id prefix)")
	case ls.byName && hasPrefixes:
		l.fail(c, join(lat, "by"), "a link by name names one kind, not prefixes")
	case len(ls.nameColumns) > 0 && !ls.byName:
		l.fail(c, join(lat, "name"), "only a link by name (by: name) looks names up")
	}
}

func (l *profileLoader) parentKind(child ledger.Kind, n *yaml.Node, at, s string) ledger.Kind {
	k, err := canon.ParseKind(s)
	if err != nil || s != string(k) {
		l.fail(n, at, "unknown kind %q (one of: %s)", s, kindWords(parentKinds()))
		return ""
	}
	if !canon.IsParent(child, k) {
		var ps []string
		for _, p := range canon.Parents(child) {
			ps = append(ps, string(p.Kind))
		}
		if len(ps) == 0 {
			l.fail(n, at, "a %s links to nothing", child)
		} else {
			l.fail(n, at, "a %s cannot link to a %s (it links to: %s)", child, k, strings.Join(ps, ", "))
		}
		return ""
	}
	return k
}

// dateLayout turns a date format written with tokens (YYYY-MM-DD HH:mm:ss,
// DD.MM.YYYY, M/D/YY h:mm A) into a Go layout.
func dateLayout(spec string) (layout string, hasTime bool, err error) {
	tokens := []struct {
		tok, layout string
		time        bool
	}{
		{"YYYY", "2006", false}, {"YY", "06", false}, {"MM", "01", false}, {"M", "1", false},
		{"DD", "02", false}, {"D", "2", false}, {"HH", "15", true}, {"H", "15", true},
		{"hh", "03", true}, {"h", "3", true}, {"mm", "04", true}, {"ss", "05", true}, {"A", "PM", true},
	}
	var b strings.Builder
	hasDay, hasYear := false, false
	for s := spec; s != ""; {
		matched := false
		for _, t := range tokens {
			if strings.HasPrefix(s, t.tok) {
				b.WriteString(t.layout)
				hasTime = hasTime || t.time
				hasDay = hasDay || t.tok == "D" || t.tok == "DD"
				hasYear = hasYear || strings.HasPrefix(t.tok, "Y")
				s = s[len(t.tok):]
				matched = true
				break
			}
		}
		if matched {
			continue
		}
		c := s[0]
		if !strings.ContainsRune(" -/.:,T", rune(c)) {
			return "", false, fmt.Errorf("date format %q: unknown %q (use YYYY YY MM M DD D HH H hh h mm ss A and - / . : , T or spaces)", spec, string(c))
		}
		b.WriteByte(c)
		s = s[1:]
	}
	if !hasDay || !hasYear {
		return "", false, fmt.Errorf("date format %q: needs a year (YYYY or YY) and a day (DD or D)", spec)
	}
	return b.String(), hasTime, nil
}

// kindWords names kinds for a message: "company, contact, deal".
func kindWords(ks []ledger.Kind) string {
	words := make([]string, len(ks))
	for i, k := range ks {
		words[i] = string(k)
	}
	return strings.Join(words, ", ")
}

// parentKinds are the kinds a link may point to (canon's table: a parent
// of some kind), in plan order.
func parentKinds() []ledger.Kind {
	var ps []ledger.Kind
	for _, k := range canon.Kinds() {
		for _, child := range canon.Kinds() {
			if canon.IsParent(child, k) {
				ps = append(ps, k)
				break
			}
		}
	}
	return ps
}

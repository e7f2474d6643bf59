package profile

import (
	"embed"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"crmimport/canon"
	"crmimport/importer/reader"
	"crmimport/ledger"
)

// Profile maps an export's files and columns onto the canonical format
// (SPEC §4). Profiles are data: the built-in ones are the YAML files of
// profiles/, embedded in the binary; a user passes one of their own with
// --profile FILE. Load reads and validates one; what it holds is
// resolved further per file and per header by the Mapper (record.go), once,
// not per row.
type Profile struct {
	Name        string
	Description string
	// BuiltIn is true for a profile embedded in the binary.
	BuiltIn bool
	// MatchEmail and MatchDomain say which natural keys match (R5).
	MatchEmail  bool
	MatchDomain bool

	text          []byte // the profile as written, for `profiles show` and a run's options
	ids           idRule
	empty         map[string]bool // more spellings of empty, for every mapped field and extra
	trueWords     map[string]bool // more spellings of true, lower-cased
	falseWords    map[string]bool
	dates         []dateFormat
	repeatedFirst bool // a repeated mapped header: the first column gives the field
	kinds         map[ledger.Kind]*kindSpec
	// kindPrefixes tell a file's kind by the prefix of its records' ids
	// (kinds_by_id_prefix: Salesforce's 001 accounts), for a file whose
	// name none of the kinds' patterns matches (a Data Loader extract.csv).
	kindPrefixes map[string]ledger.Kind
}

// idRule is how a profile normalises ids and link values before they are
// compared (ids are compared exactly, never case-insensitively).
type idRule int

const (
	idsPlain idRule = iota
	// idsSalesforce: a 15-character id becomes its 18-character form (the
	// case checksum), 000000000000000AAA is empty, and "@Ref" (CLI tree
	// JSON) is the reference "Ref".
	idsSalesforce
)

// kindSpec is what a profile says about one kind.
type kindSpec struct {
	kind   ledger.Kind
	files  []*fileSpec
	fields map[string]*fieldSpec // canonical field -> columns
	links  []*linkSpec           // links beyond the plain link fields, in order of preference
}

// fileSpec is one pattern of a kind's files, with what applies to those
// files alone.
type fileSpec struct {
	pattern  string            // lower-cased glob
	sheet    string            // a workbook's one sheet to read, or "" for each sheet with a header row
	where    []whereCond       // rows that do not match are not records of the kind
	defaults map[string]string // canonical field -> value when the row gives none
	joins    []*joinSpec
	bodyFile string // template of the file holding the body ("ContentVersion/{Id}"), or ""
}

// whereCond is one condition of a file pattern's where: the rows whose
// column holds one of values (as written, spaces around trimmed), or, for
// a flag, whose column reads as the flag (the profile's booleans, then
// true/false, 1/0, yes/no; empty is false). A flag that cannot be read
// (neither) fails its row (SPEC §4).
type whereCond struct {
	column string
	values []string
	isFlag bool
	flag   bool
}

// fieldSpec says where a canonical field comes from.
type fieldSpec struct {
	columns  []string          // alternates: the first that holds a value
	multi    string            // a multi-value separator: the first value is the field's
	valueMap map[string]string // lower-cased value -> canonical value
	def      string            // when no column holds a value
	dateOnly []string          // the columns that hold a date (date_only): what they give is stored as a date, whatever its time
	dates    []dateFormat      // the field's own date formats, tried before the profile's (dates: [DD/MM/YYYY])
	// outcome gives a deal's status from two flag columns instead of a
	// column of its own (Salesforce's IsWon and IsClosed): nil for none.
	outcome *outcomeFlags
	// from names the columns whose values make an id (idfrom.go), for an
	// export without an id column; nil for an id read from a column.
	from []string
}

// outcomeFlags are the flag columns a deal's status is read from: won
// when the won flag is true; else lost when the closed flag is; else open.
// Each is a list of alternate spellings of one column.
type outcomeFlags struct {
	won, closed []string
}

// linkSpec is a link column: to one kind, or by id prefix to several; a
// single value or a list; an id, or a name to look up within the export.
type linkSpec struct {
	columns     []string
	kind        ledger.Kind  // "" when by prefix
	prefixes    []prefixRule // longest first
	list        string       // "" single value; a separator; "json" for a JSON array
	byName      bool         // the value is the parent's name within the export
	nameColumns []string     // the parent's columns holding its name ("" = its canonical name)
}

type prefixRule struct {
	prefix string
	kind   ledger.Kind // "" for ids of an object the profile does not import
	// ignore drops the value (links to users: an owner never anchors a
	// record, R6a), kept neither in extra nor as unlinked.
	ignore bool
	// object names the ids of an object the profile does not import (a
	// Salesforce case, 500…): a link to one is kept, and waits for nothing
	// a run of the export gives (R6b); of an ignored one (a user), it
	// names what a record linked only to such ids is linked to.
	object string
}

// joinSpec joins the rows of another file of the export to each record, for
// the links they hold (Salesforce OpportunityContactRole, ContentDocumentLink).
type joinSpec struct {
	file    string   // lower-cased glob
	key     string   // the joined file's column that holds this record's key
	on      []string // this file's column holding the key (nil: the id)
	prefer  string   // a flag column: rows where it is true come first
	deleted string   // a flag column: rows where it is true are left out
	links   []*linkSpec
}

// dateFormat is one of a profile's date formats.
type dateFormat struct {
	spec    string // as written in the profile (DD.MM.YYYY)
	layout  string // Go layout
	hasTime bool
}

// Text is the profile as written (YAML or JSON).
func (p *Profile) Text() []byte { return append([]byte(nil), p.text...) }

// Reads reports whether the profile reads kind k: a link to a kind it
// does not read waits for nothing a run with it gives (R6b).
func (p *Profile) Reads(k ledger.Kind) bool { return p.kinds[k] != nil }

// Kinds lists the kinds the profile reads, in plan order.
func (p *Profile) Kinds() []ledger.Kind {
	var out []ledger.Kind
	for _, k := range canon.Kinds() {
		if p.kinds[k] != nil {
			out = append(out, k)
		}
	}
	return out
}

// FilePatterns lists the file name patterns of kind, as written (lower-cased).
func (p *Profile) FilePatterns(k ledger.Kind) []string {
	spec := p.kinds[k]
	if spec == nil {
		return nil
	}
	var out []string
	for _, f := range spec.files {
		out = append(out, f.pattern)
	}
	return out
}

// Canonical is the project's own documented layout (SPEC §4), the profile
// profiles/canonical.yaml.
func Canonical() *Profile {
	p, err := Builtin("canonical")
	if err != nil {
		panic(err) // the embedded file is tested; it cannot be wrong at run time
	}
	return p
}

//go:embed profiles/*.yaml
var builtinFS embed.FS

// BuiltinNames lists the names of the built-in profiles, sorted.
func BuiltinNames() []string {
	entries, _ := fs.ReadDir(builtinFS, "profiles") // embedded: cannot fail
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(names)
	return names
}

// Builtin loads the built-in profile of a name BuiltinNames lists.
func Builtin(name string) (*Profile, error) {
	b, err := builtinFS.ReadFile("profiles/" + name + ".yaml")
	if err != nil {
		return nil, err
	}
	p, err := Load(name+".yaml", b)
	if err != nil {
		return nil, err
	}
	p.BuiltIn = true
	return p, nil
}

// FileKinds tells which kinds a file holds, from its name, in plan order,
// and its format; ok=false for a file the profile does not know. A name
// ending in .gz is matched without it. Each kind a profile gives a file is
// its own task over it (SPEC §4): a lead export gives contacts and their
// notes, a partner export companies and contacts (told apart by where).
func (p *Profile) FileKinds(name string) ([]ledger.Kind, reader.Format, bool) {
	kfs, f := p.fileKinds(name)
	out := make([]ledger.Kind, len(kfs))
	for i, kf := range kfs {
		out[i] = kf.kind
	}
	return out, f, len(out) > 0
}

// kindFile is a kind a file holds, and the pattern of the kind it matched,
// with what applies to its rows (where, defaults, joins, body).
type kindFile struct {
	kind ledger.Kind
	spec *fileSpec
}

// fileKinds are the kinds of a file in plan order, each with the first of
// its patterns the file matches, and the file's format.
func (p *Profile) fileKinds(name string) ([]kindFile, reader.Format) {
	base := matchName(name)
	f, ok := reader.FormatOf(base)
	if !ok {
		return nil, ""
	}
	var out []kindFile
	for _, k := range canon.Kinds() {
		if fsp := p.fileSpec(k, base); fsp != nil {
			out = append(out, kindFile{kind: k, spec: fsp})
		}
	}
	return out, f
}

// fileSpec is the first of kind k's patterns that a file (matchName)
// matches, or nil.
func (p *Profile) fileSpec(k ledger.Kind, base string) *fileSpec {
	spec := p.kinds[k]
	if spec == nil {
		return nil
	}
	for _, fsp := range spec.files {
		if matchFile(fsp.pattern, base) {
			return fsp
		}
	}
	return nil
}

// matchFile tells whether a file's name (matchName) matches a pattern: as
// a glob, or as a table file in either format (tableName).
func matchFile(pattern, name string) bool {
	if m, _ := path.Match(pattern, name); m {
		return true
	}
	if table := tableName(name); table != "" {
		m, _ := path.Match(tableName(pattern), table)
		return m
	}
	return false
}

// A workbook is a file like a CSV (issue 15): a pattern for a table
// matches it in either format, so that "*contact*.csv" reads
// contacts.xlsx, and a pattern written "contacts.xlsx" reads contacts.csv
// (a fix folder's, written from a workbook's failed rows as CSV).
func tableFormat(f reader.Format) bool { return f == reader.FormatCSV || f == reader.FormatXLSX }

// tableName is the name of a table file (.csv or .xlsx) with its
// extension made ".csv", or "" for another file.
func tableName(name string) string {
	ext := path.Ext(name)
	if f, _ := reader.FormatOf(name); !tableFormat(f) {
		return ""
	}
	return name[:len(name)-len(ext)] + ".csv"
}

// Sheet is the sheet a profile reads of a workbook for kind k (the kind's
// file pattern's sheet: one workbook may hold a sheet per kind), or "" for
// each sheet that has a header row.
func (p *Profile) Sheet(k ledger.Kind, name string) string {
	if fsp := p.fileSpec(k, matchName(name)); fsp != nil {
		return fsp.sheet
	}
	return ""
}

// matchName is the name a file is matched by: its base name, lower-cased,
// without a .gz suffix.
func matchName(name string) string {
	base := strings.ToLower(path.Base(filepath.ToSlash(name)))
	return strings.TrimSuffix(base, ".gz")
}

// ExpectedFiles lists the file names the profile reads, for messages.
func (p *Profile) ExpectedFiles() string {
	var names []string
	for _, k := range p.Kinds() {
		names = append(names, p.FilePatterns(k)...)
	}
	if len(names) > 12 {
		names = append(names[:12], "…")
	}
	return strings.Join(names, ", ")
}

// normaliseHeader makes header names match case- and space-insensitively:
// "First Name", "first_name" and "FIRST-NAME" are one name.
func normaliseHeader(h string) string {
	h = strings.TrimPrefix(h, "\ufeff")
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch r {
		case ' ', '_', '-', '\t':
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// BodyFolders are the folders a profile reads body files from, lower-cased.
func (p *Profile) BodyFolders() map[string]bool {
	out := map[string]bool{}
	for _, spec := range p.kinds {
		for _, f := range spec.files {
			if f.bodyFile != "" {
				out[strings.ToLower(path.Dir(f.bodyFile))] = true
			}
		}
	}
	return out
}

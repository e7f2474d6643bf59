package importer

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"crmimport/canon"
	"crmimport/importer/input"
	"crmimport/importer/profile"
	"crmimport/importer/reader"
	"crmimport/ledger"
	"crmimport/phases"
)

// What a run of an export would plan, and what its tasks would find when
// they open, told before any run exists and without a database: crmimport
// inspect, and the desktop's New import page. It goes through planning's
// own functions (planInputs, discover) and a task's own open
// (openTaskInput, ready, ReadSideFiles, Map, Complete, and decide's
// unreadable and judge), so that what it says is what a run does.

// DefaultInspectRows is how many rows of each file Inspect maps, and
// MaxInspectRows the most it maps.
const (
	DefaultInspectRows = 5
	MaxInspectRows     = 1000
)

// InspectSpec is what Inspect looks at: what a run takes for its plan
// (RunSpec, without the tenant and the options of its work).
type InspectSpec struct {
	Source   string
	Profile  string   // a built-in profile's name or a profile file; "" means the built-in profile named like the source
	Input    string   // a folder, a zip, a .gz or one file
	Inputs   []string // further paths of the same export (Salesforce's _2.ZIP …)
	Only     []ledger.Kind
	Encoding string // "" means: each file's own, on the evidence of its bytes
	// Rows is how many rows of each file to map (0: DefaultInspectRows; at
	// most MaxInspectRows).
	Rows int
	// Tenant and Ledger, when both are given, compare the rows inspected
	// with the tenant's final slots of the source (inspectledger.go):
	// Ledger is a read-only handle on its database. Without them, no
	// database is read.
	Tenant string
	Ledger ledger.Querier
}

// Inspection is what a run of an export would plan, and what its tasks
// would find when they open. A problem that would fail one task is told
// for its file (FileInspection.Problem) and in Problems; a problem that
// would refuse the run is Inspect's error instead.
type Inspection struct {
	Source string `json:"source"`
	// Tenant is the tenant whose ledger the rows were compared with, ""
	// when they were not (RowInspection.Ledger).
	Tenant string `json:"tenant,omitempty"`
	// Ledger counts the rows inspected by what they are to the tenant's
	// ledger (RowInspection.Ledger), when they were compared with it.
	Ledger      map[string]int `json:"ledger,omitempty"`
	Profile     string         `json:"profile"`                // the profile's name
	ProfileFile string         `json:"profile_file,omitempty"` // a profile file's path (not a built-in profile)
	// Inputs are the export's paths, absolute, as the run would keep them.
	Inputs   []string `json:"inputs"`
	Only     []string `json:"only,omitempty"`     // the kinds asked for (singular), or none for every kind
	Encoding string   `json:"encoding,omitempty"` // --encoding, when asked
	// Files are the files the run would plan, one task each, in the order
	// it works on them: by phase, then by name.
	Files []FileInspection `json:"files"`
	// LeftOut are the files and folders of the export the run would not
	// read, and why.
	LeftOut []LeftOut `json:"left_out"`
	// SideFiles are what the tasks would read beside their files (joined
	// files, parents looked up by name, folders of body files).
	SideFiles []profile.SideFile `json:"side_files"`
	// Notices and Warnings are what planning would write to the run log
	// (warnings are repeated in the run's summary).
	Notices  []string `json:"notices"`
	Warnings []string `json:"warnings"`
	// Problems are the files' problems, in the order of Files.
	Problems []Problem `json:"problems"`
}

// FileInspection is one file of the plan: its task, how it is read, what
// each column gives, and its first rows as they would be mapped.
type FileInspection struct {
	File        string        `json:"file"` // the task's file: a path, or ZIP!/ENTRY
	Name        string        `json:"name"` // as messages name it (ZIP!/ENTRY without the zip's folder)
	Kind        ledger.Kind   `json:"kind"`
	Phase       int           `json:"phase"`
	Format      reader.Format `json:"format"`
	Size        int64         `json:"size"`        // its bytes, a gzip's or a zip entry's uncompressed
	Fingerprint string        `json:"fingerprint"` // as the plan keeps it (R10)
	Encoding    string        `json:"encoding"`
	// EncodingWhy is the evidence the encoding rests on, or "--encoding".
	EncodingWhy string `json:"encoding_why"`
	// EncodingGuessed: that evidence does not settle the encoding
	// (Windows-1252 on the weight of its bytes, UTF-8 with bytes that are
	// not, or neither): --encoding had better name it. The New import page
	// shows its encoding field for such a file.
	EncodingGuessed bool `json:"encoding_guessed,omitempty"`
	// Delimiter is a CSV file's delimiter; "" for JSON, or when the file
	// could not be opened.
	Delimiter string `json:"delimiter,omitempty"`
	// Columns are what each column gives: a CSV file's header, a JSON
	// file's keys in the rows read. Empty when the file could not be opened.
	Columns []profile.Column `json:"columns"`
	// Links are the links of the kind as the profile reads them in this file.
	Links []profile.Link `json:"links"`
	// SideFiles are those of Inspection.SideFiles that this file's task reads.
	SideFiles []profile.SideFile `json:"side_files"`
	// Rows are the file's first rows as they would be mapped.
	Rows []RowInspection `json:"rows"`
	// Problem is why the file's task would fail (the error it would fail
	// with), or "".
	Problem string `json:"problem,omitempty"`
}

// Outcomes of a row that Inspect can tell without a ledger.
const (
	// RowValid: the row's own values hold; the ledger decides the rest —
	// imported (created or matched), unchanged when a final slot holds it
	// already (R2), or, for a note, activity or email, skipped when none
	// of its links resolves (R6).
	RowValid = "valid"
	// RowFailed and RowSkipped: what a run would count it, whatever the
	// ledger holds — but a row already in a final slot, which a run counts
	// unchanged without judging it (SPEC §4 step 3).
	RowFailed  = "failed"
	RowSkipped = "skipped"
	// RowExcluded: the row is read, but is not a record of the kind (the
	// profile's where): no outcome.
	RowExcluded = "excluded"
)

// RowInspection is one row as it would be mapped: its canonical values
// after the profile's value rules, its links beyond the link fields, what
// it keeps in extra, and what its own values make of it.
type RowInspection struct {
	Line int    `json:"line"` // where the record starts in the file
	ID   string `json:"id"`
	// Fields are the canonical fields that hold a value.
	Fields map[string]string `json:"fields"`
	// Links are the link values beyond the link fields (by prefix, a list,
	// a name, a joined row's), in order of preference.
	Links []RowLink      `json:"links,omitempty"`
	Extra map[string]any `json:"extra,omitempty"`
	// Outcome is RowValid, RowFailed, RowSkipped or RowExcluded, and Reason
	// why, for a failed or skipped row.
	Outcome string `json:"outcome"`
	Reason  string `json:"reason,omitempty"`
	// Ledger is what the row is to the tenant's ledger, when the
	// inspection was given one (RowNew, RowUnchanged, RowOutdated,
	// RowConflict, RowDeletedSince; a row already in a final slot is
	// unchanged or outdated whatever its Outcome, as a run decides it,
	// SPEC §4 step 3); Changed are the fields that differ from what was
	// last written, Edited those of the row edited by hand since (R17).
	Ledger  string   `json:"ledger,omitempty"`
	Changed []string `json:"changed,omitempty"`
	Edited  []string `json:"edited,omitempty"`
	// Applicable is whether `run --update` would update an outdated row:
	// not a matched slot's (its row was found, not made: R5), nor a record
	// now invalid.
	Applicable bool `json:"applicable,omitempty"`
}

// RowLink is one link value of a row beyond its link fields.
type RowLink struct {
	Field  string `json:"field"`        // the link field it may give, or its column when no kind takes it
	Column string `json:"column"`       // where it was read
	Value  string `json:"value"`        // as the export writes it
	ID     string `json:"id,omitempty"` // the parent's id to look up; "" when none (a lead, a name that names no record or several)
	ByName bool   `json:"by_name,omitempty"`
	Note   string `json:"note,omitempty"` // why a name gives no id
}

// Problem is a file's problem: the error its task would fail with.
type Problem struct {
	File  string      `json:"file"` // as messages name it
	Kind  ledger.Kind `json:"kind"`
	Error string      `json:"error"`
}

// Inspect tells what a run of spec's export would plan, and what each of
// its tasks would find when it opens, without a database. Its error is
// what Plan would refuse the run with, of the same type (*UsageError: an
// unknown profile or encoding; *input.Error: no file matches, a zip bomb,
// a named pipe, a file that is not what its name says when it is the only
// path given); a problem that would fail one task only is told for its file.
func Inspect(ctx context.Context, spec InspectSpec) (Inspection, error) {
	return inspect(ctx, spec, input.DefaultLimits())
}

func inspect(ctx context.Context, spec InspectSpec, lim input.Limits) (Inspection, error) {
	prof, inputs, err := planInputs(spec.Source, spec.Profile, spec.Encoding, append([]string{spec.Input}, spec.Inputs...))
	if err != nil {
		return Inspection{}, err
	}
	prof, _, byIDsNotices := kindsByIDs(prof, inputs, lim)
	d, err := discover(ctx, inputs, prof, spec.Only, spec.Encoding, lim)
	if err != nil {
		return Inspection{}, err
	}
	d.notes.notices = append(byIDsNotices, d.notes.notices...)
	d.fixWarnings(prof, "", spec.Source) // inspect is told no tenant
	rows := spec.Rows
	if rows <= 0 {
		rows = DefaultInspectRows
	}
	rows = min(rows, MaxInspectRows)
	look := newLedgerLook(spec)
	ins := Inspection{Source: spec.Source, Profile: prof.Name, Inputs: inputs, Encoding: spec.Encoding,
		Files: []FileInspection{}, LeftOut: d.left, SideFiles: d.side, Notices: d.notes.notices, Warnings: d.notes.warnings,
		Problems: []Problem{}}
	if !prof.BuiltIn {
		ins.ProfileFile, _ = filepath.Abs(spec.Profile)
	}
	for _, k := range spec.Only {
		ins.Only = append(ins.Only, string(k))
	}
	if look != nil {
		ins.Tenant, ins.Ledger = spec.Tenant, map[string]int{}
	}
	for _, s := range []*[]string{&ins.Notices, &ins.Warnings} {
		if *s == nil {
			*s = []string{}
		}
	}
	if ins.LeftOut == nil {
		ins.LeftOut = []LeftOut{}
	}
	if ins.SideFiles == nil {
		ins.SideFiles = []profile.SideFile{}
	}
	files := append([]inputFile(nil), d.files...)
	sort.SliceStable(files, func(i, j int) bool { return phases.Phase(files[i].Kind) < phases.Phase(files[j].Kind) })
	seen := map[ledger.Kind]map[string]firstSeen{}
	kinds := map[string][]ledger.Kind{} // per file, the kinds planned over it (SPEC §4)
	for _, f := range files {
		kinds[f.Path] = append(kinds[f.Path], f.Kind)
	}
	for _, f := range files {
		if seen[f.Kind] == nil {
			seen[f.Kind] = map[string]firstSeen{}
		}
		fi, err := inspectFile(ctx, prof, f, kinds[f.Path], d.side, rows, lim, seen[f.Kind], look)
		if err != nil {
			return Inspection{}, err
		}
		if ctx.Err() != nil {
			return Inspection{}, ctx.Err()
		}
		ins.Files = append(ins.Files, fi)
		for _, r := range fi.Rows {
			if r.Ledger != "" {
				ins.Ledger[r.Ledger]++
			}
		}
		if fi.Problem != "" {
			ins.Problems = append(ins.Problems, Problem{File: fi.Name, Kind: fi.Kind, Error: fi.Problem})
		}
	}
	return ins, nil
}

// inspectFile opens a planned file as its task would, and maps its first
// rows: the ids of the kind's rows mapped so far are in seen (SPEC §4
// step 2, among the rows inspected). With look, each row that is a record
// is compared with the ledger; its error is one of reading the database.
func inspectFile(ctx context.Context, prof *profile.Profile, f inputFile, planned []ledger.Kind, side []profile.SideFile, rows int, lim input.Limits,
	seen map[string]firstSeen, look *ledgerLook) (fi FileInspection, err error) {
	fi = FileInspection{File: f.Path, Name: input.Name(f.Path), Kind: f.Kind, Phase: phases.Phase(f.Kind), Format: f.Format,
		Size: f.Info.Size, Fingerprint: f.Info.Fingerprint, Encoding: f.Encoding, EncodingWhy: f.EncodingWhy,
		EncodingGuessed: f.EncodingGuessed, Columns: []profile.Column{}, Links: []profile.Link{}, SideFiles: []profile.SideFile{}, Rows: []RowInspection{}}
	m := profile.NewMapper(prof, f.Kind, fi.Name)
	fi.Links = append(fi.Links, m.Links()...)
	fi.SideFiles = append(fi.SideFiles, m.SideFilesRead(side)...)
	ti, err := openTaskInput(prof, f.Path, f.Kind, f.Format, f.Encoding, lim)
	if err != nil {
		fi.Problem = err.Error()
		return fi, nil
	}
	defer ti.close()
	ti.mapper.Planned(planned)
	if d := ti.rr.Delimiter(); d != 0 {
		fi.Delimiter = string(d)
	}
	header := ti.rr.Header()
	var read []reader.Row
	defer func() { fi.Columns = append(fi.Columns, ti.mapper.Columns(header, read)...) }()
	if err := ti.ready(); err != nil {
		fi.Problem = err.Error()
		return fi, nil
	}
	header = ti.rr.Header() // a workbook's first sheet read, past those left unread
	if err := ti.mapper.ReadSideFiles(ctx, side, lim); err != nil {
		fi.Problem = err.Error()
		return fi, nil
	}
	for len(read) < rows {
		row, err := ti.rr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fi.Problem = err.Error() // the rest of the file cannot be read: the task fails here
			break
		}
		read = append(read, row)
		r := ti.mapper.Map(row)
		if !r.Excluded {
			ti.mapper.Complete(&r)
		}
		ri := inspectRow(prof, r, seen)
		if look != nil && isRecord(r, seen) {
			if err := look.look(ctx, r, &ri); err != nil {
				return fi, err
			}
		}
		fi.Rows = append(fi.Rows, ri)
	}
	return fi, nil
}

// isRecord is whether r, once inspectRow saw it, is a record a run would
// look up in the ledger: one of the kind, readable, and its id's first.
func isRecord(r profile.Record, seen map[string]firstSeen) bool {
	return !r.Excluded && unreadable(r) == "" && seen[r.ID] == firstSeen{file: r.File, line: r.Line}
}

// inspectRow tells what a mapped record holds, and what a run would make
// of it as far as its own values decide (decide's unreadable and judge).
func inspectRow(prof *profile.Profile, r profile.Record, seen map[string]firstSeen) RowInspection {
	ri := RowInspection{Line: r.Line, ID: r.ID, Fields: map[string]string{}, Extra: r.Extra, Outcome: RowValid}
	for _, f := range canon.Fields(r.Kind) {
		if v := r.Get(f); strings.TrimSpace(v) != "" {
			ri.Fields[f] = v
		}
	}
	for _, l := range r.Links() {
		ri.Links = append(ri.Links, RowLink{Field: l.Field, Column: l.Label, Value: l.Shown, ID: l.ID, ByName: l.ByName, Note: l.Note})
	}
	if r.Excluded {
		ri.Outcome, ri.Reason = RowExcluded, "not a record of the kind (the profile reads only some of the file's rows)"
		if r.Untaken {
			ri.Reason = "a record of no kind: the profile reads none of the file's kinds from this row"
		}
		return ri
	}
	if why := unreadable(r); why != "" {
		ri.Outcome, ri.Reason = RowFailed, why
		return ri
	}
	if first, dup := seen[r.ID]; dup {
		ri.Outcome, ri.Reason = RowFailed, duplicateReason(first)
		return ri
	}
	seen[r.ID] = firstSeen{file: r.File, line: r.Line}
	if out, reason, _, done := judge(&r); done {
		ri.Outcome, ri.Reason = RowFailed, reason
		if out == skipped {
			ri.Outcome = RowSkipped
		}
		if reason == ledger.ReasonNotLinked {
			if why := linkedOnlyTo(prof, &r); why != "" {
				ri.Reason = why // as decide says it (R6b)
			}
		}
	}
	return ri
}

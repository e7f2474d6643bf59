package suggest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"crmimport/canon"
	"crmimport/importer/input"
	"crmimport/importer/profile"
	"crmimport/importer/reader"
	"crmimport/ledger"
)

// Mapped is the first rows of one file of an export as a draft maps them
// (the mapping editor's table): what a run with the draft as its profile
// would read from them, each row with the reason it would fail, if it
// does.
type Mapped struct {
	Ref   string `json:"ref"`
	Sheet string `json:"sheet,omitempty"`
	Name  string `json:"name"`
	Kind  string `json:"kind"`
	// Fields are the kind's canonical fields, in order: the table's
	// columns.
	Fields []string    `json:"fields"`
	Rows   []MappedRow `json:"rows"`
	Header []string    `json:"header,omitempty"`
	// Imported, Failed and Skipped count the rows by their outcome, as a
	// run counts them: none when the file cannot be read to its end within
	// the rows mapped (a run fails its task and keeps none of that batch).
	Imported int `json:"imported"`
	Failed   int `json:"failed"`
	Skipped  int `json:"skipped"`
	// Problem is why a run would fail the whole file with the draft (no id
	// column, a field given by two columns, a file that cannot be read),
	// or "".
	Problem string `json:"problem,omitempty"`
}

// MappedRow is one row as the draft maps it.
type MappedRow struct {
	Line int    `json:"line"`
	ID   string `json:"id"`
	// Fields holds the canonical fields that have a value, as read.
	Fields map[string]string `json:"fields"`
	Links  []MappedLink      `json:"links,omitempty"`
	Extra  map[string]any    `json:"extra,omitempty"`
	// Outcome is what a run of the export with the draft makes of the row
	// in a database that holds none of it yet: imported, failed or skipped
	// (SPEC §4's order of decisions), and Reason why it fails or is
	// skipped. Error repeats the reason of a failure.
	Outcome string `json:"outcome"`
	Reason  string `json:"reason,omitempty"`
	Error   string `json:"error,omitempty"`
	// Unlinked are the link values a run could not resolve among the
	// export's records (an id no parent file holds, a name no parent or
	// several have): an imported contact or deal is counted unlinked (an
	// owner: unowned) with the value kept in extra; a note, activity or
	// email with no link that resolves is skipped.
	Unlinked []MappedLink `json:"unlinked,omitempty"`
}

// MappedLink is a link value of a row beyond its plain link fields (a
// list's ids, a name), or one that does not resolve.
type MappedLink struct {
	Field string `json:"field"`
	Value string `json:"value"`
	// Note says why a name resolves to nothing (several records have it).
	Note string `json:"note,omitempty"`
}

// What a preview says a run makes of a row (MappedRow.Outcome).
const (
	RowImported = "imported"
	RowFailed   = "failed"
	RowSkipped  = "skipped"
)

// DefaultPreviewRows is how many rows Preview maps when asked for none.
const DefaultPreviewRows = 10

// maxPreviewRows bounds a preview: it is a look at the start of a file,
// not a read of it.
const maxPreviewRows = 200

// maxIDBytes is the longest source id a run takes (importer.MaxIDBytes).
const maxIDBytes = 4096

// Preview maps the first n rows of one file of the draft (its ref, and
// the sheet of a workbook the draft reads sheet by sheet; "" for the first
// of the ref's files that has a kind) with the draft as its profile: the
// draft is written as YAML and read back by profile.Load, as `run
// --profile FILE` reads the file saved from it; each row goes through the
// same Mapper and validation as a run's, links by name are looked up in
// the export's parent files as a run's task reads them (FindSideFiles,
// ReadSideFiles), and every link is resolved among the ids of the parent
// records the run would import before it (SPEC §4's order: a contact or
// deal whose link does not resolve imports unlinked, a note, activity or
// email none of whose links does is skipped). A draft the loader refuses,
// or a file the draft does not name or leaves out, is an error; a file a
// run would fail is a Mapped with its Problem.
func Preview(ctx context.Context, d *Draft, ref, sheet string, n int, lim input.Limits) (*Mapped, error) {
	if n <= 0 {
		n = DefaultPreviewRows
	}
	n = min(n, maxPreviewRows)
	f := d.fileAt(ref, sheet)
	switch {
	case f == nil && sheet != "":
		return nil, fmt.Errorf("preview: the draft has no sheet %q of %q", sheet, ref)
	case f == nil:
		return nil, fmt.Errorf("preview: the draft has no file %q", ref)
	case f.Kind == "":
		return nil, fmt.Errorf("preview %s: the file is left out: give it a kind to see its rows", draftName(f))
	}
	prof, err := profile.Load(draftSource(d), d.YAML())
	if err != nil {
		return nil, fmt.Errorf("preview %s: the draft is not a profile yet: %w", draftName(f), err)
	}
	out := &Mapped{Ref: f.Ref, Sheet: f.Sheet, Name: f.Name, Kind: string(f.Kind), Fields: canon.Fields(f.Kind), Rows: []MappedRow{}}
	rr, closeFn, err := openRows(f, lim)
	if err != nil {
		out.Problem = err.Error()
		return out, nil
	}
	defer closeFn()
	m := profile.NewMapper(prof, f.Kind, f.Name)
	defer m.Close()
	out.Header = rr.Header()
	if err := ready(rr, m); err != nil {
		out.Problem = err.Error()
		return out, nil
	}
	out.Header = rr.Header() // a workbook's first sheet read, past those left unread
	if err := m.ReadSideFiles(ctx, m.SideFilesRead(d.sideFiles(prof)), lim); err != nil {
		out.Problem = err.Error() // a run's task fails as it opens
		return out, nil
	}
	parents, err := d.parentIDs(ctx, prof, f.Kind, lim)
	if err != nil {
		return nil, err
	}
	seen, err := d.seenBefore(ctx, prof, f, lim) // the ids read so far in the run, where (SPEC §4 step 2)
	if err != nil {
		return nil, err
	}
	for len(out.Rows) < n {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		row, err := rr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			// The rest of the file cannot be read: a run fails its task
			// here, and the batch of the rows before it (more than a
			// preview maps) is not kept.
			out.Problem = err.Error()
			out.Imported, out.Failed, out.Skipped = 0, 0, 0
			break
		}
		r := m.Map(row)
		if r.Excluded {
			continue
		}
		m.Complete(&r)
		mr := mappedRow(r)
		decide(&r, &mr, seen, parents)
		out.Rows = append(out.Rows, mr)
		switch mr.Outcome {
		case RowImported:
			out.Imported++
		case RowFailed:
			out.Failed++
		case RowSkipped:
			out.Skipped++
		}
	}
	return out, nil
}

// ready judges a file's header as a run's task does as it opens: a
// workbook's sheets each by their own header (a sheet with no column of
// the kind left unread), any other file's header by CheckHeader; and it
// lets the reader tell a footer from the records by their ids.
func ready(rr *reader.RowReader, m *profile.Mapper) error {
	if rr.Sheet() != "" {
		err := rr.CheckHeaders(func(header []string) error {
			if !m.Recognises(header) {
				return reader.ErrSkipSheet
			}
			return m.CheckHeader(header)
		})
		if err != nil {
			return err
		}
		if rr.Sheet() == "" {
			return fmt.Errorf("%s: no sheet holds %s the profile reads: name the sheet to read", m.File(), m.Kind().Plural())
		}
	} else if err := m.CheckHeader(rr.Header()); err != nil {
		return err
	}
	rr.WatchFooter(func(row reader.Row) bool { return m.Map(row).ID != "" })
	return nil
}

// fileAt is the draft's file of ref and sheet: with no sheet, the first
// of ref's files that has a kind (a workbook read sheet by sheet is
// several files of one ref), else its first.
func (d *Draft) fileAt(ref, sheet string) *File {
	var f *File
	for _, df := range d.Files {
		switch {
		case df.Ref != ref:
		case sheet != "":
			if df.Sheet == sheet {
				return df
			}
		case f == nil || f.Kind == "":
			f = df
		}
	}
	return f
}

// draftSource is the name the loader gives the draft in its errors.
func draftSource(d *Draft) string {
	name := strings.TrimSpace(d.Name)
	if name == "" {
		name = "custom"
	}
	return name + ".yaml"
}

// mappedRow is what the editor shows of a record: its fields, links and
// extra.
func mappedRow(r profile.Record) MappedRow {
	mr := MappedRow{Line: r.Line, ID: r.ID, Fields: map[string]string{}, Extra: r.Extra}
	for _, f := range canon.Fields(r.Kind) {
		if v := r.Get(f); strings.TrimSpace(v) != "" {
			mr.Fields[f] = v
		}
	}
	for _, l := range r.Links() {
		mr.Links = append(mr.Links, MappedLink{Field: l.Field, Value: l.Shown, Note: l.Note})
	}
	return mr
}

// decide gives a mapped row the outcome a run gives its record in a
// database that holds none of the export yet, in SPEC §4's order (the
// importer's decide): 0 and 1 unreadable or no id, failed; 2 an id seen
// before, failed; 4 deleted, skipped; 5 invalid, failed; 6 a note with an
// empty body, skipped; 7 links resolved among parents (the ids of the
// parent records the run imports before it), a note, activity or email
// with none skipped; 8 imported.
func decide(r *profile.Record, mr *MappedRow, seen map[string]string, parents map[ledger.Kind]map[string]bool) {
	fail := func(why string) { mr.Outcome, mr.Reason, mr.Error = RowFailed, why, why }
	skip := func(why string) { mr.Outcome, mr.Reason = RowSkipped, why }
	if why := ownProblem(r); why != "" {
		fail(why)
		return
	}
	if first, dup := seen[r.ID]; dup {
		fail("duplicate source_id, first at " + first)
		return
	}
	seen[r.ID] = fmt.Sprintf("%s:%d", r.File, r.Line)
	if why, skipped := judge(r); why != "" {
		if skipped {
			skip(why)
		} else {
			fail(why)
		}
		return
	}
	linked := map[string]bool{}
	anchored := false
	var open []MappedLink
	for _, l := range canon.Parents(r.Kind) {
		v := strings.TrimSpace(r.Get(l.Field))
		if v == "" {
			continue
		}
		if parents[l.Kind][v] {
			linked[l.Field] = true
			anchored = anchored || canon.Anchors(l.Kind)
			continue
		}
		open = append(open, MappedLink{Field: l.Field, Value: v})
	}
	for _, l := range r.Links() {
		if linked[l.Field] {
			continue
		}
		if k, ok := canon.KindOfLinkField(l.Field); ok && l.ID != "" && parents[k][l.ID] {
			linked[l.Field] = true
			anchored = anchored || canon.Anchors(k)
			continue
		}
		open = append(open, MappedLink{Field: l.Field, Value: l.Shown, Note: l.Note})
	}
	for _, l := range open {
		if !linked[l.Field] { // a field another value gives: the rest are kept in extra, not unlinked
			mr.Unlinked = append(mr.Unlinked, l)
		}
	}
	if canon.NeedsParent(r.Kind) && !anchored {
		skip(ledger.ReasonNotLinked)
		return
	}
	mr.Outcome = RowImported
}

// ownProblem says why a record fails before anything else is asked of
// it (SPEC §4 steps 0 and 1), or "".
func ownProblem(r *profile.Record) string {
	switch {
	case r.Err != nil:
		return r.Err.Reason
	case r.ID == "":
		return "missing id"
	case len(r.ID) > maxIDBytes:
		return fmt.Sprintf("id is %d bytes long, longer than the %d bytes an id may have: is the id column the right one?", len(r.ID), maxIDBytes)
	}
	return canon.MangledID("id", r.ID) // 9.91214E+18: a spreadsheet rewrote it
}

// judge says what a record's own values decide (SPEC §4 steps 4 to 6, and
// 7 for a record that names no parent at all): why it is skipped or
// failed, or "" when its links decide.
func judge(r *profile.Record) (why string, skipped bool) {
	if del, ok := canon.ParseBool(r.Get("deleted")); ok && del {
		return ledger.ReasonDeleted, true
	}
	if why := r.MangledLink(); why != "" {
		return why, false
	}
	if _, invalid := r.Values(); invalid != "" {
		return invalid, false
	}
	if r.Kind == ledger.Note && strings.TrimSpace(r.Get("body")) == "" {
		return ledger.ReasonEmptyBody, true
	}
	if canon.NeedsParent(r.Kind) && !r.NamesAnAnchor() {
		return ledger.ReasonNotLinked, true
	}
	return "", false
}

// inputFiles are the draft's files as a run lists them: each file of the
// export once (a workbook read sheet by sheet is one file), by kind.
func (d *Draft) inputFiles() map[ledger.Kind][]input.File {
	byKind := map[ledger.Kind][]input.File{}
	for _, f := range d.Files {
		if !f.writable() {
			continue
		}
		if !slices.ContainsFunc(byKind[f.Kind], func(g input.File) bool { return g.Ref == f.Ref }) {
			byKind[f.Kind] = append(byKind[f.Kind], input.File{Ref: f.Ref, Name: f.Name})
		}
	}
	return byKind
}

// sideFiles are what a run of the export with prof reads beside its
// tasks' files, as planning finds them (the parents' files that links by
// name look names up in).
func (d *Draft) sideFiles(prof *profile.Profile) []profile.SideFile {
	byKind := d.inputFiles()
	planned := map[ledger.Kind][]string{}
	for k, files := range byKind {
		for _, f := range files {
			planned[k] = append(planned[k], f.Ref)
		}
	}
	side, _, _ := prof.FindSideFiles(planned, byKind, nil, nil)
	return side
}

// parentIDs are, per kind a record of kind k links to, the ids of the
// records of the draft's files of that kind that a run imports before k's
// (the final slots its links resolve through, R6): every record but those
// failed, skipped or repeated, whatever their own links.
func (d *Draft) parentIDs(ctx context.Context, prof *profile.Profile, k ledger.Kind, lim input.Limits) (map[ledger.Kind]map[string]bool, error) {
	out := map[ledger.Kind]map[string]bool{}
	for _, l := range canon.Parents(k) {
		if out[l.Kind] != nil {
			continue
		}
		ids := map[string]bool{}
		out[l.Kind] = ids
		for _, f := range d.Files {
			if f.Kind != l.Kind || !f.writable() {
				continue
			}
			if err := importedIDs(ctx, prof, f, lim, ids); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// seenBefore are the ids a run reads from the files of f's kind that it
// reads before f (a kind's files in order of their names), each where it
// was first read: a record of f with one of them is a duplicate.
func (d *Draft) seenBefore(ctx context.Context, prof *profile.Profile, f *File, lim input.Limits) (map[string]string, error) {
	seen := map[string]string{}
	for _, g := range d.Files {
		if g == f || g.Kind != f.Kind || !g.writable() || !runsBefore(g, f) {
			continue
		}
		err := eachRecord(ctx, prof, g, lim, func(r *profile.Record) {
			if _, dup := seen[r.ID]; !dup && ownProblem(r) == "" {
				seen[r.ID] = fmt.Sprintf("%s:%d", r.File, r.Line)
			}
		})
		if err != nil {
			return nil, err
		}
	}
	return seen, nil
}

// runsBefore reports whether a run reads g before f, two files of one
// kind: by name, a workbook's sheets in the order the draft lists them.
func runsBefore(g, f *File) bool {
	if gn, fn := input.Name(g.Ref), input.Name(f.Ref); gn != fn {
		return gn < fn
	}
	return false
}

// importedIDs adds to ids the ids of f's records that a run imports
// (steps 0 to 6 of SPEC §4; a parent kind needs no parent of its own). A
// file that cannot be read adds what it read: its task fails there.
func importedIDs(ctx context.Context, prof *profile.Profile, f *File, lim input.Limits, ids map[string]bool) error {
	seen := map[string]bool{}
	return eachRecord(ctx, prof, f, lim, func(r *profile.Record) {
		if ownProblem(r) != "" || seen[r.ID] {
			return
		}
		seen[r.ID] = true
		if why, _ := judge(r); why == "" {
			ids[r.ID] = true
		}
	})
}

// eachRecord maps each row of f that is a record of its kind, as a run's
// task does, and hands it to fn. A file that cannot be read gives what it
// read: its task fails there.
func eachRecord(ctx context.Context, prof *profile.Profile, f *File, lim input.Limits, fn func(r *profile.Record)) error {
	rr, closeFn, err := openRows(f, lim)
	if err != nil {
		return nil
	}
	defer closeFn()
	m := profile.NewMapper(prof, f.Kind, f.Name)
	defer m.Close()
	if ready(rr, m) != nil {
		return nil
	}
	for n := 0; ; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		row, err := rr.Next()
		if err != nil {
			return nil // io.EOF, or where the task fails
		}
		r := m.Map(row)
		if r.Excluded {
			continue
		}
		m.Complete(&r)
		fn(&r)
	}
}

// openRows opens a file of the draft as a run reads it (openSample): a
// workbook in place, a zip's entry included, any other file as a stream in
// the encoding its bytes show.
func openRows(f *File, lim input.Limits) (*reader.RowReader, func(), error) {
	g := *f
	if g.Format == "" {
		var ok bool
		if g.Format, ok = reader.FormatOf(matchName(f.Name)); !ok {
			return nil, nil, fmt.Errorf("%s: not a CSV, JSON or XLSX file", input.Name(f.Ref))
		}
	}
	rr, c, err := openSample(&g, lim)
	if err != nil {
		return nil, nil, err
	}
	return rr, func() { _ = c.Close() }, nil // read only: nothing to lose on close
}

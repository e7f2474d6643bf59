package suggest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"crmimport/canon"
	"crmimport/importer/input"
	"crmimport/importer/profile"
	"crmimport/importer/reader"
)

// Mapped is the first rows of one file of an export as a draft maps them
// (the mapping editor's table): what a run with the draft as its profile
// would read from them, each row with the reason it would fail, if it
// does.
type Mapped struct {
	Ref  string `json:"ref"`
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Fields are the kind's canonical fields, in order: the table's
	// columns.
	Fields []string    `json:"fields"`
	Rows   []MappedRow `json:"rows"`
	Header []string    `json:"header,omitempty"`
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
	// Error is why the row would fail (canon's validation, a row that
	// cannot be read, a missing id), or "".
	Error string `json:"error,omitempty"`
}

// MappedLink is a link value of a row beyond its plain link fields (a
// list's ids).
type MappedLink struct {
	Field string `json:"field"`
	Value string `json:"value"`
}

// DefaultPreviewRows is how many rows Preview maps when asked for none.
const DefaultPreviewRows = 10

// maxPreviewRows bounds a preview: it is a look at the start of a file,
// not a read of it.
const maxPreviewRows = 200

// Preview maps the first n rows of the draft's file ref (a Ref of one of
// its Files) with the draft as its profile: the draft is written as YAML
// and read back by profile.Load, as `run --profile FILE` reads the file
// saved from it, and each row goes through the same Mapper and validation
// as a run's. A draft the loader refuses, or a ref the draft does not
// name or leaves out, is an error; a file a run would fail is a Mapped
// with its Problem.
func Preview(ctx context.Context, d *Draft, ref string, n int, lim input.Limits) (*Mapped, error) {
	if n <= 0 {
		n = DefaultPreviewRows
	}
	n = min(n, maxPreviewRows)
	var f *File
	for _, df := range d.Files {
		// A workbook read sheet by sheet is several files of one ref: the
		// first of them the draft reads.
		if df.Ref == ref && (f == nil || f.Kind == "") {
			f = df
		}
	}
	switch {
	case f == nil:
		return nil, fmt.Errorf("preview: the draft has no file %q", ref)
	case f.Kind == "":
		return nil, fmt.Errorf("preview %s: the file is left out: give it a kind to see its rows", f.Name)
	}
	prof, err := profile.Load(draftSource(d), d.YAML())
	if err != nil {
		return nil, fmt.Errorf("preview %s: the draft is not a profile yet: %w", f.Name, err)
	}
	out := &Mapped{Ref: f.Ref, Name: f.Name, Kind: string(f.Kind), Fields: canon.Fields(f.Kind), Rows: []MappedRow{}}
	rr, closeFn, err := openRows(f, lim)
	if err != nil {
		out.Problem = err.Error()
		return out, nil
	}
	defer closeFn()
	m := profile.NewMapper(prof, f.Kind, f.Name)
	defer m.Close()
	out.Header = rr.Header()
	if err := m.CheckHeader(out.Header); err != nil {
		out.Problem = err.Error()
		return out, nil
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
			out.Problem = err.Error() // the rest of the file cannot be read: a run fails it here
			break
		}
		r := m.Map(row)
		if r.Excluded {
			continue
		}
		m.Complete(&r)
		out.Rows = append(out.Rows, mappedRow(r))
	}
	return out, nil
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
// extra, and why it would fail.
func mappedRow(r profile.Record) MappedRow {
	mr := MappedRow{Line: r.Line, ID: r.ID, Fields: map[string]string{}, Extra: r.Extra}
	for _, f := range canon.Fields(r.Kind) {
		if v := r.Get(f); strings.TrimSpace(v) != "" {
			mr.Fields[f] = v
		}
	}
	for _, l := range r.Links() {
		mr.Links = append(mr.Links, MappedLink{Field: l.Field, Value: l.Shown})
	}
	_, invalid := r.Values()
	switch {
	case r.Err != nil:
		mr.Error = r.Err.Reason
	case r.ID == "":
		mr.Error = "no id: the id column is empty in this row"
	case canon.MangledID("id", r.ID) != "":
		mr.Error = canon.MangledID("id", r.ID) // as a run fails it (9.91214E+18)
	case r.MangledLink() != "":
		mr.Error = r.MangledLink()
	case invalid != "":
		mr.Error = invalid
	}
	return mr
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

// Package fixmanifest owns the manifest of a fix folder, reading and
// writing it in one place. A fix folder is what `rejects RUN --as-export`
// writes (package fixfile): a run's failed rows, per input file, under
// that file's own name and header, for a person to correct and import
// again like any export. Its manifest (Name) names the run it came from
// and the side files that run read (joined files, parents looked up by
// name, body folders), so that a run over the folder, which holds none of
// them, reads the same ones — after checking that they are still what
// that run read (R10: a changed file is never used silently; package
// importer). Per file it lists each row's failure, source id and line,
// which fixfile reads back for a fix of edited rows.
package fixmanifest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"crmimport/importer/input"
	"crmimport/importer/profile"
)

// Name and ReasonsName are the two files of a fix folder
// that are not rows of an export: a run over the folder leaves them out,
// saying why, whatever the profile's patterns match.
const (
	Name        = "crmimport-fix.json"
	ReasonsName = "reasons.csv"
)

// Format names the manifest's layout.
const Format = "crmimport-fix/1"

// Manifest is a fix folder's manifest.
type Manifest struct {
	Format string `json:"format"`
	Run    int64  `json:"run"`
	Tenant string `json:"tenant"`
	Source string `json:"source"`
	// Profile is the run's profile; ProfileFile and ProfileText are a
	// custom profile's file and content as the run read them.
	Profile     string `json:"profile"`
	ProfileFile string `json:"profile_file,omitempty"`
	ProfileText string `json:"profile_text,omitempty"`
	// Inputs are the paths the run read (its export).
	Inputs []string `json:"inputs"`
	// Files are the files of the folder that hold rows.
	Files []File `json:"files"`
	// SideFiles are what the run's tasks read beside their files, with
	// the fingerprints the run planned them with.
	SideFiles []profile.SideFile `json:"side_files"`
	// Update is the run's --update (R17, SPEC §11: carried by its fix
	// folder): a run over the folder applies changes at the source too.
	Update string `json:"update,omitempty"`
}

// File is a file of a fix folder: its name, kind and rows, and the
// inputs of the run its rows were read from.
type File struct {
	Name string   `json:"name"`
	Kind string   `json:"kind"`
	Rows int      `json:"rows"`
	From []string `json:"from"`
	// Failures are the record_failures ids of its rows, in file order;
	// IDs the source id each row gives as written (an edited row's may
	// differ from the failure's), Lines the line each starts at.
	Failures []int64  `json:"failures"`
	IDs      []string `json:"source_ids"`
	Lines    []int    `json:"lines"`
	// Kinds are the kind of each row's failure, where the file feeds
	// several kinds (SPEC §4: a line two of them failed is one row, named
	// by its first failure); absent when every row is of Kind.
	Kinds []string `json:"kinds,omitempty"`
	// ReadAs are the kinds the run read the file's input as, where it
	// read it as several (SPEC §4: a lead export gives contacts and
	// notes); absent when it read it as Kind alone.
	ReadAs []string `json:"read_as,omitempty"`
}

// ReadAsKinds are the kinds the run read the file's input as.
func (f File) ReadAsKinds() []string {
	if len(f.ReadAs) > 0 {
		return f.ReadAs
	}
	return []string{f.Kind}
}

// RowKind is the kind of the failure that row i of the file was written
// from.
func (f File) RowKind(i int) string {
	if i < len(f.Kinds) {
		return f.Kinds[i]
	}
	return f.Kind
}

// Read reads the manifest of a fix folder; nil, nil when dir
// is not a folder holding one.
func Read(dir string) (*Manifest, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, nil
	}
	name := filepath.Join(dir, Name)
	b, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &input.Error{Path: name, Reason: err.Error()}
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, &input.Error{Path: name, Reason: fmt.Sprintf("not a fix folder's manifest (%v): restore it from the folder "+
			"`crmimport rejects RUN --out DIR --as-export` wrote, or remove it to read the folder as a plain export", err)}
	}
	if m.Format != Format {
		return nil, &input.Error{Path: name, Reason: fmt.Sprintf("format %q is not %q: write the folder again with this crmimport's "+
			"`rejects RUN --out DIR --as-export`", m.Format, Format)}
	}
	return &m, nil
}

// Row is what the manifest lists of one row of a file: the failure it was
// written from, the source id it gives as written, the line it starts at
// in the file, and the kind of its failure.
type Row struct {
	Failure  int64
	SourceID string
	Line     int
	Kind     string
}

// Rows are the rows of one file of the manifest, in file order: Each calls
// yield for every row, once per list the manifest holds of them. Several
// lists each row's kind: the file feeds several kinds (SPEC §4: a line two
// of them failed is one row, of its first failure's kind).
type Rows struct {
	Each    func(yield func(Row) error) error
	Several bool
}

// filesMark stands in the manifest's JSON for its list of files, which
// Write streams in its place.
const filesMark = `"files": []`

// Write writes m, its Files without their lists (Rows counted), with for
// each file the lists of rows[i], each streamed from a pass over the
// file's rows rather than held, so that the manifest of 400,000 rows costs
// the memory of one. A file whose rows no longer number its Rows (a live
// run failed more while it was written) refuses the manifest.
func Write(w *bufio.Writer, m Manifest, rows []Rows) error {
	files := m.Files
	m.Files = []File{}
	if m.SideFiles == nil {
		m.SideFiles = []profile.SideFile{}
	}
	head, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	before, after, ok := bytes.Cut(head, []byte(filesMark))
	if !ok {
		return fmt.Errorf("manifest of run %d: no list of files in %s", m.Run, head)
	}
	w.Write(before)
	w.WriteString(`"files": [`)
	for i, f := range files {
		if i > 0 {
			w.WriteString(",")
		}
		if err := writeFile(w, m.Run, f, rows[i]); err != nil {
			return err
		}
	}
	w.WriteString("\n  ]")
	_, err = w.Write(after)
	return err
}

// writeFile writes one file of the manifest: its fields, then its lists.
func writeFile(w *bufio.Writer, run int64, f File, rows Rows) error {
	fields, err := json.Marshal(struct {
		Name   string   `json:"name"`
		Kind   string   `json:"kind"`
		Rows   int      `json:"rows"`
		From   []string `json:"from"`
		ReadAs []string `json:"read_as,omitempty"`
	}{f.Name, f.Kind, f.Rows, append([]string{}, f.From...), f.ReadAs})
	if err != nil {
		return err
	}
	w.WriteString("\n    ")
	w.Write(fields[:len(fields)-1]) // the object, open: the lists follow
	type list struct {
		name  string
		value func(Row) any
	}
	lists := []list{
		{"failures", func(r Row) any { return r.Failure }},
		{"source_ids", func(r Row) any { return r.SourceID }},
		{"lines", func(r Row) any { return r.Line }},
	}
	if rows.Several {
		lists = append(lists, list{"kinds", func(r Row) any { return r.Kind }}) // absent when every row is of Kind
	}
	for _, l := range lists {
		if err := writeList(w, run, f, rows, l.name, l.value); err != nil {
			return err
		}
	}
	w.WriteString("}")
	return nil
}

// writeList writes one list of a file, from a pass over its rows.
func writeList(w *bufio.Writer, run int64, f File, rows Rows, name string, value func(Row) any) error {
	w.WriteString(`,"` + name + `":[`)
	n := 0
	err := rows.Each(func(r Row) error {
		b, err := json.Marshal(value(r))
		if err != nil {
			return err
		}
		if n > 0 {
			w.WriteByte(',')
		}
		n++
		_, err = w.Write(b)
		return err
	})
	if err != nil {
		return err
	}
	if n != f.Rows {
		// A run that failed more rows while this was written (a live
		// run's): the lists would not line up with the file.
		return fmt.Errorf("manifest of run %d: %s holds %d rows, but its failed records now give %d: write the fix folder again once the run has ended",
			run, f.Name, f.Rows, n)
	}
	w.WriteString("]")
	return nil
}

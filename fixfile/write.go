package fixfile

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"crmimport/forensics"
	"crmimport/importer"
	"crmimport/importer/input"
	"crmimport/importer/profile"
	"crmimport/importer/reader"
	"crmimport/phases"
)

// Result is what a fix folder holds.
type Result struct {
	Run      int64     `json:"run"`
	Dir      string    `json:"dir"`
	Files    []Written `json:"files"`
	Reasons  int       `json:"reasons"` // rows of reasons.csv: every failed record
	Manifest string    `json:"manifest"`
	// Next is the command line that imports the folder once fixed.
	Next string `json:"next"`
}

// Written is one file of a fix folder.
type Written struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	Rows int    `json:"rows"`
	// Unreadable counts the failed rows of the file that could not be read
	// as rows: in reasons.csv only.
	Unreadable int `json:"unreadable"`
}

// Write writes the fix folder of run runID into dir, a new or empty
// folder (see the package doc). A run without failed records writes
// nothing and returns a Result without files.
func Write(ctx context.Context, db *sql.DB, runID int64, dir string) (Result, error) {
	src, err := load(ctx, db, runID)
	if err != nil {
		return Result{}, err
	}
	fails, _, err := forensics.Failures(ctx, db, runID, "", "", 0)
	if err != nil {
		return Result{}, err
	}
	if len(fails) == 0 {
		return Result{Run: runID, Files: []Written{}}, nil
	}
	files, err := group(fails)
	if err != nil {
		return Result{}, err
	}
	return src.write(files, dir, false)
}

// source is the run a fix folder is written from.
type source struct {
	run       phases.Run
	opts      importer.Options
	prof      *profile.Profile
	encodings map[string]string   // a task's input -> the encoding it was read in
	kinds     map[string][]string // a task's input -> the kinds its tasks read it as, in plan order (SPEC §4: one file, several kinds)
}

// runOptions is a run and the options it was planned with.
func runOptions(ctx context.Context, db *sql.DB, runID int64) (phases.Run, importer.Options, error) {
	run, err := phases.LoadRun(ctx, db, runID)
	if err != nil {
		return phases.Run{}, importer.Options{}, err
	}
	opts, err := importer.DecodeOptions(run)
	return run, opts, err
}

func load(ctx context.Context, db *sql.DB, runID int64) (*source, error) {
	run, opts, err := runOptions(ctx, db, runID)
	if err != nil {
		return nil, err
	}
	if opts.Input == "" {
		return nil, fmt.Errorf("run %d has no input here (loaded from a dump?): its failed rows have no file to be written as", runID)
	}
	prof, err := importer.RunProfile(opts)
	if err != nil {
		return nil, fmt.Errorf("run %d: profile %s: %w", runID, opts.Profile, err)
	}
	tasks, err := phases.LoadTasks(ctx, db, runID)
	if err != nil {
		return nil, err
	}
	enc, kinds := map[string]string{}, map[string][]string{}
	for _, t := range tasks {
		enc[t.File] = t.Encoding
		if !slices.Contains(kinds[t.File], string(t.Kind)) {
			kinds[t.File] = append(kinds[t.File], string(t.Kind))
		}
	}
	return &source{run: run, opts: opts, prof: prof, encodings: enc, kinds: kinds}, nil
}

// fixFile is one file of a fix folder being written.
type fixFile struct {
	name   string
	kind   string
	format reader.Format
	from   []string // the inputs its rows were read from
	rows   []fixRow
	keys   []string // CSV: the raw keys of the header's columns (profile.RawNames)
	header []string // CSV: the header as written
}

// fixRow is one failed row in a fix file.
type fixRow struct {
	failure  int64
	kind     string
	sourceID string
	from     string // FILE:LINE the run read it at
	reason   string
	cells    []forensics.RawCell
	raw      string // the raw JSON object (JSON files)
	text     string // a row that could not be read as a row: its text
	line     int    // its line in the fix file, once written
	// also are the failures of the same line by the other kinds of its
	// file (SPEC §4: a file may feed several kinds, a task each): the
	// line is written once, each failure keeps its reason.
	also []alsoFailed
	// file and at are where the run read it (the record's file, a
	// workbook's with its sheet; its line), for the order of the rows.
	file string
	at   int64
}

// alsoFailed is another kind's failure of a fix row's line.
type alsoFailed struct {
	failure      int64
	kind, reason string
}

// group sorts failures into the fix files they belong in: each failing
// line once, however many tasks of its file failed it (SPEC §4), in the
// order the run read them.
func group(fails []forensics.Failure) ([]*fixFile, error) {
	var out []*fixFile
	byName := map[string]*fixFile{}
	lines := map[string]int{} // fix file, input and FILE:LINE -> its row's index in the fix file
	files := map[*fixFile]map[string]int{}
	defer func() {
		// Rows of several tasks follow each other task by task: put
		// them back in the order of the files (sheets, entries) and
		// lines they were read at.
		for _, ff := range out {
			order := files[ff]
			sort.SliceStable(ff.rows, func(i, j int) bool {
				a, b := ff.rows[i], ff.rows[j]
				if order[a.file] != order[b.file] {
					return order[a.file] < order[b.file]
				}
				return a.at < b.at
			})
		}
	}()
	for _, f := range fails {
		name, in := fixName(f)
		switch strings.ToLower(name) {
		case importer.FixManifestName, importer.FixReasonsName, "", ".", "..":
			return nil, fmt.Errorf("%s: the fix folder cannot hold a file of this name (it keeps %s and %s for itself)",
				f.File, importer.FixManifestName, importer.FixReasonsName)
		}
		ff := byName[strings.ToLower(name)]
		if ff == nil {
			format, ok := reader.FormatOf(name)
			if !ok {
				format = reader.Format(f.Format)
			}
			ff = &fixFile{name: name, kind: f.Kind, format: format}
			byName[strings.ToLower(name)] = ff
			out = append(out, ff)
		}
		if in != "" && !contains(ff.from, in) {
			ff.from = append(ff.from, in)
		}
		if files[ff] == nil {
			files[ff] = map[string]int{}
		}
		if _, ok := files[ff][f.File]; !ok {
			files[ff][f.File] = len(files[ff])
		}
		from := fmt.Sprintf("%s:%d", f.File, f.Line)
		key := strings.ToLower(name) + "\x00" + in + "\x00" + from
		if i, ok := lines[key]; ok {
			ff.rows[i].also = append(ff.rows[i].also, alsoFailed{failure: f.ID, kind: f.Kind, reason: f.Reason})
			continue
		}
		r := fixRow{failure: f.ID, kind: f.Kind, sourceID: f.SourceID, from: from, reason: f.Reason, raw: f.RawJSON, file: f.File, at: f.Line}
		for _, c := range f.Raw {
			if c.Name == profile.RawText {
				r.text = c.Value
				continue
			}
			r.cells = append(r.cells, c)
		}
		if r.text != "" {
			r.cells = nil // what could be read of it does not line up
		}
		ff.rows = append(ff.rows, r)
		lines[key] = len(ff.rows) - 1
	}
	return out, nil
}

// fixName is the name a failure's file takes in a fix folder (its task's
// input's base name, without .gz; a workbook's as .csv), and that input.
func fixName(f forensics.Failure) (name, in string) {
	if f.Input != "" {
		name = input.BaseName(f.Input)
	} else {
		name = path.Base(filepath.ToSlash(f.File))
	}
	if strings.EqualFold(path.Ext(name), ".gz") {
		name = name[:len(name)-len(".gz")]
	}
	if strings.EqualFold(path.Ext(name), ".xlsx") {
		// A workbook's failed rows are written as CSV, under their
		// sheet's header: a spreadsheet opens it, and the profile's
		// pattern for the workbook reads it (a table pattern matches
		// both: profile.Profile.FileKinds).
		name = name[:len(name)-len(".xlsx")] + ".csv"
	}
	return name, f.Input
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// unreadable: the row has no columns to line up, only its text.
func (r fixRow) unreadable() bool { return len(r.cells) == 0 }

// write writes files into dir (see the package doc); made says the caller
// made dir itself (a new private folder), which is then taken back too on
// a failure.
func (s *source) write(files []*fixFile, dir string, made bool) (res Result, err error) {
	dir, err = filepath.Abs(dir)
	if err != nil {
		return Result{}, err
	}
	if err := s.checkDir(dir); err != nil {
		return Result{}, err
	}
	if !made {
		made, err = prepare(dir)
		if err != nil {
			return Result{}, err
		}
	}
	var written []string
	defer func() {
		if err == nil {
			return
		}
		for _, name := range written {
			_ = os.Remove(name) // taking back a failed write: what remains is said by err
		}
		if made {
			_ = os.Remove(dir)
		}
	}()
	create := func(name string, fill func(w *bufio.Writer) error) error {
		full := filepath.Join(dir, name)
		f, err := os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		written = append(written, full)
		w := bufio.NewWriter(f)
		if err := fill(w); err != nil {
			f.Close()
			return fmt.Errorf("write %s: %w", full, err)
		}
		if err := w.Flush(); err != nil {
			f.Close()
			return fmt.Errorf("write %s: %w", full, err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("write %s: %w", full, err)
		}
		return nil
	}
	res = Result{Run: s.run.ID, Dir: dir, Files: []Written{}}
	man := s.manifest()
	for _, ff := range files {
		if ff.format == reader.FormatCSV && ff.keys == nil {
			s.header(ff)
		}
		if err := create(ff.name, ff.write); err != nil {
			return Result{}, err
		}
		w := Written{Name: ff.name, Kind: ff.kind}
		mf := importer.FixFile{Name: ff.name, Kind: ff.kind, From: ff.from, Failures: []int64{}, IDs: []string{}, Lines: []int{}}
		several := false
		for _, r := range ff.rows {
			several = several || r.kind != ff.kind
		}
		for _, r := range ff.rows {
			if r.unreadable() {
				w.Unreadable++
				continue
			}
			w.Rows++
			mf.Failures, mf.IDs, mf.Lines = append(mf.Failures, r.failure), append(mf.IDs, r.sourceID), append(mf.Lines, r.line)
			if several {
				mf.Kinds = append(mf.Kinds, r.kind)
			}
		}
		for _, in := range ff.from {
			for _, k := range s.kinds[in] {
				if !slices.Contains(mf.ReadAs, k) {
					mf.ReadAs = append(mf.ReadAs, k)
				}
			}
		}
		if len(mf.ReadAs) < 2 {
			mf.ReadAs = nil // one kind: Kind says it
		}
		mf.Rows = w.Rows
		res.Files = append(res.Files, w)
		man.Files = append(man.Files, mf)
	}
	if err := create(importer.FixReasonsName, func(w *bufio.Writer) error { return writeReasons(w, files, &res.Reasons) }); err != nil {
		return Result{}, err
	}
	if err := create(importer.FixManifestName, func(w *bufio.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(man)
	}); err != nil {
		return Result{}, err
	}
	res.Manifest = filepath.Join(dir, importer.FixManifestName)
	res.Next = s.next(dir)
	return res, nil
}

// next is the command line that imports a fix folder of the run: its
// tenant, source and (unless built in and named like the source) profile.
func (s *source) next(dir string) string {
	words := []string{"crmimport", "run", "--tenant", s.run.Tenant, "--source", s.run.Source}
	switch {
	case s.opts.ProfileFile != "":
		words = append(words, "--profile", s.opts.ProfileFile)
	case s.opts.Profile != s.run.Source:
		words = append(words, "--profile", s.opts.Profile)
	}
	return forensics.ShellCommand(append(words, dir)...)
}

// manifest is the manifest of a fix folder of the run, without its files.
func (s *source) manifest() importer.FixManifest {
	m := importer.FixManifest{Format: importer.FixManifestFormat, Run: s.run.ID, Tenant: s.run.Tenant, Source: s.run.Source,
		Profile: s.opts.Profile, ProfileFile: s.opts.ProfileFile, ProfileText: s.opts.ProfileText,
		Inputs: append([]string{s.opts.Input}, s.opts.Inputs...), Files: []importer.FixFile{}, SideFiles: s.opts.SideFiles}
	if m.SideFiles == nil {
		m.SideFiles = []profile.SideFile{}
	}
	return m
}

// header sets a CSV fix file's header: the header of the file its rows
// came from, re-read, when it holds every column of the rows; else the
// columns of the rows in the order first seen (a repeated name's "#2"
// taken off again).
func (s *source) header(ff *fixFile) {
	var keys []string
	seen := map[string]bool{}
	for _, r := range ff.rows {
		for _, c := range r.cells {
			if _, beyond := beyondHeader(c.Name); !beyond && !seen[c.Name] {
				seen[c.Name] = true
				keys = append(keys, c.Name)
			}
		}
	}
	for _, in := range ff.from {
		h, err := importer.FileHeader(in, s.encodings[in])
		if err != nil {
			continue // gone or changed: the rows' own columns serve
		}
		rk := profile.RawNames(h)
		if covers(rk, keys) {
			ff.keys, ff.header = rk, h
			return
		}
	}
	ff.keys, ff.header = keys, make([]string, len(keys))
	base := map[string]bool{}
	for i, k := range keys {
		ff.header[i] = k
		if at := strings.LastIndexByte(k, '#'); at > 0 && base[k[:at]] {
			if n, err := strconv.Atoi(k[at+1:]); err == nil && n >= 2 {
				ff.header[i] = k[:at]
			}
		}
		base[ff.header[i]] = true
	}
}

// beyondHeader tells a field past a CSV header's count, which the reader
// names "(column N)", or a workbook's value in a column with no header,
// "(column L)" by its letters; and its position (1-based).
func beyondHeader(name string) (int, bool) {
	var n int
	if _, err := fmt.Sscanf(name, "(column %d)", &n); err == nil && name == fmt.Sprintf("(column %d)", n) {
		return n, true
	}
	letters, ok := strings.CutPrefix(name, "(column ")
	if !ok {
		return 0, false
	}
	if letters, ok = strings.CutSuffix(letters, ")"); !ok || letters == "" || len(letters) > 3 {
		return 0, false
	}
	for _, r := range letters {
		if r < 'A' || r > 'Z' {
			return 0, false
		}
		n = n*26 + int(r-'A') + 1
	}
	return n, true
}

func covers(have, want []string) bool {
	set := map[string]bool{}
	for _, h := range have {
		set[h] = true
	}
	for _, w := range want {
		if !set[w] {
			return false
		}
	}
	return true
}

// utf8BOM starts every CSV the folder holds, so that a spreadsheet reads
// it as UTF-8.
const utf8BOM = "\ufeff"

// startCSV starts a CSV file of the folder: the BOM, then its header.
func startCSV(w *bufio.Writer, header []string) (*csv.Writer, error) {
	if _, err := w.WriteString(utf8BOM); err != nil {
		return nil, err
	}
	cw := csv.NewWriter(w)
	return cw, cw.Write(header)
}

// write writes the fix file's rows and numbers their lines.
func (ff *fixFile) write(w *bufio.Writer) error {
	switch ff.format {
	case reader.FormatJSON, reader.FormatJSONL:
		return ff.writeJSON(w)
	}
	cw, err := startCSV(w, ff.header)
	if err != nil {
		return err
	}
	line := 2
	for i := range ff.rows {
		r := &ff.rows[i]
		if r.unreadable() {
			continue
		}
		cells := ff.line(r.cells)
		r.line = line
		for _, c := range cells {
			line += strings.Count(c, "\n")
		}
		line++
		if err := cw.Write(cells); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// line lines a row's cells up under the header by name. A row that ends
// early (a ragged row, short of fields) ends early again, and fields past
// the header follow it, so that the row fails again as it did until it is
// fixed.
func (ff *fixFile) line(cells []forensics.RawCell) []string {
	vals := map[string]string{}
	var beyond []string
	for _, c := range cells {
		if _, ok := beyondHeader(c.Name); ok {
			beyond = append(beyond, c.Value)
			continue
		}
		vals[c.Name] = c.Value
	}
	last := -1
	for i, k := range ff.keys {
		if _, ok := vals[k]; ok {
			last = i
		}
	}
	out := make([]string, 0, last+1+len(beyond))
	for _, k := range ff.keys[:last+1] {
		out = append(out, vals[k])
	}
	return append(out, beyond...)
}

// writeJSON writes the raw objects: an array, one object a line (.json),
// or JSON Lines (.jsonl).
func (ff *fixFile) writeJSON(w *bufio.Writer) error {
	lines := ff.format == reader.FormatJSONL
	open, sep, end, line := "[\n", ",\n", "\n]\n", 2
	if lines {
		open, sep, end, line = "", "\n", "\n", 1
	}
	if _, err := w.WriteString(open); err != nil {
		return err
	}
	n := 0
	for i := range ff.rows {
		r := &ff.rows[i]
		if r.unreadable() {
			continue
		}
		if !json.Valid([]byte(r.raw)) {
			return fmt.Errorf("failure %d: its raw row is not JSON", r.failure)
		}
		if n > 0 {
			if _, err := w.WriteString(sep); err != nil {
				return err
			}
		}
		r.line = line + n
		if _, err := w.WriteString(r.raw); err != nil {
			return err
		}
		n++
	}
	if n == 0 && !lines {
		end = "]\n"
	}
	_, err := w.WriteString(end)
	return err
}

// reasonColumns are reasons.csv's columns.
var reasonColumns = []string{"file", "line", "id", "reason", "from", "text"}

// writeReasons writes reasons.csv: a row per failed record, formula-safe.
func writeReasons(w *bufio.Writer, files []*fixFile, n *int) error {
	cw, err := startCSV(w, reasonColumns)
	if err != nil {
		return err
	}
	for _, ff := range files {
		for _, r := range ff.rows {
			// A line that several kinds of its file failed has a reason
			// per kind, each saying which.
			reasons := []alsoFailed{{failure: r.failure, kind: r.kind, reason: r.reason}}
			reasons = append(reasons, r.also...)
			for _, a := range reasons {
				line, reason := strconv.Itoa(r.line), a.reason
				if len(reasons) > 1 {
					reason = a.kind + ": " + reason
				}
				if r.unreadable() {
					line = ""
					reason += " — not in " + ff.name + ": it could not be read as a row; correct its text and add it there"
				}
				row := []string{ff.name, line, r.sourceID, reason, r.from, r.text}
				for i := range row {
					row[i] = forensics.SafeCell(row[i])
				}
				if err := cw.Write(row); err != nil {
					return err
				}
				*n++
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

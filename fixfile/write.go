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

	"crmimport/importer"
	"crmimport/importer/fixmanifest"
	"crmimport/importer/input"
	"crmimport/importer/profile"
	"crmimport/importer/reader"
	"crmimport/importer/runopts"
	"crmimport/phases"
	"crmimport/report"
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
// nothing and returns a Result without files. It streams the failures
// from the database, a file of the folder at a time and a row at a time
// (report.EachFailureOf), so that memory holds a row and the files'
// headers however many failed (issue 23 item 15: 400,000 failed rows
// took 718 MiB). db is a handle of one connection (store.Open's): what
// SQLite sorts meanwhile — the failures grouped by file, a file that feeds
// several kinds read in line order — it sorts in a temporary file rather
// than in memory (store.Open's connections keep temporary data in files).
func Write(ctx context.Context, db *sql.DB, runID int64, dir string) (Result, error) {
	src, err := load(ctx, db, runID)
	if err != nil {
		return Result{}, err
	}
	sources, err := report.FailureSources(ctx, db, runID)
	if err != nil {
		return Result{}, err
	}
	if len(sources) == 0 {
		return Result{Run: runID, Files: []Written{}}, nil
	}
	files, err := groupSources(sources)
	if err != nil {
		return Result{}, err
	}
	return src.write(ctx, db, files, dir, false)
}

// source is the run a fix folder is written from.
type source struct {
	run       phases.Run
	opts      runopts.Options
	prof      *profile.Profile
	encodings map[string]string   // a task's input -> the encoding it was read in
	kinds     map[string][]string // a task's input -> the kinds its tasks read it as, in plan order (SPEC §4: one file, several kinds)
}

// runOptions is a run and the options it was planned with.
func runOptions(ctx context.Context, db *sql.DB, runID int64) (phases.Run, runopts.Options, error) {
	run, err := phases.LoadRun(ctx, db, runID)
	if err != nil {
		return phases.Run{}, runopts.Options{}, err
	}
	opts, err := runopts.Decode(run)
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

// fixFile is one file of a fix folder being written. Its rows are read
// again for each pass over them (its header, the file and reasons.csv,
// the manifest): from the database, a file of the run at a time
// (sources), or — a few rows a person edited — from memory (rows).
type fixFile struct {
	name   string
	kind   string
	format reader.Format
	from   []string  // the inputs its rows were read from
	reads  []fixRead // the run's files whose failed rows it holds, in the order they failed
	rows   []fixRow  // or its rows, when they are not the database's (WriteEdited)
	keys   []string  // CSV: the raw keys of the header's columns (profile.RawNames)
	header []string  // CSV: the header as written
	// written and unreadable count its rows once written: those in the
	// file, and those only in reasons.csv; several tells a row of
	// another kind than the file's among them (SPEC §4).
	written, unreadable int
	several             bool
}

// fixRead is a file of the run (an input and the file its failures name:
// a sheet, an entry) whose failed rows go in a fix file, and the tasks
// that failed them: one, or one per kind where the file feeds several
// (SPEC §4).
type fixRead struct {
	input, file string
	sources     []report.FailureSource
}

// fixRow is one failed row in a fix file.
type fixRow struct {
	failure  int64
	kind     string
	sourceID string
	from     string // FILE:LINE the run read it at
	reason   string
	cells    []report.RawCell
	raw      string // the raw JSON object (JSON files)
	text     string // a row that could not be read as a row: its text
	line     int    // its line in the fix file, once placed (lines)
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

// newFixRow is the row of a fix file that a failure gives.
func newFixRow(f report.Failure) fixRow {
	r := fixRow{failure: f.ID, kind: f.Kind, sourceID: f.SourceID, from: fmt.Sprintf("%s:%d", f.File, f.Line), reason: f.Reason,
		raw: f.RawJSON, file: f.File, at: f.Line}
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
	return r
}

// each hands the file's rows to f in the file's order, each placed at its
// line (lines): from the database, each file of the run in the order the
// run read it (report.EachFailureOf), a line that several kinds failed
// once, with the others' failures (also); or from memory. A row from the
// database lives for its call only.
func (ff *fixFile) each(ctx context.Context, db *sql.DB, runID int64, f func(*fixRow) error) error {
	at := ff.lines()
	if ff.reads == nil {
		for i := range ff.rows {
			at(&ff.rows[i])
			if err := f(&ff.rows[i]); err != nil {
				return err
			}
		}
		return nil
	}
	for _, rd := range ff.reads {
		// The rows come in line order: the failures of one line by the
		// kinds of a file that feeds several follow each other.
		var pending *fixRow
		emit := func() error {
			if pending == nil {
				return nil
			}
			r := pending
			pending = nil
			at(r)
			return f(r)
		}
		err := report.EachFailureOf(ctx, db, runID, rd.sources, func(fl report.Failure) error {
			if pending != nil && pending.at == fl.Line {
				pending.also = append(pending.also, alsoFailed{failure: fl.ID, kind: fl.Kind, reason: fl.Reason})
				return nil
			}
			if err := emit(); err != nil {
				return err
			}
			r := newFixRow(fl)
			pending = &r
			return nil
		})
		if err == nil {
			err = emit()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// lines places the rows of the file, handed in order, at the line each
// starts at in it (after the header, or the opening [ of a JSON array);
// a row that could not be read as a row is not in it (line 0). The same
// rows in the same order are placed at the same lines on every pass.
func (ff *fixFile) lines() func(r *fixRow) {
	next := 2
	if ff.format == reader.FormatJSONL {
		next = 1
	}
	return func(r *fixRow) {
		r.line = 0
		if r.unreadable() {
			return
		}
		r.line = next
		next++
		if ff.format == reader.FormatCSV {
			for _, c := range ff.line(r.cells) {
				next += strings.Count(c, "\n")
			}
		}
	}
}

// fixFileOf is the fix file of name among files (by name, any case),
// added with kind and format when it is not yet; an error when the name is
// one the folder keeps for itself.
func fixFileOf(files *[]*fixFile, name, kind, format, file string) (*fixFile, error) {
	switch strings.ToLower(name) {
	case fixmanifest.Name, fixmanifest.ReasonsName, "", ".", "..":
		return nil, fmt.Errorf("%s: the fix folder cannot hold a file of this name (it keeps %s and %s for itself)",
			file, fixmanifest.Name, fixmanifest.ReasonsName)
	}
	for _, ff := range *files {
		if strings.EqualFold(ff.name, name) {
			return ff, nil
		}
	}
	f, ok := reader.FormatOf(name)
	if !ok {
		f = reader.Format(format)
	}
	ff := &fixFile{name: name, kind: kind, format: f}
	*files = append(*files, ff)
	return ff, nil
}

// groupSources sorts the files of a run's failures into the fix files
// they belong in, in the order they failed: per fix file, the run's files
// whose rows it holds, each with the tasks (kinds) that failed them.
func groupSources(sources []report.FailureSource) ([]*fixFile, error) {
	var out []*fixFile
	for _, src := range sources {
		name, in := fixName(report.Failure{Input: src.Input, File: src.File})
		ff, err := fixFileOf(&out, name, src.Kind, src.Format, src.File)
		if err != nil {
			return nil, err
		}
		if in != "" && !contains(ff.from, in) {
			ff.from = append(ff.from, in)
		}
		i := slices.IndexFunc(ff.reads, func(rd fixRead) bool { return rd.input == src.Input && rd.file == src.File })
		if i < 0 {
			ff.reads = append(ff.reads, fixRead{input: src.Input, file: src.File})
			i = len(ff.reads) - 1
		}
		ff.reads[i].sources = append(ff.reads[i].sources, src)
	}
	return out, nil
}

// group sorts failures read into memory (a few edited rows) into the fix
// files they belong in: each failing line once, however many tasks of its
// file failed it (SPEC §4), in the order the run read them.
func group(fails []report.Failure) ([]*fixFile, error) {
	var out []*fixFile
	lines := map[string]int{} // fix file, input and FILE:LINE -> its row's index in the fix file
	files := map[*fixFile]map[string]int{}
	for _, f := range fails {
		name, in := fixName(f)
		ff, err := fixFileOf(&out, name, f.Kind, f.Format, f.File)
		if err != nil {
			return nil, err
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
		r := newFixRow(f)
		key := strings.ToLower(name) + "\x00" + in + "\x00" + r.from
		if i, ok := lines[key]; ok {
			ff.rows[i].also = append(ff.rows[i].also, alsoFailed{failure: f.ID, kind: f.Kind, reason: f.Reason})
			continue
		}
		ff.rows = append(ff.rows, r)
		lines[key] = len(ff.rows) - 1
	}
	// Rows of several tasks follow each other task by task: put them back
	// in the order of the files (sheets, entries) and lines they were
	// read at.
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
	return out, nil
}

// fixName is the name a failure's file takes in a fix folder (its task's
// input's base name, without .gz; a workbook's as .csv), and that input.
func fixName(f report.Failure) (name, in string) {
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
		// both: profile.Profile.FileKind).
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
// a failure. It passes over each file's rows a few times — its header, the
// file itself with reasons.csv, the manifest's lists — and holds none of
// them longer than a row.
func (s *source) write(ctx context.Context, db *sql.DB, files []*fixFile, dir string, made bool) (res Result, err error) {
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
	folder := &fixFolder{dir: dir}
	defer func() {
		if err != nil {
			folder.takeBack(made)
		}
	}()
	for _, ff := range files {
		if ff.format == reader.FormatCSV && ff.keys == nil {
			if err := s.header(ctx, db, ff); err != nil {
				return Result{}, err
			}
		}
	}
	res = Result{Run: s.run.ID, Dir: dir, Files: []Written{}}
	if err := s.writeFiles(ctx, db, folder, files, &res); err != nil {
		return Result{}, err
	}
	mw, closeManifest, err := folder.open(fixmanifest.Name)
	if err != nil {
		return Result{}, err
	}
	if err := closeManifest(s.writeManifest(ctx, db, mw, files)); err != nil {
		return Result{}, err
	}
	res.Manifest = filepath.Join(dir, fixmanifest.Name)
	res.Next = s.next(dir)
	return res, nil
}

// writeFiles writes each fix file into folder, and reasons.csv beside
// them, a row as each is written, and adds them to res.
func (s *source) writeFiles(ctx context.Context, db *sql.DB, folder *fixFolder, files []*fixFile, res *Result) error {
	rw, closeReasons, err := folder.open(fixmanifest.ReasonsName)
	if err != nil {
		return err
	}
	reasons, err := startCSV(rw, reasonColumns)
	for _, ff := range files {
		if err != nil {
			break
		}
		var w *bufio.Writer
		var closeFile func(error) error
		if w, closeFile, err = folder.open(ff.name); err != nil {
			break
		}
		err = closeFile(ff.write(ctx, db, s.run.ID, w, reasons, &res.Reasons))
		res.Files = append(res.Files, Written{Name: ff.name, Kind: ff.kind, Rows: ff.written, Unreadable: ff.unreadable})
	}
	if err == nil {
		reasons.Flush()
		err = reasons.Error()
	}
	if err := closeReasons(err); err != nil {
		return err
	}
	return nil
}

// fixFolder is a fix folder being written, and the files made in it.
type fixFolder struct {
	dir     string
	written []string
}

// open makes a file of the folder (0600, never over another) and gives
// the writer to fill it and the function that closes it.
func (d *fixFolder) open(name string) (*bufio.Writer, func(error) error, error) {
	full := filepath.Join(d.dir, name)
	f, err := os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, nil, err
	}
	d.written = append(d.written, full)
	w := bufio.NewWriter(f)
	return w, func(err error) error {
		if err == nil {
			err = w.Flush()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("write %s: %w", full, err)
		}
		return nil
	}, nil
}

// takeBack removes the files made in the folder, and the folder itself if
// the write made it: what a failed write leaves is said by its error.
func (d *fixFolder) takeBack(made bool) {
	for _, name := range d.written {
		_ = os.Remove(name) // taking back a failed write: what remains is said by err
	}
	if made {
		_ = os.Remove(d.dir)
	}
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
	return report.ShellCommand(append(words, dir)...)
}

// writeManifest writes the manifest of files (fixmanifest.Write), once
// they are written: what the run is, and per file its rows' failures,
// source ids and lines, each list streamed from a pass over the file's
// rows.
func (s *source) writeManifest(ctx context.Context, db *sql.DB, w *bufio.Writer, files []*fixFile) error {
	m := fixmanifest.Manifest{Format: fixmanifest.Format, Run: s.run.ID, Tenant: s.run.Tenant, Source: s.run.Source,
		Profile: s.opts.Profile, ProfileFile: s.opts.ProfileFile, ProfileText: s.opts.ProfileText,
		Inputs: append([]string{s.opts.Input}, s.opts.Inputs...), SideFiles: s.opts.SideFiles, Update: s.opts.Update}
	rows := make([]fixmanifest.Rows, len(files))
	for i, ff := range files {
		m.Files = append(m.Files, fixmanifest.File{Name: ff.name, Kind: ff.kind, Rows: ff.written, From: ff.from, ReadAs: s.readAs(ff)})
		rows[i] = fixmanifest.Rows{Several: ff.several, Each: func(yield func(fixmanifest.Row) error) error {
			return ff.each(ctx, db, s.run.ID, func(r *fixRow) error {
				if r.unreadable() {
					return nil // in reasons.csv only
				}
				return yield(fixmanifest.Row{Failure: r.failure, SourceID: r.sourceID, Line: r.line, Kind: r.kind})
			})
		}}
	}
	return fixmanifest.Write(w, m, rows)
}

// readAs are the kinds the run read a file's input as, where it read it
// as several (SPEC §4); nil when the file's kind says it.
func (s *source) readAs(ff *fixFile) []string {
	var readAs []string
	for _, in := range ff.from {
		for _, k := range s.kinds[in] {
			if !slices.Contains(readAs, k) {
				readAs = append(readAs, k)
			}
		}
	}
	if len(readAs) < 2 {
		return nil
	}
	return readAs
}

// header sets a CSV fix file's header: the header of the file its rows
// came from, re-read, when it holds every column of the rows; else the
// columns of the rows in the order first seen (a repeated name's "#2"
// taken off again). It reads the rows once, keeping their columns' names.
func (s *source) header(ctx context.Context, db *sql.DB, ff *fixFile) error {
	var keys []string
	seen := map[string]bool{}
	err := ff.each(ctx, db, s.run.ID, func(r *fixRow) error {
		for _, c := range r.cells {
			if _, beyond := beyondHeader(c.Name); !beyond && !seen[c.Name] {
				seen[c.Name] = true
				keys = append(keys, c.Name)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, in := range ff.from {
		h, err := importer.FileHeader(in, s.encodings[in])
		if err != nil {
			continue // gone or changed: the rows' own columns serve
		}
		rk := profile.RawNames(h)
		if covers(rk, keys) {
			ff.keys, ff.header = rk, h
			return nil
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
	return nil
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

// write writes the fix file's rows, each at its line (lines), and a row
// of reasons.csv for each (counted in n), as the rows come.
func (ff *fixFile) write(ctx context.Context, db *sql.DB, runID int64, w *bufio.Writer, reasons *csv.Writer, n *int) error {
	ff.written, ff.unreadable = 0, 0
	var cw *csv.Writer
	var err error
	open, sep, end := "", "", ""
	switch ff.format {
	case reader.FormatJSON:
		open, sep, end = "[\n", ",\n", "\n]\n"
	case reader.FormatJSONL:
		sep, end = "\n", "\n"
	default:
		if cw, err = startCSV(w, ff.header); err != nil {
			return err
		}
	}
	if _, err := w.WriteString(open); err != nil {
		return err
	}
	ff.several = false
	err = ff.each(ctx, db, runID, func(r *fixRow) error {
		if err := writeReasons(reasons, ff, r, n); err != nil {
			return err
		}
		if r.unreadable() {
			ff.unreadable++
			return nil
		}
		ff.written++
		ff.several = ff.several || r.kind != ff.kind
		if cw != nil {
			return cw.Write(ff.line(r.cells))
		}
		if !json.Valid([]byte(r.raw)) {
			return fmt.Errorf("failure %d: its raw row is not JSON", r.failure)
		}
		if ff.written > 1 {
			if _, err := w.WriteString(sep); err != nil {
				return err
			}
		}
		_, err := w.WriteString(r.raw)
		return err
	})
	if err != nil {
		return err
	}
	if cw != nil {
		cw.Flush()
		return cw.Error()
	}
	if ff.written == 0 && ff.format == reader.FormatJSON {
		end = "]\n" // [ and ] on lines of their own, nothing between
	}
	_, err = w.WriteString(end)
	return err
}

// line lines a row's cells up under the header by name. A row that ends
// early (a ragged row, short of fields) ends early again, and fields past
// the header follow it, so that the row fails again as it did until it is
// fixed.
func (ff *fixFile) line(cells []report.RawCell) []string {
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

// reasonColumns are reasons.csv's columns.
var reasonColumns = []string{"file", "line", "id", "reason", "from", "text"}

// writeReasons writes the rows of reasons.csv of a row of ff, once placed
// (lines), counting them in n: a row per failure of its line — a line that
// several kinds of its file failed has a reason per kind, each saying
// which — formula-safe.
func writeReasons(cw *csv.Writer, ff *fixFile, r *fixRow, n *int) error {
	reasons := append([]alsoFailed{{failure: r.failure, kind: r.kind, reason: r.reason}}, r.also...)
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
			row[i] = report.SafeCell(row[i])
		}
		if err := cw.Write(row); err != nil {
			return err
		}
		*n++
	}
	return nil
}

package importer

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"crmimport/canon"
	"crmimport/importer/input"
	"crmimport/importer/profile"
	"crmimport/importer/reader"
	"crmimport/importer/runopts"
	"crmimport/ledger"
)

// inputFile is one file of an export, planned as one task.
type inputFile struct {
	Path     string // the input's name: a file, or ZIP!/ENTRY
	Kind     ledger.Kind
	Format   reader.Format
	Encoding string
	// EncodingWhy is the evidence Encoding rests on, or "--encoding";
	// EncodingGuessed: that evidence does not settle it
	// (reader.EncodingChoice.Guessed).
	EncodingWhy     string
	EncodingGuessed bool
	Info            input.FileInfo
}

// planNotes are what planning found worth telling: notices for the run
// log, and warnings, which the run log holds too and the run's summary
// repeats (Options.Warnings): what may have been read wrong without any
// record failing to say so.
type planNotes struct {
	notices, warnings []string
}

// planInputs resolves what a user asks planning to read with: the profile
// (--profile, else the built-in one named like the source), --encoding
// (an unknown one is a usage error) and the export's paths, made
// absolute. Its errors are those of planning before any file is read.
func planInputs(source, prof, encoding string, paths []string) (*profile.Profile, []string, error) {
	var p *profile.Profile
	var err error
	if prof != "" {
		p, err = ResolveProfile(prof)
	} else if p, err = ProfileByName(source); err != nil {
		err = &UsageError{Msg: fmt.Sprintf("unknown profile %q: no built-in profile is named like --source %s (built-in: %s); "+
			"pass --profile NAME or --profile FILE.yaml", source, source, strings.Join(profile.BuiltinNames(), ", "))}
	}
	if err != nil {
		return nil, nil, err
	}
	if encoding != "" {
		if _, err := reader.NewRowReader(bytes.NewReader(nil), reader.ReadOptions{Name: "--encoding", Format: reader.FormatCSV, Encoding: encoding}); err != nil {
			return nil, nil, &UsageError{Msg: fmt.Sprintf("--encoding %s: %v", encoding, err)}
		}
	}
	var inputs []string
	for _, in := range paths {
		abs, err := filepath.Abs(in)
		if err != nil {
			return nil, nil, &input.Error{Path: in, Reason: err.Error()}
		}
		inputs = append(inputs, abs)
	}
	return p, inputs, nil
}

// planUsers makes *p read a users file (run --users) as users, and
// returns its absolute path ("" for none): a file that is missing, a
// folder, or a name another kind reads is a *UsageError saying what to do.
func planUsers(p **profile.Profile, users string) (string, error) {
	if users == "" {
		return "", nil
	}
	abs, err := filepath.Abs(users)
	if err != nil {
		return "", &input.Error{Path: users, Reason: err.Error()}
	}
	if st, err := os.Stat(abs); err != nil || st.IsDir() {
		return "", &UsageError{Msg: fmt.Sprintf("--users %s: no such file (a users file in the canonical layout: id, email, name — "+
			"id being the owner as the export writes it)", users)}
	}
	q, err := (*p).WithUsersFile(filepath.Base(abs))
	if err != nil {
		return "", &UsageError{Msg: "--users: " + err.Error()}
	}
	*p = q
	return abs, nil
}

// discovery is what planning finds in an export, before any run exists.
type discovery struct {
	files []inputFile        // the files planned, each a task, sorted by name
	side  []profile.SideFile // what their tasks read beside them
	notes planNotes
	left  []LeftOut // what is not read, and why (notes.notices say so too)
	fixes []*fixFolder
}

// fixWarnings adds to the notes' warnings the ways the plan reads a fix
// folder otherwise than its run did (fixfolder.go): the tenant and source
// are the run's, which discovery does not know ("" tenant: not known).
func (d *discovery) fixWarnings(p *profile.Profile, tenant, source string) {
	d.notes.warnings = append(d.notes.warnings, fixWarnings(d.fixes, d.files, p, tenant, source)...)
}

// fixUpdate gives spec the --update a fix folder's manifest carries (R17,
// SPEC §11: the run its rows failed in applied changes at the source, and
// so does the run over its fixes), saying so, when spec asks for none.
func (d *discovery) fixUpdate(spec *RunSpec) {
	if spec.Update != "" {
		return
	}
	for _, fx := range d.fixes {
		if u := fx.manifest.Update; u != "" {
			spec.Update = u
			flag := "--update"
			if u == runopts.UpdateOverwrite {
				flag += "=" + u
			}
			d.notes.notices = append(d.notes.notices, fmt.Sprintf("the fix folder's manifest says run %d had %s: this run applies changes at the source too",
				fx.manifest.Run, flag))
			return
		}
	}
}

// LeftOut is a file or a folder of an export that a run would not read,
// and why.
type LeftOut struct {
	Name   string `json:"name"` // as messages name it: a file's name, ZIP!/ENTRY, a folder
	Reason string `json:"reason"`
}

// discover plans the files of an export: it lists them (folders, zips
// read in place, .gz files, single files), classifies them by the
// profile, keeping those of the kinds asked for, finds what their tasks
// will also read (the profile's side files: joined files, parents looked
// up by name, body folders), and fingerprints all of it, learning in that
// same pass how each file is encoded. Its notes say what it left out and
// how it reads files that are not plain UTF-8.
func discover(ctx context.Context, paths []string, p *profile.Profile, only []ledger.Kind, encoding string, lim input.Limits) (discovery, error) {
	ls, err := input.List(paths, input.Want{Folders: p.BodyFolders(), NotRead: func(path string) string {
		if _, _, ok := p.FileKinds(path); !ok {
			return fmt.Sprintf("is not a file of the %s profile: expected one of %s", p.Name, p.ExpectedFiles())
		}
		return ""
	}}, lim)
	if err != nil {
		return discovery{}, err
	}
	fixes, left, err := findFixFolder(paths, &ls)
	if err != nil {
		return discovery{}, err
	}
	found := classify(p, ls.Files, only)
	// A fix folder's rows need what their run read beside them: found
	// through its manifest where the export does not give it.
	var given []profile.SideFile
	if len(fixes) > 0 {
		given, _, _ = p.FindSideFiles(found.planned(), found.byKind, found.others, ls.Folders)
	}
	folders, fixNoted, err := addSideFiles(fixes, p, &found, ls.Folders, given)
	if err != nil {
		return discovery{}, err
	}
	side, used, joinNotices := p.FindSideFiles(found.planned(), found.byKind, found.others, folders)
	if err := checkSideFilesRead(fixes, p, side); err != nil {
		return discovery{}, err
	}
	side = addNameFiles(fixes, side)
	joinNotices = append(append(joinNotices, fixNoted...), fixNotices(fixes)...)
	notices := append(append(ls.Notices, found.notices...), joinNotices...)
	for _, f := range ls.IgnoredFolders {
		left = append(left, LeftOut{Name: f, Reason: input.FolderNotRead})
	}
	files, notLeft := leftOut(p, found, used, only, paths[0])
	left, notices = append(left, files...), append(notices, notLeft...)
	if len(found.files) == 0 {
		reason := fmt.Sprintf("no file matches a kind of the %s profile (expected %s)", p.Name, p.ExpectedFiles())
		if len(only) > 0 {
			reason = "no file matches the kinds asked for with --only"
		}
		return discovery{}, &input.Error{Path: paths[0], Reason: reason}
	}
	notes, err := fingerprint(ctx, found.files, side, encoding, lim)
	if err != nil {
		return discovery{}, err
	}
	if err := checkSideFiles(fixes, side); err != nil {
		return discovery{}, err
	}
	notes.notices = append(notices, notes.notices...)
	return discovery{files: found.files, side: side, notes: notes, left: left, fixes: fixes}, nil
}

// classified are an export's files as a profile classifies them.
type classified struct {
	files   []inputFile                  // the files of the kinds asked for: a task per file and kind
	byKind  map[ledger.Kind][]input.File // every file of each kind, asked for or not
	others  []input.File                 // the files of no kind
	notices []string                     // what planning tells of the files that feed several kinds
}

// classify tells each file's kinds by its name, and plans the files of the
// kinds in only (of every kind, without only): a task per kind the
// profile gives a file (SPEC §4), and a notice for each file that feeds
// several.
func classify(p *profile.Profile, files []input.File, only []ledger.Kind) classified {
	want := map[ledger.Kind]bool{}
	for _, k := range only {
		want[k] = true
	}
	c := classified{byKind: map[ledger.Kind][]input.File{}}
	for _, f := range files {
		kinds, format, ok := p.FileKinds(f.Name)
		if !ok {
			c.others = append(c.others, f)
			continue
		}
		var planned []string
		for _, k := range kinds {
			c.byKind[k] = append(c.byKind[k], f)
			if len(want) > 0 && !want[k] {
				continue
			}
			c.files = append(c.files, inputFile{Path: f.Ref, Kind: k, Format: format})
			planned = append(planned, k.Plural())
		}
		if len(planned) > 1 {
			c.notices = append(c.notices, fmt.Sprintf("%s feeds %s: the %s profile gives it each of them, and each kind is its own task over the file",
				input.Name(f.Ref), andList(planned), p.Name))
		}
	}
	return c
}

// andList joins words with commas and a final "and".
func andList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// planned are the planned files' refs, by kind.
func (c classified) planned() map[ledger.Kind][]string {
	out := map[ledger.Kind][]string{}
	for _, f := range c.files {
		out[f.Kind] = append(out[f.Kind], f.Path)
	}
	return out
}

// leftOut says what planning leaves out: the files of no kind that no task
// reads beside its own (used), and the files of the kinds --only does not
// ask for; and it notices each kind asked for with --only that the export
// (first, its first path) has no file of.
func leftOut(p *profile.Profile, c classified, used map[string]bool, only []ledger.Kind, first string) ([]LeftOut, []string) {
	var left []LeftOut
	var notices, ignored []string
	for _, o := range c.others {
		if !used[o.Ref] {
			ignored = append(ignored, input.Name(o.Ref))
		}
	}
	if len(ignored) > 0 {
		sort.Strings(ignored)
		notices = append(notices, fmt.Sprintf("ignored %d %s not of the %s profile: %s (it reads %s)",
			len(ignored), reader.Plural(len(ignored), "file", "files"), p.Name, strings.Join(ignored, ", "), p.ExpectedFiles()))
		for _, name := range ignored {
			left = append(left, LeftOut{Name: name, Reason: fmt.Sprintf("not a file of the %s profile", p.Name)})
		}
	}
	planned := c.planned()
	for _, k := range canon.Kinds() {
		for _, f := range c.byKind[k] {
			if !slices.Contains(planned[k], f.Ref) {
				left = append(left, LeftOut{Name: input.Name(f.Ref), Reason: fmt.Sprintf("a %s file: --only does not ask for %s", k, k.Plural())})
			}
		}
	}
	for _, k := range only {
		if len(planned[k]) == 0 {
			notices = append(notices, fmt.Sprintf("--only %s: no %s file in %s", k.Plural(), k.Plural(), first))
		}
	}
	return left, notices
}

// fingerprint fingerprints the planned files, sorted by name, and the side
// files (R10), and decides how each is read on the evidence of that same
// pass (reader.ChooseEncoding). Its notes are what those choices say: of a
// side file, only when it is not planned too.
func fingerprint(ctx context.Context, files []inputFile, side []profile.SideFile, encoding string, lim input.Limits) (planNotes, error) {
	var notes planNotes
	sort.SliceStable(files, func(i, j int) bool { return input.Name(files[i].Path) < input.Name(files[j].Path) })
	for i := range files {
		f := &files[i]
		if i > 0 && files[i-1].Path == f.Path {
			// Another kind of the same file (SPEC §4): read once, and
			// told once.
			f.Info, f.Encoding, f.EncodingWhy, f.EncodingGuessed = files[i-1].Info, files[i-1].Encoding, files[i-1].EncodingWhy, files[i-1].EncodingGuessed
			continue
		}
		info, err := input.InspectRef(ctx, f.Path, lim)
		if err != nil {
			return planNotes{}, inputError(f.Path, err)
		}
		f.Info = info
		if f.Format == reader.FormatXLSX {
			if err := input.CheckWorkbook(f.Path, lim); err != nil {
				return planNotes{}, inputError(f.Path, err)
			}
			// A workbook's XML says its own encoding; --encoding is a
			// text file's.
			f.Encoding, f.EncodingWhy = "", "a workbook: its XML names its encoding"
			continue
		}
		c := reader.ChooseEncoding(input.Name(f.Path), info.Head, info.Text, encoding)
		f.Encoding, f.EncodingWhy, f.EncodingGuessed = c.Encoding, c.Why, c.Guessed
		notes.notices, notes.warnings = appendNote(notes.notices, c.Notice), appendNote(notes.warnings, c.Warning)
	}
	for i := range side {
		a := &side[i]
		if a.Format == "folder" {
			fp, err := input.FolderFingerprint(a.File)
			if err != nil {
				return planNotes{}, &input.Error{Path: a.File, Reason: err.Error()}
			}
			a.Fingerprint = fp
			continue
		}
		info, err := input.InspectRef(ctx, a.File, lim)
		if err != nil {
			return planNotes{}, inputError(a.File, err)
		}
		a.Fingerprint = info.Fingerprint
		if reader.Format(a.Format) == reader.FormatXLSX {
			if err := input.CheckWorkbook(a.File, lim); err != nil {
				return planNotes{}, inputError(a.File, err)
			}
		}
		c := reader.ChooseEncoding(input.Name(a.File), info.Head, info.Text, encoding)
		a.Encoding = c.Encoding
		if !slices.ContainsFunc(files, func(f inputFile) bool { return f.Path == a.File }) {
			notes.notices, notes.warnings = appendNote(notes.notices, c.Notice), appendNote(notes.warnings, c.Warning)
		}
	}
	return notes, nil
}

func appendNote(notes []string, note string) []string {
	if note == "" {
		return notes
	}
	return append(notes, note)
}

// inputError is an input that cannot be planned: its path, and what is
// wrong (without the input's name again when the error starts with it).
func inputError(ref string, err error) *input.Error {
	return &input.Error{Path: ref, Reason: strings.TrimPrefix(err.Error(), input.Name(ref)+": ")}
}

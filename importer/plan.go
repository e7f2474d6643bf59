package importer

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"crmimport/importer/reader"
	"crmimport/ledger"
)

// InputError is a problem with the input found before a run exists (no
// such path, no file matches a kind, a zip bomb): exit 1, and no run row.
type InputError struct {
	Path   string
	Reason string
}

func (e *InputError) Error() string { return fmt.Sprintf("%s: %s", e.Path, e.Reason) }

// inputFile is one file of an export, planned as one task.
type inputFile struct {
	Path     string // the input's name: a file, or ZIP!/ENTRY
	Kind     ledger.Kind
	Format   reader.Format
	Encoding string
	Info     FileInfo
}

// AuxInput is a file that tasks read beside their own: a file joined to
// each record (Salesforce OpportunityContactRole.csv), the parent files
// that links by name look names up in, a folder of body files. It is
// fingerprinted with the plan (R10), kept in the run's options, and
// checked again on resume.
type AuxInput struct {
	Role        string `json:"role"` // join:PATTERN, names:KIND or bodies:FOLDER
	File        string `json:"file"`
	Format      string `json:"format,omitempty"`
	Encoding    string `json:"encoding,omitempty"`
	Fingerprint string `json:"fingerprint"`
}

// exportFile is a file found in an export.
type exportFile struct {
	ref  string // the input's name (a file, ZIP!/ENTRY)
	name string // what a profile's patterns match: the base name
}

// bodyFolder is a folder of an export that a profile reads files from.
type bodyFolder struct {
	ref    string // a folder on disk, or ZIP!/PREFIX/
	folder string // its name, lower-cased
}

// exportListing is what the inputs of a run hold.
type exportListing struct {
	files   []exportFile
	folders []bodyFolder
	notices []string
	nested  []string // archives inside archives, refused
	ignored []string // folders not read
}

// planNotes are what planning found worth telling: notices for the run
// log, and warnings, which the run log holds too and the run's summary
// repeats (Options.Warnings): what may have been read wrong without any
// record failing to say so.
type planNotes struct {
	notices, warnings []string
}

// discover finds the files of an export (folders, zips read in place, .gz
// files, single files), keeps those of the kinds asked for, finds what
// their tasks will also read (joined files, parents looked up by name,
// body folders), and fingerprints all of it, learning in that same pass
// how each file is encoded (reader.ChooseEncoding). Its notes say what it
// ignored and how it reads files that are not plain UTF-8.
func discover(ctx context.Context, paths []string, p *Profile, only []ledger.Kind, encoding string, lim archiveLimits) ([]inputFile, []AuxInput, planNotes, error) {
	var ls exportListing
	var notes planNotes
	bodyNames := p.bodyFolders()
	for _, in := range paths {
		if err := ls.add(in, p, bodyNames, lim, len(paths) == 1); err != nil {
			return nil, nil, notes, err
		}
	}
	first := paths[0]
	if len(ls.nested) > 0 {
		return nil, nil, notes, &InputError{Path: first, Reason: fmt.Sprintf(
			"holds %d %s inside an archive (%s), which crmimport does not open: extract the outer archive and pass the folder, "+
				"or pass the inner archive itself", len(ls.nested), reader.Plural(len(ls.nested), "archive", "archives"), strings.Join(ls.nested, ", "))}
	}
	notices := ls.notices
	if len(ls.ignored) > 0 {
		notices = append(notices, fmt.Sprintf("ignored the %s %s: an export's files are read from its top folder",
			reader.Plural(len(ls.ignored), "folder", "folders"), strings.Join(ls.ignored, ", ")))
	}

	want := map[ledger.Kind]bool{}
	for _, k := range only {
		want[k] = true
	}
	var files []inputFile
	var ignored []string
	have := map[ledger.Kind]bool{}
	byKind := map[ledger.Kind][]exportFile{}
	var others []exportFile
	for _, f := range ls.files {
		k, format, ok := p.FileKind(f.name)
		if !ok {
			others = append(others, f)
			continue
		}
		byKind[k] = append(byKind[k], f)
		if len(want) > 0 && !want[k] {
			continue
		}
		have[k] = true
		files = append(files, inputFile{Path: f.ref, Kind: k, Format: format})
	}
	// What the planned kinds read beside their files.
	var aux []AuxInput
	auxed := map[string]bool{}
	used := map[string]bool{}
	for _, k := range p.Kinds() {
		if !have[k] {
			continue
		}
		ks := p.kinds[k]
		for _, fsp := range ks.files {
			for _, js := range fsp.joins {
				found := false
				for _, o := range others {
					if m, _ := path.Match(js.file, matchName(o.name)); m {
						found = true
						used[o.ref] = true
						if role := "join:" + js.file; !auxed[role+"\x00"+o.ref] {
							auxed[role+"\x00"+o.ref] = true
							aux = append(aux, AuxInput{Role: role, File: o.ref})
						}
					}
				}
				if !found && kindHasPattern(files, k, fsp) {
					notices = append(notices, fmt.Sprintf("no file of the export matches %s, which the %s profile joins to %s: "+
						"their links come from their own columns only", js.file, p.Name, fsp.pattern))
				}
			}
			if fsp.bodyFile != "" {
				dir := strings.ToLower(path.Dir(fsp.bodyFile))
				for _, bf := range ls.folders {
					if bf.folder == dir && !auxed["bodies:"+dir+"\x00"+bf.ref] {
						auxed["bodies:"+dir+"\x00"+bf.ref] = true
						aux = append(aux, AuxInput{Role: "bodies:" + dir, File: bf.ref, Format: "folder"})
					}
				}
			}
		}
		for _, l := range ks.links {
			if !l.byName {
				continue
			}
			role := "names:" + string(l.kind)
			for _, f := range byKind[l.kind] {
				if !auxed[role+"\x00"+f.ref] {
					auxed[role+"\x00"+f.ref] = true
					format, _ := reader.FormatOf(matchName(f.name))
					aux = append(aux, AuxInput{Role: role, File: f.ref, Format: string(format)})
				}
			}
		}
	}
	for _, o := range others {
		if !used[o.ref] {
			ignored = append(ignored, refName(o.ref))
		}
	}
	if len(ignored) > 0 {
		sort.Strings(ignored)
		notices = append(notices, fmt.Sprintf("ignored %d %s not of the %s profile: %s (it reads %s)",
			len(ignored), reader.Plural(len(ignored), "file", "files"), p.Name, strings.Join(ignored, ", "), p.ExpectedFiles()))
	}
	for _, k := range only {
		if !have[k] {
			notices = append(notices, fmt.Sprintf("--only %s: no %s file in %s", k.Plural(), k.Plural(), first))
		}
	}
	if len(files) == 0 {
		reason := fmt.Sprintf("no file matches a kind of the %s profile (expected %s)", p.Name, p.ExpectedFiles())
		if len(only) > 0 {
			reason = "no file matches the kinds asked for with --only"
		}
		return nil, nil, notes, &InputError{Path: first, Reason: reason}
	}
	sort.SliceStable(files, func(i, j int) bool { return refName(files[i].Path) < refName(files[j].Path) })
	for i := range files {
		f := &files[i]
		info, err := inspectInput(ctx, f.Path, lim)
		if err != nil {
			return nil, nil, notes, inputError(f.Path, err)
		}
		f.Info = info
		var notice, warning string
		f.Encoding, notice, warning = reader.ChooseEncoding(refName(f.Path), info.Head, info.Text, encoding)
		notices, notes.warnings = appendNote(notices, notice), appendNote(notes.warnings, warning)
	}
	for i := range aux {
		a := &aux[i]
		if a.Format == "folder" {
			fp, err := folderFingerprint(a.File)
			if err != nil {
				return nil, nil, notes, &InputError{Path: a.File, Reason: err.Error()}
			}
			a.Fingerprint = fp
			continue
		}
		if a.Format == "" {
			format, _ := reader.FormatOf(matchName(a.File))
			a.Format = string(format)
		}
		info, err := inspectInput(ctx, a.File, lim)
		if err != nil {
			return nil, nil, notes, inputError(a.File, err)
		}
		a.Fingerprint = info.Fingerprint
		var notice, warning string
		a.Encoding, notice, warning = reader.ChooseEncoding(refName(a.File), info.Head, info.Text, encoding)
		if !planned(files, a.File) {
			notices, notes.warnings = appendNote(notices, notice), appendNote(notes.warnings, warning)
		}
	}
	notes.notices = notices
	return files, aux, notes, nil
}

func appendNote(notes []string, note string) []string {
	if note == "" {
		return notes
	}
	return append(notes, note)
}

// inputError is an input that cannot be planned: its path, and what is
// wrong (without the input's name again when the error starts with it).
func inputError(ref string, err error) *InputError {
	return &InputError{Path: ref, Reason: strings.TrimPrefix(err.Error(), refName(ref)+": ")}
}

func planned(files []inputFile, ref string) bool {
	for _, f := range files {
		if f.Path == ref {
			return true
		}
	}
	return false
}

// kindHasPattern reports whether a planned file of kind k matched fsp.
func kindHasPattern(files []inputFile, k ledger.Kind, fsp *fileSpec) bool {
	for _, f := range files {
		if m, _ := path.Match(fsp.pattern, matchName(f.Path)); m && f.Kind == k {
			return true
		}
	}
	return false
}

// add lists what one input path holds.
func (ls *exportListing) add(in string, p *Profile, bodyNames map[string]bool, lim archiveLimits, only bool) error {
	st, err := os.Stat(in)
	if errors.Is(err, fs.ErrNotExist) {
		return &InputError{Path: in, Reason: "no such file or folder"}
	}
	if err != nil {
		return &InputError{Path: in, Reason: err.Error()}
	}
	if !st.IsDir() {
		if why := notRegular(in); why != "" {
			return &InputError{Path: in, Reason: why}
		}
		if isZipFile(in, true) {
			return ls.addZip(in, bodyNames, lim)
		}
		if _, _, ok := p.FileKind(in); !ok && only {
			return &InputError{Path: in, Reason: fmt.Sprintf("is not a file of the %s profile: expected one of %s", p.Name, p.ExpectedFiles())}
		}
		ls.files = append(ls.files, exportFile{ref: in, name: filepath.Base(in)})
		return nil
	}
	entries, err := os.ReadDir(in)
	if err != nil {
		return &InputError{Path: in, Reason: err.Error()}
	}
	for _, e := range entries {
		full := filepath.Join(in, e.Name())
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if why := notRegular(full); why != "" {
			return &InputError{Path: full, Reason: why}
		}
		if e.IsDir() {
			if bodyNames[strings.ToLower(e.Name())] {
				ls.folders = append(ls.folders, bodyFolder{ref: full, folder: strings.ToLower(e.Name())})
			} else {
				ls.ignored = append(ls.ignored, e.Name())
			}
			continue
		}
		if isZipFile(full, false) {
			if err := ls.addZip(full, bodyNames, lim); err != nil {
				return err
			}
			continue
		}
		ls.files = append(ls.files, exportFile{ref: full, name: e.Name()})
	}
	return nil
}

// addZip lists a zip's entries, read in place, with backslashes in their
// names read as folder separators (entryName). An export zipped with its
// folder (every entry under one top folder) is read from inside that
// folder. Entries in other folders are not read (Salesforce's Attachments/
// and Documents/), but for the body folders a profile names; an archive
// inside the zip is refused, and so is a zip holding two entries of one
// name among those it reads: either would leave the other unread.
func (ls *exportListing) addZip(zipPath string, bodyNames map[string]bool, lim archiveLimits) error {
	zr, err := openZip(zipPath)
	if err != nil {
		return &InputError{Path: zipPath, Reason: "cannot be read as a zip: " + unwrapPath(err).Error()}
	}
	defer zr.Close()
	if err := checkZip(filepath.Base(zipPath), &zr.Reader, lim); err != nil {
		return &InputError{Path: zipPath, Reason: err.Error()}
	}
	prefix := commonFolder(zr.File)
	ignored := map[string]bool{}
	folders := map[string]bool{}
	read := map[string]*zip.File{} // the entries read, by name
	for i, f := range zr.File {
		name := entryName(f.Name)
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		rel := name[len(prefix):]
		if rel == "" || strings.HasSuffix(rel, "/") {
			continue
		}
		if dir, _, ok := strings.Cut(rel, "/"); ok {
			low := strings.ToLower(dir)
			if bodyNames[low] {
				if !folders[dir] {
					folders[dir] = true
					ls.folders = append(ls.folders, bodyFolder{ref: zipPath + entrySep + prefix + dir + "/", folder: low})
				}
			} else {
				if !ignored[dir] {
					ignored[dir] = true
					ls.ignored = append(ls.ignored, filepath.Base(zipPath)+entrySep+dir)
				}
				continue
			}
		} else if strings.HasPrefix(path.Base(rel), ".") || strings.HasPrefix(rel, "__MACOSX") {
			continue
		}
		if first := read[name]; first != nil {
			return &InputError{Path: zipPath, Reason: sameNameReason(&zr.Reader, first, f, i)}
		}
		read[name] = f
		if strings.Contains(rel, "/") {
			continue // a body file, read by the records that name it
		}
		ref := zipPath + entrySep + name
		if isArchiveName(rel) {
			ls.nested = append(ls.nested, refName(ref))
			continue
		}
		ls.files = append(ls.files, exportFile{ref: ref, name: path.Base(rel)})
	}
	return nil
}

// commonFolder is the one top folder every entry of a zip is in ("" when
// there are files at the top, or several folders).
func commonFolder(files []*zip.File) string {
	top := ""
	for _, f := range files {
		name := entryName(f.Name)
		if strings.HasPrefix(name, "__MACOSX/") {
			continue
		}
		dir, _, ok := strings.Cut(name, "/")
		if !ok {
			return ""
		}
		if top == "" {
			top = dir
		} else if dir != top {
			return ""
		}
	}
	if top == "" {
		return ""
	}
	return top + "/"
}

// bodyFolders are the folders a profile reads body files from, lower-cased.
func (p *Profile) bodyFolders() map[string]bool {
	out := map[string]bool{}
	for _, ks := range p.kinds {
		for _, f := range ks.files {
			if f.bodyFile != "" {
				out[strings.ToLower(path.Dir(f.bodyFile))] = true
			}
		}
	}
	return out
}

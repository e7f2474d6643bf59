package importer

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"crmimport/importer/input"
	"crmimport/importer/profile"
	"crmimport/importer/reader"
	"crmimport/ledger"
)

// inputFile is one file of an export, planned as one task.
type inputFile struct {
	Path     string // the input's name: a file, or ZIP!/ENTRY
	Kind     ledger.Kind
	Format   reader.Format
	Encoding string
	Info     input.FileInfo
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
func discover(ctx context.Context, paths []string, p *profile.Profile, only []ledger.Kind, encoding string, lim input.Limits) ([]inputFile, []profile.SideFile, planNotes, error) {
	var notes planNotes
	ls, err := input.List(paths, input.Want{Folders: p.BodyFolders(), NotRead: func(path string) string {
		if _, _, ok := p.FileKind(path); !ok {
			return fmt.Sprintf("is not a file of the %s profile: expected one of %s", p.Name, p.ExpectedFiles())
		}
		return ""
	}}, lim)
	if err != nil {
		return nil, nil, notes, err
	}
	first := paths[0]
	notices := ls.Notices

	want := map[ledger.Kind]bool{}
	for _, k := range only {
		want[k] = true
	}
	var files []inputFile
	var ignored []string
	have := map[ledger.Kind]bool{}
	byKind := map[ledger.Kind][]input.File{}
	var others []input.File
	for _, f := range ls.Files {
		k, format, ok := p.FileKind(f.Name)
		if !ok {
			others = append(others, f)
			continue
		}
		byKind[k] = append(byKind[k], f)
		if len(want) > 0 && !want[k] {
			continue
		}
		have[k] = true
		files = append(files, inputFile{Path: f.Ref, Kind: k, Format: format})
	}
	// What the planned kinds read beside their files.
	planned := map[ledger.Kind][]string{}
	for _, f := range files {
		planned[f.Kind] = append(planned[f.Kind], f.Path)
	}
	side, used, joinNotices := p.FindSideFiles(planned, byKind, others, ls.Folders)
	notices = append(notices, joinNotices...)
	for _, o := range others {
		if !used[o.Ref] {
			ignored = append(ignored, input.Name(o.Ref))
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
		return nil, nil, notes, &input.Error{Path: first, Reason: reason}
	}
	sort.SliceStable(files, func(i, j int) bool { return input.Name(files[i].Path) < input.Name(files[j].Path) })
	for i := range files {
		f := &files[i]
		info, err := input.InspectRef(ctx, f.Path, lim)
		if err != nil {
			return nil, nil, notes, inputError(f.Path, err)
		}
		f.Info = info
		var notice, warning string
		f.Encoding, notice, warning = reader.ChooseEncoding(input.Name(f.Path), info.Head, info.Text, encoding)
		notices, notes.warnings = appendNote(notices, notice), appendNote(notes.warnings, warning)
	}
	for i := range side {
		a := &side[i]
		if a.Format == "folder" {
			fp, err := input.FolderFingerprint(a.File)
			if err != nil {
				return nil, nil, notes, &input.Error{Path: a.File, Reason: err.Error()}
			}
			a.Fingerprint = fp
			continue
		}
		info, err := input.InspectRef(ctx, a.File, lim)
		if err != nil {
			return nil, nil, notes, inputError(a.File, err)
		}
		a.Fingerprint = info.Fingerprint
		var notice, warning string
		a.Encoding, notice, warning = reader.ChooseEncoding(input.Name(a.File), info.Head, info.Text, encoding)
		if !slices.ContainsFunc(files, func(f inputFile) bool { return f.Path == a.File }) {
			notices, notes.warnings = appendNote(notices, notice), appendNote(notes.warnings, warning)
		}
	}
	notes.notices = notices
	return files, side, notes, nil
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

package importer

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"crmimport/importer/fixmanifest"
	"crmimport/importer/input"
	"crmimport/importer/profile"
	"crmimport/ledger"
)

// A fix folder is what `rejects RUN --as-export` writes (package fixfile):
// a run's failed rows, per input file, under that file's own name and
// header, for a person to correct and import again like any export. Its
// manifest names the run it came from and the side files that run read
// (joined files, parents looked up by name, body folders), so that a run
// over the folder, which holds none of them, reads the same ones — after
// checking that they are still what that run read (R10: a changed file is
// never used silently).

// fixFolder is a fix folder among the paths of an export: its manifest,
// and the side files planning added from it (their fingerprints as the
// manifest has them).
type fixFolder struct {
	dir      string
	manifest *fixmanifest.Manifest
	want     map[string]wanted  // side file -> what its run read it as
	names    []profile.SideFile // parents' files to look names up in (addNameFiles)
	added    []profile.SideFile // joined files and body folders added from the manifest (checkSideFilesRead)
}

// wanted is a side file found through a manifest: the fingerprint its run
// read it with, and the file of the fix folder that reads it.
type wanted struct{ fingerprint, by string }

// findFixFolder finds the fix folders among paths and takes their
// manifest and reasons out of the files listed, as left out with why.
func findFixFolder(paths []string, ls *input.Listing) ([]*fixFolder, []LeftOut, error) {
	var out []*fixFolder
	var left []LeftOut
	for _, p := range paths {
		m, err := fixmanifest.Read(p)
		if err != nil {
			return nil, nil, err
		}
		if m == nil {
			continue
		}
		out = append(out, &fixFolder{dir: p, manifest: m, want: map[string]wanted{}})
		own := map[string]string{
			filepath.Join(p, fixmanifest.Name):        fmt.Sprintf("the fix folder's manifest (run %d): not rows", m.Run),
			filepath.Join(p, fixmanifest.ReasonsName): fmt.Sprintf("the fix folder's reasons (run %d): not rows", m.Run),
		}
		ls.Files = slices.DeleteFunc(ls.Files, func(f input.File) bool {
			if why, ok := own[f.Ref]; ok {
				left = append(left, LeftOut{Name: input.Name(f.Ref), Reason: why})
				return true
			}
			return false
		})
	}
	return out, left, nil
}

// addSideFiles adds what the planned files' tasks read beside them that
// the export does not give, from the fix folders' manifests: a joined file
// or a body folder whose role no file of the export fills (given: the side
// files the export's own files give, by role — the folder may hold a copy
// of its own, under any name the profile reads as that), to the files of
// no kind and the folders, where the profile's side files are found; the
// parents' files of a link by name always (names: the folder holds only
// the failed parents, if any; added by addNameFiles once the side files
// are found). Each must still be where the manifest says: one that is gone
// is an error naming it and what to do (R10); one that is there but would
// not be found in its role is checkSideFilesRead's.
func addSideFiles(fixes []*fixFolder, p *profile.Profile, c *classified, folders []input.Folder,
	given []profile.SideFile) ([]input.Folder, []string, error) {
	var notices []string
	for _, fx := range fixes {
		for _, f := range c.files {
			if !strings.HasPrefix(f.Path, fx.dir+string(filepath.Separator)) {
				continue
			}
			m := profile.NewMapper(p, f.Kind, input.Name(f.Path))
			for _, a := range m.SideFilesRead(fx.manifest.SideFiles) {
				base := input.BaseName(a.File)
				switch {
				case fx.want[a.File].by != "":
					continue // added for another file
				case strings.HasPrefix(a.Role, "names:"):
					fx.names = append(fx.names, a)
				case slices.ContainsFunc(given, func(s profile.SideFile) bool { return s.Role == a.Role }):
					continue // the export gives it: the folder's own copy, or another path's
				case a.Format == "folder":
					folders = append(folders, input.Folder{Ref: a.File, Name: strings.ToLower(base)})
					fx.added = append(fx.added, a)
				default:
					c.others = append(c.others, input.File{Ref: a.File, Name: base})
					fx.added = append(fx.added, a)
				}
				if err := input.Stat(a.File); err != nil {
					return nil, nil, &input.Error{Path: f.Path, Reason: fmt.Sprintf(
						"reads %s beside it (%s), which run %d read at %s and the fix folder's manifest names: it is gone (%v); "+
							"copy the export's %s into %s, or import the other kinds with --only",
						base, a.Role, fx.manifest.Run, a.File, err, base, fx.dir)}
				}
				fx.want[a.File] = wanted{fingerprint: a.Fingerprint, by: f.Path}
				notices = append(notices, fmt.Sprintf("%s: read %s beside it from %s, found through the fix folder's manifest (run %d read it there)",
					input.BaseName(f.Path), base, a.File, fx.manifest.Run))
			}
		}
	}
	return folders, notices, nil
}

// checkSideFilesRead refuses a joined file or a body folder that a
// manifest names where this run would not read it in its role (side: the
// side files found): a name the profile does not read as that — a file
// moved or renamed since, the manifest edited. Read otherwise, the join
// would be dropped without a word, and the fixed records imported without
// their links or bodies for good (a created slot is final, R2); it is
// refused before any run exists, as a side file that is gone is.
func checkSideFilesRead(fixes []*fixFolder, p *profile.Profile, side []profile.SideFile) error {
	for _, fx := range fixes {
		for _, a := range fx.added {
			if slices.ContainsFunc(side, func(s profile.SideFile) bool { return s.Role == a.Role && s.File == a.File }) {
				continue
			}
			what, name := p.RoleWords(a.Role)
			as := "as " + name
			if strings.ContainsAny(name, "*?[") {
				as = "under a name matching " + name
			}
			return &input.Error{Path: fx.want[a.File].by, Reason: fmt.Sprintf(
				"the fix folder's manifest names %s as %s (%s), which run %d read beside it; this run would not read it there, "+
					"since its name does not match %s, and the fixed records would be imported without what it gives them, for good "+
					"(a created slot is final); copy it into %s %s, or import the other kinds with --only",
				a.File, what, name, fx.manifest.Run, name, fx.dir, as)}
		}
	}
	return nil
}

// addNameFiles adds to side the parents' files that links by name look
// names up in, from the fix folders' manifests (addSideFiles).
func addNameFiles(fixes []*fixFolder, side []profile.SideFile) []profile.SideFile {
	for _, fx := range fixes {
		for _, a := range fx.names {
			if !slices.ContainsFunc(side, func(s profile.SideFile) bool { return s.Role == a.Role && s.File == a.File }) {
				side = append(side, profile.SideFile{Role: a.Role, File: a.File, Format: a.Format})
			}
		}
	}
	return side
}

// checkSideFiles refuses a side file found through a manifest whose
// content is no longer what the manifest's run read (R10): never used
// silently.
func checkSideFiles(fixes []*fixFolder, side []profile.SideFile) error {
	for _, fx := range fixes {
		for _, a := range side {
			want, ok := fx.want[a.File]
			if !ok || a.Fingerprint == want.fingerprint {
				continue
			}
			return &input.Error{Path: want.by, Reason: fmt.Sprintf(
				"reads %s beside it, which the fix folder's manifest names at %s: it has changed since run %d read it "+
					"(fingerprint then %s, now %s), and a changed file is never read silently; copy the file as it should be read "+
					"into %s, restore it, or import the other kinds with --only",
				input.BaseName(a.File), a.File, fx.manifest.Run, want.fingerprint, a.Fingerprint, fx.dir)}
		}
	}
	return nil
}

// fixNotices are what planning tells of a fix folder: that it is one, and
// which files are not rows.
func fixNotices(fixes []*fixFolder) []string {
	var out []string
	for _, fx := range fixes {
		out = append(out, fmt.Sprintf("%s is a fix folder of run %d (tenant %s, source %s): its %s and %s are not rows, and are not read",
			fx.dir, fx.manifest.Run, fx.manifest.Tenant, fx.manifest.Source, fixmanifest.Name, fixmanifest.ReasonsName))
	}
	return out
}

// fixWarnings are the ways a run reads a fix folder otherwise than the
// run whose failed rows it holds: as another tenant (tenant "": not known,
// as for inspect) or source, with another profile, or a file of it as
// another kind than its rows are (renamed, or another profile's name for
// it). Each may be meant, so it is no refusal; each changes what the rows
// become, so it is a warning that the run's summary and report repeat
// (Options.Warnings), not a notice that scrolls by.
func fixWarnings(fixes []*fixFolder, files []inputFile, p *profile.Profile, tenant, source string) []string {
	var out []string
	for _, fx := range fixes {
		m := fx.manifest
		if tenant != "" && tenant != m.Tenant {
			out = append(out, fmt.Sprintf("%s is a fix folder of run %d of tenant %s, imported as tenant %s: its rows become records of %s, "+
				"and run %d's failed records stay failed for %s; to fix them, pass --tenant %s",
				fx.dir, m.Run, m.Tenant, tenant, tenant, m.Run, m.Tenant, m.Tenant))
		}
		if source != m.Source {
			out = append(out, fmt.Sprintf("%s is a fix folder of run %d of source %s, imported as source %s: the ledger keeps each "+
				"source's records apart, so its rows' links do not find run %d's records (R6) and an id already imported from %s is a "+
				"new record here; to fix run %d's records, pass --source %s",
				fx.dir, m.Run, m.Source, source, m.Run, m.Source, m.Run, m.Source))
		}
		if m.Profile != p.Name {
			again := m.Profile
			if m.ProfileFile != "" {
				again = m.ProfileFile
			}
			out = append(out, fmt.Sprintf("%s is a fix folder of run %d, which read it with the %s profile; this run reads it with the %s "+
				"profile, which may map its columns otherwise: pass --profile %s to read it as run %d did",
				fx.dir, m.Run, m.Profile, p.Name, again, m.Run))
		}
		out = append(out, fx.kindWarnings(files)...)
	}
	return out
}

// kindWarnings are the files of the fix folder that this run reads as
// another kind than the rows the manifest says they hold: one the manifest
// names, read as another kind; one it does not name (renamed), read as a
// kind of which the folder holds no rows. A file renamed within its kind
// reads its rows as they were: no warning.
func (fx *fixFolder) kindWarnings(files []inputFile) []string {
	var out []string
	kinds := map[string]bool{}
	var named []string
	for _, mf := range fx.manifest.Files {
		var plurals []string
		for _, k := range mf.ReadAsKinds() {
			kinds[k] = true
			plurals = append(plurals, ledger.Kind(k).Plural())
		}
		named = append(named, fmt.Sprintf("%s (%s)", mf.Name, strings.Join(plurals, ", ")))
	}
	for _, f := range files {
		if !strings.HasPrefix(f.Path, fx.dir+string(filepath.Separator)) {
			continue
		}
		i := slices.IndexFunc(fx.manifest.Files, func(mf fixmanifest.File) bool { return strings.EqualFold(mf.Name, input.BaseName(f.Path)) })
		switch {
		case i >= 0 && !slices.Contains(fx.manifest.Files[i].ReadAsKinds(), string(f.Kind)):
			out = append(out, fmt.Sprintf("%s holds run %d's failed %s, and this run reads it as %s: its rows import as %s",
				f.Path, fx.manifest.Run, ledger.Kind(fx.manifest.Files[i].Kind).Plural(), f.Kind.Plural(), f.Kind.Plural()))
		case i < 0 && !kinds[string(f.Kind)]:
			out = append(out, fmt.Sprintf("%s is read as %s, a kind of which the fix folder of run %d holds no rows (its manifest names %s): "+
				"a fix file renamed to another kind imports its rows as that kind; give it back its name unless that is what you mean",
				f.Path, f.Kind.Plural(), fx.manifest.Run, strings.Join(named, ", ")))
		}
	}
	return out
}

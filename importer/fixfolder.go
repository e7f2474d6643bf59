package importer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"crmimport/importer/input"
	"crmimport/importer/profile"
)

// A fix folder is what `rejects RUN --as-export` writes (package fixfile):
// a run's failed rows, per input file, under that file's own name and
// header, for a person to correct and import again like any export. Its
// manifest names the run it came from and the side files that run read
// (joined files, parents looked up by name, body folders), so that a run
// over the folder, which holds none of them, reads the same ones — after
// checking that they are still what that run read (R10: a changed file is
// never used silently).

// FixManifestName and FixReasonsName are the two files of a fix folder
// that are not rows of an export: a run over the folder leaves them out,
// saying why, whatever the profile's patterns match.
const (
	FixManifestName = "crmimport-fix.json"
	FixReasonsName  = "reasons.csv"
)

// FixManifestFormat names the manifest's layout.
const FixManifestFormat = "crmimport-fix/1"

// FixManifest is a fix folder's manifest.
type FixManifest struct {
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
	Files []FixFile `json:"files"`
	// SideFiles are what the run's tasks read beside their files, with
	// the fingerprints the run planned them with.
	SideFiles []profile.SideFile `json:"side_files"`
}

// FixFile is a file of a fix folder: its name, kind and rows, and the
// inputs of the run its rows were read from.
type FixFile struct {
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
}

// RowKind is the kind of the failure that row i of the file was written
// from.
func (f FixFile) RowKind(i int) string {
	if i < len(f.Kinds) {
		return f.Kinds[i]
	}
	return f.Kind
}

// ReadFixManifest reads the manifest of a fix folder; nil, nil when dir
// is not a folder holding one.
func ReadFixManifest(dir string) (*FixManifest, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, nil
	}
	name := filepath.Join(dir, FixManifestName)
	b, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &input.Error{Path: name, Reason: err.Error()}
	}
	var m FixManifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, &input.Error{Path: name, Reason: fmt.Sprintf("not a fix folder's manifest (%v): restore it from the folder "+
			"`crmimport rejects RUN --out DIR --as-export` wrote, or remove it to read the folder as a plain export", err)}
	}
	if m.Format != FixManifestFormat {
		return nil, &input.Error{Path: name, Reason: fmt.Sprintf("format %q is not %q: write the folder again with this crmimport's "+
			"`rejects RUN --out DIR --as-export`", m.Format, FixManifestFormat)}
	}
	return &m, nil
}

// fixFolder is a fix folder among the paths of an export: its manifest,
// and the side files planning added from it (their fingerprints as the
// manifest has them).
type fixFolder struct {
	dir      string
	manifest *FixManifest
	want     map[string]wanted  // side file -> what its run read it as
	names    []profile.SideFile // parents' files to look names up in (addNameFiles)
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
		m, err := ReadFixManifest(p)
		if err != nil {
			return nil, nil, err
		}
		if m == nil {
			continue
		}
		out = append(out, &fixFolder{dir: p, manifest: m, want: map[string]wanted{}})
		own := map[string]string{
			filepath.Join(p, FixManifestName): fmt.Sprintf("the fix folder's manifest (run %d): not rows", m.Run),
			filepath.Join(p, FixReasonsName):  fmt.Sprintf("the fix folder's reasons (run %d): not rows", m.Run),
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
// the fix folders do not hold, from their manifests: a joined file or a
// body folder when the folder has none of that name (to the files of no
// kind and the folders, where the profile's side files are found), the
// parents' files of a link by name always (names: the folder holds only
// the failed parents, if any; added by addNameFiles once the side files
// are found). Each must still be where the manifest says: one that is gone
// is an error naming it and what to do (R10).
func addSideFiles(fixes []*fixFolder, p *profile.Profile, c *classified, folders []input.Folder) ([]input.Folder, []string, error) {
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
				case a.Format == "folder":
					if slices.ContainsFunc(folders, func(d input.Folder) bool { return strings.EqualFold(d.Name, base) }) {
						continue
					}
					folders = append(folders, input.Folder{Ref: a.File, Name: strings.ToLower(base)})
				default:
					if slices.ContainsFunc(c.others, func(o input.File) bool { return strings.EqualFold(o.Name, base) }) {
						continue
					}
					c.others = append(c.others, input.File{Ref: a.File, Name: base})
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
// when it is read with another profile than its run's.
func fixNotices(fixes []*fixFolder, p *profile.Profile) []string {
	var out []string
	for _, fx := range fixes {
		out = append(out, fmt.Sprintf("%s is a fix folder of run %d (tenant %s, source %s): its %s and %s are not rows, and are not read",
			fx.dir, fx.manifest.Run, fx.manifest.Tenant, fx.manifest.Source, FixManifestName, FixReasonsName))
		if fx.manifest.Profile != p.Name {
			out = append(out, fmt.Sprintf("%s: a fix folder of run %d, which read it with the %s profile; this run reads it with the %s profile",
				fx.dir, fx.manifest.Run, fx.manifest.Profile, p.Name))
		}
	}
	return out
}

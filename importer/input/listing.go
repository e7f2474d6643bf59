package input

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"crmimport/importer/reader"
)

// Error is a problem with the input found before a run exists (no such
// path, no file matches a kind, a zip bomb): exit 1, and no run row.
type Error struct {
	Path   string
	Reason string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Path, e.Reason) }

// FolderNotRead is why a folder of an export is not read.
const FolderNotRead = "an export's files are read from its top folder"

// Listing is what the paths of an export hold: its files, the folders a
// profile reads files from, and what was left out.
type Listing struct {
	Files   []File
	Folders []Folder
	// Notices say what was not read (other folders).
	Notices []string
	// IgnoredFolders are the folders not read, named as Notices names them
	// (a folder's name, or ZIP!/FOLDER).
	IgnoredFolders []string

	nested []string // archives inside archives, refused
}

// File is a file found in an export.
type File struct {
	Ref  string // the input's name (a file, ZIP!/ENTRY)
	Name string // what a profile's patterns match: the base name
}

// Folder is a folder of an export that a profile reads files from.
type Folder struct {
	Ref  string // a folder on disk, or ZIP!/PREFIX/
	Name string // its name, lower-cased
}

// Want is what listing an export needs of the profile it is read with.
type Want struct {
	// Folders are the names, lower-cased, of the folders the profile reads
	// files from (body files); the export's other folders are not read.
	Folders map[string]bool
	// NotRead says why a file that is the only path given is not one the
	// profile reads, or "".
	NotRead func(path string) string
}

// List finds the files of an export: in folders (but hidden files),
// zips read in place, .gz files and single files. An archive inside an
// archive is refused: crmimport does not open it; a folder inside the
// export that the profile does not read files from is left out, and a
// notice says so. Problems are *Error.
func List(paths []string, want Want, lim Limits) (Listing, error) {
	var ls Listing
	for _, in := range paths {
		if err := ls.add(in, want, lim, len(paths) == 1); err != nil {
			return Listing{}, err
		}
	}
	if len(ls.nested) > 0 {
		return Listing{}, &Error{Path: paths[0], Reason: fmt.Sprintf(
			"holds %d %s inside an archive (%s), which crmimport does not open: extract the outer archive and pass the folder, "+
				"or pass the inner archive itself", len(ls.nested), reader.Plural(len(ls.nested), "archive", "archives"), strings.Join(ls.nested, ", "))}
	}
	if len(ls.IgnoredFolders) > 0 {
		ls.Notices = append(ls.Notices, fmt.Sprintf("ignored the %s %s: %s",
			reader.Plural(len(ls.IgnoredFolders), "folder", "folders"), strings.Join(ls.IgnoredFolders, ", "), FolderNotRead))
	}
	return ls, nil
}

// add lists what one input path holds.
func (ls *Listing) add(in string, want Want, lim Limits, only bool) error {
	st, err := os.Stat(in)
	if errors.Is(err, fs.ErrNotExist) {
		return &Error{Path: in, Reason: "no such file or folder"}
	}
	if err != nil {
		return &Error{Path: in, Reason: err.Error()}
	}
	if !st.IsDir() {
		if why := notRegular(in); why != "" {
			return &Error{Path: in, Reason: why}
		}
		if isZipFile(in, true) {
			return ls.addZip(in, want.Folders, lim)
		}
		if why := want.NotRead(in); why != "" && only {
			return &Error{Path: in, Reason: why}
		}
		ls.Files = append(ls.Files, File{Ref: in, Name: filepath.Base(in)})
		return nil
	}
	entries, err := os.ReadDir(in)
	if err != nil {
		return &Error{Path: in, Reason: err.Error()}
	}
	for _, e := range entries {
		full := filepath.Join(in, e.Name())
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if why := notRegular(full); why != "" {
			return &Error{Path: full, Reason: why}
		}
		if e.IsDir() {
			if want.Folders[strings.ToLower(e.Name())] {
				ls.Folders = append(ls.Folders, Folder{Ref: full, Name: strings.ToLower(e.Name())})
			} else {
				ls.IgnoredFolders = append(ls.IgnoredFolders, e.Name())
			}
			continue
		}
		if isZipFile(full, false) {
			if err := ls.addZip(full, want.Folders, lim); err != nil {
				return err
			}
			continue
		}
		ls.Files = append(ls.Files, File{Ref: full, Name: e.Name()})
	}
	return nil
}

// addZip lists a zip's entries, read in place, with backslashes in their
// names read as folder separators (entryName). An export zipped with its
// folder (every entry under one top folder) is read from inside that
// folder. Entries in other folders are not read (Salesforce's Attachments/
// and Documents/), but for the folders the profile reads files from (Want.Folders); an archive
// inside the zip is refused, and so is a zip holding two entries of one
// name among those it reads: either would leave the other unread.
func (ls *Listing) addZip(zipPath string, folderNames map[string]bool, lim Limits) error {
	zr, err := openZip(zipPath)
	if err != nil {
		return &Error{Path: zipPath, Reason: "cannot be read as a zip: " + unwrapPath(err).Error()}
	}
	defer zr.Close()
	if err := checkZip(filepath.Base(zipPath), &zr.Reader, lim); err != nil {
		return &Error{Path: zipPath, Reason: err.Error()}
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
			if folderNames[low] {
				if !folders[dir] {
					folders[dir] = true
					ls.Folders = append(ls.Folders, Folder{Ref: zipPath + entrySep + prefix + dir + "/", Name: low})
				}
			} else {
				if !ignored[dir] {
					ignored[dir] = true
					ls.IgnoredFolders = append(ls.IgnoredFolders, filepath.Base(zipPath)+entrySep+dir)
				}
				continue
			}
		} else if strings.HasPrefix(path.Base(rel), ".") || strings.HasPrefix(rel, "__MACOSX") {
			continue
		}
		if first := read[name]; first != nil {
			return &Error{Path: zipPath, Reason: sameNameReason(&zr.Reader, first, f, i)}
		}
		read[name] = f
		if strings.Contains(rel, "/") {
			continue // a body file, read by the records that name it
		}
		ref := zipPath + entrySep + name
		if isArchiveName(rel) {
			ls.nested = append(ls.nested, Name(ref))
			continue
		}
		ls.Files = append(ls.Files, File{Ref: ref, Name: path.Base(rel)})
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

// isZipFile: a file on disk that is a zip, by its name or its first bytes.
// A workbook (.xlsx) is a zip too, but a file of the export, read as one.
func isZipFile(p string, byMagic bool) bool {
	if strings.EqualFold(filepath.Ext(p), ".zip") {
		return true
	}
	if !byMagic || strings.EqualFold(filepath.Ext(p), ".xlsx") {
		return false
	}
	f, err := openRegular(p)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 4)
	n, _ := io.ReadFull(f, head)
	return bytes.Equal(head[:n], []byte("PK\x03\x04")) || bytes.Equal(head[:n], []byte("PK\x05\x06"))
}

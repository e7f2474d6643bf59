package input

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// FolderReader reads the files of a folder of an export one by one (the
// body files a profile names): a folder on disk, or a folder of a zip,
// read in place.
type FolderReader struct {
	name    string               // for messages: the input's name
	dir     string               // on disk, or ""
	zip     *zip.ReadCloser      // in a zip, or nil
	entries map[string]*zip.File // in a zip: file name -> entry
}

// OpenFolder opens the folder an input names (a folder on disk, or
// ZIP!/PREFIX/). A zip holding two entries of one name in the folder is
// refused: either would leave the other unread.
func OpenFolder(ref string) (*FolderReader, error) {
	r := parseRef(ref)
	f := &FolderReader{name: Name(ref)}
	if r.entry == "" {
		f.dir = r.path
		return f, nil
	}
	zr, err := openZip(r.path)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot open the zip: %w", filepath.Base(r.path), unwrapPath(err))
	}
	f.zip = zr
	f.entries = map[string]*zip.File{}
	prefix := entryName(r.entry)
	for i, e := range zr.File {
		name := entryName(e.Name)
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		if first := f.entries[name[len(prefix):]]; first != nil {
			zr.Close()
			return nil, fmt.Errorf("%s%s: %s", f.name, name[len(prefix):], sameNameReason(&zr.Reader, first, e, i))
		}
		f.entries[name[len(prefix):]] = e
	}
	return f, nil
}

// OnDisk reports whether the folder is on disk (not in a zip).
func (f *FolderReader) OnDisk() bool { return f.dir != "" }

// Open opens the folder's file named file, or returns nil and no error
// when the folder holds none. A file on disk is opened as a regular file,
// its error the reason alone (the caller names the file); an entry of a
// zip within the default limits, its error naming the entry.
func (f *FolderReader) Open(file string) (io.ReadCloser, error) {
	if f.dir != "" {
		rc, err := openRegular(filepath.Join(f.dir, file))
		switch {
		case errors.Is(err, os.ErrNotExist):
			return nil, nil
		case err != nil:
			return nil, unwrapPath(err)
		}
		return rc, nil
	}
	e := f.entries[file]
	if e == nil {
		return nil, nil
	}
	return openEntry(f.name+file, e, DefaultLimits())
}

// Close lets go of the zip the folder is in.
func (f *FolderReader) Close() error {
	if f.zip != nil {
		return f.zip.Close()
	}
	return nil
}

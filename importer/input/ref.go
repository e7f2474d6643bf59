package input

import (
	"os"
	"path"
	"path/filepath"
	"strings"
)

// An input of a run is a file on disk, a gzip file (NAME.gz, read through
// gzip), or an entry of a zip read in place, never extracted: its name is
// the zip's path, "!/", and the entry's name in the zip
// (/exports/WE_00D5g000001_1.ZIP!/Account.csv). That name is a task's file.
const entrySep = "!/"

// inputRef is an input's name taken apart.
type inputRef struct {
	path  string // the file on disk: the zip, for an entry
	entry string // the entry's name in the zip, or ""
}

// parseRef takes an input's name apart: the first "!/" after which the
// part before is a file on disk separates a zip's path from an entry's
// name (a folder's name may hold "!/" too); with no such file, the first
// "!/" after a name ending in .zip does.
func parseRef(s string) inputRef {
	var fallback inputRef
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], entrySep)
		if j < 0 {
			break
		}
		j += i
		if st, err := os.Stat(s[:j]); err == nil && st.Mode().IsRegular() {
			return inputRef{path: s[:j], entry: s[j+len(entrySep):]}
		}
		if fallback.path == "" && strings.EqualFold(filepath.Ext(s[:j]), ".zip") {
			fallback = inputRef{path: s[:j], entry: s[j+len(entrySep):]}
		}
		i = j + len(entrySep)
	}
	if fallback.path != "" {
		return fallback
	}
	return inputRef{path: s}
}

func (r inputRef) String() string {
	if r.entry == "" {
		return r.path
	}
	return r.path + entrySep + r.entry
}

// Name is how messages, failures and duplicates name an input: the
// file's base name, or the zip's base name and the entry
// (WE_00D_1.ZIP!/Account.csv).
func Name(ref string) string {
	r := parseRef(ref)
	if r.entry == "" {
		return filepath.Base(r.path)
	}
	return filepath.Base(r.path) + entrySep + r.entry
}

// BaseName is an input's name without the folder or zip it is in.
func BaseName(ref string) string {
	if r := parseRef(ref); r.entry != "" {
		return path.Base(r.entry)
	}
	return filepath.Base(ref)
}

// Stat says why the file on disk that holds an input (the zip, for an
// entry) cannot be found, without its path; nil when it is there.
func Stat(ref string) error {
	if _, err := os.Stat(parseRef(ref).path); err != nil {
		return unwrapPath(err)
	}
	return nil
}

// Size is the size progress measures an input against: a file's
// bytes (a gzip's compressed bytes), an entry's uncompressed bytes; 0 when
// it cannot be told.
func Size(ref string) int64 {
	r := parseRef(ref)
	if r.entry == "" {
		st, err := os.Stat(r.path)
		if err != nil {
			return 0
		}
		return st.Size()
	}
	zr, err := openZip(r.path)
	if err != nil {
		return 0
	}
	defer zr.Close()
	if f, err := findEntry(&zr.Reader, ref); err == nil {
		return int64(f.UncompressedSize64)
	}
	return 0
}

package importer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"crmimport/ledger"
)

// InputError is a problem with the input found before a run exists (no
// such path, no file matches a kind): exit 1, and no run row.
type InputError struct {
	Path   string
	Reason string
}

func (e *InputError) Error() string { return fmt.Sprintf("%s: %s", e.Path, e.Reason) }

// inputFile is one file of an export, planned as one task.
type inputFile struct {
	Path     string
	Kind     ledger.Kind
	Format   Format
	Encoding string
	Info     FileInfo
}

// discover finds the files of an export (a folder or one file), keeps those
// of the kinds asked for, and fingerprints them. notices say what it
// ignored and which files it reads as Windows-1252.
func discover(path string, p *Profile, only []ledger.Kind, encoding string) ([]inputFile, []string, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, &InputError{Path: path, Reason: "no such file or folder"}
	}
	if err != nil {
		return nil, nil, &InputError{Path: path, Reason: err.Error()}
	}
	var candidates, ignored []string
	var notices []string
	if st.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, nil, &InputError{Path: path, Reason: err.Error()}
		}
		for _, e := range entries {
			full := filepath.Join(path, e.Name())
			if strings.HasPrefix(e.Name(), ".") {
				continue
			}
			if e.IsDir() {
				notices = append(notices, fmt.Sprintf("ignored the folder %s: an export's files are read from its top folder", e.Name()))
				continue
			}
			if _, _, ok := p.FileKind(e.Name()); !ok {
				ignored = append(ignored, e.Name())
				continue
			}
			candidates = append(candidates, full)
		}
		if len(ignored) > 0 {
			notices = append(notices, fmt.Sprintf("ignored %s not of the %s profile: %s (it reads %s)",
				plural(len(ignored), "file"), p.Name, strings.Join(ignored, ", "), p.ExpectedFiles()))
		}
	} else {
		if isZip(path) {
			return nil, nil, &InputError{Path: path, Reason: "is a zip archive; reading zips in place is not supported yet: unzip it and pass the folder"}
		}
		if _, _, ok := p.FileKind(path); !ok {
			return nil, nil, &InputError{Path: path, Reason: fmt.Sprintf("is not a file of the %s profile: expected one of %s", p.Name, p.ExpectedFiles())}
		}
		candidates = []string{path}
	}

	want := map[ledger.Kind]bool{}
	for _, k := range only {
		want[k] = true
	}
	var files []inputFile
	have := map[ledger.Kind]bool{}
	for _, c := range candidates {
		k, f, _ := p.FileKind(c)
		if len(want) > 0 && !want[k] {
			continue
		}
		have[k] = true
		files = append(files, inputFile{Path: c, Kind: k, Format: f})
	}
	for _, k := range only {
		if !have[k] {
			notices = append(notices, fmt.Sprintf("--only %s: no %s file in %s", k.Plural(), k.Plural(), path))
		}
	}
	if len(files) == 0 {
		reason := fmt.Sprintf("no file matches a kind of the %s profile (expected %s)", p.Name, p.ExpectedFiles())
		if len(only) > 0 {
			reason = "no file matches the kinds asked for with --only"
		}
		return nil, nil, &InputError{Path: path, Reason: reason}
	}
	sort.SliceStable(files, func(i, j int) bool { return filepath.Base(files[i].Path) < filepath.Base(files[j].Path) })
	for i := range files {
		f := &files[i]
		info, err := inspectFile(f.Path)
		if err != nil {
			return nil, nil, &InputError{Path: f.Path, Reason: err.Error()}
		}
		f.Info = info
		switch {
		case encoding != "":
			f.Encoding = encoding
		case bytes.HasPrefix(info.Head, []byte{0xFF, 0xFE}) || bytes.HasPrefix(info.Head, []byte{0xFE, 0xFF}):
			f.Encoding = "utf-16"
			notices = append(notices, fmt.Sprintf("%s starts with a UTF-16 byte-order mark: reading it as UTF-16",
				filepath.Base(f.Path)))
		case info.ValidUTF8 || notText(info.Head):
			// An archive or binary data is no text at all: the reader
			// says what it is when its task runs.
			f.Encoding = "utf-8"
		default:
			f.Encoding = "windows-1252"
			notices = append(notices, fmt.Sprintf("%s is not valid UTF-8: reading it as Windows-1252 (choose another with --encoding)",
				filepath.Base(f.Path)))
		}
	}
	return files, notices, nil
}

func inspectFile(path string) (FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return FileInfo{}, err
	}
	defer f.Close()
	return Inspect(f)
}

func isZip(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 4)
	n, _ := io.ReadFull(f, head)
	return bytes.Equal(head[:n], []byte("PK\x03\x04")) || strings.EqualFold(filepath.Ext(path), ".zip")
}

// notText tells a file whose first bytes show it is an archive or binary
// data, which no text encoding would make readable.
func notText(head []byte) bool {
	return bytes.HasPrefix(head, []byte("PK\x03\x04")) || bytes.HasPrefix(head, []byte("PK\x05\x06")) ||
		bytes.HasPrefix(head, []byte{0x1f, 0x8b}) || bytes.IndexByte(head, 0) >= 0
}

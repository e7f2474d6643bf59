package input

import (
	"archive/zip"
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"crmimport/bytesize"
	"crmimport/importer/reader"
)

// isGzipName: a file read through gzip.
func isGzipName(name string) bool { return strings.EqualFold(path.Ext(name), ".gz") }

// archiveExts are names of archives that crmimport does not open inside
// another archive.
var archiveExts = map[string]bool{".zip": true, ".gz": true, ".tgz": true, ".tar": true, ".7z": true, ".rar": true,
	".bz2": true, ".xz": true, ".zst": true}

func isArchiveName(name string) bool { return archiveExts[strings.ToLower(path.Ext(name))] }

// Limits bound what a zip or gzip may uncompress to, against zip bombs:
// an entry, all the entries of one zip, and the ratio of an entry's size
// to its compressed size (text compresses well, but not a thousandfold:
// that is a bomb).
type Limits struct {
	Entry int64
	Total int64
	Ratio int64
}

// ratioFloor: entries smaller than this are not judged by their ratio (a
// header-only CSV compresses a hundredfold and harms nobody).
const ratioFloor = 1 << 20

// DefaultLimits are the limits of a run: 16 GiB an entry, 64 GiB a zip,
// 200:1.
func DefaultLimits() Limits {
	return Limits{Entry: 16 << 30, Total: 64 << 30, Ratio: 200}
}

// checkZip refuses a zip whose entries together would uncompress to more
// than the limit.
func checkZip(name string, zr *zip.Reader, lim Limits) error {
	var total uint64
	for _, f := range zr.File {
		total += f.UncompressedSize64
		if total > uint64(lim.Total) {
			return fmt.Errorf("%s: its entries would uncompress to more than %s (the limit for one zip): refused as a possible zip bomb; "+
				"if the export really is that large, extract it and pass the folder", name, bytesize.Format(lim.Total))
		}
	}
	return nil
}

// checkEntry refuses an entry that is too large, or compressed more than
// text ever is.
func checkEntry(name string, f *zip.File, lim Limits) error {
	size := f.UncompressedSize64
	switch {
	case size > uint64(lim.Entry):
		return fmt.Errorf("%s: uncompresses to %s, more than the limit of %s for one entry: refused as a possible zip bomb",
			name, bytesize.Format(int64(size)), bytesize.Format(lim.Entry))
	case size > ratioFloor && size > uint64(lim.Ratio)*max(f.CompressedSize64, 1):
		return fmt.Errorf("%s: uncompresses to %s from %s (%d:1, over the limit of %d:1): refused as a possible zip bomb",
			name, bytesize.Format(int64(size)), bytesize.Format(int64(f.CompressedSize64)), size/max(f.CompressedSize64, 1), lim.Ratio)
	}
	return nil
}

// entryName is an entry's name as crmimport reads it: with backslashes as
// folder separators. The zip format says "/", but older Windows tools write
// export\contacts.csv, which is the file contacts.csv in the folder export.
func entryName(name string) string { return strings.ReplaceAll(name, `\`, "/") }

// findEntry returns the entry named name (backslashes read as slashes), or
// an error naming the input when there is none, or more than one: a zip
// may hold two entries of one name, and reading either would leave the
// other unread.
func findEntry(zr *zip.Reader, ref string) (*zip.File, error) {
	want := entryName(parseRef(ref).entry)
	var found *zip.File
	for i, f := range zr.File {
		if entryName(f.Name) != want {
			continue
		}
		if found != nil {
			return nil, fmt.Errorf("%s: %s", Name(ref), sameNameReason(zr, found, f, i))
		}
		found = f
	}
	if found == nil {
		return nil, fmt.Errorf("%s: no such entry in the zip", Name(ref))
	}
	return found, nil
}

// sameNameReason says that a zip holds entries a and b (the i-th) of one
// name, and what to do.
func sameNameReason(zr *zip.Reader, a, b *zip.File, i int) string {
	first := 0
	for j, f := range zr.File {
		if f == a {
			first = j
			break
		}
	}
	names := fmt.Sprintf("%q", a.Name)
	if a.Name != b.Name {
		names = fmt.Sprintf("%q and %q", a.Name, b.Name)
	}
	return fmt.Sprintf("the zip holds two entries named %s (entries %d and %d of %d), and crmimport cannot tell which one is the export's: "+
		"extract the zip, keep the right file, and pass the folder (or zip it again with one entry of that name)",
		names, first+1, i+1, len(zr.File))
}

// openEntry opens a zip's entry for reading, named name in errors: an
// encrypted entry is refused, saying so, and an entry over the limits.
func openEntry(name string, f *zip.File, lim Limits) (io.ReadCloser, error) {
	if f.Flags&0x1 != 0 {
		return nil, fmt.Errorf("%s: is encrypted (the zip is password-protected), and crmimport cannot decrypt it: "+
			"extract the zip with its password and pass the folder, or zip the files again without one", name)
	}
	if err := checkEntry(name, f, lim); err != nil {
		return nil, err
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return rc, nil
}

// Opened is an input open for reading.
type Opened struct {
	io.Reader
	// At reads a workbook in place (OpenAt), where Reader is nil.
	At io.ReaderAt
	// Size is what progress measures against: the file's bytes (the
	// entry's, uncompressed).
	Size int64
	// Raw is what progress counts: the bytes of Size read so far.
	Raw     *reader.CountingReader
	closers []io.Closer
}

// Close closes what the input was read through.
func (o *Opened) Close() error {
	var errs []error
	for i := len(o.closers) - 1; i >= 0; i-- {
		errs = append(errs, o.closers[i].Close())
	}
	return errors.Join(errs...)
}

// Open opens an input for reading: a file as it is, a .gz through gzip, a
// zip's entry in place; zips and gzips within the limits. Errors name the
// input.
func Open(ref string, lim Limits) (*Opened, error) {
	r := parseRef(ref)
	name := Name(ref)
	if r.entry != "" {
		zr, err := openZip(r.path)
		if err != nil {
			return nil, fmt.Errorf("%s: cannot open the zip: %w", filepath.Base(r.path), unwrapPath(err))
		}
		if err := checkZip(filepath.Base(r.path), &zr.Reader, lim); err != nil {
			zr.Close()
			return nil, err
		}
		f, err := findEntry(&zr.Reader, ref)
		if err != nil {
			zr.Close()
			return nil, err
		}
		rc, err := openEntry(name, f, lim)
		if err != nil {
			zr.Close()
			return nil, err
		}
		raw := reader.NewCountingReader(rc)
		return &Opened{Reader: raw, Size: int64(f.UncompressedSize64), Raw: raw, closers: []io.Closer{zr, rc}}, nil
	}
	f, size, err := openSized(r.path, name)
	if err != nil {
		return nil, err
	}
	raw := reader.NewCountingReader(f)
	in := &Opened{Reader: raw, Size: size, Raw: raw, closers: []io.Closer{f}}
	if isGzipName(r.path) {
		gz, err := gzip.NewReader(bufio.NewReaderSize(raw, 64<<10))
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: not a gzip file (%v)", name, err)
		}
		in.Reader = &bombGuard{r: gz, raw: raw, name: name, lim: lim}
		in.closers = append(in.closers, gz)
	}
	return in, nil
}

// openSized opens the regular file at p, named name in errors, and tells
// its size.
func openSized(p, name string) (*os.File, int64, error) {
	f, err := openRegular(p)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: cannot open: %w", name, unwrapPath(err))
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("%s: %w", name, err)
	}
	return f, st.Size(), nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// bombGuard bounds what a gzip stream uncompresses to: the entry limit,
// and the ratio to the compressed bytes read so far.
type bombGuard struct {
	r    io.Reader
	raw  *reader.CountingReader
	n    int64
	name string
	lim  Limits
}

func (g *bombGuard) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	g.n += int64(n)
	switch {
	case g.n > g.lim.Entry:
		return n, fmt.Errorf("%s: uncompresses to more than %s, the limit for one file: refused as a possible gzip bomb", g.name, bytesize.Format(g.lim.Entry))
	case g.n > ratioFloor && g.n > g.lim.Ratio*max(g.raw.BytesRead(), 1):
		return n, fmt.Errorf("%s: uncompresses to more than %d times its size (over the limit of %d:1): refused as a possible gzip bomb",
			g.name, g.n/max(g.raw.BytesRead(), 1), g.lim.Ratio)
	}
	return n, err
}

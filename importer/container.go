package importer

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"crmimport/importer/reader"
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

// refName is how messages, failures and duplicates name an input: the
// file's base name, or the zip's base name and the entry
// (WE_00D_1.ZIP!/Account.csv).
func refName(s string) string {
	r := parseRef(s)
	if r.entry == "" {
		return filepath.Base(r.path)
	}
	return filepath.Base(r.path) + entrySep + r.entry
}

// InputName is how an input is named in messages: a file's base name, or
// a zip's base name and the entry (WE_00D_1.ZIP!/Account.csv).
func InputName(ref string) string { return refName(ref) }

// isGzipName: a file read through gzip.
func isGzipName(name string) bool { return strings.EqualFold(path.Ext(name), ".gz") }

// archiveExts are names of archives that crmimport does not open inside
// another archive.
var archiveExts = map[string]bool{".zip": true, ".gz": true, ".tgz": true, ".tar": true, ".7z": true, ".rar": true,
	".bz2": true, ".xz": true, ".zst": true}

func isArchiveName(name string) bool { return archiveExts[strings.ToLower(path.Ext(name))] }

// archiveLimits bound what a zip or gzip may uncompress to, against zip
// bombs: an entry, all the entries of one zip, and the ratio of an entry's
// size to its compressed size (text compresses well, but not a
// thousandfold: that is a bomb).
type archiveLimits struct {
	entry int64
	total int64
	ratio int64
}

// ratioFloor: entries smaller than this are not judged by their ratio (a
// header-only CSV compresses a hundredfold and harms nobody).
const ratioFloor = 1 << 20

func defaultLimits() archiveLimits {
	return archiveLimits{entry: 16 << 30, total: 64 << 30, ratio: 200}
}

// checkZip refuses a zip whose entries together would uncompress to more
// than the limit.
func checkZip(name string, zr *zip.Reader, lim archiveLimits) error {
	var total uint64
	for _, f := range zr.File {
		total += f.UncompressedSize64
		if total > uint64(lim.total) {
			return fmt.Errorf("%s: its entries would uncompress to more than %s (the limit for one zip): refused as a possible zip bomb; "+
				"if the export really is that large, extract it and pass the folder", name, byteSize(lim.total))
		}
	}
	return nil
}

// checkEntry refuses an entry that is too large, or compressed more than
// text ever is.
func checkEntry(name string, f *zip.File, lim archiveLimits) error {
	size := f.UncompressedSize64
	switch {
	case size > uint64(lim.entry):
		return fmt.Errorf("%s: uncompresses to %s, more than the limit of %s for one entry: refused as a possible zip bomb",
			name, byteSize(int64(size)), byteSize(lim.entry))
	case size > ratioFloor && size > uint64(lim.ratio)*max(f.CompressedSize64, 1):
		return fmt.Errorf("%s: uncompresses to %s from %s (%d:1, over the limit of %d:1): refused as a possible zip bomb",
			name, byteSize(int64(size)), byteSize(int64(f.CompressedSize64)), size/max(f.CompressedSize64, 1), lim.ratio)
	}
	return nil
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
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
			return nil, fmt.Errorf("%s: %s", refName(ref), sameNameReason(zr, found, f, i))
		}
		found = f
	}
	if found == nil {
		return nil, fmt.Errorf("%s: no such entry in the zip", refName(ref))
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
func openEntry(name string, f *zip.File, lim archiveLimits) (io.ReadCloser, error) {
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

// openedInput is an input open for reading.
type openedInput struct {
	io.Reader
	size    int64                  // what progress measures against: the file's bytes (the entry's, uncompressed)
	raw     *reader.CountingReader // what progress counts: bytes of size read so far
	closers []io.Closer
}

func (o *openedInput) Close() error {
	var errs []error
	for i := len(o.closers) - 1; i >= 0; i-- {
		errs = append(errs, o.closers[i].Close())
	}
	return errors.Join(errs...)
}

// openInput opens an input for reading: a file as it is, a .gz through
// gzip, a zip's entry in place; zips and gzips within the limits. Errors
// name the input.
func openInput(ref string, lim archiveLimits) (*openedInput, error) {
	r := parseRef(ref)
	name := refName(ref)
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
		return &openedInput{Reader: raw, size: int64(f.UncompressedSize64), raw: raw, closers: []io.Closer{zr, rc}}, nil
	}
	f, err := openRegular(r.path)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot open: %w", name, unwrapPath(err))
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	raw := reader.NewCountingReader(f)
	in := &openedInput{Reader: raw, size: st.Size(), raw: raw, closers: []io.Closer{f}}
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
	lim  archiveLimits
}

func (g *bombGuard) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	g.n += int64(n)
	switch {
	case g.n > g.lim.entry:
		return n, fmt.Errorf("%s: uncompresses to more than %s, the limit for one file: refused as a possible gzip bomb", g.name, byteSize(g.lim.entry))
	case g.n > ratioFloor && g.n > g.lim.ratio*max(g.raw.BytesRead(), 1):
		return n, fmt.Errorf("%s: uncompresses to more than %d times its size (over the limit of %d:1): refused as a possible gzip bomb",
			g.name, g.n/max(g.raw.BytesRead(), 1), g.lim.ratio)
	}
	return n, err
}

// inspectInput reads an input once, as planning does: its fingerprint
// (R10), the evidence of its encoding and its first bytes. A zip entry's
// fingerprint is the zip's own CRC-32 and size of it, which resume checks
// without reading the entry; a gzip's is that of its compressed bytes. A
// stop (ctx) ends the read.
func inspectInput(ctx context.Context, ref string, lim archiveLimits) (FileInfo, error) {
	in, err := openInput(ref, lim)
	if err != nil {
		return FileInfo{}, err
	}
	defer in.Close()
	info, err := Inspect(stopReader{ctx: ctx, r: in})
	if err != nil {
		if ctx.Err() != nil {
			return FileInfo{}, ctx.Err()
		}
		return FileInfo{}, fmt.Errorf("%s: %w", refName(ref), err)
	}
	if r := parseRef(ref); r.entry == "" && !isGzipName(r.path) {
		return info, nil // the bytes read are the file's own: so is the fingerprint
	}
	fp, err := fingerprint(ctx, ref, lim)
	if err != nil {
		return FileInfo{}, err
	}
	info.Fingerprint = fp
	return info, nil
}

// fingerprint is an input's fingerprint (R10): for a file or a gzip, the
// CRC-32C and size of its bytes; for a zip entry, "zip:" and the CRC-32
// and size the zip's directory records for it.
func fingerprint(ctx context.Context, ref string, lim archiveLimits) (string, error) {
	r := parseRef(ref)
	if r.entry == "" {
		f, err := openRegular(r.path)
		if err != nil {
			return "", fmt.Errorf("%s: cannot open: %w", refName(ref), unwrapPath(err))
		}
		defer f.Close()
		info, err := Inspect(stopReader{ctx: ctx, r: f})
		if err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			return "", fmt.Errorf("%s: %w", refName(ref), err)
		}
		return info.Fingerprint, nil
	}
	zr, err := openZip(r.path)
	if err != nil {
		return "", fmt.Errorf("%s: cannot open the zip: %w", filepath.Base(r.path), unwrapPath(err))
	}
	defer zr.Close()
	f, err := findEntry(&zr.Reader, ref)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("zip:crc32:%08x:%d", f.CRC32, f.UncompressedSize64), nil
}

// InputSize is the size progress measures an input against: a file's
// bytes (a gzip's compressed bytes), an entry's uncompressed bytes; 0 when
// it cannot be told.
func InputSize(ref string) int64 {
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

// folderFingerprint fingerprints a folder of an export read file by file
// (Salesforce's ContentVersion/ bodies): in a zip, from the directory's
// names, CRC-32s and sizes; on disk, from the names and sizes (reading every
// attachment of an export to plan a run would cost more than the run).
func folderFingerprint(ref string) (string, error) {
	r := parseRef(ref)
	var lines []string
	if r.entry != "" {
		zr, err := openZip(r.path)
		if err != nil {
			return "", fmt.Errorf("%s: cannot open the zip: %w", filepath.Base(r.path), unwrapPath(err))
		}
		defer zr.Close()
		prefix := entryName(r.entry)
		for _, f := range zr.File {
			if name := entryName(f.Name); strings.HasPrefix(name, prefix) && !strings.HasSuffix(name, "/") {
				lines = append(lines, fmt.Sprintf("%s\x00%08x\x00%d", name[len(prefix):], f.CRC32, f.UncompressedSize64))
			}
		}
	} else {
		entries, err := os.ReadDir(r.path)
		if err != nil {
			return "", fmt.Errorf("%s: %w", filepath.Base(r.path), unwrapPath(err))
		}
		for _, e := range entries {
			if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
				lines = append(lines, fmt.Sprintf("%s\x00%d", e.Name(), info.Size()))
			}
		}
	}
	sort.Strings(lines)
	crc := crc32.Checksum([]byte(strings.Join(lines, "\n")), castagnoli)
	return fmt.Sprintf("files:crc32c:%08x:%d", crc, len(lines)), nil
}

// isZipFile: a file on disk that is a zip, by its name or its first bytes.
func isZipFile(p string, byMagic bool) bool {
	if strings.EqualFold(filepath.Ext(p), ".zip") {
		return true
	}
	if !byMagic {
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

package input

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"crmimport/importer/reader"
)

// FileInfo is what planning learns about a file in one streaming pass.
type FileInfo struct {
	Size int64
	// Fingerprint is "crc32c:%08x:%d": the CRC-32C (Castagnoli) of the raw
	// bytes, and the size.
	Fingerprint string
	// ValidUTF8 reports whether every byte sequence is valid UTF-8.
	ValidUTF8 bool
	// Text is the evidence of the file's encoding (reader.ChooseEncoding).
	Text reader.TextEvidence
	// Head is the file's first bytes (up to 4 KiB), to tell what it is.
	Head []byte
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Inspect reads r to its end in constant memory and returns its size,
// fingerprint, the evidence of its encoding and its first bytes.
func Inspect(r io.Reader) (FileInfo, error) {
	var (
		size int64
		crc  uint32
		ev   = reader.NewEvidenceScanner()
		head []byte
		keep int // bytes at the start of buf carried over: a rune cut by the end of the last read
	)
	buf := make([]byte, 64<<10+utf8.UTFMax)
	for {
		n, err := r.Read(buf[keep : 64<<10+keep])
		eof := errors.Is(err, io.EOF)
		if err != nil && !eof {
			return FileInfo{}, fmt.Errorf("inspect: read after %d bytes: %w", size+int64(n), err)
		}
		if n > 0 {
			fresh := buf[keep : keep+n]
			size += int64(n)
			crc = crc32.Update(crc, castagnoli, fresh)
			if len(head) < reader.SniffSize {
				head = append(head, fresh[:min(n, reader.SniffSize-len(head))]...)
			}
		}
		data := buf[:keep+n]
		used := ev.Scan(data, eof)
		keep = copy(buf, data[used:])
		if eof {
			break
		}
	}
	return FileInfo{
		Size:        size,
		Fingerprint: fmt.Sprintf("crc32c:%08x:%d", crc, size),
		ValidUTF8:   ev.Evidence().Invalid == 0,
		Text:        ev.Evidence(),
		Head:        head,
	}, nil
}

// InspectRef reads an input once, as planning does: its fingerprint
// (R10), the evidence of its encoding and its first bytes. A zip entry's
// fingerprint is the zip's own CRC-32 and size of it, which resume checks
// without reading the entry; a gzip's is that of its compressed bytes. A
// stop (ctx) ends the read.
func InspectRef(ctx context.Context, ref string, lim Limits) (FileInfo, error) {
	in, err := Open(ref, lim)
	if err != nil {
		return FileInfo{}, err
	}
	defer in.Close()
	info, err := Inspect(stopReader{ctx: ctx, r: in})
	if err != nil {
		if ctx.Err() != nil {
			return FileInfo{}, ctx.Err()
		}
		return FileInfo{}, fmt.Errorf("%s: %w", Name(ref), err)
	}
	if r := parseRef(ref); r.entry == "" && !isGzipName(r.path) {
		return info, nil // the bytes read are the file's own: so is the fingerprint
	}
	fp, err := Fingerprint(ctx, ref, lim)
	if err != nil {
		return FileInfo{}, err
	}
	info.Fingerprint = fp
	return info, nil
}

// Fingerprint is an input's fingerprint (R10): for a file or a gzip, the
// CRC-32C and size of its bytes; for a zip entry, "zip:" and the CRC-32
// and size the zip's directory records for it.
func Fingerprint(ctx context.Context, ref string, lim Limits) (string, error) {
	r := parseRef(ref)
	if r.entry == "" {
		f, err := openRegular(r.path)
		if err != nil {
			return "", fmt.Errorf("%s: cannot open: %w", Name(ref), unwrapPath(err))
		}
		defer f.Close()
		info, err := Inspect(stopReader{ctx: ctx, r: f})
		if err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			return "", fmt.Errorf("%s: %w", Name(ref), err)
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

// FolderFingerprint fingerprints a folder of an export read file by file
// (Salesforce's ContentVersion/ bodies): in a zip, from the directory's
// names, CRC-32s and sizes; on disk, from the names and sizes (reading every
// attachment of an export to plan a run would cost more than the run).
func FolderFingerprint(ref string) (string, error) {
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

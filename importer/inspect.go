package importer

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
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
		ValidUTF8:   ev.Evidence().Invalid < 0,
		Text:        ev.Evidence(),
		Head:        head,
	}, nil
}

package importer

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"unicode/utf8"
)

// FileInfo is what planning learns about a file in one streaming pass.
type FileInfo struct {
	Size int64
	// Fingerprint is "crc32c:%08x:%d": the CRC-32C (Castagnoli) of the raw
	// bytes, and the size.
	Fingerprint string
	// ValidUTF8 reports whether every byte sequence is valid UTF-8.
	ValidUTF8 bool
	// Head is the file's first bytes (up to 4 KiB), to tell what it is.
	Head []byte
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Inspect reads r to its end in constant memory and returns its size,
// fingerprint and whether it is valid UTF-8.
func Inspect(r io.Reader) (FileInfo, error) {
	var (
		size  int64
		crc   uint32
		check utf8Checker
		head  []byte
	)
	buf := make([]byte, 64<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			size += int64(n)
			crc = crc32.Update(crc, castagnoli, buf[:n])
			check.write(buf[:n])
			if len(head) < sniffSize {
				head = append(head, buf[:min(n, sniffSize-len(head))]...)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return FileInfo{}, fmt.Errorf("inspect: read after %d bytes: %w", size, err)
		}
	}
	return FileInfo{
		Size:        size,
		Fingerprint: fmt.Sprintf("crc32c:%08x:%d", crc, size),
		ValidUTF8:   check.valid(),
		Head:        head,
	}, nil
}

// utf8Checker validates UTF-8 written to it in pieces of any size: a rune
// cut by the end of one piece is completed with the start of the next.
type utf8Checker struct {
	bad   bool
	carry [utf8.UTFMax]byte // the start of a rune cut by the end of the last piece
	n     int
}

func (c *utf8Checker) write(p []byte) {
	if c.bad {
		return
	}
	if c.n > 0 {
		for len(p) > 0 && !utf8.FullRune(c.carry[:c.n]) {
			c.carry[c.n] = p[0]
			c.n++
			p = p[1:]
		}
		if !utf8.FullRune(c.carry[:c.n]) {
			return // still cut: wait for the next piece
		}
		if r, size := utf8.DecodeRune(c.carry[:c.n]); (r == utf8.RuneError && size <= 1) || size != c.n {
			c.bad = true
			return
		}
		c.n = 0
	}
	// Keep back a rune start at the end that the piece does not complete.
	tail := 0
	for k := 1; k <= utf8.UTFMax-1 && k <= len(p); k++ {
		if utf8.RuneStart(p[len(p)-k]) {
			if !utf8.FullRune(p[len(p)-k:]) {
				tail = k
			}
			break
		}
	}
	if !utf8.Valid(p[:len(p)-tail]) {
		c.bad = true
		return
	}
	c.n = copy(c.carry[:], p[len(p)-tail:])
}

// valid reports whether everything written was valid UTF-8, with no rune
// left cut at the end.
func (c *utf8Checker) valid() bool { return !c.bad && c.n == 0 }

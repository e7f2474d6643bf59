package importer

import (
	"encoding/binary"
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
	// Text is the evidence of the file's encoding (chooseEncoding).
	Text TextEvidence
	// Head is the file's first bytes (up to 4 KiB), to tell what it is.
	Head []byte
}

// TextEvidence is what a file's bytes say of its encoding, gathered in
// the pass that fingerprints it: whether it holds UTF-8 beyond ASCII,
// where the first byte lies that UTF-8 cannot read, and where the first
// that Windows-1252 leaves undefined. Offsets are from the start of the
// file; -1 means none.
type TextEvidence struct {
	// MultiByte: at least one valid multi-byte UTF-8 sequence.
	MultiByte bool
	// Invalid is the offset of the first byte that is not UTF-8. Once a
	// multi-byte sequence and an invalid byte are both seen, the file is
	// UTF-8 whatever follows, and the scan stops.
	Invalid int64
	// Undefined is the offset of the first byte above 0x7F that
	// Windows-1252 does not define (0x81, 0x8D, 0x8F, 0x90, 0x9D), looked
	// for until a multi-byte sequence is seen.
	Undefined int64
	// UndefinedByte is the byte at Undefined, and InvalidByte the one at
	// Invalid.
	UndefinedByte, InvalidByte byte
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Inspect reads r to its end in constant memory and returns its size,
// fingerprint, the evidence of its encoding and its first bytes.
func Inspect(r io.Reader) (FileInfo, error) {
	var (
		size int64
		crc  uint32
		ev   = newEvidence()
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
			if len(head) < sniffSize {
				head = append(head, fresh[:min(n, sniffSize-len(head))]...)
			}
		}
		data := buf[:keep+n]
		used := ev.scan(data, eof)
		keep = copy(buf, data[used:])
		if eof {
			break
		}
	}
	return FileInfo{
		Size:        size,
		Fingerprint: fmt.Sprintf("crc32c:%08x:%d", crc, size),
		ValidUTF8:   ev.Invalid < 0,
		Text:        ev.TextEvidence,
		Head:        head,
	}, nil
}

// evidence scans a file piece by piece for its TextEvidence.
type evidence struct {
	TextEvidence
	off int64 // offset of the next piece
}

func newEvidence() *evidence {
	return &evidence{TextEvidence: TextEvidence{Invalid: -1, Undefined: -1}}
}

// scan reads p, the bytes at e.off, and returns how many it has taken: all
// but a rune start at the end that the next piece may complete (none at
// the end of the file, final).
func (e *evidence) scan(p []byte, final bool) int {
	used := len(p)
	if !final {
		used = len(p) - cutRune(p)
	}
	e.scanPiece(p[:used])
	e.off += int64(used)
	return used
}

func (e *evidence) scanPiece(p []byte) {
	switch {
	case e.MultiByte && e.Invalid >= 0:
		return // UTF-8, with bytes that are not: nothing left to learn
	case e.MultiByte || e.Invalid < 0:
		// Valid so far: the fast path holds as long as the piece is valid.
		if utf8.Valid(p) {
			if !e.MultiByte && nextHigh(p) >= 0 {
				e.MultiByte = true
			}
			return
		}
	}
	for i := 0; i < len(p); {
		j := nextHigh(p[i:])
		if j < 0 {
			return
		}
		i += j
		r, size := utf8.DecodeRune(p[i:])
		if r != utf8.RuneError || size > 1 {
			e.MultiByte = true
			if e.Invalid >= 0 {
				return
			}
			i += size
			continue
		}
		if e.Invalid < 0 {
			e.Invalid, e.InvalidByte = e.off+int64(i), p[i]
			if e.MultiByte {
				return
			}
		}
		if e.Undefined < 0 && undefinedIn1252(p[i]) {
			e.Undefined, e.UndefinedByte = e.off+int64(i), p[i]
		}
		i++
	}
}

// cutRune is how many bytes at the end of p start a rune that p does not
// complete (0 to 3).
func cutRune(p []byte) int {
	for k := 1; k <= utf8.UTFMax-1 && k <= len(p); k++ {
		if utf8.RuneStart(p[len(p)-k]) {
			if !utf8.FullRune(p[len(p)-k:]) {
				return k
			}
			return 0
		}
	}
	return 0
}

// nextHigh is the index of the first byte of p above 0x7F, or -1.
func nextHigh(p []byte) int {
	i := 0
	for ; i+8 <= len(p); i += 8 {
		if binary.LittleEndian.Uint64(p[i:])&0x8080808080808080 != 0 {
			break
		}
	}
	for ; i < len(p); i++ {
		if p[i] >= 0x80 {
			return i
		}
	}
	return -1
}

// undefinedIn1252 reports the five bytes that Windows-1252 leaves
// undefined: text in it never holds them.
func undefinedIn1252(b byte) bool {
	return b == 0x81 || b == 0x8D || b == 0x8F || b == 0x90 || b == 0x9D
}

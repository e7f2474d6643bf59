package reader

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/unicode"
)

// textEncoding is a resolved ReadOptions.Encoding.
type textEncoding struct {
	enc             encoding.Encoding // nil: UTF-8, read as is
	isUTF8          bool              // rows with invalid UTF-8 are flagged
	asciiCompatible bool              // ASCII bytes mean ASCII (not UTF-16)
}

func lookupEncoding(name string) (textEncoding, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	switch n {
	case "", "utf-8", "utf8":
		return textEncoding{isUTF8: true, asciiCompatible: true}, nil
	case "windows-1252", "cp1252":
		return textEncoding{enc: charmap.Windows1252, asciiCompatible: true}, nil
	case "utf-16", "utf16":
		// The byte-order mark says which end comes first (and is dropped).
		return textEncoding{enc: unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM)}, nil
	}
	enc, err := htmlindex.Get(n)
	if err != nil {
		return textEncoding{}, fmt.Errorf("unknown encoding %q (try utf-8 or windows-1252)", name)
	}
	canonical, err := htmlindex.Name(enc)
	if err != nil {
		canonical = n
	}
	switch canonical {
	case "utf-8":
		return textEncoding{isUTF8: true, asciiCompatible: true}, nil
	case "utf-16le", "utf-16be":
		return textEncoding{enc: enc}, nil
	}
	return textEncoding{enc: enc, asciiCompatible: true}, nil
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

// EvidenceScanner gathers a file's TextEvidence piece by piece, as the
// file is read once for its fingerprint.
type EvidenceScanner struct {
	ev  TextEvidence
	off int64 // offset of the next piece
}

// NewEvidenceScanner starts at the first byte of a file.
func NewEvidenceScanner() *EvidenceScanner {
	return &EvidenceScanner{ev: TextEvidence{Invalid: -1, Undefined: -1}}
}

// Evidence is what the bytes scanned so far say.
func (e *EvidenceScanner) Evidence() TextEvidence { return e.ev }

// Scan reads p, the bytes that follow those scanned so far, and returns how
// many it has taken: all but a rune start at the end that the next piece
// may complete (none at the end of the file, final).
func (e *EvidenceScanner) Scan(p []byte, final bool) int {
	used := len(p)
	if !final {
		used = len(p) - cutRune(p)
	}
	e.scanPiece(p[:used])
	e.off += int64(used)
	return used
}

func (e *EvidenceScanner) scanPiece(p []byte) {
	ev := &e.ev
	switch {
	case ev.MultiByte && ev.Invalid >= 0:
		return // UTF-8, with bytes that are not: nothing left to learn
	case ev.MultiByte || ev.Invalid < 0:
		// Valid so far: the fast path holds as long as the piece is valid.
		if utf8.Valid(p) {
			if !ev.MultiByte && nextHigh(p) >= 0 {
				ev.MultiByte = true
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
			ev.MultiByte = true
			if ev.Invalid >= 0 {
				return
			}
			i += size
			continue
		}
		if ev.Invalid < 0 {
			ev.Invalid, ev.InvalidByte = e.off+int64(i), p[i]
			if ev.MultiByte {
				return
			}
		}
		if ev.Undefined < 0 && undefinedIn1252(p[i]) {
			ev.Undefined, ev.UndefinedByte = e.off+int64(i), p[i]
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

// EncodingChoice is how a file is read, and why.
type EncodingChoice struct {
	Encoding string
	// Why is the evidence the choice rests on, or "--encoding": for a
	// user who asks how a file will be read (crmimport inspect).
	Why string
	// Notice and Warning are what the run log says of the choice ("" for
	// nothing): a warning for a guess no record failure would reveal.
	Notice, Warning string
}

// ChooseEncoding decides how a file is read, on the evidence that
// fingerprinting it gathered in the same single pass: its first bytes
// (head, up to SniffSize) and its TextEvidence.
//
//   - as asked with --encoding;
//   - UTF-16 when a byte-order mark says so, or when the NUL bytes of its
//     start fall in every other byte (Excel's "Unicode text", which has
//     none): said in a notice;
//   - UTF-8 when it is valid, or no text at all (the reader says what it
//     is when its task runs);
//   - UTF-8 when it holds at least one valid multi-byte UTF-8 sequence, even
//     with bytes that are not UTF-8: each row holding one fails alone (R4),
//     naming the byte, and the notice names the first. Read as
//     Windows-1252, every "José" of the file would become "JosÃ©" for good;
//   - Windows-1252 when it holds no multi-byte sequence and each of its
//     bytes above 0x7F is a character there: a pure-ASCII file with one
//     0x92 is an apostrophe, not broken UTF-8. That is a guess no record
//     failure would reveal, so it is a warning: in the run log and in the
//     run's summary (the run's options keep it);
//   - UTF-8 when it holds neither (a byte Windows-1252 leaves undefined,
//     such as 0x81, and no UTF-8): no guess is safe, so nothing is
//     reinterpreted — the rows holding such bytes fail alone, each naming
//     its byte, the ASCII rows import, and the notice says to name the
//     encoding with --encoding.
//
// Its notice or warning name the file as name.
func ChooseEncoding(name string, head []byte, ev TextEvidence, asked string) EncodingChoice {
	switch what := sniffBinary(head); {
	case asked != "":
		return EncodingChoice{Encoding: asked, Why: "--encoding"}
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}) || bytes.HasPrefix(head, []byte{0xFE, 0xFF}):
		if what.name != "" {
			// UTF-32's mark starts as UTF-16's: the reader refuses it.
			return EncodingChoice{Encoding: "utf-8", Why: "it is " + what.name + ", which crmimport does not read"}
		}
		return EncodingChoice{Encoding: "utf-16", Why: "it starts with a UTF-16 byte-order mark",
			Notice: fmt.Sprintf("%s starts with a UTF-16 byte-order mark: reading it as UTF-16", name)}
	case what.encoding != "":
		return EncodingChoice{Encoding: what.encoding, Why: "it is " + what.name + " (NUL in every other byte of its start)",
			Notice: fmt.Sprintf("%s is %s (as Excel saves \"Unicode text\"): reading it as %s",
				name, what.name, strings.ToUpper(what.encoding))}
	case what.name != "":
		return EncodingChoice{Encoding: "utf-8", Why: "it is " + what.name + ", not text"}
	case ev.Invalid < 0 && !ev.MultiByte:
		return EncodingChoice{Encoding: "utf-8", Why: "it is ASCII (valid UTF-8)"}
	case ev.Invalid < 0:
		return EncodingChoice{Encoding: "utf-8", Why: "it is valid UTF-8"}
	case ev.MultiByte:
		return EncodingChoice{Encoding: "utf-8",
			Why: fmt.Sprintf("it holds UTF-8 sequences, and bytes that are not (the first, 0x%02X, at byte offset %d)", ev.InvalidByte, ev.Invalid),
			Notice: fmt.Sprintf("%s is UTF-8 (it holds UTF-8 sequences) with bytes that are not (the first, 0x%02X, at byte offset %d): "+
				"the rows holding them fail alone; if the file is in another encoding, name it with --encoding", name, ev.InvalidByte, ev.Invalid)}
	case ev.Undefined < 0:
		ch, _ := charmap.Windows1252.NewDecoder().Bytes([]byte{ev.InvalidByte})
		return EncodingChoice{Encoding: "windows-1252",
			Why: fmt.Sprintf("it holds no UTF-8 sequence, and every byte above 0x7F in it is a Windows-1252 character (the first: 0x%02X %q, at byte offset %d)",
				ev.InvalidByte, string(ch), ev.Invalid),
			Warning: windows1252Warning(name, ev)}
	}
	return EncodingChoice{Encoding: "utf-8",
		Why: fmt.Sprintf("it is neither UTF-8 nor Windows-1252 (byte 0x%02X at byte offset %d is undefined there): nothing is guessed",
			ev.UndefinedByte, ev.Undefined),
		Notice: fmt.Sprintf("%s is neither UTF-8 (it holds no UTF-8 sequence) nor Windows-1252 (byte 0x%02X at byte offset %d is undefined there): "+
			"nothing is guessed — the rows holding bytes above 0x7F fail alone; name the file's encoding with --encoding",
			name, ev.UndefinedByte, ev.Undefined)}
}

// windows1252Warning says that a file was read as Windows-1252 on the
// evidence of its bytes.
func windows1252Warning(name string, ev TextEvidence) string {
	ch, _ := charmap.Windows1252.NewDecoder().Bytes([]byte{ev.InvalidByte})
	return fmt.Sprintf("%s was read as Windows-1252, not UTF-8: it holds no UTF-8 sequence, and every byte above 0x7F in it is a "+
		"Windows-1252 character (the first: 0x%02X %q, at byte offset %d). If its accents look wrong, it is in another encoding, "+
		"which --encoding names; the records imported now stay as they are (a rerun counts them unchanged)",
		name, ev.InvalidByte, string(ch), ev.Invalid)
}

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
	"golang.org/x/text/transform"
)

// textEncoding is a resolved ReadOptions.Encoding.
type textEncoding struct {
	name   string            // as messages name it: "Windows-1252"
	enc    encoding.Encoding // a multi-byte encoding (UTF-16, Shift_JIS…); nil for UTF-8 and single-byte ones
	single *singleByte       // a single-byte encoding, read as the Encoding Standard does; nil otherwise
	isUTF8 bool              // rows with invalid UTF-8 are flagged
	// asciiCompatible: ASCII bytes mean ASCII (not UTF-16).
	asciiCompatible bool
}

// decoder is what turns the file's bytes into UTF-8 text, or nil for a
// file read as UTF-8 as it is.
func (e textEncoding) decoder() transform.Transformer {
	switch {
	case e.single != nil:
		return singleByteDecoder{e.single}
	case e.enc != nil:
		return e.enc.NewDecoder()
	}
	return nil
}

func lookupEncoding(name string) (textEncoding, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	switch n {
	case "", "utf-8", "utf8":
		return textEncoding{name: "UTF-8", isUTF8: true, asciiCompatible: true}, nil
	case "windows-1252", "cp1252":
		return textEncoding{name: "Windows-1252", single: newSingleByte(charmap.Windows1252), asciiCompatible: true}, nil
	case "utf-16", "utf16":
		// The byte-order mark says which end comes first (and is dropped).
		return textEncoding{name: "UTF-16", enc: unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM)}, nil
	}
	enc, err := htmlindex.Get(n)
	if err != nil {
		return textEncoding{}, fmt.Errorf("unknown encoding %q (try utf-8 or windows-1252)", name)
	}
	canonical, err := htmlindex.Name(enc)
	if err != nil {
		canonical = n
	}
	shown := displayName(canonical)
	switch canonical {
	case "utf-8":
		return textEncoding{name: shown, isUTF8: true, asciiCompatible: true}, nil
	case "utf-16le", "utf-16be":
		return textEncoding{name: shown, enc: enc}, nil
	}
	if cm, ok := enc.(*charmap.Charmap); ok {
		return textEncoding{name: shown, single: newSingleByte(cm), asciiCompatible: true}, nil
	}
	return textEncoding{name: shown, enc: enc, asciiCompatible: true}, nil
}

// displayName is how messages name an encoding that the Encoding Standard
// names canonical ("windows-1250" → "Windows-1250", "iso-8859-7" →
// "ISO-8859-7").
func displayName(canonical string) string {
	switch {
	case strings.HasPrefix(canonical, "windows-"):
		return "Windows-" + strings.TrimPrefix(canonical, "windows-")
	case canonical == "macintosh":
		return "Macintosh"
	}
	return strings.ToUpper(canonical)
}

// singleByte is a single-byte encoding as the Encoding Standard (WHATWG)
// reads it: each byte by the encoding's table, where a byte the table
// leaves undefined in 0x80–0x9F is the C1 control of the same code point
// (the Standard's windows-1252 reads 0x81 as U+0081, where Microsoft's
// table and golang.org/x/text's charmap have nothing, and x/text gives
// U+FFFD), and any other byte it leaves undefined is U+FFFD, the
// Standard's error. Either way no byte is read as something else without a
// word: ChooseEncoding counts them in a warning (SPEC §4).
type singleByte struct {
	utf8      [256][utf8.UTFMax]byte // each byte's character, as UTF-8
	size      [256]uint8             // how many bytes of utf8 it takes
	undefined [256]bool              // the table leaves it undefined
}

func newSingleByte(cm *charmap.Charmap) *singleByte {
	t := &singleByte{}
	for b := 0; b < 256; b++ {
		r := cm.DecodeByte(byte(b))
		if r == utf8.RuneError {
			t.undefined[b] = true
			if b >= 0x80 && b <= 0x9F {
				r = rune(b)
			}
		}
		t.size[b] = uint8(utf8.EncodeRune(t.utf8[b][:], r))
	}
	return t
}

// singleByteDecoder is a singleByte's transform.Transformer.
type singleByteDecoder struct{ t *singleByte }

func (d singleByteDecoder) Reset() {}

func (d singleByteDecoder) Transform(dst, src []byte, atEOF bool) (nDst, nSrc int, err error) {
	for ; nSrc < len(src); nSrc++ {
		b := src[nSrc]
		if b < utf8.RuneSelf {
			if nDst == len(dst) {
				return nDst, nSrc, transform.ErrShortDst
			}
			dst[nDst] = b
			nDst++
			continue
		}
		n := int(d.t.size[b])
		if nDst+n > len(dst) {
			return nDst, nSrc, transform.ErrShortDst
		}
		nDst += copy(dst[nDst:], d.t.utf8[b][:n])
	}
	return nDst, nSrc, nil
}

// TextEvidence is what a file's bytes say of its encoding, gathered over
// the whole file in the pass that fingerprints it (SPEC §4: the weight of
// the evidence, never one sequence): how many valid multi-byte UTF-8
// sequences it holds, how many bytes that are not UTF-8, which of those
// Windows-1252 leaves undefined, and how often each byte above 0x7F occurs,
// wherever it stands (what a single-byte encoding reads). Offsets are from
// the start of the file; -1 means none.
type TextEvidence struct {
	// MultiByte counts the valid multi-byte UTF-8 sequences.
	MultiByte int64
	// Invalid counts the bytes that are no part of a valid UTF-8
	// sequence; FirstInvalid is where the first stands, InvalidByte what
	// it is.
	Invalid, FirstInvalid int64
	InvalidByte           byte
	// Undefined counts those of the Invalid bytes that Windows-1252 leaves
	// undefined (0x81, 0x8D, 0x8F, 0x90, 0x9D); FirstUndefined and
	// UndefinedByte are the first of them.
	Undefined, FirstUndefined int64
	UndefinedByte             byte
	// High counts each byte above 0x7F (High[b-0x80]), in a UTF-8 sequence
	// or not.
	High [128]int64
}

// EvidenceScanner gathers a file's TextEvidence piece by piece, as the
// file is read once for its fingerprint.
type EvidenceScanner struct {
	ev  TextEvidence
	off int64 // offset of the next piece
}

// NewEvidenceScanner starts at the first byte of a file.
func NewEvidenceScanner() *EvidenceScanner {
	return &EvidenceScanner{ev: TextEvidence{FirstInvalid: -1, FirstUndefined: -1}}
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

// scanPiece counts every byte above 0x7F of p: the whole file is weighed,
// so nothing stops the scan early (ASCII runs are skipped eight bytes at a
// time).
func (e *EvidenceScanner) scanPiece(p []byte) {
	ev := &e.ev
	if utf8.Valid(p) {
		// Most pieces: every high byte is in a sequence, and each sequence
		// has one lead byte (0xC0 and above).
		for i := 0; i < len(p); {
			j := nextHigh(p[i:])
			if j < 0 {
				return
			}
			for i += j; i < len(p) && p[i] >= 0x80; i++ {
				ev.High[p[i]-0x80]++
				if p[i] >= 0xC0 {
					ev.MultiByte++
				}
			}
		}
		return
	}
	for i := 0; i < len(p); {
		j := nextHigh(p[i:])
		if j < 0 {
			return
		}
		i += j
		if _, size := utf8.DecodeRune(p[i:]); size > 1 {
			ev.MultiByte++
			for _, b := range p[i : i+size] {
				ev.High[b-0x80]++
			}
			i += size
			continue
		}
		b := p[i]
		ev.High[b-0x80]++
		ev.Invalid++
		if ev.FirstInvalid < 0 {
			ev.FirstInvalid, ev.InvalidByte = e.off+int64(i), b
		}
		if undefinedIn1252(b) {
			ev.Undefined++
			if ev.FirstUndefined < 0 {
				ev.FirstUndefined, ev.UndefinedByte = e.off+int64(i), b
			}
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
	// nothing): a warning for a guess no record failure would reveal, and
	// for bytes the encoding in force leaves undefined.
	Notice, Warning string
	// Guessed: the bytes do not settle the encoding — Windows-1252 on the
	// weight of the evidence, UTF-8 with bytes that are not, or neither —
	// so the user had better name it (the New import page offers a field
	// for it: issue 27 item 4). Valid UTF-8, a byte-order mark, a workbook
	// or --encoding settle it.
	Guessed bool
}

// ChooseEncoding decides how a file is read, on the evidence that
// fingerprinting it gathered in the same single pass over the whole file:
// its first bytes (head, up to SniffSize) and its TextEvidence. SPEC §4
// weighs that evidence, never one sequence:
//
//   - as asked with --encoding; the bytes that encoding leaves undefined
//     are read as the Encoding Standard reads them, and counted in a
//     warning;
//   - UTF-16 when a byte-order mark says so, or when the NUL bytes of its
//     start fall in every other byte (Excel's "Unicode text", which has
//     none): said in a notice;
//   - UTF-8 when it is valid, or no text at all (the reader says what it
//     is when its task runs);
//   - UTF-8 when it holds at least as many valid multi-byte UTF-8
//     sequences as bytes that are not UTF-8 (ties too): a UTF-8 file with
//     a stray 0x92. Each row holding such a byte fails alone (R4), naming
//     it, and the notice names the first;
//   - Windows-1252 when it holds more bytes that are not UTF-8 than UTF-8
//     sequences, and each of those bytes is a character there: a Windows
//     export in which a few byte pairs happen to form UTF-8 (mojibake
//     already stored in the data, such as "Ã©", which is kept as it is),
//     or a pure-ASCII file with one 0x92 (an apostrophe, not broken
//     UTF-8). That is a guess no record failure would reveal, so it is a
//     warning: in the run log and in the run's summary (the run's options
//     keep it); it counts the bytes Windows-1252 leaves undefined that the
//     UTF-8 sequences held (0x81 in "Ã\x81"), read as the Encoding
//     Standard does (U+0081);
//   - UTF-8 when it holds neither (more bytes that are not UTF-8, some of
//     them undefined in Windows-1252, such as 0x81): no guess is safe, so
//     nothing is reinterpreted — the rows holding such bytes fail alone,
//     each naming its byte, the ASCII rows import, and the notice says to
//     name the encoding with --encoding.
//
// Its notice or warning name the file as name.
func ChooseEncoding(name string, head []byte, ev TextEvidence, asked string) EncodingChoice {
	switch what := sniffBinary(head); {
	case asked != "":
		return EncodingChoice{Encoding: asked, Why: "--encoding", Warning: undefinedWarning(name+": ", asked, ev)}
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
	case ev.Invalid == 0 && ev.MultiByte == 0:
		return EncodingChoice{Encoding: "utf-8", Why: "it is ASCII (valid UTF-8)"}
	case ev.Invalid == 0:
		return EncodingChoice{Encoding: "utf-8", Why: "it is valid UTF-8"}
	case ev.MultiByte >= ev.Invalid:
		return utf8WithStrays(name, ev)
	case ev.Undefined == 0:
		return EncodingChoice{Encoding: "windows-1252", Why: windows1252Evidence(ev), Warning: windows1252Warning(name, ev), Guessed: true}
	}
	notUTF8 := "it holds no UTF-8 sequence"
	if ev.MultiByte > 0 {
		notUTF8 = fmt.Sprintf("it holds more bytes that are not UTF-8 (%d) than UTF-8 sequences (%d)", ev.Invalid, ev.MultiByte)
	}
	undefined := fmt.Sprintf("byte 0x%02X at byte offset %d is undefined there", ev.UndefinedByte, ev.FirstUndefined)
	return EncodingChoice{Encoding: "utf-8", Guessed: true,
		Why: fmt.Sprintf("it is neither UTF-8 (%s) nor Windows-1252 (%s): nothing is guessed", notUTF8, undefined),
		Notice: fmt.Sprintf("%s is neither UTF-8 (%s) nor Windows-1252 (%s): nothing is guessed — "+
			"the rows holding bytes that are not UTF-8 fail alone; name the file's encoding with --encoding", name, notUTF8, undefined)}
}

// utf8WithStrays is the choice of UTF-8 for a file that holds at least as
// many UTF-8 sequences as bytes that are not UTF-8.
func utf8WithStrays(name string, ev TextEvidence) EncodingChoice {
	than := fmt.Sprintf("more UTF-8 sequences (%d) than", ev.MultiByte)
	if ev.MultiByte == ev.Invalid {
		than = fmt.Sprintf("as many UTF-8 sequences (%d) as", ev.MultiByte)
	}
	first := "the first, "
	if ev.Invalid == 1 {
		first = ""
	}
	return EncodingChoice{Encoding: "utf-8", Guessed: true,
		Why: fmt.Sprintf("it holds %s bytes that are not UTF-8 (%d; %s0x%02X, at byte offset %d)",
			than, ev.Invalid, first, ev.InvalidByte, ev.FirstInvalid),
		Notice: fmt.Sprintf("%s is UTF-8 (it holds %s) with %s (%s0x%02X, at byte offset %d): "+
			"the rows holding them fail alone; if the file is in another encoding, name it with --encoding",
			name, counted(ev.MultiByte, "UTF-8 sequence", "UTF-8 sequences"), counted(ev.Invalid, "byte that is not", "bytes that are not"),
			first, ev.InvalidByte, ev.FirstInvalid)}
}

// counted is n and the word for n of a thing: "1 byte", "3 bytes".
func counted(n int64, one, many string) string {
	return fmt.Sprintf("%d %s", n, Plural(int(n), one, many))
}

// windows1252Evidence is why a file is read as Windows-1252.
func windows1252Evidence(ev TextEvidence) string {
	ch, _ := charmap.Windows1252.NewDecoder().Bytes([]byte{ev.InvalidByte})
	first := fmt.Sprintf("(the first: 0x%02X %q, at byte offset %d)", ev.InvalidByte, string(ch), ev.FirstInvalid)
	if ev.MultiByte == 0 {
		return "it holds no UTF-8 sequence, and every byte above 0x7F in it is a Windows-1252 character " + first
	}
	return fmt.Sprintf("it holds more bytes that are not UTF-8 (%d) than UTF-8 sequences (%d), and each of those bytes is a "+
		"Windows-1252 character %s", ev.Invalid, ev.MultiByte, first)
}

// windows1252Warning says that a file was read as Windows-1252 on the
// evidence of its bytes, and what became of the bytes Windows-1252 leaves
// undefined that its UTF-8 sequences held.
func windows1252Warning(name string, ev TextEvidence) string {
	w := fmt.Sprintf("%s was read as Windows-1252, not UTF-8: %s", name, windows1252Evidence(ev))
	if ev.MultiByte > 0 {
		w += fmt.Sprintf("; its %s read as Windows-1252 too (mojibake already stored in the data, such as \"Ã©\", is kept as it is)",
			Plural(int(ev.MultiByte), "UTF-8 sequence is", "UTF-8 sequences are"))
	}
	if u := undefinedWarning("", "windows-1252", ev); u != "" {
		w += "; " + u
	}
	return w + ". If its accents look wrong, it is in another encoding, which --encoding names. " +
		"Records that an earlier run imported from this file, read otherwise, keep what that run wrote (a rerun counts them unchanged): " +
		"undo that run and run again to read them anew"
}

// undefinedWarning counts the bytes of a file that the single-byte
// encoding asked leaves undefined, and says how they were read (SPEC §4:
// never U+FFFD without a word); "" when there is none, or when the
// encoding is not a single-byte one. It starts with prefix.
func undefinedWarning(prefix, asked string, ev TextEvidence) string {
	enc, err := lookupEncoding(asked)
	if err != nil || enc.single == nil {
		return ""
	}
	var n int64
	var each, c1, lost []string
	for b := 0x80; b < 0x100; b++ {
		k := ev.High[b-0x80]
		if k == 0 || !enc.single.undefined[b] {
			continue
		}
		n += k
		if k > 1 {
			each = append(each, fmt.Sprintf("0x%02X ×%d", b, k))
		} else {
			each = append(each, fmt.Sprintf("0x%02X", b))
		}
		if b <= 0x9F {
			c1 = append(c1, fmt.Sprintf("U+%04X", b))
		} else {
			lost = append(lost, fmt.Sprintf("0x%02X", b))
		}
	}
	if n == 0 {
		return ""
	}
	var how []string
	if len(c1) > 0 {
		how = append(how, fmt.Sprintf("the control %s %s, as the Encoding Standard reads them", Plural(len(c1), "character", "characters"), andList(c1)))
	}
	if len(lost) > 0 {
		how = append(how, fmt.Sprintf("U+FFFD, the Encoding Standard's replacement character (%s: lost)", andList(lost)))
	}
	return fmt.Sprintf("%s%d %s that %s leaves undefined (%s) %s read as %s — not text in %s: check the values that hold %s",
		prefix, n, Plural(int(n), "byte", "bytes"), enc.name, strings.Join(each, ", "), Plural(int(n), "was", "were"),
		strings.Join(how, ", and "), enc.name, Plural(int(n), "it", "them"))
}

// andList joins words with commas and a final "and".
func andList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

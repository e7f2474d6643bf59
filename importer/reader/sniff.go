package reader

import (
	"bytes"
	"fmt"
	"strings"
)

// SniffSize is how much of the start of a file is looked at to tell what
// it is (zip, gzip, JSON, binary…) before parsing it.
const SniffSize = 4096

// sniffMagic looks at the first bytes of a file and returns why it cannot
// be read as the expected format, or "" when it may be.
func sniffMagic(head []byte, format Format, enc textEncoding) string {
	want := "CSV"
	if format != FormatCSV {
		want = "JSON"
	}
	if what := sniffBinary(head); what.name != "" && what.encoding == "" && (enc.asciiCompatible || !what.guess) {
		return "is " + what.name + ", not " + want + strings.ReplaceAll(what.hint, "%s", want)
	}
	if !enc.asciiCompatible {
		return ""
	}
	if bytes.HasPrefix(head, []byte{0xFF, 0xFE}) || bytes.HasPrefix(head, []byte{0xFE, 0xFF}) {
		return "is UTF-16 text (try --encoding utf-16)"
	}
	if what := sniffBinary(head); what.encoding != "" {
		return "is " + what.name + " (try --encoding " + what.encoding + ")"
	}
	text := bytes.TrimLeft(bytes.TrimPrefix(head, utf8BOM), " \t\r\n")
	if format == FormatCSV {
		switch {
		case looksLikeJSON(text):
			return "looks like JSON, not CSV (an error message saved as .csv?)"
		case looksLikeHTML(text):
			return "looks like an HTML page, not CSV (an error page saved as .csv?)"
		}
		return ""
	}
	if len(text) > 0 && text[0] != '{' && text[0] != '[' {
		return fmt.Sprintf("does not look like JSON (it starts with %q)", firstLine(text, 40))
	}
	return ""
}

// sniffed is what a file's first bytes show it to be, when that is not
// text in an encoding where ASCII bytes mean ASCII.
type sniffed struct {
	name     string // "a PNG image", "UTF-16LE text without a byte-order mark"…; "" for text
	encoding string // the encoding that reads it ("utf-16le"), or "" when none does
	hint     string // what to do instead, for the reader's message
	// guess: told by the share of control bytes alone, which says nothing
	// of a file read in an encoding where ASCII bytes are not ASCII.
	guess bool
}

// magics are the first bytes of the files that turn up where an export
// was expected (bzip2's "BZh" could start a header: left to the reader).
// Zip, xlsx and gzip are told apart in sniffBinary.
var magics = []struct {
	prefix, name, hint string
}{
	{"\x89PNG\r\n\x1a\n", "a PNG image", ""},
	{"\xff\xd8\xff", "a JPEG image", ""},
	{"GIF87a", "a GIF image", ""},
	{"GIF89a", "a GIF image", ""},
	{"%PDF-", "a PDF document", ""},
	{"SQLite format 3\x00", "an SQLite database", ""},
	{"7z\xbc\xaf\x27\x1c", "a 7-Zip archive", " (extract it first)"},
	{"Rar!\x1a\x07", "a RAR archive", " (extract it first)"},
	{"\xfd7zXZ\x00", "an xz archive", " (decompress it first)"},
	{"\x28\xb5\x2f\xfd", "a Zstandard archive", " (decompress it first)"},
	{"\x00\x00\xfe\xff", "UTF-32 text", utf32Hint}, // big-endian byte-order mark
	{"\xff\xfe\x00\x00", "UTF-32 text", utf32Hint}, // little-endian: before UTF-16's FF FE
}

const utf32Hint = " (crmimport reads UTF-8, UTF-16 and single-byte encodings: save it as UTF-8)"

// sniffBinary tells, from a file's first bytes, what a file that is not
// ASCII-compatible text is: an archive, an image, a document, UTF-32, or
// UTF-16 without a byte-order mark (Excel's "Unicode text": every other
// byte of its ASCII is NUL). A few NUL bytes in text are not enough: such
// a file is read, and what they cost their rows is the profile's to say
// (Row.NUL; SPEC §4). Planning and the reader both ask it, so that they
// agree on what a file is.
func sniffBinary(head []byte) sniffed {
	switch {
	case bytes.HasPrefix(head, []byte("PK\x03\x04")) || bytes.HasPrefix(head, []byte("PK\x05\x06")):
		if bytes.Contains(head, []byte("[Content_Types].xml")) || bytes.Contains(head, []byte("xl/")) {
			return sniffed{name: "an Excel workbook (xlsx)", hint: " (save or export it as %s)"}
		}
		return sniffed{name: "a zip archive", hint: " (give the zip itself, or extract it)"}
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return sniffed{name: "a gzip archive", hint: " (decompress it first)"}
	case bytes.HasPrefix(head, []byte("\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1")):
		return sniffed{name: "an Excel 97-2003 workbook (xls) or another Office document", hint: " (save or export it as %s)"}
	}
	for _, m := range magics {
		if bytes.HasPrefix(head, []byte(m.prefix)) {
			return sniffed{name: m.name, hint: m.hint}
		}
	}
	if bytes.HasPrefix(head, []byte{0xFF, 0xFE}) || bytes.HasPrefix(head, []byte{0xFE, 0xFF}) {
		return sniffed{} // UTF-16 with its byte-order mark: text
	}
	if bytes.IndexByte(head, 0) < 0 {
		return sniffed{}
	}
	if utf32Pattern(head) {
		return sniffed{name: "UTF-32 text", hint: utf32Hint}
	}
	if enc := utf16Pattern(head); enc != "" {
		return sniffed{name: strings.ToUpper(enc) + " text without a byte-order mark", encoding: enc}
	}
	if n := controlBytes(head); n*10 > len(head) && n > 8 {
		return sniffed{name: fmt.Sprintf("binary data (%d of its first %d bytes are NUL or control characters)", n, len(head)), guess: true}
	}
	return sniffed{}
}

// utf16Pattern is "utf-16le" or "utf-16be" when head looks like UTF-16 text
// without a byte-order mark: NUL in at least a quarter of one half of the
// byte pairs (the high bytes of ASCII characters: delimiters, digits, line
// ends) and in nearly none of the other; "" otherwise.
func utf16Pattern(head []byte) string {
	pairs := len(head) / 2
	if pairs < 4 {
		return ""
	}
	var even, odd int
	for i := 0; i+1 < len(head); i += 2 {
		if head[i] == 0 {
			even++
		}
		if head[i+1] == 0 {
			odd++
		}
	}
	switch {
	case odd*4 >= pairs && even*20 <= pairs:
		return "utf-16le"
	case even*4 >= pairs && odd*20 <= pairs:
		return "utf-16be"
	}
	return ""
}

// utf32Pattern: head reads as UTF-32 code units (the high byte of each NUL,
// the next at most 0x10) most of whose characters are ASCII.
func utf32Pattern(head []byte) bool {
	units := len(head) / 4
	if units < 2 {
		return false
	}
	le, be, asciiLE, asciiBE := true, true, 0, 0
	for i := 0; i+3 < len(head); i += 4 {
		u := head[i : i+4]
		le = le && u[3] == 0 && u[2] <= 0x10
		be = be && u[0] == 0 && u[1] <= 0x10
		if u[1] == 0 && u[2] == 0 && u[3] == 0 {
			asciiLE++
		}
		if u[0] == 0 && u[1] == 0 && u[2] == 0 {
			asciiBE++
		}
	}
	return le && asciiLE*2 >= units || be && asciiBE*2 >= units
}

// controlBytes counts the bytes of head that no text holds, whatever its
// encoding: NUL and the other control characters but tab, line feed,
// vertical tab, form feed, carriage return and escape, and DEL. They are
// a ninth of compressed or encrypted data; of text with a stray NUL in
// each row, a few percent.
func controlBytes(head []byte) int {
	n := 0
	for _, b := range head {
		if b == 0x7f || b < 0x20 && b != '\t' && b != '\n' && b != '\v' && b != '\f' && b != '\r' && b != 0x1b {
			n++
		}
	}
	return n
}

// looksLikeJSON: an object or an array opening, not a CSV header that
// happens to start with "[" or "{" (such as "[Id],[Name]").
func looksLikeJSON(text []byte) bool {
	if len(text) == 0 || (text[0] != '{' && text[0] != '[') {
		return false
	}
	rest := bytes.TrimLeft(text[1:], " \t\r\n")
	if len(rest) == 0 {
		return true
	}
	c := rest[0]
	if text[0] == '{' {
		return c == '"' || c == '}'
	}
	return c == '{' || c == '[' || c == '"' || c == ']' || c == '-' || (c >= '0' && c <= '9')
}

func looksLikeHTML(text []byte) bool {
	lower := bytes.ToLower(text[:min(len(text), 64)])
	return bytes.HasPrefix(lower, []byte("<!doctype html")) || bytes.HasPrefix(lower, []byte("<html"))
}

// firstLine returns the start of text up to its first line break, at most
// limit bytes.
func firstLine(text []byte, limit int) string {
	if i := bytes.IndexAny(text, "\r\n"); i >= 0 {
		text = text[:i]
	}
	if len(text) > limit {
		text = text[:limit]
	}
	return string(text)
}

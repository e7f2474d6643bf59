package importer

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// Format of one input file.
type Format string

const (
	FormatCSV Format = "csv"
	// FormatJSON is a top-level array of objects, or an object holding one
	// of "records"/"results"/"data" whose value is such an array, or
	// (tolerated) JSON Lines content in a .json file.
	FormatJSON Format = "json"
	// FormatJSONL is one object per line (blank lines ignored).
	FormatJSONL Format = "jsonl"
)

// Col is one cell: the header name (CSV) or key (JSON) and its text.
// Nested marks a JSON object or array, whose Value is its compact JSON.
type Col struct {
	Name, Value string
	Nested      bool
}

// Row is one record as read, before any mapping to fields.
type Row struct {
	Line int // 1-based line of the file where the record starts
	// Cols are in file order. CSV: one per header column, names exactly as
	// in the header (duplicates kept as they are, BOM removed). JSON: the
	// object's keys in order.
	Cols []Col
	// Err is non-nil when this record cannot be read as it is (Reason says
	// why); Cols then holds what could be read, and may be nil.
	Err *RowError
	// Text is the record as it stands in the file, for a CSV record that
	// could not be parsed (R4 keeps the raw row of a failure).
	Text string
}

// RowError: one record is bad; reading goes on with the next.
type RowError struct {
	File   string
	Line   int
	Reason string
}

func (e *RowError) Error() string {
	return e.File + ":" + strconv.Itoa(e.Line) + ": " + e.Reason
}

// FileError: the file (or its remainder) cannot be read; the caller fails
// the whole file.
type FileError struct {
	File   string
	Line   int
	Reason string

	cause error // the underlying error, if any (a read error), for Unwrap
}

func (e *FileError) Error() string {
	if e.Line > 0 {
		return e.File + ":" + strconv.Itoa(e.Line) + ": " + e.Reason
	}
	return e.File + ": " + e.Reason
}

// Unwrap returns the error of the underlying reader that made the file
// unreadable, or nil.
func (e *FileError) Unwrap() error { return e.cause }

// ReadOptions say how to read one file.
type ReadOptions struct {
	Name   string // display name for errors (usually the file's base name)
	Format Format
	// Encoding is "" or "utf-8" (any case): UTF-8, BOM removed;
	// "windows-1252"/"cp1252"; or any name htmlindex knows. An unknown name
	// is an error from NewRowReader.
	Encoding string

	// keptText overrides maxKeptText (csvTracker), for tests; 0 means the
	// default.
	keptText int64
}

// RowReader reads the records of one CSV, JSON or JSON Lines file as Rows.
type RowReader struct {
	name  string
	raw   *countingReader
	csv   *csvSource  // set for FormatCSV
	json  *jsonSource // set for FormatJSON and FormatJSONL
	final error       // io.EOF or a *FileError, once reached: returned forever
}

// sniffSize is how much of the start of a file is looked at to tell what
// it is (zip, gzip, JSON, binary…) before parsing it.
const sniffSize = 4096

// maxRecordBytes bounds one record, so that a quote that is never closed
// in a 1 GB file fails the file instead of filling memory. A 50 MB note
// stays well within it.
const maxRecordBytes = 256 << 20

// NewRowReader starts reading r. For CSV it reads and keeps the header
// row. It returns a *FileError for what makes the file unreadable (an
// archive, binary data, JSON where CSV was expected, a broken header), and
// a plain error for a bad option (unknown format or encoding).
func NewRowReader(r io.Reader, opt ReadOptions) (*RowReader, error) {
	name := opt.Name
	if name == "" {
		name = "<input>"
	}
	enc, err := lookupEncoding(opt.Encoding)
	if err != nil {
		return nil, err
	}
	switch opt.Format {
	case FormatCSV, FormatJSON, FormatJSONL:
	default:
		return nil, fmt.Errorf("read %s: unknown format %q (want csv, json or jsonl)", name, opt.Format)
	}

	rr := &RowReader{name: name, raw: &countingReader{r: r}}
	br := bufio.NewReaderSize(rr.raw, 64<<10)
	head, err := br.Peek(sniffSize)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, rr.readError(0, err)
	}
	if reason := sniffMagic(head, opt.Format, enc); reason != "" {
		return nil, &FileError{File: name, Reason: reason}
	}
	if enc.asciiCompatible && bytes.HasPrefix(head, utf8BOM) {
		// Removed before decoding: read as windows-1252 it would become "ï»¿".
		if _, err := br.Discard(len(utf8BOM)); err != nil {
			return nil, rr.readError(0, err)
		}
	}
	var text io.Reader = br
	if enc.enc != nil {
		text = transform.NewReader(br, enc.enc.NewDecoder())
	}

	switch opt.Format {
	case FormatCSV:
		rr.csv, err = newCSVSource(name, text, enc.isUTF8, cmp.Or(opt.keptText, maxKeptText))
		if err != nil {
			return nil, err
		}
	default:
		rr.json = newJSONSource(name, text, opt.Format, enc.isUTF8)
	}
	return rr, nil
}

// Next returns the next record: io.EOF after the last one, or a
// *FileError when the rest of the file cannot be read. A record that is
// bad on its own comes back as a Row with Err set, and reading goes on.
func (r *RowReader) Next() (Row, error) {
	if r.final != nil {
		return Row{}, r.final
	}
	var row Row
	var err error
	if r.csv != nil {
		row, err = r.csv.next()
	} else {
		row, err = r.json.next()
	}
	if err != nil {
		var fe *FileError
		if !errors.Is(err, io.EOF) && !errors.As(err, &fe) {
			err = r.readError(0, err)
		}
		r.final = err
		return Row{}, err
	}
	return row, nil
}

// Header returns the CSV header names as in the file (BOM removed); nil
// for JSON or an empty file.
func (r *RowReader) Header() []string {
	if r.csv == nil || r.csv.header == nil {
		return nil
	}
	return append([]string(nil), r.csv.header...)
}

// Footer returns, once Next has returned io.EOF, the block at the end of a
// CSV file that was not read because it is a footer (footer.go), or nil.
func (r *RowReader) Footer() *Footer {
	if r.csv == nil {
		return nil
	}
	return r.csv.foot.footer
}

// watchFooter lets a CSV reader tell rows with an id from rows without:
// after an empty row, a block of rows without ids to the end of the file is
// a footer. Without it, only Salesforce's report footer is told apart.
func (r *RowReader) watchFooter(hasID func(Row) bool) {
	if r.csv != nil {
		r.csv.foot.hasID = hasID
	}
}

// Delimiter returns the CSV delimiter named by a sep= line or sniffed from
// the header line (0 for JSON).
func (r *RowReader) Delimiter() rune {
	if r.csv == nil {
		return 0
	}
	return r.csv.comma
}

// BytesRead returns the raw (undecoded) bytes consumed from the underlying
// reader so far. Reading is buffered, so it runs ahead of the rows
// returned; at io.EOF it equals the size of the input.
func (r *RowReader) BytesRead() int64 { return r.raw.n }

func (r *RowReader) readError(line int, err error) *FileError {
	return &FileError{File: r.name, Line: line, Reason: "read: " + err.Error(), cause: err}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

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
// a file is read, and the rows that hold them fail alone. Planning and the
// reader both ask it, so that they agree on what a file is.
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

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

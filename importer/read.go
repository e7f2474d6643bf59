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

// Delimiter returns the CSV delimiter sniffed from the header line (0 for
// JSON).
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
	switch {
	case bytes.HasPrefix(head, []byte("PK\x03\x04")) || bytes.HasPrefix(head, []byte("PK\x05\x06")):
		if bytes.Contains(head, []byte("[Content_Types].xml")) || bytes.Contains(head, []byte("xl/")) {
			return "is an Excel workbook (xlsx), not " + want + " (save or export it as " + want + ")"
		}
		return "is a zip archive, not " + want + " (give the zip itself, or extract it)"
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return "is a gzip archive, not " + want + " (decompress it first)"
	}
	if !enc.asciiCompatible {
		return ""
	}
	if bytes.HasPrefix(head, []byte{0xFF, 0xFE}) || bytes.HasPrefix(head, []byte{0xFE, 0xFF}) {
		return "is UTF-16 text (try --encoding utf-16)"
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return "is binary data (it contains NUL bytes), not " + want
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

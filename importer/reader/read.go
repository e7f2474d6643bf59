package reader

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"

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
	// FormatXLSX is an Excel workbook, read in place by NewXLSXReader (a
	// zip needs random access).
	FormatXLSX Format = "xlsx"
)

// FormatOf tells the format of a file from its name's extension.
func FormatOf(name string) (Format, bool) {
	switch strings.ToLower(path.Ext(name)) {
	case ".csv":
		return FormatCSV, true
	case ".json":
		return FormatJSON, true
	case ".jsonl", ".ndjson":
		return FormatJSONL, true
	case ".xlsx":
		return FormatXLSX, true
	}
	return "", false
}

// Col is one cell: the header name (CSV) or key (JSON) and its text.
// Nested marks a JSON object or array, whose Value is its compact JSON.
type Col struct {
	Name, Value string
	Nested      bool
}

// Row is one record as read, before any mapping to fields.
type Row struct {
	Line int // 1-based line of the file where the record starts; a workbook's: the sheet's row number
	// Sheet is the name of a workbook's sheet the row is in ("" for CSV
	// and JSON): a failure names the row "contacts.xlsx!Sheet1:14" (Where).
	Sheet string
	// Cols are in file order. CSV: one per header column, names exactly as
	// in the header (duplicates kept as they are, BOM removed). A
	// workbook's: one per column the header names, and an unnamed one only
	// up to the last the row holds a value in (a row is sized by the cells
	// it holds, not by the header's last column), so that a name repeated
	// numbers as in the header. JSON: the object's keys in order.
	Cols []Col
	// Err is non-nil when this record cannot be read as it is (Reason says
	// why); Cols then holds what could be read, and may be nil.
	Err *RowError
	// Text is the record as it stands in the file, for a CSV record that
	// could not be parsed (R4 keeps the raw row of a failure).
	Text string
	// NUL lists the fields that hold a NUL byte, which text never holds,
	// and where the first of each stands in the file: what that costs the
	// row is the profile's to say, which knows the fields it maps (SPEC
	// §4: a NUL in a mapped field fails its row, one in a column kept in
	// extra is kept). Nil for most rows; a CSV reader's alone.
	NUL []NULField
	// Start and End are where the record stands in the raw file, in
	// bytes (End past its line end), when the reader knows it: a CSV file
	// read as UTF-8, whose bytes are its text. End is 0 otherwise. A rerun
	// reads the record again from there alone (RecordAt).
	Start, End int64
	// over marks a record over the bound for one record (maxRecordBytes),
	// which is not read: never a footer.
	over bool
}

// NULField is a field of a row that holds a NUL byte.
type NULField struct {
	Col   int    // the field's index in Row.Cols
	Where string // ", at line L, column C" (bytes, from 1): where its first NUL stands
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
	// "windows-1252"/"cp1252"; or any name htmlindex knows. A single-byte
	// encoding is read as the Encoding Standard reads it (singleByte). An
	// unknown name is an error from NewRowReader.
	Encoding string

	// Sheet names the one sheet of a workbook to read; "" reads each sheet
	// that has a header row, in the workbook's order.
	Sheet string
	// Guard bounds what a workbook uncompresses to (input.Limits.ZipGuard).
	Guard ZipGuard

	// keptText overrides maxKeptText (csvTracker), for tests; 0 means the
	// default.
	keptText int64
	// recordLimit overrides maxRecordBytes for CSV and JSON, and renewAt
	// renewAfter, for tests; 0 means the default.
	recordLimit, renewAt int64
	// cellLimit and sstLimit override maxRecordBytes and maxSharedStrings
	// for a workbook, for tests; 0 means the default.
	cellLimit, sstLimit int64
}

// RowReader reads the records of one CSV, JSON or JSON Lines file, or of
// an XLSX workbook's sheets, as Rows.
type RowReader struct {
	name  string
	raw   *CountingReader
	count func() int64 // a workbook's bytes read, instead of raw
	size  int64        // a workbook's size, what count reaches at io.EOF
	src   source
	final error // io.EOF or a *FileError, once reached: returned forever
}

// A source reads the records of one format from a file's text, BOM
// removed and decoded, for RowReader: csvSource reads CSV, jsonSource JSON
// and JSON Lines (one source for both: a .json file may hold JSON Lines and
// a .jsonl file an array, which it tells as it reads). What only CSV has —
// a delimiter, a footer — RowReader asks of the csvSource itself.
type source interface {
	// next returns the next record: io.EOF after the last one, a
	// *FileError when the rest of the file cannot be read, a Row with Err
	// set for a record that is bad on its own.
	next() (Row, error)
	// header is the names of the file's columns as it writes them (a CSV
	// file's header row); nil when each record names its own (JSON) or the
	// file holds none.
	header() []string
}

// MaxRecordBytes bounds one record's text (issue 23 item 21): a record
// over it fails alone (R4), read past without being held, its raw row its
// start (maxKeptText); a quoted field or a value that runs to the end of
// the file over it fails the file. A record is held, as it is read and
// written, in a few copies (the reader's buffers and its strings; the
// driver's bind, SQLite's record and the savepoint's journal), so the
// bound is what keeps a run within the memory the README states: a record
// of 256 MiB cost 840 MiB. Measured, a run with one record at 8 MiB peaks
// at 80–95 MiB and one with ten in a row at 135–140 MiB; at 16 MiB, 130–165
// and 210–245 MiB, too near 256 MiB on a loaded machine. No CRM writes a
// record near 8 MiB: Salesforce's longest text field holds 131,072
// characters, HubSpot's 65,536, Excel's cell 32,767.
const MaxRecordBytes = 8 << 20

// renewAfter is the size of a record after which a reader reads on with a
// new csv.Reader or json.Decoder: each keeps the buffers a record grew,
// which would hold twice a long record to the end of the file.
const renewAfter = 1 << 20

// maxRecordBytes is MaxRecordBytes, which bounds a workbook's row and cell
// too (read_xlsx.go).
const maxRecordBytes = MaxRecordBytes

// tooLargeReason is the reason of a record over the bound of limit bytes,
// which holds size bytes from line to last.
func tooLargeReason(size, limit int64, line, last int) string {
	lines := fmt.Sprintf("line %d", line)
	if last > line {
		lines = fmt.Sprintf("lines %d–%d", line, last)
	}
	return fmt.Sprintf("the record holds %s bytes (%s), more than the bound of %s for one record: "+
		"it is not read, and its raw row keeps only its start; shorten its longest field (or split the record) and run again",
		thousands(size), lines, boundSize(limit))
}

// boundSize writes a bound: 16 MiB, or 1000 bytes.
func boundSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// thousands writes n with its thousands apart: 16,777,217.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

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
	case FormatXLSX:
		return nil, fmt.Errorf("read %s: a workbook is read in place with NewXLSXReader, not as a stream", name)
	default:
		return nil, fmt.Errorf("read %s: unknown format %q (want csv, json or jsonl)", name, opt.Format)
	}

	rr := &RowReader{name: name, raw: NewCountingReader(r)}
	br := bufio.NewReaderSize(rr.raw, 64<<10)
	head, err := br.Peek(SniffSize)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, rr.readError(0, err)
	}
	if reason := sniffMagic(head, opt.Format, enc); reason != "" {
		return nil, &FileError{File: name, Reason: reason}
	}
	base := int64(0) // raw bytes before the text: where a record stands in the file (Row.Start)
	if enc.asciiCompatible && bytes.HasPrefix(head, utf8BOM) {
		// Removed before decoding: read as windows-1252 it would become "ï»¿".
		if _, err := br.Discard(len(utf8BOM)); err != nil {
			return nil, rr.readError(0, err)
		}
		base = int64(len(utf8BOM))
	}
	var text io.Reader = br
	if dec := enc.decoder(); dec != nil {
		text = transform.NewReader(br, dec)
		base = -1 // decoded text is not the file's bytes
	}

	limit := cmp.Or(opt.recordLimit, maxRecordBytes)
	switch opt.Format {
	case FormatCSV:
		var c *csvSource
		if c, err = newCSVSource(name, text, enc.isUTF8, cmp.Or(opt.keptText, maxKeptText), limit, base); err != nil {
			return nil, err
		}
		c.renewAt, rr.src = cmp.Or(opt.renewAt, renewAfter), c
	default:
		j := newJSONSource(name, text, opt.Format, enc.isUTF8, limit, cmp.Or(opt.keptText, maxKeptText))
		j.renewAt, rr.src = cmp.Or(opt.renewAt, renewAfter), j
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
	row, err := r.src.next()
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

// Header returns the CSV header names as in the file (BOM removed), or
// the header row of the workbook sheet being read (Sheet); nil for JSON or
// an empty file.
func (r *RowReader) Header() []string {
	h := r.src.header()
	if h == nil {
		return nil
	}
	return append([]string(nil), h...)
}

// Spans reports whether the records read carry where they stand in the
// raw file (Row.Start, Row.End): a CSV file read as UTF-8.
func (r *RowReader) Spans() bool {
	c := r.asCSV()
	return c != nil && c.base >= 0
}

// RecordAt reads again, alone, the record that stands at raw in the file
// (the bytes from its Row.Start to its Row.End) and starts at line: the
// same Row as reading the file through gives, read under the file's header
// and delimiter. Only a reader whose records have spans (Spans) can.
func (r *RowReader) RecordAt(raw []byte, line int) (Row, error) {
	c := r.asCSV()
	if c == nil || c.base < 0 || c.headerRow == nil {
		return Row{}, fmt.Errorf("read %s: records cannot be read again by their place in the file", r.name)
	}
	row, err := c.at(raw, line).next()
	if errors.Is(err, io.EOF) {
		return Row{}, fmt.Errorf("%s:%d: no record there (has the file changed?)", r.name, line)
	}
	return row, err
}

// asCSV is the source when the file is CSV, else nil.
func (r *RowReader) asCSV() *csvSource {
	c, _ := r.src.(*csvSource)
	return c
}

// Footer returns, once Next has returned io.EOF, the block at the end of a
// CSV file that was not read because it is a footer (footer.go), or nil.
func (r *RowReader) Footer() *Footer {
	if c := r.asCSV(); c != nil {
		return c.foot.footer
	}
	return nil
}

// WatchFooter lets a CSV reader tell rows with an id from rows without:
// after an empty row, a block of rows without ids to the end of the file is
// a footer. Without it, only Salesforce's report footer is told apart.
func (r *RowReader) WatchFooter(hasID func(Row) bool) {
	if c := r.asCSV(); c != nil {
		c.foot.hasID = hasID
	}
}

// Delimiter returns the CSV delimiter named by a sep= line or sniffed from
// the header line (0 for JSON).
func (r *RowReader) Delimiter() rune {
	if c := r.asCSV(); c != nil {
		return c.comma
	}
	return 0
}

// BytesRead returns the raw (undecoded) bytes consumed from the underlying
// reader so far. Reading is buffered, so it runs ahead of the rows
// returned; at io.EOF it equals the size of the input.
func (r *RowReader) BytesRead() int64 {
	if r.count != nil {
		if errors.Is(r.final, io.EOF) {
			return r.size // parts no sheet needs (docProps) are never read
		}
		return min(r.count(), r.size)
	}
	return r.raw.BytesRead()
}

func (r *RowReader) readError(line int, err error) *FileError {
	return &FileError{File: r.name, Line: line, Reason: "read: " + err.Error(), cause: err}
}

// CountingReader counts the bytes read through it.
type CountingReader struct {
	r io.Reader
	n int64
}

// NewCountingReader counts what is read from r.
func NewCountingReader(r io.Reader) *CountingReader { return &CountingReader{r: r} }

func (c *CountingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// BytesRead is how many bytes were read through c so far.
func (c *CountingReader) BytesRead() int64 { return c.n }

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

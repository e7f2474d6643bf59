package reader

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"crmimport/bytesize"
)

// maxHeaderSniff bounds how much of the first record is scanned to choose
// the delimiter.
const maxHeaderSniff = 1 << 20

// invalidUTF8Reason is the reason of a row that is not valid UTF-8 while
// the file is read as UTF-8 (JSON; a CSV row's reason names the byte).
const invalidUTF8Reason = "not valid UTF-8 (try --encoding windows-1252)"

// encodingHint ends the reason of a CSV row that holds a byte UTF-8 cannot
// read: the file is read as UTF-8 because it holds UTF-8 elsewhere, or
// because it was asked to be.
const encodingHint = "(if the file is not UTF-8, name its encoding with --encoding, e.g. --encoding windows-1252)"

var errRecordTooLarge = errors.New("record too large")

// overBound is what csvTracker gives encoding/csv in the middle of a
// record over the bound, once it has read past the record's end without
// giving it any more of it: csvSource then reads on with a new csv.Reader.
type overBound struct {
	closed bool // the record ended; false: the input ended inside a quoted field
}

func (e *overBound) Error() string { return "record over the bound" }

// csvSource reads a CSV file with encoding/csv: RFC 4180 with LazyQuotes
// off, so that a stray quote fails its record instead of silently eating
// the following ones.
type csvSource struct {
	name       string
	r          *csv.Reader
	buf        *bufio.Reader // what r reads: the tracker's text, buffered
	track      *csvTracker
	headerRow  []string // nil: the file holds no record at all
	comma      rune
	lineOffset int   // lines before r's first (blank lines and sep= before the header; records read by an r before), to add to its line numbers
	lineBase   int   // lines before the header: the tracker's line 1 is lineBase+1
	offBase    int64 // the tracker's offset where r began reading: r's offsets are from there
	nextLine   int   // the line after the last record read: where the next one may start
	checkUTF8  bool  // flag rows that are not valid UTF-8
	lastLine   int   // line of the last record read, for errors that have none
	bareCR     bool  // the header's line ended with a lone "\r" (lineEnds.inQuotes)
	keptText   int64
	renewAt    int64 // renewAfter, but in tests
	// base is the raw offset of the text csv reads (a BOM, a sep= line and
	// blank lines before the header are not in it), or -1 when the text is
	// decoded and its offsets are not the file's.
	base int64

	foot footerWatch

	// again holds the readers that at gives each record read again, reset
	// for the next: a revisit reads thousands of records one at a time.
	again struct {
		raw     bytes.Reader
		ends    *bufio.Reader
		tracked *bufio.Reader
	}
}

func newCSVSource(name string, text io.Reader, checkUTF8 bool, keptText, limit, base int64) (*csvSource, error) {
	br := bufio.NewReaderSize(text, 64<<10)
	head, skipped, comma, bareCR, dropped, err := sniffHeader(br)
	if err != nil {
		return nil, &FileError{File: name, Reason: "read: " + err.Error(), cause: err}
	}
	if base >= 0 {
		base += dropped
	}
	s := &csvSource{name: name, comma: comma, lineOffset: skipped, lineBase: skipped, checkUTF8: checkUTF8, bareCR: bareCR, keptText: keptText, base: base}
	if head == nil {
		return s, nil // empty, or only a BOM and blank lines
	}
	// encoding/csv knows only \n and \r\n as line ends: a lone \r (Excel
	// for Mac's "CSV (Macintosh)", or lines of several tools in one file)
	// would merge lines into one record, and shift every line number after.
	rest := &lineEnds{r: bufio.NewReader(io.MultiReader(bytes.NewReader(head), br)), comma: byte(comma), inQuotes: bareCR}
	s.track = &csvTracker{r: rest, limit: limit, cutAt: -1, keptText: keptText}
	// csv reads a *bufio.Reader of 4 KiB or more as it is: what it has
	// read ahead stays there when a new csv.Reader takes over (renew).
	s.buf = bufio.NewReaderSize(s.track, 4096)
	s.newReader()

	rec, err := s.r.Read()
	var pe *csv.ParseError
	switch {
	case errors.Is(err, io.EOF):
		return s, nil
	case errors.As(err, &pe):
		return nil, &FileError{File: name, Line: pe.StartLine + s.lineOffset, Reason: "header: " + s.parseErrorReason(pe)}
	case err != nil:
		return nil, s.readError(err)
	}
	s.lastLine = s.line()
	for i, h := range rec {
		switch {
		case checkUTF8 && !utf8.ValidString(h):
			return nil, &FileError{File: name, Line: s.lastLine, Reason: fmt.Sprintf("header is not valid UTF-8 (field %d) %s", i+1, encodingHint)}
		case strings.IndexByte(h, 0) >= 0:
			return nil, &FileError{File: name, Line: s.lastLine, Reason: fmt.Sprintf("header holds a NUL byte (field %d): it is not text", i+1)}
		}
	}
	s.headerRow = rec
	s.foot.prevEnd = s.endLine(rec)
	s.nextLine = s.foot.prevEnd + 1
	return s, nil
}

// newReader starts a csv.Reader over s.buf.
func (s *csvSource) newReader() {
	s.r = csv.NewReader(s.buf)
	s.r.Comma = s.comma
	s.r.FieldsPerRecord = -1 // a ragged row fails alone (row)
	s.r.LazyQuotes = false
}

// renew reads on with a new csv.Reader from where the last record read
// ended, at line (the next line of the file): after a record over the
// bound, which the old one was given only the start of, and after a long
// record, whose buffers the old one would keep.
func (s *csvSource) renew(line int) {
	s.offBase = s.off()
	s.lineOffset = line - 1
	s.newReader()
}

// off is the offset in the tracker's text where csv stands.
func (s *csvSource) off() int64 { return s.offBase + s.r.InputOffset() }

func (s *csvSource) header() []string { return s.headerRow }

// at is a source that reads the one record raw holds (RecordAt), which
// starts at line of the file s reads: as s would read it, in the state a
// record's start leaves the reading in. It reads through s's own buffers,
// so it serves until the next call of at.
func (s *csvSource) at(raw []byte, line int) *csvSource {
	// The empty lines before the record are lines of the file before line.
	lead := raw[:len(raw)-len(bytes.TrimLeft(raw, "\r\n"))]
	before := bytes.Count(lead, []byte{'\n'}) + bytes.Count(lead, []byte{'\r'}) - bytes.Count(lead, []byte("\r\n"))
	a := &csvSource{name: s.name, headerRow: s.headerRow, comma: s.comma, lineOffset: line - 1 - before, lineBase: line - 1 - before,
		nextLine: line - before, checkUTF8: s.checkUTF8, bareCR: s.bareCR, keptText: s.keptText, base: -1}
	g := &s.again
	g.raw.Reset(raw)
	if g.ends == nil {
		g.ends, g.tracked = bufio.NewReaderSize(&g.raw, 4096), bufio.NewReaderSize(nil, 4096)
	}
	g.ends.Reset(&g.raw)
	rest := &lineEnds{r: g.ends, comma: byte(s.comma), inQuotes: s.bareCR}
	a.track = &csvTracker{r: rest, limit: s.track.limit, cutAt: -1, keptText: s.keptText}
	g.tracked.Reset(a.track)
	a.buf = g.tracked
	a.newReader()
	return a
}

// span is where the record just read, which began at csv's offset from,
// stands in the raw file (Row.Start, Row.End), or 0, 0 when unknown. The
// empty lines csv skipped before it are in it, as they were in the text
// it was read from (a bad row's raw text keeps them).
func (s *csvSource) span(from int64) (int64, int64) {
	if s.base < 0 {
		return 0, 0
	}
	return s.base + from, s.base + s.off()
}

// next returns the next record. The rows after an empty row are held
// back until they show whether they are records or a footer (footerWatch).
func (s *csvSource) next() (Row, error) {
	for {
		if row, ok := s.foot.release(); ok {
			return row, nil
		}
		if s.foot.end != nil {
			return Row{}, s.foot.end
		}
		row, last, err := s.read()
		if err != nil {
			s.foot.finish(err)
			continue
		}
		if s.foot.hold(row, last) {
			continue
		}
		return row, nil
	}
}

// read reads the next record that is not blank, and the line it ends on.
func (s *csvSource) read() (Row, int, error) {
	if s.headerRow == nil {
		return Row{}, 0, io.EOF
	}
	for {
		s.track.recStart = s.off()
		s.track.forget(s.track.recStart)
		rec, err := s.r.Read()
		var pe *csv.ParseError
		var ob *overBound
		switch {
		case errors.Is(err, io.EOF):
			return Row{}, 0, io.EOF
		case errors.As(err, &ob):
			return s.overTheBound(ob)
		case errors.As(err, &pe):
			line := pe.StartLine + s.lineOffset
			s.lastLine = line
			last := pe.Line + s.lineOffset
			if s.off()-s.track.recStart > s.track.limit {
				if size := s.recordSize(); size > s.track.limit {
					if errors.Is(pe.Err, csv.ErrQuote) && s.track.endsInside(pe, s.lineOffset-s.lineBase) {
						return Row{}, 0, s.neverClosed(line)
					}
					return s.readOver(line, last, size)
				}
			}
			row := s.row(line, rec, s.parseErrorReason(pe))
			row.Text = strings.TrimRight(s.track.text(s.track.recStart, s.off()), "\r\n")
			row.Start, row.End = s.span(s.track.recStart)
			s.nextLine = last + 1
			return row, last, nil
		case err != nil:
			return Row{}, 0, s.readError(err)
		}
		line := s.line()
		s.lastLine = line
		last := s.endLine(rec)
		if s.off()-s.track.recStart > s.track.limit {
			if size := s.recordSize(); size > s.track.limit {
				return s.readOver(line, last, size)
			}
		}
		s.nextLine = last + 1
		if blankRecord(rec) {
			continue // a line of spaces, or of empty fields (Excel's empty row): as blank as the empty lines csv skips
		}
		reason := ""
		if len(rec) != len(s.headerRow) {
			reason = fmt.Sprintf("row has %d %s, the header has %d", len(rec), Plural(len(rec), "field", "fields"), len(s.headerRow))
		}
		row := s.row(line, rec, reason)
		row.Start, row.End = s.span(s.track.recStart)
		if s.renewAt > 0 && s.off()-s.track.recStart > s.renewAt {
			// Its fields are cut out of one string of their own: the
			// buffers csv grew for it can go.
			s.renew(s.nextLine)
		}
		return row, last, nil
	}
}

// readOver is the row of the record just read whole, from line to last,
// whose text of size bytes is over the bound (by less than what csv reads
// at a time, or it would have been skipped: overTheBound): it fails alone
// as if it had been skipped, and csv's buffers, which hold it, go.
func (s *csvSource) readOver(line, last int, size int64) (Row, int, error) {
	s.nextLine = last + 1
	s.lastLine = line
	row := s.overRow(line, last, size)
	s.renew(s.nextLine)
	return row, last, nil
}

// overTheBound is the row of the record under way when the tracker found
// it over the bound and read past its end (ob): csv was given its start
// only, and a new csv.Reader reads on after it. A record that runs to the
// end of the file inside a quoted field fails the file.
func (s *csvSource) overTheBound(ob *overBound) (Row, int, error) {
	t := s.track
	lead, nl := t.lead()
	line := s.nextLine + nl
	s.lastLine = line
	if !ob.closed {
		return Row{}, 0, s.neverClosed(line)
	}
	// The tracker read to the record's line end (or the file's end): the
	// lines it counted end there.
	next := s.lineBase + 1 + t.newlines
	last := next - 1
	if t.lastByte != '\n' {
		last = next // the last line, with no line end
	}
	s.offBase, s.lineOffset = t.total, next-1
	s.newReader()
	s.nextLine = next
	end := t.total - t.lineEnd(t.total)
	return s.overRow(line, last, end-t.recStart-lead), last, nil
}

// overRow is the row of a record over the bound: its reason, and as its
// text its start, at most keptText bytes of it (R4 keeps the raw row, but
// not the record crmimport does not read). It has no place to be read
// again from (Row.End 0): a rerun reads the file.
func (s *csvSource) overRow(line, last int, size int64) Row {
	t := s.track
	lead, _ := t.lead()
	head, _ := t.raw(t.recStart+lead, t.recStart+lead+size)
	head = head[:min(int64(len(head)), s.keptText, size)]
	text := string(head)
	if more := size - int64(len(head)); more > 0 {
		text += fmt.Sprintf("\n[… %d more bytes of this record, not kept]", more)
	}
	return Row{Line: line, Err: &RowError{File: s.name, Line: line, Reason: tooLargeReason(size, t.limit, line, last)}, Text: text, over: true}
}

// neverClosed is the error of a file whose record at line runs to its end
// inside a quoted field, over the bound.
func (s *csvSource) neverClosed(line int) *FileError {
	t := s.track
	lead, _ := t.lead()
	return &FileError{File: s.name, Line: line, Reason: fmt.Sprintf("a quoted field of the record at line %d is never closed: "+
		"the rest of the file (%s, more than the bound of %s for one record) was read into it; "+
		"close the quote (and double each quote inside a quoted field) and run again", line, bytesize.Format(t.total-t.recStart-lead), boundSize(t.limit))}
}

// recordSize is the size of the record just read: its text from its first
// line (the empty lines csv skipped before it aside) to its end, its line
// end aside.
func (s *csvSource) recordSize() int64 {
	end := s.off()
	lead, _ := s.track.lead()
	return end - s.track.lineEnd(end) - s.track.recStart - lead
}

// blankRecord: every field of rec is empty or spaces.
func blankRecord(rec []string) bool {
	for _, f := range rec {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}

// line is the line where the record just read starts.
func (s *csvSource) line() int {
	line, _ := s.r.FieldPos(0)
	return line + s.lineOffset
}

// endLine is the line where the record just read, rec, ends: where its
// last field starts, and the line breaks inside that field.
func (s *csvSource) endLine(rec []string) int {
	last := len(rec) - 1
	line, _ := s.r.FieldPos(last)
	return line + s.lineOffset + strings.Count(rec[last], "\n")
}

// row pairs rec with the header by position; a reason makes it a bad row.
// Fields past the header's count are kept as "(column N)", so that the
// raw row of a failure holds everything the line held. A row holding (read
// as UTF-8) a byte that is not UTF-8 fails alone, naming the byte, its
// field and where it stands. A NUL byte is read as it is, the row naming
// each field that holds one and where (Row.NUL): whether it costs the row
// is the profile's to say (SPEC §4).
func (s *csvSource) row(line int, rec []string, reason string) Row {
	var cols []Col
	if len(rec) > 0 {
		cols = make([]Col, len(rec))
	}
	badUTF8 := -1
	var nul []NULField
	nuls := 0 // NUL bytes in the fields before this one: the next in the record's text is this field's first
	for i := range rec {
		v := rec[i]
		if k := strings.Count(v, "\x00"); k > 0 {
			before := nuls
			nul = append(nul, NULField{Col: i, Where: s.where(line, func(raw []byte) int { return nthByte(raw, 0, before) })})
			nuls += k
		}
		if s.checkUTF8 && !utf8.ValidString(v) {
			if badUTF8 < 0 {
				badUTF8 = i
			}
			v = strings.ToValidUTF8(v, "\uFFFD") // readable in a rejects file, never imported
		}
		cols[i] = Col{Name: s.colName(i), Value: v}
	}
	var reasons []string
	if reason != "" {
		reasons = append(reasons, reason)
	}
	if badUTF8 >= 0 {
		b := rec[badUTF8][firstInvalid(rec[badUTF8])]
		reasons = append(reasons, fmt.Sprintf("not valid UTF-8: byte 0x%02X in %s%s %s", b, s.fieldName(badUTF8),
			s.where(line, func(raw []byte) int { return firstInvalid(string(raw)) }), encodingHint))
	}
	row := Row{Line: line, Cols: cols, NUL: nul}
	if len(reasons) > 0 {
		row.Err = &RowError{File: s.name, Line: line, Reason: strings.Join(reasons, "; ")}
	}
	return row
}

// nthByte is the index of the byte c in raw that comes after skip others,
// or -1. Quoting never adds nor drops a NUL byte, so the n-th of a
// record's text is the n-th of its fields.
func nthByte(raw []byte, c byte, skip int) int {
	at := 0
	for {
		i := bytes.IndexByte(raw[at:], c)
		if i < 0 {
			return -1
		}
		if skip == 0 {
			return at + i
		}
		skip--
		at += i + 1
	}
}

// colName is the name of field i of a row: its header's, or "(column N)"
// past the header.
func (s *csvSource) colName(i int) string {
	if i < len(s.headerRow) {
		return s.headerRow[i]
	}
	return fmt.Sprintf("(column %d)", i+1)
}

// fieldName names field i of a row in a reason: `field 3 ("last_name")`.
func (s *csvSource) fieldName(i int) string {
	return fmt.Sprintf("field %d (%q)", i+1, s.colName(i))
}

// where says where the record just read, starting at line, holds the byte
// that find finds in its text: ", at line L, column C" (C counts bytes
// from 1, as encoding/csv's columns do). The record's text is kept up to
// maxKeptText; past it, where says nothing.
func (s *csvSource) where(line int, find func(raw []byte) int) string {
	raw, whole := s.track.raw(s.track.recStart, s.off())
	// encoding/csv skips empty lines before a record: they are before its line.
	raw = bytes.TrimLeft(raw, "\r\n")
	k := find(raw)
	if k < 0 || !whole && k >= len(raw)-utf8.UTFMax {
		return ""
	}
	before := raw[:k]
	return fmt.Sprintf(", at line %d, column %d", line+bytes.Count(before, []byte{'\n'}), k-bytes.LastIndexByte(before, '\n'))
}

// firstInvalid is the index of the first byte of s that is not UTF-8, or
// -1.
func firstInvalid(s string) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return i
			}
		}
	}
	return -1
}

func (s *csvSource) parseErrorReason(pe *csv.ParseError) string {
	line := pe.Line + s.lineOffset
	switch {
	case errors.Is(pe.Err, csv.ErrBareQuote):
		return fmt.Sprintf(`bare " in an unquoted field at line %d, column %d (a field holding " must be quoted, with each " doubled)`, line, pe.Column)
	case errors.Is(pe.Err, csv.ErrQuote) && s.track.endsInside(pe, s.lineOffset-s.lineBase):
		return fmt.Sprintf("quoted field starting at line %d is never closed (the rest of the file was read into it)", pe.StartLine+s.lineOffset)
	case errors.Is(pe.Err, csv.ErrQuote):
		return fmt.Sprintf(`extraneous " in a quoted field at line %d, column %d (a " inside a quoted field must be doubled)`, line, pe.Column)
	}
	return fmt.Sprintf("%v at line %d, column %d", pe.Err, line, pe.Column)
}

func (s *csvSource) readError(err error) *FileError {
	return &FileError{File: s.name, Reason: "read: " + err.Error(), cause: err}
}

// sniffHeader reads the first record (which may hold quoted line breaks)
// and chooses the delimiter: the one a first line "sep=;" names (Excel's
// way of saying it, which is not the header), else the most frequent of ,
// ; and tab outside quotes, "," on a tie or when there is none. Leading
// blank lines, the sep= line (and a BOM) are dropped and counted in
// skipped; head is nil when the input has nothing else. bareCR reports
// lines that end with a lone "\r" (Excel's "CSV (Macintosh)"). The caller
// reads on from head, then br.
func sniffHeader(br *bufio.Reader) (head []byte, skipped int, comma rune, bareCR bool, dropped int64, err error) {
	sep, skipped, dropped, err := skipPreamble(br)
	if err != nil {
		return nil, 0, 0, false, 0, err
	}
	loneCR := func() bool {
		next, err := br.Peek(1)
		return err != nil || next[0] != '\n'
	}
	var counts [3]int // , ; \t
	count := func(b byte) {
		switch b {
		case ',':
			counts[0]++
		case ';':
			counts[1]++
		case '\t':
			counts[2]++
		}
	}
	var buf []byte
	var read int64
	defer func() { dropped += read - int64(len(head)) }()
	started, inQuotes := false, false
scan:
	for len(buf) < maxHeaderSniff {
		b, err := br.ReadByte()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, 0, 0, false, 0, err
		}
		read++
		if b == '\r' && !inQuotes && loneCR() {
			bareCR = true
			b = '\n'
		}
		if !started {
			switch b {
			case '\n':
				skipped++
				buf = buf[:0]
				continue
			case ' ', '\t', '\r', '\v', '\f':
				buf = append(buf, b)
				continue
			}
			started = true
			for _, c := range buf {
				count(c)
			}
		}
		buf = append(buf, b)
		switch b {
		case '"':
			inQuotes = !inQuotes
		case '\n':
			if !inQuotes {
				break scan
			}
		default:
			if !inQuotes {
				count(b)
			}
		}
	}
	if !started {
		return nil, skipped, cmp.Or(sep, ','), false, 0, nil
	}
	if sep != 0 {
		return buf, skipped, sep, bareCR, dropped, nil
	}
	return buf, skipped, mostFrequent(counts), bareCR, dropped, nil
}

// skipPreamble drops what comes before a CSV file's first line: a BOM,
// and a "sep=;" line, whose delimiter it returns (0: none); skipped counts
// the sep= line, dropped the bytes dropped.
func skipPreamble(br *bufio.Reader) (sep rune, skipped int, dropped int64, err error) {
	if p, _ := br.Peek(len(utf8BOM)); bytes.Equal(p, utf8BOM) {
		if _, err := br.Discard(len(utf8BOM)); err != nil {
			return 0, 0, 0, err
		}
		dropped += int64(len(utf8BOM))
	}
	sep, n := sepLine(br)
	if n > 0 {
		if _, err := br.Discard(n); err != nil {
			return 0, 0, 0, err
		}
		dropped += int64(n)
		skipped++
	}
	return sep, skipped, dropped, nil
}

// mostFrequent is the delimiter counted most often of , ; and tab
// (counts, in that order): "," on a tie or when none was.
func mostFrequent(counts [3]int) rune {
	comma := ','
	best, tie := 0, false
	for i, d := range []rune{',', ';', '\t'} {
		switch {
		case counts[i] > best:
			comma, best, tie = d, counts[i], false
		case counts[i] == best && best > 0:
			tie = true
		}
	}
	if tie {
		comma = ','
	}
	return comma
}

// sepLine reads, without taking it, a first line "sep=X" (any case) that
// names the delimiter X: a tab or a printable ASCII character but the
// quote. It returns X and the length of the line with its line end, or 0, 0.
func sepLine(br *bufio.Reader) (rune, int) {
	p, _ := br.Peek(7)
	if len(p) < 5 || !strings.EqualFold(string(p[:4]), "sep=") {
		return 0, 0
	}
	d := p[4]
	if d != '\t' && (d < 0x20 || d >= 0x7f || d == '"') {
		return 0, 0
	}
	switch rest := p[5:]; {
	case len(rest) == 0:
		return rune(d), 5
	case bytes.HasPrefix(rest, []byte("\r\n")):
		return rune(d), 7
	case rest[0] == '\n' || rest[0] == '\r':
		return rune(d), 6
	}
	return 0, 0
}

// lineEnds makes every lone carriage return outside quotes a line end
// ("\n") for encoding/csv, which knows only "\n" and "\r\n": Excel for
// Mac's "CSV (Macintosh)" ends its lines with "\r", and a file appended to
// by several tools mixes all three. Inside a quoted field a lone "\r" is
// data, but in a file whose own lines end with it (inQuotes: the header's
// line did), where it is a line break too.
//
// Where a quoted field starts and ends is tracked as encoding/csv parses it
// (LazyQuotes off): a quote opens a quoted field only at a field's start,
// "" inside one is a quote, and after a quote error (a bare quote, text
// after a closing quote) csv drops the rest of the line.
type lineEnds struct {
	r        *bufio.Reader
	comma    byte
	inQuotes bool
	state    uint8
}

const (
	atField   = iota // at the start of a field
	inField          // in an unquoted field
	inQuoted         // in a quoted field
	quoteSeen        // a quote in a quoted field: its end, or the first of ""
	toLineEnd        // after a quote error, to the end of the line
)

func (c *lineEnds) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	q := p[:n]
	cr := -2 // the next "\r" at or after i: -1 for none, -2 not looked for yet
	for i := 0; i < n; {
		if cr != -1 && cr < i {
			cr = indexFrom(q, i, '\r')
		}
		switch c.state {
		case inQuoted:
			// Nothing but the closing quote matters, and a line break of
			// the file's own in CR.
			j := indexFrom(q, i, '"')
			if c.inQuotes && cr >= 0 && (j < 0 || cr < j) {
				j = cr
			}
			if j < 0 {
				return n, err
			}
			i = j
		case atField, inField, toLineEnd:
			// Up to the next quote or "\r", what state the bytes leave is
			// told by the last of them: past a "\n" no error holds, and a
			// field starts after a delimiter or a line end.
			j := indexFrom(q, i, '"')
			if j < 0 || cr >= 0 && cr < j {
				j = cr
			}
			e := j
			if e < 0 {
				e = n
			}
			if c.state == toLineEnd && bytes.IndexByte(q[i:e], '\n') >= 0 {
				c.state = inField
			}
			if c.state != toLineEnd && e > i {
				c.state = inField
				if b := q[e-1]; b == c.comma || b == '\n' {
					c.state = atField
				}
			}
			if j < 0 {
				return n, err
			}
			i = j
		}
		c.step(q, i)
		i++
	}
	return n, err
}

// step reads the byte at q[i] (the last of the input read when i is at its
// end): a lone "\r" becomes "\n" where it ends a line, and the state moves
// as encoding/csv's parse would.
func (c *lineEnds) step(q []byte, i int) {
	b := q[i]
	if b == '\r' {
		lone := false
		if i+1 < len(q) {
			lone = q[i+1] != '\n'
		} else if next, err := c.r.Peek(1); err != nil || next[0] != '\n' {
			lone = true
		}
		switch {
		case !lone:
			return // "\r\n": its "\n" ends the line
		case c.state == inQuoted:
			if c.inQuotes {
				q[i] = '\n' // a line break of the file's own
			}
			return
		}
		q[i], b = '\n', '\n'
	}
	c.advance(b)
}

// advance moves the state past the byte b, a lone "\r" read as "\n" where
// it ends a line.
func (c *lineEnds) advance(b byte) {
	switch c.state {
	case atField:
		switch b {
		case '"':
			c.state = inQuoted
		case c.comma, '\n':
		default:
			c.state = inField
		}
	case inField:
		switch b {
		case c.comma, '\n':
			c.state = atField
		case '"':
			c.state = toLineEnd // a bare quote
		}
	case inQuoted:
		if b == '"' {
			c.state = quoteSeen
		}
	case quoteSeen:
		switch b {
		case '"':
			c.state = inQuoted
		case c.comma, '\n':
			c.state = atField
		default:
			c.state = toLineEnd // text after the closing quote
		}
	case toLineEnd:
		if b == '\n' {
			c.state = atField
		}
	}
}

// skipRecord reads the rest of the record under way to its line end
// (included), or to the end of the input, for a record over the bound:
// its bytes go to see (which keeps its start), not to csv, a lone "\r"
// that ends a line made "\n" as Read makes it. closed is false when the
// input ends inside a quoted field.
func (c *lineEnds) skipRecord(see func([]byte)) (closed bool, err error) {
	for {
		if _, err := c.r.Peek(1); err != nil {
			if errors.Is(err, io.EOF) {
				return c.state != inQuoted, nil
			}
			return false, err
		}
		q, _ := c.r.Peek(c.r.Buffered())
		atEnd := false
		if len(q) == 1 && q[0] == '\r' {
			// Whether it ends a line is told by the byte after it.
			var err error
			q, err = c.r.Peek(2)
			atEnd = err != nil
		}
		n, end := c.scan(q, atEnd)
		see(q[:n])
		_, _ = c.r.Discard(n) // cannot fail: they are buffered
		if end {
			return true, nil
		}
	}
}

// scan moves the state over q up to the end of the record, and returns
// how many bytes of q it read and whether the record ended with them. A
// "\r" last in q is left for the next call, unless atEnd says that no byte
// follows it.
func (c *lineEnds) scan(q []byte, atEnd bool) (int, bool) {
	for i := 0; i < len(q); i++ {
		if c.state == inQuoted {
			// Only the closing quote matters, and a line break of the
			// file's own in CR.
			j := bytes.IndexByte(q[i:], '"')
			if c.inQuotes {
				if k := bytes.IndexByte(q[i:], '\r'); k >= 0 && (j < 0 || k < j) {
					j = k
				}
			}
			if j < 0 {
				return len(q), false
			}
			i += j
		}
		b := q[i]
		if b == '\r' {
			lone := atEnd
			if i+1 < len(q) {
				lone = q[i+1] != '\n'
			} else if !atEnd {
				return i, false
			}
			if !lone {
				continue // "\r\n": its "\n" ends the line
			}
			if c.state == inQuoted {
				if c.inQuotes {
					q[i] = '\n'
				}
				continue
			}
			q[i], b = '\n', '\n'
		}
		quoted := c.state == inQuoted
		c.advance(b)
		if b == '\n' && !quoted {
			return i + 1, true
		}
	}
	return len(q), false
}

// indexFrom is the index of the first c in q at or after i, or -1.
func indexFrom(q []byte, i int, c byte) int {
	if j := bytes.IndexByte(q[i:], c); j >= 0 {
		return i + j
	}
	return -1
}

// csvTracker sits between the text and csv.Reader. It bounds the size of
// one record and remembers where the input ends, so that a quote error at
// the very end can be told apart: encoding/csv reports a quoted field that
// runs to the end of the file with the same ErrQuote as a stray quote.
//
// A record over the bound is not given to csv whole: once csv asks for
// more of a record that holds more than the bound, the tracker reads the
// rest of it past csv (lineEnds.skipRecord knows where it ends, as csv
// would), keeping only its start, and gives csv an *overBound in the middle
// of it, so that memory holds a bounded part of any record, whatever its
// size (issue 23: a record of 256 MiB cost 840 MiB).
type csvTracker struct {
	r        *lineEnds
	limit    int64 // bytes one record may take
	recStart int64 // csv's input offset where the current record starts
	over     error // what Read gives once a record is over the bound, until the next record

	// leadAt, leadN, leadNL and leadDone cache lead for the record at
	// leadAt.
	leadAt   int64
	leadN    int64
	leadNL   int
	leadDone bool

	total    int64
	newlines int

	// win holds the input from offset winAt on, so that the text of a
	// record that cannot be parsed can be kept (R4: the raw row); forget
	// drops what lies before the current record. Of a record longer than
	// maxKeptText (a 50 MB note), win keeps the first maxKeptText bytes
	// only, up to cutAt, and tail the input last read, from tailAt on,
	// where the next record begins; cutAt is -1 otherwise.
	win      []byte
	winAt    int64
	cutAt    int64
	tail     []byte
	tailAt   int64
	keptText int64 // maxKeptText, but in tests

	cur      int64 // bytes after the last '\n'
	prev     int64 // length of the line ended by the last '\n', without "\r\n"
	lastByte byte
	eof      bool
}

func (t *csvTracker) Read(p []byte) (int, error) {
	if t.over != nil {
		return 0, t.over
	}
	// csv asks for more of the record under way: all it was given since
	// recStart is of it (its line end aside, a "\r" at most, hence +1).
	if t.limit > 0 && t.total-t.recStart > t.limit+1 {
		if lead, _ := t.lead(); t.total-t.recStart-lead > t.limit+1 {
			closed, err := t.r.skipRecord(t.observe)
			if err != nil {
				return 0, err
			}
			t.eof = t.eof || !closed
			t.over = &overBound{closed: closed}
			return 0, t.over
		}
	}
	n, err := t.r.Read(p)
	t.observe(p[:n])
	if errors.Is(err, io.EOF) {
		t.eof = true
	}
	return n, err
}

// maxKeptText is how much of one record's text is kept for its failure's
// raw row; tailKept is how much of the input last read is kept past it,
// more than csv.Reader reads ahead of the record it parses (4 KiB).
const (
	maxKeptText = 1 << 20
	tailKept    = 64 << 10
)

func (t *csvTracker) observe(p []byte) {
	if len(p) == 0 {
		return
	}
	t.keep(p)
	t.total += int64(len(p))
	last := bytes.LastIndexByte(p, '\n')
	if last < 0 {
		t.cur += int64(len(p))
		t.lastByte = p[len(p)-1]
		return
	}
	t.newlines += bytes.Count(p, []byte{'\n'})
	var n int64
	if start := bytes.LastIndexByte(p[:last], '\n'); start >= 0 {
		n = int64(last - start - 1)
	} else {
		n = t.cur + int64(last)
	}
	before := t.lastByte
	if last > 0 {
		before = p[last-1]
	}
	if before == '\r' && n > 0 {
		n--
	}
	t.prev = n
	t.cur = int64(len(p) - last - 1)
	t.lastByte = p[len(p)-1]
}

// keep adds the input just read to the window: whole, or, past
// maxKeptText of the current record, to the tail only.
func (t *csvTracker) keep(p []byte) {
	if t.cutAt < 0 {
		t.win = append(t.win, p...)
		head := max(t.recStart-t.winAt, 0) + t.keptText
		if int64(len(t.win)) <= head+2*tailKept {
			return
		}
		// The empty lines before the record are not of its text: as
		// many are kept beside it, up to maxKeptText.
		lead, _ := t.lead()
		head += min(lead, t.keptText)
		if int64(len(t.win)) <= head+2*tailKept {
			return
		}
		t.tail = append(t.tail[:0], t.win[int64(len(t.win))-tailKept:]...)
		t.tailAt = t.winAt + int64(len(t.win)) - tailKept
		t.win = t.win[:head]
		t.cutAt = t.winAt + head
		return
	}
	t.tail = append(t.tail, p...)
	if drop := len(t.tail) - 2*tailKept; drop > 0 {
		n := copy(t.tail, t.tail[drop:])
		t.tail = t.tail[:n]
		t.tailAt += int64(drop)
	}
}

// forget lets the input before offset off go: once it is most of the
// buffer, what is left moves to the front, and the buffer is reused. A new
// record starts at off: what Read gave for the one before is over.
func (t *csvTracker) forget(off int64) {
	t.over = nil
	if t.cutAt >= 0 {
		if off < t.tailAt {
			return // still inside the long record
		}
		// The long record is over: the window goes on from the tail.
		t.win = append(t.win[:0], t.tail[off-t.tailAt:]...)
		t.winAt, t.cutAt = off, -1
		t.tail = t.tail[:0]
	}
	cut := min(max(off-t.winAt, 0), int64(len(t.win)))
	if cut < 64<<10 || cut < int64(len(t.win))/2 {
		return
	}
	n := copy(t.win, t.win[cut:])
	t.win = t.win[:n]
	t.winAt += cut
	if cap(t.win) > 4<<20 && n < cap(t.win)/4 {
		t.win = append([]byte(nil), t.win...) // let a large record's buffer go
	}
}

// text returns the input between two offsets, as far as it is kept: of a
// record longer than maxKeptText, its start and a note of what is left out.
func (t *csvTracker) text(from, to int64) string {
	a := min(max(from-t.winAt, 0), int64(len(t.win)))
	b := min(max(to-t.winAt, a), int64(len(t.win)))
	if t.cutAt < 0 || to <= t.cutAt {
		return string(t.win[a:b])
	}
	return string(t.win[a:b]) + fmt.Sprintf("\n[… %d more bytes of this record, not kept]", to-max(t.cutAt, from))
}

// raw returns the input between two offsets as far as it is kept, and
// whether that is all of it.
func (t *csvTracker) raw(from, to int64) ([]byte, bool) {
	a := min(max(from-t.winAt, 0), int64(len(t.win)))
	b := min(max(to-t.winAt, a), int64(len(t.win)))
	return t.win[a:b], t.cutAt < 0 || to <= t.cutAt
}

// endsInside reports whether pe is a quoted field cut off by the end of
// the input: encoding/csv reports it on the last line, at a column past
// that line's text, whereas a stray quote is reported at the quote itself.
// shift is what turns csv's line numbers into the tracker's (a csv.Reader
// that began after the tracker's first line).
func (t *csvTracker) endsInside(pe *csv.ParseError, shift int) bool {
	if !t.eof {
		return false
	}
	lastLine, lastLen := t.newlines, t.prev
	if t.cur > 0 {
		lastLine, lastLen = t.newlines+1, t.cur
		if t.lastByte == '\r' {
			lastLen--
		}
	}
	return pe.Line+shift == lastLine && int64(pe.Column) > lastLen
}

// lead is how many bytes of empty lines the record under way starts with,
// as far as they are kept (up to maxKeptText and more), and how many lines
// they end: csv skips them, and they are not of the record's text.
func (t *csvTracker) lead() (int64, int) {
	if t.leadDone && t.leadAt == t.recStart {
		return t.leadN, t.leadNL
	}
	a := min(max(t.recStart-t.winAt, 0), int64(len(t.win)))
	w := t.win[a:]
	rest := bytes.TrimLeft(w, "\r\n")
	n := int64(len(w) - len(rest))
	nl := bytes.Count(w[:n], []byte{'\n'})
	// Known for good once the record's text has started, or once the
	// window is cut short.
	if len(rest) > 0 || t.cutAt >= 0 {
		t.leadAt, t.leadN, t.leadNL, t.leadDone = t.recStart, n, nl, true
	}
	return n, nl
}

// lineEnd is how many bytes of a line end ("\n" or "\r\n") stand just
// before offset off, which is at most what csv reads ahead behind the
// input last read.
func (t *csvTracker) lineEnd(off int64) int64 {
	if t.byteAt(off-1) != '\n' {
		return 0
	}
	if t.byteAt(off-2) == '\r' {
		return 2
	}
	return 1
}

// byteAt is the byte of the input at offset off, as far as it is kept, or 0.
func (t *csvTracker) byteAt(off int64) byte {
	if i := off - t.winAt; i >= 0 && i < int64(len(t.win)) && (t.cutAt < 0 || off < t.cutAt) {
		return t.win[i]
	}
	if i := off - t.tailAt; t.cutAt >= 0 && i >= 0 && i < int64(len(t.tail)) {
		return t.tail[i]
	}
	return 0
}

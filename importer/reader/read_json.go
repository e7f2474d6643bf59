package reader

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"crmimport/bytesize"
)

// wrapperKeys are the keys of an object that holds the records array
// ({"records": […]} from Salesforce, {"results": […]} from HubSpot…).
var wrapperKeys = [...]string{"records", "results", "data"}

type jsonState int

const (
	jsonStart   jsonState = iota // nothing read yet
	jsonArray                    // inside the top-level array
	jsonWrapped                  // inside the array of a wrapper object
	jsonStream                   // successive top-level values that span lines (concatenated JSON)
	jsonLines                    // JSON Lines: one record per line, each read on its own
)

// jsonSource streams the records of a JSON or JSON Lines file with
// json.Decoder tokens, so that only one record is held at a time and keys
// keep their order. An array, a wrapper object and values that span lines
// are read as one stream, where a syntax error ends the file (the decoder
// cannot find the next record); JSON Lines are read line by line, each
// line with a decoder of its own, so that a broken line fails alone and
// reading goes on at the next (SPEC §4, R4).
type jsonSource struct {
	name      string
	format    Format
	text      *bufio.Reader // the file's text, BOM removed
	dec       *json.Decoder // the stream's decoder (JSON Lines: each line has one of its own)
	lines     *lineCounter  // what dec reads through; its limit bounds one record in every state
	checkUTF8 bool
	state     jsonState
	// limit bounds one record (maxRecordBytes), of which a failure keeps
	// keptText bytes; after a record of renewAt bytes (renewAfter) a new
	// decoder reads on.
	limit, keptText, renewAt int64
	// wrapKey and wrapLine are the key of a wrapper object whose array
	// holds the records, and the line where it stands.
	wrapKey  string
	wrapLine int
	// survey reads the outline of the file, not its records (SurveyJSON).
	survey bool
	// JSON Lines: the number of the last line read and its bytes; oneLine
	// marks the reader of one line (linePart), whose end is that line's.
	lineNo   int
	lineBuf  []byte
	oneLine  bool
	linePart *jsonSource // what reads one line, made once
}

func newJSONSource(name string, text io.Reader, format Format, checkUTF8 bool, limit, keptText int64) *jsonSource {
	br := bufio.NewReaderSize(text, 64<<10)
	if p, _ := br.Peek(len(utf8BOM)); bytes.Equal(p, utf8BOM) {
		_, _ = br.Discard(len(utf8BOM)) // cannot fail: the bytes are buffered
	}
	lines := &lineCounter{r: br, line: 1, limit: limit}
	dec := json.NewDecoder(lines)
	dec.UseNumber()
	return &jsonSource{name: name, format: format, text: br, dec: dec, lines: lines, checkUTF8: checkUTF8, limit: limit, keptText: keptText}
}

// header is nil: each record of JSON names its own columns.
func (s *jsonSource) header() []string { return nil }

// next reads the next record, as where the file stands says: at its
// start, in its array of records, in its stream of values or lines.
func (s *jsonSource) next() (Row, error) {
	switch s.state {
	case jsonStart:
		return s.start()
	case jsonArray, jsonWrapped:
		return s.nextElement()
	case jsonLines:
		return s.nextLine()
	default: // jsonStream
		s.mark()
		return s.element()
	}
}

// start reads what the file begins with: an array of records, an object
// (a record, or a wrapper holding the array), or another value; or, for
// JSON Lines, its first line.
func (s *jsonSource) start() (Row, error) {
	if s.format == FormatJSONL {
		return s.startLines()
	}
	tok, err := s.token(true)
	if err != nil {
		return Row{}, err
	}
	switch tok {
	case json.Delim('['):
		s.state = jsonArray
		if s.survey {
			return Row{}, io.EOF
		}
		return s.next()
	case json.Delim('{'):
		return s.firstObject()
	}
	s.state = jsonStream
	if s.survey {
		return Row{}, io.EOF
	}
	return s.nonObject(tok)
}

// firstObject reads the object the file begins with: a wrapper, whose
// array of records is read next, or the first record of a stream.
func (s *jsonSource) firstObject() (Row, error) {
	line := s.tokenLine()
	from := s.dec.InputOffset() - 1
	row, wrapped, err := s.readFirstObject(line)
	switch {
	case errors.Is(err, errRecordTooLarge):
		// Read key by key, to find a wrapper's array, it cannot be
		// read past as one record.
		return Row{}, &FileError{File: s.name, Line: line, Reason: fmt.Sprintf("the object at line %d is over the bound of %s for one record, "+
			"and crmimport cannot tell whether it holds the records (an object holding an array of them) or is one: "+
			"if the file holds one record per line, name it .jsonl and run again (a record over the bound then fails alone)", line, boundSize(s.limit)), cause: err}
	case err != nil:
		return Row{}, err
	case wrapped:
		s.state = jsonWrapped
		return s.next()
	case s.survey:
		return Row{}, io.EOF
	}
	s.state = jsonStream
	if size := s.dec.InputOffset() - from; size > s.limit {
		// Over the bound by what the decoder reads at once: its
		// text is gone by now.
		return s.overRow(line, s.lines.lineAt(s.dec.InputOffset()-1), size, nil), nil
	}
	s.linesAfter(line)
	return row, nil
}

// nextElement reads the next element of the array of records, or its end.
func (s *jsonSource) nextElement() (Row, error) {
	// The bound counts what the next element takes from here.
	s.mark()
	for s.survey && s.dec.More() {
		var raw json.RawMessage
		if err := s.dec.Decode(&raw); errors.Is(err, errRecordTooLarge) {
			if _, err := s.skipOver(); err != nil {
				return Row{}, err
			}
		} else if err != nil {
			return Row{}, s.fileError(err)
		}
		s.mark() // one record held at a time
	}
	if !s.dec.More() {
		if _, err := s.token(false); err != nil { // the closing ], or the error More kept to itself
			if !errors.Is(err, errRecordTooLarge) {
				return Row{}, err
			}
			row, err := s.skipOver()
			if err != nil || !s.survey {
				return row, err
			}
			return s.next()
		}
		if s.state == jsonWrapped {
			return Row{}, s.endWrapper()
		}
		return Row{}, s.expectEnd("after the closing ] of the array")
	}
	return s.element()
}

// mark marks the value the decoder reads next (lineCounter.mark), from what
// it has read ahead.
func (s *jsonSource) mark() {
	off := s.dec.InputOffset()
	ahead := s.dec.Buffered().(io.ByteReader) // a *bytes.Reader over the decoder's buffer
	for i := off; ; i++ {
		b, err := ahead.ReadByte()
		if err != nil {
			s.lines.mark(off, -1)
			return
		}
		if !spaceOrComma(b) {
			s.lines.mark(off, i)
			return
		}
	}
}

// spaceOrComma: what may come between the values of an array.
func spaceOrComma(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\n' || b == ',' }

// element reads the next value of an array of records, or of a stream of
// them, as one record, bounded (maxRecordBytes): whole, then its keys and
// values from memory (objectRow); one over the bound fails alone, read
// past without being held (skipOver). Each element is marked (lineCounter)
// before it is read.
func (s *jsonSource) element() (Row, error) {
	var raw json.RawMessage
	err := s.dec.Decode(&raw)
	switch {
	case errors.Is(err, io.EOF) && s.state == jsonStream:
		return Row{}, io.EOF // white space to the end
	case errors.Is(err, errRecordTooLarge):
		return s.skipOver()
	case err != nil:
		return Row{}, s.fileError(err)
	}
	row := s.elementRow(raw)
	if s.renewAt > 0 && int64(len(raw)) > s.renewAt {
		// A new decoder reads on, so that the buffers this one grew for
		// the record go.
		rest, _ := io.ReadAll(s.dec.Buffered())
		s.lines.lineAt(s.dec.InputOffset())
		s.readOn(rest)
	}
	return row, nil
}

// elementRow is the row of raw, a whole value the decoder has just read: a
// record, or the bad row of a value over the bound or not an object.
func (s *jsonSource) elementRow(raw []byte) Row {
	end := s.dec.InputOffset()
	line := s.lines.lineAt(end - int64(len(raw)))
	if size := int64(len(raw)); size > s.limit {
		// Over the bound by what the decoder reads at once.
		return s.overRow(line, line+bytes.Count(raw, []byte{'\n'}), size, raw)
	}
	if raw[0] != '{' {
		return Row{Line: line, Err: &RowError{File: s.name, Line: line, Reason: "expected an object, found " + jsonKind(raw[0])}}
	}
	return s.objectRow(raw, line)
}

// jsonKind names the kind of the JSON value that starts with c.
func jsonKind(c byte) string {
	switch c {
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	case '[':
		return "array"
	case '{':
		return "object"
	}
	return "number"
}

// readRecord reads the value whose first token is tok as a record: an
// object, or the bad row of a value that is not one.
func (s *jsonSource) readRecord(tok json.Token) (Row, error) {
	if tok == json.Delim('{') {
		return s.readObject(s.tokenLine())
	}
	return s.nonObject(tok)
}

// overRow is the row of a value over the bound, of size bytes from line
// to last, which starts with head: its reason, and as its text its start,
// at most keptText bytes of it (R4 keeps the raw row, but not the record
// crmimport does not read).
func (s *jsonSource) overRow(line, last int, size int64, head []byte) Row {
	head = head[:min(int64(len(head)), s.keptText, size)]
	text := string(head)
	if more := size - int64(len(head)); more > 0 {
		text += fmt.Sprintf("\n[… %d more bytes of this record, not kept]", more)
	}
	return Row{Line: line, Err: &RowError{File: s.name, Line: line, Reason: tooLargeReason(size, s.limit, line, last)}, Text: text, over: true}
}

// skipOver reads past the value under way, which is over the bound, without
// holding more than its start: from where the decoder stands (an element's
// start, perhaps white space and a comma first) to its end. A new decoder
// reads on after it, in the same place of the file (readOn). The value's
// row fails alone (R4).
func (s *jsonSource) skipOver() (Row, error) {
	c := s.lines
	var v valueScan
	v.keep = s.keptText
	// What the decoder read of the value, from where it stands: the value's
	// start (a record's, or the element's before it, white space and a
	// comma first), then the rest of the input.
	chunk, _ := io.ReadAll(s.dec.Buffered())
	c.lineAt(s.dec.InputOffset())
	var buf []byte
	var rest []byte
	for {
		if end := v.scan(chunk); v.done {
			rest = chunk[end:]
			break
		}
		if buf == nil {
			buf = make([]byte, 64<<10)
		}
		n, err := c.r.Read(buf)
		chunk = buf[:n]
		if n > 0 {
			continue
		}
		if errors.Is(err, io.EOF) {
			v.end()
			if v.done {
				break
			}
			if !v.started {
				return Row{}, &FileError{File: s.name, Line: c.line + v.nlBefore, Reason: fmt.Sprintf(
					"more than %s of white space, more than the bound for one record", boundSize(s.limit))}
			}
			line := c.line + v.nlBefore
			return Row{}, &FileError{File: s.name, Line: line, Reason: fmt.Sprintf("the value starting at line %d runs to the end of the file "+
				"(%s, more than the bound of %s for one record): is the file cut short?", line, bytesize.Format(v.size), boundSize(s.limit))}
		}
		if err != nil {
			return Row{}, &FileError{File: s.name, Line: c.line + v.nlBefore + v.nlIn + 1, Reason: "read: " + err.Error(), cause: err}
		}
	}
	if v.none {
		return Row{}, &FileError{File: s.name, Line: c.line + v.nlBefore, Reason: fmt.Sprintf(
			"more than %s of white space, more than the bound for one record", boundSize(s.limit))}
	}
	line := c.line + v.nlBefore
	last := line + v.nlIn
	row := s.overRow(line, last, v.size, v.head)
	c.line = last // where rest starts: the line of the value's last byte
	s.readOn(rest)
	return row, nil
}

// readOn reads on from the place of the file where the decoder stands
// (rest: what it read past it; the line counter's line: that place's) with
// a new decoder: after a value skipped, and after a long record, whose
// buffers the old one would keep. It is given what the old one's state
// needs to read on as it would have: an array's elements, the rest of a
// wrapper object.
func (s *jsonSource) readOn(rest []byte) {
	open, tokens := "", 0
	switch s.state {
	case jsonArray:
		open, tokens = "[null", 2 // then a comma and the next element, or the closing ]
	case jsonWrapped:
		open, tokens = `{"":[null`, 4 // then the elements, the ] and the rest of the wrapper
	}
	prefix := append([]byte(open), rest...)
	s.lines = &lineCounter{r: io.MultiReader(bytes.NewReader(prefix), s.lines.r), line: s.lines.line, limit: s.limit}
	s.dec = json.NewDecoder(s.lines)
	s.dec.UseNumber()
	for range tokens {
		_, _ = s.dec.Token() // cannot fail: they are the prefix's
	}
}

// valueScan finds where a JSON value ends, byte by byte, keeping its
// start: what skipOver reads a value over the bound with.
type valueScan struct {
	started, done, none bool // none: an array or object ended where a value was expected
	depth               int
	inString, escaped   bool
	scalar              bool
	size                int64  // the value's bytes so far
	nlBefore, nlIn      int    // line breaks before the value, and in it
	head                []byte // its first keep bytes
	keep                int64
}

// scan reads p, and returns how much of it is before the value's end (all
// of it while the value goes on).
func (v *valueScan) scan(p []byte) int {
	i, from := 0, 0
	if !v.started {
		for i < len(p) && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n' || p[i] == ',') {
			i++
		}
		v.nlBefore += bytes.Count(p[:i], []byte{'\n'})
		if i == len(p) {
			return len(p)
		}
		v.started = true
		switch p[i] {
		case '{', '[':
			v.depth = 1
		case '"':
			v.inString = true
		case ']', '}':
			v.none, v.done = true, true
			return i
		default:
			v.scalar = true
		}
		from = i
		i++
	}
	for i < len(p) && !v.done {
		switch {
		case v.escaped:
			v.escaped = false
		case v.inString:
			j := bytes.IndexAny(p[i:], "\"\\")
			if j < 0 {
				i = len(p)
				continue
			}
			i += j
			if p[i] == '\\' {
				v.escaped = true
			} else {
				v.inString = false
				v.done = v.depth == 0 // a string alone
			}
		case v.scalar:
			if b := p[i]; b == ' ' || b == '\t' || b == '\r' || b == '\n' || b == ',' || b == ']' || b == '}' {
				v.done = true
				continue // the delimiter is not of the value
			}
		case p[i] == '"':
			v.inString = true
		case p[i] == '{' || p[i] == '[':
			v.depth++
		case p[i] == '}' || p[i] == ']':
			v.depth--
			v.done = v.depth == 0
		}
		i++
	}
	v.add(p[from:i])
	return i
}

// add counts b, the value's next bytes, and keeps them while its start is
// kept.
func (v *valueScan) add(b []byte) {
	v.size += int64(len(b))
	v.nlIn += bytes.Count(b, []byte{'\n'})
	if room := v.keep - int64(len(v.head)); room > 0 {
		v.head = append(v.head, b[:min(int64(len(b)), room)]...)
	}
}

// end is the end of the input: a number, true, false or null ends there.
func (v *valueScan) end() { v.done = v.done || v.scalar }

// startLines reads the first record of a JSON Lines file. An array is
// tolerated in a .jsonl file too, and read as one. A first record that
// does not end on its line but on a later one makes the file concatenated
// JSON (pretty-printed objects one after the other, as jq writes them
// without -c), read as a stream; one that does not end at all is a broken
// first line, which fails alone.
func (s *jsonSource) startLines() (Row, error) {
	s.state = jsonLines
	for {
		text, err := s.readLine()
		if err != nil {
			return s.lineError(text, err)
		}
		t := bytes.TrimLeft(text, jsonSpace)
		if len(t) == 0 {
			continue
		}
		if t[0] == '[' {
			// The line with its line break, then the rest; its first token is the [.
			s.streamFrom(bytes.Clone(s.lineBuf), s.lineNo, s.text)
			if _, err := s.token(false); err != nil {
				return Row{}, err
			}
			s.state = jsonArray
			return s.next()
		}
		row, incomplete := s.parseLine(text, s.lineNo)
		if incomplete && t[0] == '{' {
			if r, ok := s.tryStream(s.lineBuf, s.lineNo); ok {
				return r, nil
			}
		}
		s.letGo()
		return row, nil
	}
}

// tryStream reads a first record that starts on line (raw: the line with
// its line break) and does not end there as a stream of values spanning
// lines. When it ends on a later line, the file is read as such a stream
// from there on; when it does not, reading goes back to the line after
// line, as JSON Lines.
func (s *jsonSource) tryStream(raw []byte, line int) (Row, bool) {
	rest := s.text
	rec := &recorder{r: rest}
	s.streamFrom(bytes.Clone(raw), line, rec)
	var v json.RawMessage
	if err := s.dec.Decode(&v); err == nil {
		rec.stop()
		s.state = jsonStream
		return s.elementRow(v), true
	}
	// What the attempt read after line is read again, line by line (it is
	// at most one record: the line counter's limit stopped it).
	s.text = bufio.NewReaderSize(io.MultiReader(bytes.NewReader(rec.buf), rest), 64<<10)
	rec.stop()
	return Row{}, false
}

// streamFrom makes the stream's decoder read prefix, which starts at line,
// then src.
func (s *jsonSource) streamFrom(prefix []byte, line int, src io.Reader) {
	s.lines = &lineCounter{r: io.MultiReader(bytes.NewReader(prefix), src), line: line, limit: s.limit}
	s.dec = json.NewDecoder(s.lines)
	s.dec.UseNumber()
}

// linesAfter goes on line by line after the first record of a .json file
// holding JSON Lines, when that record, which starts at line, ends there
// too; the rest of that line is read as a line of its own. A record that
// spans lines makes the file concatenated JSON, read as a stream.
func (s *jsonSource) linesAfter(line int) {
	if s.tokenLine() != line { // the line of its closing }
		return
	}
	rest, _ := io.ReadAll(s.dec.Buffered()) // what the decoder read past the record
	s.text = bufio.NewReaderSize(io.MultiReader(bytes.NewReader(rest), s.text), 64<<10)
	s.lineNo = line - 1
	s.state = jsonLines
}

// nextLine reads the next record of JSON Lines: blank lines are skipped.
func (s *jsonSource) nextLine() (Row, error) {
	for {
		text, err := s.readLine()
		if err != nil {
			return s.lineError(text, err)
		}
		if len(bytes.Trim(text, jsonSpace)) == 0 {
			continue
		}
		row, _ := s.parseLine(text, s.lineNo)
		s.letGo()
		return row, nil
	}
}

// letGo lets a long line's buffer go once its record is read: kept to the
// next line, it would be held, twice the size of the record perhaps, while
// the record is written.
func (s *jsonSource) letGo() {
	if cap(s.lineBuf) > 4<<20 {
		s.lineBuf = nil
	}
}

// jsonSpace is the white space of JSON (RFC 8259).
const jsonSpace = " \t\r\n"

// parseLine reads one line of JSON Lines as one record: an object alone on
// its line is read where it lies (objectRow), any other line with a decoder
// of its own, which says what is wrong with it. A line that is not one
// JSON value, or holds more than one, fails alone (SPEC §4, step 0),
// keeping its text (R4); so does a value that is not an object. incomplete
// tells a line that ends inside its value.
func (s *jsonSource) parseLine(text []byte, line int) (row Row, incomplete bool) {
	if t := bytes.TrimLeft(text, jsonSpace); len(t) > 0 && t[0] == '{' && json.Valid(t) {
		return s.objectRow(t, line), false
	}
	p := s.linePart
	if p == nil {
		p = &jsonSource{name: s.name, format: s.format, checkUTF8: s.checkUTF8, oneLine: true, limit: s.limit, keptText: s.keptText}
		s.linePart = p
	}
	p.lines = &lineCounter{r: bytes.NewReader(text), line: line}
	p.dec = json.NewDecoder(p.lines)
	p.dec.UseNumber()
	tok, err := p.token(false)
	if err == nil {
		row, err = p.readRecord(tok)
	}
	if err == nil {
		if rest := text[p.dec.InputOffset():]; len(bytes.Trim(rest, jsonSpace)) > 0 {
			err = &FileError{File: s.name, Line: line, Reason: fmt.Sprintf("unexpected data after the record (%q): "+
				"a line of JSON Lines holds one record", firstLine(bytes.TrimLeft(rest, jsonSpace), 40))}
		}
	}
	keepText := row.Err != nil && row.Cols == nil // a line not read as a record keeps its text
	if err != nil {
		reason := err.Error()
		var fe *FileError
		if errors.As(err, &fe) {
			reason = fe.Reason
		}
		row.Line = line
		row.Err = &RowError{File: s.name, Line: line, Reason: reason}
		incomplete = errors.Is(err, io.ErrUnexpectedEOF)
		keepText = true
	}
	if keepText {
		row.Text = keptLine(text)
	}
	return row, incomplete
}

// readLine reads the next line of JSON Lines, without its line break, and
// numbers it (lineNo). Of a line over the bound for one record it keeps
// the first keptText bytes, skips the rest and returns an *overLine; io.EOF
// after the last line.
func (s *jsonSource) readLine() ([]byte, error) {
	s.letGo()
	buf := s.lineBuf[:0]
	var n int64 // the line's bytes, its break included
	over := false
	var last [2]byte // the line's last two bytes
	for {
		chunk, err := s.text.ReadSlice('\n')
		n += int64(len(chunk))
		switch {
		case over:
		case n > s.limit+2: // more than the bound and a line break
			over = true
			buf = append(buf, chunk[:min(int64(len(chunk)), max(s.keptText-int64(len(buf)), 0))]...)
			buf = buf[:min(int64(len(buf)), s.keptText)]
		default:
			if cap(buf)-len(buf) < len(chunk) {
				// Twice as long: a long line is copied a few times over,
				// not the dozens append's growth takes.
				buf = slices.Grow(buf, max(len(chunk), len(buf)))
			}
			buf = append(buf, chunk...)
		}
		if k := len(chunk); k >= 2 {
			last = [2]byte{chunk[k-2], chunk[k-1]}
		} else if k == 1 {
			last = [2]byte{last[1], chunk[0]}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			if n == 0 {
				return nil, io.EOF
			}
			err = nil
		}
		s.lineBuf = buf
		if err != nil {
			return nil, err
		}
		s.lineNo++
		size := n
		switch {
		case last[1] == '\n' && last[0] == '\r' && n >= 2:
			size -= 2
		case last[1] == '\n', last[1] == '\r':
			size--
		}
		if over || size > s.limit {
			return buf[:min(int64(len(buf)), s.keptText, size)], &overLine{size: size}
		}
		return buf[:size], nil
	}
}

// overLine is a line of JSON Lines over the bound for one record.
type overLine struct{ size int64 }

func (e *overLine) Error() string { return "line over the bound" }

// lineError is what readLine's error comes to: the end of the file, a
// line over the bound that fails alone, or a read error that ends the file.
func (s *jsonSource) lineError(text []byte, err error) (Row, error) {
	var ol *overLine
	switch {
	case errors.Is(err, io.EOF):
		return Row{}, io.EOF
	case errors.As(err, &ol):
		return s.overRow(s.lineNo, s.lineNo, ol.size, text), nil
	}
	return Row{}, &FileError{File: s.name, Line: s.lineNo + 1, Reason: "read: " + err.Error(), cause: err}
}

// keptLine is a line's text as a failure keeps it (R4): at most
// maxKeptText bytes of it.
func keptLine(text []byte) string {
	if len(text) <= maxKeptText {
		return string(text)
	}
	return string(text[:maxKeptText]) + fmt.Sprintf("\n[… %d more bytes of this line, not kept]", len(text)-maxKeptText)
}

// recorder keeps what is read through it, until stopped.
type recorder struct {
	r   io.Reader
	buf []byte
	off bool
}

func (r *recorder) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if !r.off {
		r.buf = append(r.buf, p[:n]...)
	}
	return n, err
}

func (r *recorder) stop() { r.off, r.buf = true, nil }

// readFirstObject reads the first object of a .json file that does not
// start with "[": either a wrapper, whose first "records"/"results"/"data"
// key holding an array is where the records are (wrapped is then true and
// the decoder stands inside that array), or the first record of JSON
// Lines content.
func (s *jsonSource) readFirstObject(line int) (row Row, wrapped bool, err error) {
	var cols []Col
	badUTF8 := false
	for s.dec.More() {
		key, err := s.key()
		if err != nil {
			return Row{}, false, err
		}
		if !isWrapperKey(key) {
			v, nested, ok, err := s.value()
			if err != nil {
				return Row{}, false, err
			}
			badUTF8 = badUTF8 || !ok
			cols = append(cols, Col{Name: key, Value: v, Nested: nested})
			continue
		}
		keyLine := s.tokenLine()
		tok, err := s.token(false)
		if err != nil {
			return Row{}, false, err
		}
		if tok == json.Delim('[') {
			s.wrapKey, s.wrapLine = key, keyLine
			return Row{}, true, nil
		}
		v, err := s.rebuild(tok)
		if err != nil {
			return Row{}, false, err
		}
		_, isObject := tok.(json.Delim)
		cols = append(cols, Col{Name: key, Value: v, Nested: isObject})
	}
	if _, err := s.token(false); err != nil { // the closing }
		return Row{}, false, err
	}
	return s.row(line, cols, badUTF8), false, nil
}

// endWrapper skips what follows the records array in a wrapper object and
// makes sure that no other array of records is there (a second key of
// wrapperKeys, or the same key again, holding an array) and that nothing
// follows the object (JSON Lines whose first record happens to hold a
// "data" array): either would lose records silently. crmimport cannot tell
// which of two arrays holds the records, so the file fails (SPEC §4).
func (s *jsonSource) endWrapper() error {
	for s.dec.More() {
		key, err := s.key()
		if err != nil {
			return err
		}
		if !isWrapperKey(key) {
			if err := s.skipValue(); err != nil {
				return err
			}
			continue
		}
		line := s.tokenLine()
		tok, err := s.token(false)
		if err != nil {
			return err
		}
		if tok == json.Delim('[') {
			return &FileError{File: s.name, Line: line, Reason: s.secondArray(key, line)}
		}
		if _, ok := tok.(json.Delim); ok {
			if err := s.skipRest(); err != nil {
				return err
			}
		}
	}
	if _, err := s.token(false); err != nil { // the wrapper's closing }
		return err
	}
	return s.expectEnd("after the object holding the records (JSON Lines? name the file .jsonl)")
}

// secondArray says that the wrapper object holds a second array of
// records, key at line, and what to do.
func (s *jsonSource) secondArray(key string, line int) string {
	what := fmt.Sprintf("holds two arrays of records, %s at line %d and %s at line %d", quoteJSON(s.wrapKey), s.wrapLine, quoteJSON(key), line)
	if key == s.wrapKey {
		what = fmt.Sprintf("holds the key %s twice, each an array of records (at lines %d and %d)", quoteJSON(key), s.wrapLine, line)
	}
	return what + ": crmimport reads one array per file and cannot tell which one holds the records; " +
		"keep the one that does (or put each in a file of its own) and run again"
}

// SurveyJSON reads the outline of a JSON file, not its records, and
// returns the *FileError that reading its records would end with after
// them, when the file is an object whose array of records is followed by
// another (or by more data): a task checks this before its first record,
// so that none of the records of an array that may not be the right one
// is imported before the file fails. It reads an array's or JSON Lines'
// first token only, and skips the records of a wrapper's array one by one
// (never the file whole).
func SurveyJSON(r io.Reader, opt ReadOptions) error {
	if opt.Format != FormatJSON {
		return nil
	}
	rr, err := NewRowReader(r, opt)
	if err != nil {
		return err
	}
	rr.src.(*jsonSource).survey = true
	for {
		if _, err := rr.Next(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// expectEnd returns io.EOF when the input holds nothing more, or a
// *FileError saying that something comes after what.
func (s *jsonSource) expectEnd(after string) error {
	_, err := s.dec.Token()
	switch {
	case errors.Is(err, io.EOF):
		return io.EOF
	case err != nil:
		return s.fileError(err)
	}
	return &FileError{File: s.name, Line: s.tokenLine(), Reason: "unexpected data " + after}
}

// readObject reads the rest of an object whose "{" starts at line. On an
// error it also returns what it could read (a broken line of JSON Lines
// fails with it).
func (s *jsonSource) readObject(line int) (Row, error) {
	var cols []Col
	badUTF8 := false
	for s.dec.More() {
		key, err := s.key()
		if err != nil {
			return Row{Line: line, Cols: cols}, err
		}
		v, nested, ok, err := s.value()
		if err != nil {
			return Row{Line: line, Cols: cols}, err
		}
		badUTF8 = badUTF8 || !ok
		cols = append(cols, Col{Name: key, Value: v, Nested: nested})
	}
	if _, err := s.token(false); err != nil { // the closing }
		return Row{Line: line, Cols: cols}, err
	}
	return s.row(line, cols, badUTF8), nil
}

func (s *jsonSource) row(line int, cols []Col, badUTF8 bool) Row {
	row := Row{Line: line, Cols: cols}
	if badUTF8 {
		row.Err = &RowError{File: s.name, Line: line, Reason: invalidUTF8Reason}
	}
	return row
}

// nonObject makes the bad row for an element that is not an object,
// skipping the rest of it when it is an array.
func (s *jsonSource) nonObject(tok json.Token) (Row, error) {
	line := s.tokenLine()
	what := "string"
	switch tok.(type) {
	case json.Number:
		what = "number"
	case bool:
		what = "boolean"
	case nil:
		what = "null"
	case json.Delim:
		what = "array"
		if err := s.skipRest(); err != nil {
			return Row{}, err
		}
	}
	reason := "expected an object, found " + what
	return Row{Line: line, Err: &RowError{File: s.name, Line: line, Reason: reason}}, nil
}

func (s *jsonSource) key() (string, error) {
	tok, err := s.token(false)
	if err != nil {
		return "", err
	}
	key, ok := tok.(string)
	if !ok { // json.Decoder does not return anything else here
		return "", &FileError{File: s.name, Line: s.tokenLine(), Reason: fmt.Sprintf("invalid JSON: object key %v is not a string", tok)}
	}
	return key, nil
}

// value reads one value as the text of a Col: a string as is, a number as
// its literal, true/false, null as "", an object or array as compact JSON
// (nested). ok is false when the value is not valid UTF-8 while it should be.
func (s *jsonSource) value() (text string, nested, ok bool, err error) {
	var raw json.RawMessage
	if err := s.dec.Decode(&raw); err != nil {
		return "", false, false, s.fileError(err)
	}
	ok = !s.checkUTF8 || utf8.Valid(raw)
	switch raw[0] {
	case '"':
		var str string
		if err := json.Unmarshal(raw, &str); err != nil {
			return "", false, false, s.fileError(err)
		}
		return str, false, ok, nil
	case 'n':
		return "", false, ok, nil
	case '{', '[':
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return "", false, false, s.fileError(err)
		}
		return b.String(), true, ok, nil
	}
	return string(raw), false, ok, nil // a number's literal, true, false
}

// rebuild turns a value whose first token was already read back into the
// text value() would have given.
func (s *jsonSource) rebuild(tok json.Token) (string, error) {
	switch t := tok.(type) {
	case string:
		return t, nil
	case json.Number:
		return string(t), nil
	case bool:
		return fmt.Sprintf("%t", t), nil
	case nil:
		return "", nil
	}
	// An object ([ is handled by the caller): its keys are re-encoded, its
	// values copied compact.
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; s.dec.More(); i++ {
		key, err := s.key()
		if err != nil {
			return "", err
		}
		var raw json.RawMessage
		if err := s.dec.Decode(&raw); err != nil {
			return "", s.fileError(err)
		}
		var v bytes.Buffer
		if err := json.Compact(&v, raw); err != nil {
			return "", s.fileError(err)
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(quoteJSON(key))
		b.WriteByte(':')
		b.Write(v.Bytes())
	}
	if _, err := s.token(false); err != nil {
		return "", err
	}
	b.WriteByte('}')
	return b.String(), nil
}

func quoteJSON(str string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(str) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// skipValue skips one whole value, letting the line counter forget it.
func (s *jsonSource) skipValue() error {
	tok, err := s.token(false)
	if err != nil {
		return err
	}
	if _, ok := tok.(json.Delim); ok {
		return s.skipRest()
	}
	return nil
}

// skipRest skips to the end of the array or object just opened.
func (s *jsonSource) skipRest() error {
	for depth := 1; depth > 0; {
		tok, err := s.token(false)
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('['), json.Delim('{'):
			depth++
		case json.Delim(']'), json.Delim('}'):
			depth--
		}
		s.lines.lineAt(s.dec.InputOffset()) // count as we go: memory stays bounded
	}
	return nil
}

// token reads the next token. At the top level (between JSON Lines
// records) the end of the input is io.EOF; inside a value it is a
// *FileError.
func (s *jsonSource) token(top bool) (json.Token, error) {
	tok, err := s.dec.Token()
	if err == nil {
		return tok, nil
	}
	if errors.Is(err, io.EOF) && top {
		return nil, io.EOF
	}
	return nil, s.fileError(err)
}

// tokenLine is the line of the last byte of the token just read: the line
// of a "{" or "[", and of a whole scalar (JSON strings hold no line break).
func (s *jsonSource) tokenLine() int {
	return s.lines.lineAt(s.dec.InputOffset() - 1)
}

func (s *jsonSource) fileError(err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return &FileError{File: s.name, Line: s.lines.lineAt(s.syntaxErrorOffset(se)), Reason: "invalid JSON: " + se.Error()}
	case (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) && s.oneLine:
		return &FileError{File: s.name, Line: s.lines.line,
			Reason: "the line ends inside its record (cut short? a line of JSON Lines holds one whole record)", cause: io.ErrUnexpectedEOF}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &FileError{File: s.name, Line: s.lines.lineAt(s.lines.total - 1),
			Reason: "unexpected end of the file inside a value (is the file cut short?)"}
	case errors.Is(err, errRecordTooLarge):
		// What reads records reads past it (skipOver); this is a value
		// before the records or after them (a wrapper's).
		return &FileError{File: s.name, Line: s.lines.line, Reason: fmt.Sprintf(
			"a value starting at or after line %d is over the bound of %s for one record", s.lines.line, boundSize(s.limit)), cause: err}
	}
	return &FileError{File: s.name, Reason: "read: " + err.Error(), cause: err}
}

// syntaxErrorOffset finds where a syntax error is. json.Decoder stops
// before the token or value it could not read. An error from Token itself
// carries that offset; one from reading a value (Decode, and Token for a
// scalar) carries a count of the bytes Decode has scanned so far, not an
// offset in the input, so the value is scanned again from where it starts.
func (s *jsonSource) syntaxErrorOffset(se *json.SyntaxError) int64 {
	at := s.dec.InputOffset()
	if se.Offset == at {
		return at
	}
	var raw json.RawMessage
	var again *json.SyntaxError
	if err := json.NewDecoder(s.dec.Buffered()).Decode(&raw); errors.As(err, &again) && again.Offset > 0 {
		return at + again.Offset - 1
	}
	return at
}

func isWrapperKey(key string) bool { return slices.Contains(wrapperKeys[:], key) }

// lineCounter sits between the text and json.Decoder and turns decoder
// offsets into line numbers. It keeps none of the bytes it passes on, only
// where the line breaks not yet counted stand (a few, in JSON: white space
// between tokens), so it works on files and records of any size. Offsets
// asked about must not go backwards.
//
// It bounds one record: from a mark (the jsonSource marks each element
// before it reads it), the decoder is given at most limit+1 bytes past the
// value's first byte (white space and a comma before it aside), and asking
// for more is errRecordTooLarge: the value is over the bound, and skipOver
// reads past it.
type lineCounter struct {
	r     io.Reader
	nl    []int64 // where the line breaks read and not yet counted stand
	base  int64   // offset up to which the line breaks are counted
	line  int     // line at base, 1-based
	total int64   // bytes read
	limit int64   // bytes of one value allowed
	// from is where the marked value's first byte stands, or -1 while
	// only white space and commas came after the mark.
	from int64
}

func (c *lineCounter) Read(p []byte) (int, error) {
	if c.limit > 0 {
		start := c.from
		if start < 0 {
			start = c.base
		}
		room := c.limit + 1 - (c.total - start)
		if room <= 0 {
			return 0, errRecordTooLarge
		}
		p = p[:min(int64(len(p)), room)]
	}
	n, err := c.r.Read(p)
	q := p[:n]
	for i := 0; c.from < 0 && i < len(q); i++ {
		if !spaceOrComma(q[i]) {
			c.from = c.total + int64(i)
		}
	}
	for at := 0; ; {
		i := bytes.IndexByte(q[at:], '\n')
		if i < 0 {
			break
		}
		c.nl = append(c.nl, c.total+int64(at+i))
		at += i + 1
	}
	c.total += int64(n)
	return n, err
}

// mark says that a value starts after offset off (white space and a comma
// may come first), at from when it is read already, else -1: the bound
// counts from its first byte.
func (c *lineCounter) mark(off, from int64) {
	c.lineAt(off)
	c.from = from
}

// lineAt returns the 1-based line of the byte at offset off.
func (c *lineCounter) lineAt(off int64) int {
	if off <= c.base {
		return c.line
	}
	off = min(off, c.total)
	k := 0
	for k < len(c.nl) && c.nl[k] < off {
		k++
	}
	c.line += k
	c.nl = c.nl[:copy(c.nl, c.nl[k:])]
	c.base = off
	return c.line
}

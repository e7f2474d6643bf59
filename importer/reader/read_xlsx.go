package reader

import (
	"archive/zip"
	"bytes"
	"cmp"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
)

// An XLSX workbook is read as a stream over archive/zip and encoding/xml,
// not with excelize: excelize's OpenReader reads the whole file into
// memory, and extracts a worksheet or shared-string table over
// UnzipXMLSizeLimit (16 MB) to a temporary folder; raising the limit keeps
// the whole sheet in memory instead. SPEC §4 wants neither. Here the zip's
// directory is read in place, each part is uncompressed as it is read, a
// sheet's XML is read token by token (xml.Decoder.Token), and only the
// shared strings are held, in one byte arena whose size is bounded
// (maxSharedStrings).

// maxSharedStrings bounds what a workbook's shared-string table may hold
// in memory: its text, plus 4 bytes a string for where it starts. Within
// the memory goal (256 MiB for a sheet of 500,000 rows) it leaves room for
// the rest of a run; a workbook whose strings hold more fails its file,
// saying to save the sheet as CSV.
const maxSharedStrings = 128 << 20

// maxXMLDepth bounds how deeply a workbook part's XML may nest: a sheet
// nests seven deep (worksheet, sheetData, row, c, is, r, t).
const maxXMLDepth = 64

// Excel's own bounds of a sheet (Excel 2007 and later).
const (
	maxSheetRows = 1 << 20 // 1,048,576
	maxSheetCols = 1 << 14 // 16,384: column XFD
)

// ZipGuard bounds what a workbook uncompresses to (an xlsx is a zip):
// package input gives the run's limits (input.Limits.ZipGuard), so that a
// workbook is bounded as an export's zip is. A nil function checks nothing;
// archive/zip itself refuses a part that uncompresses past the size the
// zip's directory gives it.
type ZipGuard struct {
	Zip  func(zr *zip.Reader) error // the whole workbook, before any part is read
	Part func(f *zip.File) error    // one part, before it is uncompressed
}

// NewXLSXReader starts reading an Excel workbook (.xlsx) of size bytes,
// read in place through ra. It reads the workbook's outline, its shared
// strings and its styles, then the header row of the first sheet to read:
// the one opt.Sheet names, or each sheet that has a header row (its first
// non-empty row), in the workbook's order. Rows come as from a CSV file,
// with Row.Line the sheet's row number and Row.Sheet its sheet's name;
// Header is the header of the sheet being read. A *FileError says what
// makes the workbook unreadable; a plain error is a bad option.
func NewXLSXReader(ra io.ReaderAt, size int64, opt ReadOptions) (*RowReader, error) {
	name := cmp.Or(opt.Name, "<input>")
	if opt.Format != "" && opt.Format != FormatXLSX {
		return nil, fmt.Errorf("read %s: NewXLSXReader reads %s, not %q", name, FormatXLSX, opt.Format)
	}
	if opt.Encoding != "" {
		if enc, err := lookupEncoding(opt.Encoding); err != nil {
			return nil, err
		} else if !enc.isUTF8 {
			return nil, fmt.Errorf("read %s: a workbook's text is UTF-8 or UTF-16 as its XML says: --encoding %s does not apply", name, opt.Encoding)
		}
	}
	cr := &countingReaderAt{r: ra}
	s := &xlsxSource{
		name: name, guard: opt.Guard,
		cellLimit: cmp.Or(opt.cellLimit, maxRecordBytes), sstLimit: cmp.Or(opt.sstLimit, maxSharedStrings),
	}
	if err := s.open(cr, size, opt.Sheet); err != nil {
		return nil, err
	}
	return &RowReader{name: name, count: cr.bytesRead, size: size, src: s}, nil
}

// xlsxSource reads the rows of a workbook's sheets, one sheet after
// another.
type xlsxSource struct {
	name      string
	guard     ZipGuard
	cellLimit int64 // maxRecordBytes, but in tests
	sstLimit  int64 // maxSharedStrings, but in tests

	parts     map[string]*zip.File
	date1904  bool
	sst       sharedStrings
	styles    []numKind // per cellXfs index
	sheets    []xlsxSheet
	nextSheet int                         // index in sheets of the next sheet to open
	check     func(header []string) error // judges each later sheet's header (CheckHeaders)
	skipped   []SkippedSheet              // the sheets it judged not of records
	sh        *sheetStream                // the sheet being read; nil once every sheet is read
}

// xlsxSheet is a sheet of the workbook: its name and its part.
type xlsxSheet struct{ name, part string }

// open reads the workbook's outline, shared strings and styles, and opens
// the first sheet that has a header row.
func (s *xlsxSource) open(ra io.ReaderAt, size int64, only string) error {
	zr, err := zip.NewReader(ra, size)
	if err != nil {
		return s.notAWorkbook(ra, size, err)
	}
	if s.guard.Zip != nil {
		if err := s.guard.Zip(zr); err != nil {
			return &FileError{File: s.name, Reason: err.Error(), cause: err}
		}
	}
	if err := s.listParts(zr); err != nil {
		return err
	}
	wbPart := "xl/workbook.xml"
	if rels, err := s.readRels("_rels/.rels", ""); err != nil {
		return err
	} else if t := rels.target("/officeDocument"); t != "" {
		wbPart = t
	}
	if s.parts[wbPart] == nil {
		return &FileError{File: s.name, Reason: "is a zip but not an xlsx workbook: it holds no " + wbPart}
	}
	sheets, err := s.readWorkbook(wbPart)
	if err != nil {
		return err
	}
	rels, err := s.readRels(path.Join(path.Dir(wbPart), "_rels", path.Base(wbPart)+".rels"), path.Dir(wbPart))
	if err != nil {
		return err
	}
	if t := rels.target("/sharedStrings"); t != "" {
		if err := s.readSharedStrings(t); err != nil {
			return err
		}
	}
	if t := rels.target("/styles"); t != "" {
		if err := s.readStyles(t); err != nil {
			return err
		}
	}
	var names []string
	seen := map[string]bool{}
	for _, sh := range sheets {
		if seen[strings.ToLower(sh.name)] {
			return &FileError{File: s.name, Reason: fmt.Sprintf("has two sheets named %q, which Excel never writes", sh.name)}
		}
		seen[strings.ToLower(sh.name)] = true
		names = append(names, strconv.Quote(sh.name))
		t, ok := rels.byID[sh.rid]
		if !ok || !strings.HasSuffix(t.typ, "/worksheet") {
			continue // a chart sheet, a dialog sheet: no rows
		}
		if only != "" && sh.name != only {
			continue
		}
		s.sheets = append(s.sheets, xlsxSheet{name: sh.name, part: t.target})
	}
	if only != "" && len(s.sheets) == 0 {
		return &FileError{File: s.name, Reason: fmt.Sprintf("has no worksheet named %q (its sheets: %s)", only, strings.Join(names, ", "))}
	}
	return s.openNext()
}

// notAWorkbook says why a file that zip cannot open (err) is not an xlsx
// workbook: a password-protected workbook, an .xls, another Office
// document, another kind of file, or a broken zip.
func (s *xlsxSource) notAWorkbook(ra io.ReaderAt, size int64, err error) error {
	head := make([]byte, SniffSize)
	n, _ := ra.ReadAt(head, 0)
	if bytes.HasPrefix(head[:n], cfbMagic) {
		switch compoundKind(ra, size) { // cfb.go
		case compoundEncrypted:
			return &FileError{File: s.name, Reason: "is password-protected: remove the password in the spreadsheet and save again"}
		case compoundXLS:
			return &FileError{File: s.name, Reason: "is an Excel 97–2003 .xls workbook: save it as .xlsx or CSV"}
		case compoundOther:
			return &FileError{File: s.name, Reason: "is an Office 97–2003 document that holds no workbook, not an xlsx workbook"}
		}
	}
	if what := sniffBinary(head[:n]); what.name != "" && what.name != "an Excel workbook (xlsx)" {
		return &FileError{File: s.name, Reason: "is " + what.name + ", not an xlsx workbook"}
	}
	return &FileError{File: s.name, Reason: "is not an xlsx workbook (" + err.Error() + ")", cause: err}
}

// listParts indexes the workbook's parts by their names, as Excel reads
// them (any case, either slash); a name given twice refuses the file.
func (s *xlsxSource) listParts(zr *zip.Reader) error {
	s.parts = map[string]*zip.File{}
	for _, f := range zr.File {
		n := strings.ToLower(strings.TrimPrefix(strings.ReplaceAll(f.Name, `\`, "/"), "/"))
		if _, dup := s.parts[n]; dup {
			return &FileError{File: s.name, Reason: fmt.Sprintf("holds two parts named %q: it is not a workbook as Excel writes it", f.Name)}
		}
		s.parts[n] = f
	}
	return nil
}

// openNext opens the next sheet that has a header row; s.sh is nil when
// there is none.
func (s *xlsxSource) openNext() error {
	if s.sh != nil {
		s.sh.close()
		s.sh = nil
	}
	for s.nextSheet < len(s.sheets) {
		sheet := s.sheets[s.nextSheet]
		s.nextSheet++
		x, err := s.openPart(sheet.part, s.name+"!"+sheet.name)
		if err != nil {
			return err
		}
		sh := &sheetStream{xlsxSheet: sheet, x: x, file: s.name + "!" + sheet.name}
		if err := sh.start(); err != nil {
			sh.close()
			return err
		}
		for {
			row, err := s.readRow(sh)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				sh.close()
				return err
			}
			if err := sh.setHeader(row); err != nil {
				sh.close()
				return err
			}
			if err := s.judge(sh, row.line); errors.Is(err, ErrSkipSheet) {
				break
			} else if err != nil {
				sh.close()
				return err
			}
			s.sh = sh
			return nil
		}
		sh.close() // no non-empty row: no header, nothing to read; or a sheet skipped
	}
	return nil
}

// judge has the check of CheckHeaders judge a sheet's header (at line):
// ErrSkipSheet, with the sheet noted in skipped; or a *FileError naming the
// sheet.
func (s *xlsxSource) judge(sh *sheetStream, line int) error {
	if s.check == nil {
		return nil
	}
	err := s.check(sh.hdr)
	if errors.Is(err, ErrSkipSheet) {
		s.skipped = append(s.skipped, SkippedSheet{Name: sh.name, Line: line, Header: append([]string(nil), sh.hdr...)})
		return err
	}
	if err != nil {
		reason := err.Error()
		if fe := (*FileError)(nil); errors.As(err, &fe) {
			reason = fe.Reason
		}
		return &FileError{File: sh.file, Line: line, Reason: reason, cause: err}
	}
	return nil
}

// ErrSkipSheet is what a CheckHeaders check returns for a sheet that holds
// no records of the file's kind (a cover sheet, a pivot): the reader leaves
// it unread and goes on to the next sheet. SkippedSheets lists it.
var ErrSkipSheet = errors.New("not a sheet of records")

// SkippedSheet is a workbook's sheet left unread (ErrSkipSheet): its name,
// its header's row and the header.
type SkippedSheet struct {
	Name   string
	Line   int
	Header []string
}

// SkippedSheets lists the sheets left unread so far (ErrSkipSheet).
func (r *RowReader) SkippedSheets() []SkippedSheet {
	if x, ok := r.src.(*xlsxSource); ok {
		return x.skipped
	}
	return nil
}

func (s *xlsxSource) header() []string {
	if s.sh == nil {
		return nil
	}
	return s.sh.hdr
}

// next returns the next non-empty row of the sheet being read, then of the
// sheets after it.
func (s *xlsxSource) next() (Row, error) {
	for s.sh != nil {
		cells, err := s.readRow(s.sh)
		if errors.Is(err, io.EOF) {
			if err := s.openNext(); err != nil {
				return Row{}, err
			}
			continue
		}
		if err != nil {
			return Row{}, err
		}
		return s.sh.row(cells), nil
	}
	return Row{}, io.EOF
}

// Sheet returns the name of the workbook sheet being read ("" for CSV and
// JSON, and once reading has ended).
func (r *RowReader) Sheet() string {
	if x, ok := r.src.(*xlsxSource); ok && x.sh != nil && r.final == nil {
		return x.sh.name
	}
	return ""
}

// CheckHeaders has check judge the header of each sheet of a workbook as
// the reader opens it: a sheet whose header check refuses ends the reading
// with a *FileError naming the sheet and its header's row; ErrSkipSheet
// leaves the sheet unread. CSV and JSON have one header, which the caller
// judges: nothing to do.
//
// Called before the first Next, it judges the first sheet's header as
// well: when check returns ErrSkipSheet for it, CheckHeaders leaves it unread and opens the next one
// check accepts; an error is then returned as Next would return it.
func (r *RowReader) CheckHeaders(check func(header []string) error) error {
	x, ok := r.src.(*xlsxSource)
	if !ok {
		return nil
	}
	x.check = check
	if x.sh == nil {
		return nil
	}
	err := x.judge(x.sh, x.sh.hdrLine)
	if errors.Is(err, ErrSkipSheet) {
		err = x.openNext()
	}
	if err != nil {
		r.final = err
	}
	return err
}

// Where names a row as a failure shows it: "contacts.xlsx!Sheet1:14" for
// a workbook's row (the sheet's row number), "contacts.csv:14" otherwise.
func Where(file string, row Row) string {
	if row.Sheet != "" {
		return file + "!" + row.Sheet + ":" + strconv.Itoa(row.Line)
	}
	return file + ":" + strconv.Itoa(row.Line)
}

// ---- the parts ----------------------------------------------------------

// xmlStream reads one part's XML token by token, bounding how deep it
// nests and how many bytes one token may hold.
type xmlStream struct {
	file  string // the name errors give
	rc    io.ReadCloser
	in    *tokenGuard
	dec   *xml.Decoder
	depth int
}

// tokenGuard fails a read that would let one token (a cell's text, or
// text between cells) grow past limit bytes: xml.Decoder gathers a token
// whole before it returns it.
type tokenGuard struct {
	r     io.Reader
	n     int64 // bytes read
	start int64 // where the token being read starts (xmlStream.token sets it)
	limit int64
}

var errTokenTooLarge = errors.New("token too large")

func (g *tokenGuard) Read(p []byte) (int, error) {
	if g.n-g.start > g.limit+64<<10 { // the decoder reads ahead 4 KiB
		return 0, errTokenTooLarge
	}
	n, err := g.r.Read(p)
	g.n += int64(n)
	return n, err
}

// openPart opens the part at name (a path in the zip) for reading; file is
// the name its errors give.
func (s *xlsxSource) openPart(name, file string) (*xmlStream, error) {
	f := s.parts[strings.ToLower(name)]
	if f == nil {
		return nil, &FileError{File: s.name, Reason: fmt.Sprintf("is a workbook whose part %s is missing", name)}
	}
	if f.Flags&0x1 != 0 {
		return nil, &FileError{File: s.name, Reason: "is an encrypted zip, not a workbook as Excel writes it"}
	}
	if s.guard.Part != nil {
		if err := s.guard.Part(f); err != nil {
			return nil, &FileError{File: s.name, Reason: err.Error(), cause: err}
		}
	}
	rc, err := f.Open()
	if err != nil {
		return nil, &FileError{File: s.name, Reason: fmt.Sprintf("part %s: %v", name, err), cause: err}
	}
	g := &tokenGuard{r: rc, limit: s.cellLimit}
	dec := xml.NewDecoder(g)
	return &xmlStream{file: file, rc: rc, in: g, dec: dec}, nil
}

func (x *xmlStream) close() { x.rc.Close() }

// token is the next token; io.EOF at the end of the part.
func (x *xmlStream) token() (xml.Token, error) {
	tok, err := x.dec.Token()
	x.in.start = x.dec.InputOffset()
	if err != nil {
		return nil, err
	}
	switch tok.(type) {
	case xml.StartElement:
		x.depth++
		if x.depth > maxXMLDepth {
			return nil, fmt.Errorf("its XML nests more than %d elements deep", maxXMLDepth)
		}
	case xml.EndElement:
		x.depth--
	}
	return tok, nil
}

// skip reads past the end of the element just started.
func (x *xmlStream) skip() error {
	for level := 0; ; {
		tok, err := x.token()
		if err != nil {
			return err
		}
		switch tok.(type) {
		case xml.StartElement:
			level++
		case xml.EndElement:
			if level == 0 {
				return nil
			}
			level--
		}
	}
}

// text reads the element just started to its end and returns the text of
// its <t> elements, those of phonetic runs (<rPh>) left out: a shared or
// an inline string, its rich-text runs (<r>) joined. limit bounds it.
func (x *xmlStream) text(limit int64) (string, error) {
	b, err := x.appendText(nil, limit)
	if err != nil {
		return "", err
	}
	return decodeXString(string(b)), nil
}

// appendText is text, appended to b as the XML holds it: its _xHHHH_
// escapes left for decodeXString.
func (x *xmlStream) appendText(b []byte, limit int64) ([]byte, error) {
	level, inT, inPh := 0, 0, 0
	for {
		tok, err := x.token()
		if err != nil {
			return b, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			level++
			switch t.Name.Local {
			case "t":
				inT++
			case "rPh":
				inPh++
			}
		case xml.EndElement:
			if level == 0 {
				return b, nil
			}
			level--
			switch t.Name.Local {
			case "t":
				inT--
			case "rPh":
				inPh--
			}
		case xml.CharData:
			if inT > 0 && inPh == 0 {
				b = append(b, t...)
				if int64(len(b)) > limit {
					return b, errTokenTooLarge
				}
			}
		}
	}
}

// chars reads the element just started to its end and returns its text
// (a <v>).
func (x *xmlStream) chars(limit int64) (string, error) {
	var b strings.Builder
	for level := 0; ; {
		tok, err := x.token()
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			level++
		case xml.EndElement:
			if level == 0 {
				return b.String(), nil
			}
			level--
		case xml.CharData:
			if level == 0 {
				b.Write(t)
				if int64(b.Len()) > limit {
					return "", errTokenTooLarge
				}
			}
		}
	}
}

// partError is the *FileError of a part that cannot be read, at line (the
// sheet's row) when there is one.
func (s *xlsxSource) partError(file string, line int, err error) *FileError {
	switch {
	case errors.Is(err, errTokenTooLarge):
		return &FileError{File: file, Line: line, Reason: fmt.Sprintf(
			"a cell after row %d holds more than %d MiB of text, more than a record may", line, s.cellLimit>>20)}
	case errors.Is(err, io.EOF):
		err = io.ErrUnexpectedEOF
	}
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		return &FileError{File: file, Line: line, Reason: "broken XML: " + se.Msg, cause: err}
	}
	return &FileError{File: file, Line: line, Reason: "read: " + err.Error(), cause: err}
}

func attr(e xml.StartElement, local string) (string, bool) {
	for _, a := range e.Attr {
		if a.Name.Local == local {
			return a.Value, true
		}
	}
	return "", false
}

// rels are the relationships of one part: by id, and their targets as
// paths in the zip.
type rels struct {
	byID  map[string]relTarget
	order []relTarget
}

type relTarget struct{ typ, target string }

// target is the first target of the relationship whose type ends in
// suffix, or "".
func (r rels) target(suffix string) string {
	for _, t := range r.order {
		if strings.HasSuffix(t.typ, suffix) {
			return t.target
		}
	}
	return ""
}

// eachToken reads a part of the workbook token by token, handing each to
// fn: an error of the reading names the part; fn's own errors are returned
// as they are.
func (s *xlsxSource) eachToken(part string, fn func(x *xmlStream, tok xml.Token) error) error {
	x, err := s.openPart(part, s.name)
	if err != nil {
		return err
	}
	defer x.close()
	for {
		tok, err := x.token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return s.partError(s.name+" ("+part+")", 0, err)
		}
		if err := fn(x, tok); err != nil {
			return err
		}
	}
}

// readRels reads a .rels part (none is no relationships); targets are
// resolved against dir.
func (s *xlsxSource) readRels(part, dir string) (rels, error) {
	out := rels{byID: map[string]relTarget{}}
	if s.parts[strings.ToLower(part)] == nil {
		return out, nil
	}
	err := s.eachToken(part, func(_ *xmlStream, tok xml.Token) error {
		e, ok := tok.(xml.StartElement)
		if !ok || e.Name.Local != "Relationship" {
			return nil
		}
		if mode, _ := attr(e, "TargetMode"); mode == "External" {
			return nil
		}
		id, _ := attr(e, "Id")
		typ, _ := attr(e, "Type")
		target, _ := attr(e, "Target")
		target = strings.ReplaceAll(target, `\`, "/")
		if strings.HasPrefix(target, "/") {
			target = strings.TrimPrefix(path.Clean(target), "/")
		} else {
			target = path.Join(dir, target)
		}
		t := relTarget{typ: typ, target: target}
		out.byID[id] = t
		out.order = append(out.order, t)
		return nil
	})
	return out, err
}

type workbookSheet struct{ name, rid string }

// readWorkbook reads the workbook part: its sheets in order, and whether
// its dates count from 1904.
func (s *xlsxSource) readWorkbook(part string) ([]workbookSheet, error) {
	var out []workbookSheet
	err := s.eachToken(part, func(_ *xmlStream, tok xml.Token) error {
		e, ok := tok.(xml.StartElement)
		if !ok {
			return nil
		}
		switch e.Name.Local {
		case "workbookPr":
			v, _ := attr(e, "date1904")
			s.date1904 = v == "1" || strings.EqualFold(v, "true")
		case "sheet":
			name, _ := attr(e, "name")
			var rid string
			for _, a := range e.Attr {
				if a.Name.Local == "id" && a.Name.Space != "" {
					rid = a.Value
				}
			}
			out = append(out, workbookSheet{name: name, rid: rid})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// readSharedStrings reads the shared-string table, bounded by sstLimit.
// Each string is gathered in one buffer, used again for the next, before
// the table keeps it (xlsx_strings.go).
func (s *xlsxSource) readSharedStrings(part string) error {
	var buf []byte
	return s.eachToken(part, func(x *xmlStream, tok xml.Token) error {
		e, ok := tok.(xml.StartElement)
		if !ok || e.Name.Local != "si" {
			return nil
		}
		var err error
		if buf, err = x.appendText(buf[:0], s.cellLimit); err != nil {
			return s.partError(s.name+" ("+part+")", 0, err)
		}
		if bytes.Contains(buf, []byte("_x")) {
			s.sst.add([]byte(decodeXString(string(buf))))
		} else {
			s.sst.add(buf)
		}
		if s.sst.held() > s.sstLimit {
			return &FileError{File: s.name, Reason: fmt.Sprintf(
				"its shared strings hold more than %d MiB of text, more than crmimport keeps in memory for one workbook: "+
					"save each sheet as CSV (UTF-8) and import those", s.sstLimit>>20)}
		}
		return nil
	})
}

// readStyles reads which cell formats (cellXfs) show a number as a date,
// a time or both.
func (s *xlsxSource) readStyles(part string) error {
	codes := map[int]string{}
	inXfs := false
	return s.eachToken(part, func(_ *xmlStream, tok xml.Token) error {
		switch e := tok.(type) {
		case xml.StartElement:
			switch e.Name.Local {
			case "numFmt":
				id, _ := attr(e, "numFmtId")
				code, _ := attr(e, "formatCode")
				if n, err := strconv.Atoi(id); err == nil {
					codes[n] = code
				}
			case "cellXfs":
				inXfs = true
			case "xf":
				if !inXfs {
					return nil
				}
				if len(s.styles) >= 1<<16 {
					return &FileError{File: s.name, Reason: "its styles hold more than 65,536 cell formats: it is not a workbook as Excel writes it"}
				}
				id, _ := attr(e, "numFmtId")
				n, _ := strconv.Atoi(id)
				code, custom := codes[n]
				s.styles = append(s.styles, formatKind(n, code, custom))
			}
		case xml.EndElement:
			if e.Name.Local == "cellXfs" {
				inXfs = false
			}
		}
		return nil
	})
}

// ---- one sheet ----------------------------------------------------------

// sheetStream is a sheet being read.
type sheetStream struct {
	xlsxSheet
	x       *xmlStream
	file    string // "contacts.xlsx!Sheet1"
	hdr     []string
	named   []int // the columns of hdr that have a name, in order
	hdrLine int   // the header's row
	lastRow int
	done    bool // </sheetData> read
}

// start reads up to the sheet's <sheetData>.
func (sh *sheetStream) start() error {
	for {
		tok, err := sh.x.token()
		if errors.Is(err, io.EOF) {
			sh.done = true // no sheetData: an empty sheet
			return nil
		}
		if err != nil {
			return sheetError(sh, err)
		}
		if e, ok := tok.(xml.StartElement); ok && e.Name.Local == "sheetData" {
			return nil
		}
	}
}

func sheetError(sh *sheetStream, err error) *FileError {
	var fe *FileError
	if errors.As(err, &fe) {
		return fe
	}
	return (&xlsxSource{cellLimit: sh.x.in.limit}).partError(sh.file, sh.lastRow, err)
}

func (sh *sheetStream) close() { sh.x.close() }

// sheetCell is one cell as read: its column (0-based), its value as Excel
// shows it, and why it cannot be read, if it cannot.
type sheetCell struct {
	col    int
	value  string
	reason string
	// noValue: a formula without a value (formulaValue), which its row
	// tells once for all such cells (formulasWithoutValue).
	noValue bool
}

// sheetRow is one <row> as read.
type sheetRow struct {
	line    int
	cells   []sheetCell
	reasons []string
}

func (r sheetRow) blank() bool {
	for _, c := range r.cells {
		if strings.TrimSpace(c.value) != "" || c.reason != "" || c.noValue {
			return false
		}
	}
	return len(r.reasons) == 0
}

// readRow reads the next row of sh that is not blank; io.EOF at the end of
// its sheetData.
func (s *xlsxSource) readRow(sh *sheetStream) (sheetRow, error) {
	for !sh.done {
		tok, err := sh.x.token()
		if err != nil {
			return sheetRow{}, sheetError(sh, err)
		}
		switch e := tok.(type) {
		case xml.EndElement:
			if e.Name.Local == "sheetData" {
				sh.done = true
			}
		case xml.StartElement:
			if e.Name.Local != "row" {
				if err := sh.x.skip(); err != nil {
					return sheetRow{}, sheetError(sh, err)
				}
				continue
			}
			row, err := s.readCells(sh, e)
			if err != nil {
				return sheetRow{}, err
			}
			if !row.blank() {
				return row, nil
			}
		}
	}
	return sheetRow{}, io.EOF
}

// readCells reads the cells of the <row> just started.
func (s *xlsxSource) readCells(sh *sheetStream, e xml.StartElement) (sheetRow, error) {
	line := sh.lastRow + 1
	if r, ok := attr(e, "r"); ok {
		n, err := strconv.Atoi(r)
		if err != nil || n < 1 || n > maxSheetRows {
			return sheetRow{}, &FileError{File: sh.file, Line: sh.lastRow, Reason: fmt.Sprintf("a row after row %d is numbered %q, not a row of a sheet", sh.lastRow, r)}
		}
		line = n
	}
	if line <= sh.lastRow || line > maxSheetRows {
		return sheetRow{}, &FileError{File: sh.file, Line: sh.lastRow, Reason: fmt.Sprintf(
			"row %d comes after row %d: the sheet's rows are out of order, which Excel never writes", line, sh.lastRow)}
	}
	sh.lastRow = line
	row := sheetRow{line: line}
	col, size := -1, int64(0)
	for {
		tok, err := sh.x.token()
		if err != nil {
			return sheetRow{}, sheetError(sh, err)
		}
		switch t := tok.(type) {
		case xml.EndElement:
			return row, nil
		case xml.StartElement:
			if t.Name.Local != "c" {
				if err := sh.x.skip(); err != nil {
					return sheetRow{}, sheetError(sh, err)
				}
				continue
			}
			c, err := s.readCell(sh, t, line, col+1)
			if err != nil {
				return sheetRow{}, err
			}
			if c.col <= col {
				row.reasons = append(row.reasons, fmt.Sprintf("cell %s comes after cell %s in its row (a cell given twice?)", cellRef(c.col, line), cellRef(col, line)))
				continue
			}
			col = c.col
			if size += int64(len(c.value)); size > s.cellLimit {
				return sheetRow{}, &FileError{File: sh.file, Line: line, Reason: fmt.Sprintf("row %d holds more than %d MiB of text, more than a record may", line, s.cellLimit>>20)}
			}
			row.cells = append(row.cells, c)
		}
	}
}

// readCell reads the <c> just started; col is its column when it names
// none.
func (s *xlsxSource) readCell(sh *sheetStream, e xml.StartElement, line, col int) (sheetCell, error) {
	c := sheetCell{col: col}
	if ref, ok := attr(e, "r"); ok {
		n, r, ok := parseCellRef(ref)
		switch {
		case !ok:
			c.reason = fmt.Sprintf("cell reference %q is not a cell of a sheet", ref)
		case r != 0 && r != line:
			c.reason = fmt.Sprintf("cell %s stands in row %d", ref, line)
		default:
			c.col = n
		}
	}
	if c.col >= maxSheetCols {
		c.col = maxSheetCols - 1
		c.reason = cmp.Or(c.reason, "a cell past column XFD, the last column of a sheet")
	}
	typ, _ := attr(e, "t")
	style, _ := attr(e, "s")
	var v, inline string
	var hasV, hasInline, hasF bool
	for done := false; !done; {
		tok, err := sh.x.token()
		if err != nil {
			return c, sheetError(sh, err)
		}
		switch t := tok.(type) {
		case xml.EndElement:
			done = true
		case xml.StartElement:
			switch t.Name.Local {
			case "v":
				v, err = sh.x.chars(s.cellLimit)
				hasV = true
			case "is":
				inline, err = sh.x.text(s.cellLimit)
				hasInline = true
			case "f": // a formula: its value is the <v> beside it
				hasF = true
				err = sh.x.skip()
			default: // <extLst>
				err = sh.x.skip()
			}
			if err != nil {
				return c, sheetError(sh, err)
			}
		}
	}
	if hasF && !formulaValue(typ, v, hasV, hasInline) {
		c.noValue = true
		return c, nil
	}
	val, reason := s.cellValue(typ, style, v, hasV, inline, hasInline)
	c.value = val
	if reason != "" {
		c.reason = cmp.Or(c.reason, fmt.Sprintf("cell %s %s", cellRef(c.col, line), reason))
	}
	return c, nil
}

// formulaValue tells whether a formula cell holds the value a spreadsheet
// computed for it: a <v> that is not empty, or empty as a text result
// (t="str": Excel writes ="" so). A program that computes no formula
// (openpyxl) writes <v></v>, others no <v> at all: that is no value, and
// reading it as empty would import the row without it, or skip a row of
// such cells as blank (issue 23 item 5).
func formulaValue(typ, v string, hasV, hasInline bool) bool {
	switch {
	case typ == "inlineStr" && hasInline:
		return true
	case !hasV:
		return false
	}
	return typ == "str" || strings.TrimSpace(v) != ""
}

// formulasWithoutValue says that the cells at refs are formulas without a
// value (formulaValue), and what to do.
func formulasWithoutValue(refs []string) string {
	if len(refs) == 1 {
		return "cell " + refs[0] + " is a formula without a value: open and save the workbook in a spreadsheet, which computes it"
	}
	return "cells " + strings.Join(refs[:len(refs)-1], ", ") + " and " + refs[len(refs)-1] +
		" are formulas without a value: open and save the workbook in a spreadsheet, which computes them"
}

// cellValue is a cell's value as Excel shows it, or why it cannot be read.
func (s *xlsxSource) cellValue(typ, style, v string, hasV bool, inline string, hasInline bool) (string, string) {
	switch typ {
	case "s":
		if !hasV {
			return "", ""
		}
		i, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return "", fmt.Sprintf("names shared string %q, not a number", v)
		}
		str, ok := s.sst.get(i)
		if !ok {
			return "", fmt.Sprintf("names shared string %d, which the workbook does not hold", i)
		}
		return str, ""
	case "inlineStr":
		if hasInline {
			return inline, ""
		}
		return decodeXString(v), ""
	case "str": // a formula's text result
		return decodeXString(v), ""
	case "b":
		switch strings.TrimSpace(v) {
		case "1":
			return "true", ""
		case "0":
			return "false", ""
		case "":
			return "", ""
		}
		return "", fmt.Sprintf("is a boolean holding %q", v)
	case "e": // #N/A, #REF!, #DIV/0!: no value
		return "", ""
	case "d": // an ISO 8601 date (strict Office Open XML)
		return v, ""
	case "", "n":
	default:
		return "", fmt.Sprintf("has type %q, which is no cell type of a workbook", typ)
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return "", "" // empty, or a formula without a cached value
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return "", fmt.Sprintf("is a number holding %q", v)
	}
	kind := kindNumber
	if i, err := strconv.Atoi(style); err == nil && i >= 0 && i < len(s.styles) {
		kind = s.styles[i]
	}
	if kind != kindNumber {
		if t, ok := excelDate(f, s.date1904, kind); ok {
			return t, ""
		}
	}
	return generalNumber(f), ""
}

// setHeader makes row the sheet's header: its cells' text, up to its last
// non-empty cell.
func (sh *sheetStream) setHeader(row sheetRow) error {
	var noValue []string
	for _, c := range row.cells {
		if c.reason != "" {
			return &FileError{File: sh.file, Line: row.line, Reason: "header: " + c.reason}
		}
		if strings.IndexByte(c.value, 0) >= 0 {
			return &FileError{File: sh.file, Line: row.line, Reason: fmt.Sprintf("header: cell %s holds a NUL character: it is not text", cellRef(c.col, row.line))}
		}
		if c.noValue {
			noValue = append(noValue, cellRef(c.col, row.line))
		}
	}
	if len(noValue) > 0 {
		return &FileError{File: sh.file, Line: row.line, Reason: "header: " + formulasWithoutValue(noValue)}
	}
	if len(row.reasons) > 0 {
		return &FileError{File: sh.file, Line: row.line, Reason: "header: " + strings.Join(row.reasons, "; ")}
	}
	width := 0
	for _, c := range row.cells {
		if strings.TrimSpace(c.value) != "" {
			width = c.col + 1
		}
	}
	sh.hdr, sh.named, sh.hdrLine = make([]string, width), nil, row.line
	for _, c := range row.cells {
		if c.col < width {
			sh.hdr[c.col] = c.value
			if c.value != "" {
				sh.named = append(sh.named, c.col)
			}
		}
	}
	return nil
}

// row lines cells up under the header's columns (a missing cell is
// empty); a value in a column with no header is kept as "(column K)" and
// fails the row, as a CSV row with more fields than its header does.
//
// A row is sized by the cells it holds, not by the header's width: it has
// a column for each of the header's named columns, and for an unnamed
// one only up to the last unnamed column where it holds a value, which
// keeps the names of the unnamed columns before it ("", "#2", "#3": the
// mapper and a raw row number a repeated name by its place). One stray
// header cell at column XFD would otherwise give every row 16,384
// columns (issue 23 item 19).
func (sh *sheetStream) row(r sheetRow) Row {
	lastUnnamed := -1
	for _, c := range r.cells {
		if c.col < len(sh.hdr) && sh.hdr[c.col] == "" && c.value != "" {
			lastUnnamed = c.col
		}
	}
	cols := make([]Col, 0, len(sh.named)+lastUnnamed+2)
	var nul []NULField // a NUL character is the profile's to judge (SPEC §4), as in CSV
	cells := r.cells
	put := func(col int) {
		for len(cells) > 0 && cells[0].col < col {
			cells = cells[1:]
		}
		c := Col{Name: sh.hdr[col]}
		if len(cells) > 0 && cells[0].col == col {
			c.Value = cells[0].value
			if strings.IndexByte(c.Value, 0) >= 0 {
				nul = append(nul, NULField{Col: len(cols), Where: ", in cell " + cellRef(col, r.line)})
			}
		}
		cols = append(cols, c)
	}
	for col := 0; col <= lastUnnamed; col++ {
		put(col)
	}
	for _, col := range sh.named {
		if col > lastUnnamed {
			put(col)
		}
	}
	reasons := r.reasons
	var past, noValue []string
	for _, c := range r.cells {
		if c.reason != "" {
			reasons = append(reasons, c.reason)
		}
		if c.noValue {
			noValue = append(noValue, cellRef(c.col, r.line))
		}
		if c.col < len(sh.hdr) || strings.TrimSpace(c.value) == "" {
			continue
		}
		if strings.IndexByte(c.value, 0) >= 0 {
			nul = append(nul, NULField{Col: len(cols), Where: ", in cell " + cellRef(c.col, r.line)})
		}
		cols = append(cols, Col{Name: "(column " + colLetters(c.col) + ")", Value: c.value})
		past = append(past, cellRef(c.col, r.line))
	}
	if len(noValue) > 0 {
		reasons = append(reasons, formulasWithoutValue(noValue))
	}
	if len(past) > 0 {
		reasons = append(reasons, fmt.Sprintf("%s %s a value in a column the header does not name (the header has %d %s)",
			strings.Join(past, ", "), Plural(len(past), "holds", "hold"), len(sh.hdr), Plural(len(sh.hdr), "column", "columns")))
	}
	row := Row{Line: r.line, Sheet: sh.name, Cols: cols, NUL: nul}
	if len(reasons) > 0 {
		row.Err = &RowError{File: sh.file, Line: r.line, Reason: strings.Join(reasons, "; ")}
	}
	return row
}

// parseCellRef reads "C5" as column 2 (0-based) and row 5; a reference of
// only letters has row 0.
func parseCellRef(ref string) (col, row int, ok bool) {
	i := 0
	for ; i < len(ref) && i < 4; i++ {
		c := ref[i] | 0x20
		if c < 'a' || c > 'z' {
			break
		}
		col = col*26 + int(c-'a'+1)
	}
	if i == 0 || col > maxSheetCols {
		return 0, 0, false
	}
	if i < len(ref) {
		n, err := strconv.Atoi(ref[i:])
		if err != nil || n < 1 || n > maxSheetRows || ref[i] == '+' || ref[i] == '-' {
			return 0, 0, false
		}
		row = n
	}
	return col - 1, row, true
}

// colLetters is the letters of column col (0-based): 0 is A, 27 is AB.
func colLetters(col int) string {
	var b []byte
	for n := col + 1; n > 0; n = (n - 1) / 26 {
		b = append([]byte{byte('A' + (n-1)%26)}, b...)
	}
	return string(b)
}

func cellRef(col, row int) string {
	if col < 0 {
		return "(none)"
	}
	return colLetters(col) + strconv.Itoa(row)
}

// decodeXString undoes the escapes of Office Open XML strings: _xHHHH_ is
// the character HHHH (Excel writes a carriage return as _x000D_), and
// _x005F_ escapes an underscore.
func decodeXString(s string) string {
	if !strings.Contains(s, "_x") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if i+7 <= len(s) && s[i] == '_' && s[i+1] == 'x' && s[i+6] == '_' {
			if n, err := strconv.ParseUint(s[i+2:i+6], 16, 16); err == nil {
				b.WriteRune(rune(n))
				i += 7
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// countingReaderAt counts the bytes read through it: what progress
// measures a workbook by (its compressed bytes, against its file size).
type countingReaderAt struct {
	r io.ReaderAt
	n int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n += int64(n)
	return n, err
}

func (c *countingReaderAt) bytesRead() int64 { return c.n }

package readertest

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A table's twin workbook is the CSV file as a CRM's XLSX export writes
// it, or as Excel saves it once opened: cells typed as Excel types them —
// whole numbers and decimals as number cells, dates and date-times as
// date serials under a date format (1900 or 1904 system), true and false as
// boolean cells, the rest shared strings — but only where the cell shows
// the text the CSV holds, so that the twin imports with the CSV's
// outcomes. Each twin also carries what Excel files carry: a formula with
// its cached value, an error cell where the CSV is empty, an empty row,
// and a second sheet that is no table (the export's cover sheet).

// Table is a CSV file's rows, the header first.
type Table struct {
	Sheet string // the sheet's name: Excel names it after the file
	Rows  [][]string
}

// TableOfCSV reads a CSV file's text into a Table (a BOM dropped).
func TableOfCSV(sheet string, text []byte) (Table, error) {
	r := csv.NewReader(strings.NewReader(strings.TrimPrefix(string(text), "\ufeff")))
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	rows, err := r.ReadAll()
	if err != nil {
		return Table{}, err
	}
	return Table{Sheet: SheetName(sheet), Rows: rows}, nil
}

// SheetName is the name Excel gives the sheet of a file it opens: the
// file's name without its extension, cut to 31 characters, without the
// characters a sheet's name cannot hold.
func SheetName(file string) string {
	if i := strings.LastIndexByte(file, '.'); i > 0 {
		file = file[:i]
	}
	file = strings.Map(func(r rune) rune {
		if strings.ContainsRune(`[]:*?/\`, r) {
			return '_'
		}
		return r
	}, file)
	if r := []rune(file); len(r) > 31 {
		file = string(r[:31])
	}
	return file
}

// Twin is how a table's workbook is written.
type Twin struct {
	Date1904 bool
	// EmptyRowAfter is the data row (1-based) after which an empty row
	// stands; 0 puts none.
	EmptyRowAfter int
	// Cover is a second sheet that is no table of records (its header
	// and rows), written after the table; nil writes none.
	Cover [][]string
}

// The styles a twin's cells use (cellXfs): General, a date, a date-time.
const (
	twinGeneral = iota
	twinDate
	twinDateTime
)

var (
	wholeNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]{0,14})$`)
	decimal     = regexp.MustCompile(`^-?(0|[1-9][0-9]*)\.[0-9]*[1-9]$`)
	isoDate     = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
	isoDateTime = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}(:[0-9]{2})?$`)
)

// TwinWorkbook writes t as its twin workbook.
func TwinWorkbook(t Table, tw Twin) Workbook {
	w := &twinWriter{wb: Workbook{
		Date1904: tw.Date1904,
		NumFmts:  []NumFmt{{ID: 164, Code: `yyyy\-mm\-dd`}, {ID: 165, Code: `yyyy\-mm\-dd\ hh:mm:ss`}},
		CellXfs:  []int{0, 164, 165},
	}, tw: tw, strs: map[string]int{}}
	sheet := w.sheet(t.Sheet, t.Rows, true)
	w.wb.Sheets = append(w.wb.Sheets, sheet)
	if tw.Cover != nil {
		sheet := w.sheet("Export info", tw.Cover, false)
		w.wb.Sheets = append(w.wb.Sheets, sheet)
	}
	return w.wb
}

// twinWriter writes a twin workbook: its shared strings, each once, and
// its sheets, the features of the twin (a formula, an error cell) each
// written once, in the first sheet that has a place for it.
type twinWriter struct {
	wb                     Workbook
	tw                     Twin
	strs                   map[string]int // shared string -> its index
	formulaDone, errorDone bool
}

// str is the index of s among the shared strings, added on first use.
func (w *twinWriter) str(s string) int {
	if i, ok := w.strs[s]; ok {
		return i
	}
	t := escape(s)
	if strings.TrimSpace(s) != s || strings.Contains(s, "\n") {
		t = `<t xml:space="preserve">` + t + `</t>`
	} else {
		t = `<t>` + t + `</t>`
	}
	w.strs[s] = len(w.wb.Strings)
	w.wb.Strings = append(w.wb.Strings, t)
	return w.strs[s]
}

// sheet writes rows as a sheet named name, the first row the header;
// features writes the twin's formula, error cell and empty row in it.
func (w *twinWriter) sheet(name string, rows [][]string, features bool) Sheet {
	var b strings.Builder
	width := 0
	for _, r := range rows {
		width = max(width, len(r))
	}
	line := 0
	for i, r := range rows {
		line++
		fmt.Fprintf(&b, `<row r="%d" spans="1:%d" x14ac:dyDescent="0.25">`, line, max(width, 1))
		for j, v := range r {
			ref := colName(j) + strconv.Itoa(line)
			switch {
			case features && i > 0 && v == "" && !w.errorDone && j < len(rows[0]):
				// A lookup that found nothing: Excel shows #N/A, an
				// importer reads an empty cell.
				fmt.Fprintf(&b, `<c r="%s" t="e"><f>VLOOKUP(A%d,Lookup!A:B,2,FALSE)</f><v>#N/A</v></c>`, ref, line)
				w.errorDone = true
			case v == "":
			case features && i > 0 && !w.formulaDone && len(v) >= 2 && !strings.ContainsAny(v, "\"\n") && cell(v).style == -1:
				half := len([]rune(v)) / 2
				rs := []rune(v)
				fmt.Fprintf(&b, `<c r="%s" t="str"><f>CONCATENATE("%s","%s")</f><v>%s</v></c>`,
					ref, escape(string(rs[:half])), escape(string(rs[half:])), escape(v))
				w.formulaDone = true
			case i == 0:
				fmt.Fprintf(&b, `<c r="%s" t="s"><v>%d</v></c>`, ref, w.str(v))
			default:
				c := cell(v)
				switch c.style {
				case -1:
					fmt.Fprintf(&b, `<c r="%s" t="s"><v>%d</v></c>`, ref, w.str(v))
				case -2:
					fmt.Fprintf(&b, `<c r="%s" t="b"><v>%s</v></c>`, ref, c.value)
				case twinGeneral:
					fmt.Fprintf(&b, `<c r="%s"><v>%s</v></c>`, ref, c.value)
				default:
					fmt.Fprintf(&b, `<c r="%s" s="%d"><v>%s</v></c>`, ref, c.style, serial(v, w.tw.Date1904))
				}
			}
		}
		b.WriteString(`</row>`)
		if features && i > 0 && i == w.tw.EmptyRowAfter {
			line++
			fmt.Fprintf(&b, `<row r="%d" spans="1:%d" x14ac:dyDescent="0.25"><c r="A%d" s="%d"/></row>`, line, max(width, 1), line, twinDate)
		}
	}
	dim := "A1"
	if line > 0 && width > 0 {
		dim = fmt.Sprintf("A1:%s%d", colName(width-1), line)
	}
	return Sheet{Name: name, Dimension: dim, Rows: b.String()}
}

// typed is how a twin writes a value: a style of cellXfs with the cell's
// value, or -1 for a shared string, -2 for a boolean.
type typed struct {
	style int
	value string
}

func cell(v string) typed {
	switch {
	case v == "true" || v == "false":
		return typed{-2, map[string]string{"true": "1", "false": "0"}[v]}
	case wholeNumber.MatchString(v) && v != "-0":
		return typed{twinGeneral, v}
	case decimal.MatchString(v) && len(strings.TrimLeft(strings.ReplaceAll(v, ".", ""), "-0")) <= 15:
		if f, err := strconv.ParseFloat(v, 64); err == nil && strconv.FormatFloat(f, 'f', -1, 64) == strings.TrimPrefix(v, "+") {
			return typed{twinGeneral, v}
		}
	case isoDate.MatchString(v):
		if _, err := time.Parse("2006-01-02", v); err == nil && v >= "1900-03-01" {
			return typed{twinDate, ""}
		}
	case isoDateTime.MatchString(v):
		if _, ok := parseDateTime(v); ok && v >= "1900-03-01" {
			return typed{twinDateTime, ""}
		}
	}
	return typed{-1, ""}
}

func parseDateTime(v string) (time.Time, bool) {
	v = strings.Replace(v, "T", " ", 1)
	for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02 15:04"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// serial is a date's or date-time's serial number in the workbook's date
// system (1900: day 1 is 1900-01-01, with Excel's 1900-02-29 before March;
// 1904: day 0 is 1904-01-01).
func serial(v string, date1904 bool) string {
	t, ok := parseDateTime(v)
	if !ok {
		t, _ = time.Parse("2006-01-02", v)
	}
	epoch := time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)
	if date1904 {
		epoch = time.Date(1904, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	d := t.Sub(epoch)
	days := math.Floor(d.Hours() / 24)
	frac := (d - time.Duration(days)*24*time.Hour).Seconds() / 86400
	if frac == 0 {
		return strconv.FormatFloat(days, 'f', -1, 64)
	}
	return strconv.FormatFloat(days+frac, 'g', 17, 64)
}

// colName is a column's letters: 0 is A, 26 is AA.
func colName(i int) string {
	s := ""
	for i++; i > 0; i = (i - 1) / 26 {
		s = string(rune('A'+(i-1)%26)) + s
	}
	return s
}

// TwinFolders are the fixture folders with a twin in fixtures/xlsx: the
// profile's name (the twin's folder) and its CSV fixture's folder under
// fixtures/.
var TwinFolders = map[string]string{"canonical": "demo", "hubspot": "hubspot", "pipedrive": "pipedrive", "salesforce": "salesforce"}

// Twins are the twin workbooks of every CSV file of the TwinFolders, by
// their path under fixtures/xlsx ("hubspot/…-contacts-….xlsx"). The
// pipedrive twins are in the 1904 date system (Excel for Mac's); each
// folder's contacts twin has a cover sheet.
func Twins(tb testing.TB) map[string]Workbook {
	tb.Helper()
	root := filepath.Dir(XLSXFixtureDir(tb))
	out := map[string]Workbook{}
	for profile, folder := range TwinFolders {
		files, err := filepath.Glob(filepath.Join(root, folder, "*.csv"))
		require.NoError(tb, err)
		require.NotEmpty(tb, files, folder)
		for _, f := range files {
			text, err := os.ReadFile(f)
			require.NoError(tb, err)
			name := filepath.Base(f)
			t, err := TableOfCSV(name, text)
			require.NoError(tb, err, f)
			tw := Twin{Date1904: profile == "pipedrive", EmptyRowAfter: 2}
			if l := strings.ToLower(name); strings.Contains(l, "contact") || strings.Contains(l, "people") {
				tw.Cover = [][]string{{"Exported by", "Exported at", "Records"}, {"crmimport fixtures", "2024-08-27 09:30", strconv.Itoa(len(t.Rows) - 1)}}
			}
			out[profile+"/"+strings.TrimSuffix(name, filepath.Ext(name))+".xlsx"] = TwinWorkbook(t, tw)
		}
	}
	return out
}

// MultiSheet writes tables as the sheets of one workbook, in order, typed
// as a twin's (without a twin's formula, error cell and empty row).
func MultiSheet(tables ...Table) Workbook {
	var wb Workbook
	for i, t := range tables {
		one := TwinWorkbook(t, Twin{})
		if i == 0 {
			wb = one
			continue
		}
		// The sheet's strings go after the workbook's: its indices move.
		sh := one.Sheets[0]
		sh.Rows = shiftStrings(sh.Rows, len(wb.Strings))
		wb.Strings = append(wb.Strings, one.Strings...)
		wb.Sheets = append(wb.Sheets, sh)
	}
	return wb
}

var sharedRef = regexp.MustCompile(`t="s"><v>([0-9]+)</v>`)

func shiftStrings(rows string, by int) string {
	return sharedRef.ReplaceAllStringFunc(rows, func(m string) string {
		n, _ := strconv.Atoi(sharedRef.FindStringSubmatch(m)[1])
		return `t="s"><v>` + strconv.Itoa(n+by) + `</v>`
	})
}

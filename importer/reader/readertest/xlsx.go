package readertest

import (
	"archive/zip"
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Workbook is an .xlsx file written part by part as Excel writes it: the
// same parts, in the same order, with the same namespaces and attributes
// (a theme and printer settings left out: no reader needs them). Tests and
// the fixtures of fixtures/xlsx are made with it; the XML of the cells is
// the caller's, as Excel would write it.
type Workbook struct {
	Date1904 bool
	Sheets   []Sheet
	// Strings are the shared strings' <si> contents, in order, as Excel
	// writes them: "<t>Ann</t>", rich-text runs "<r><rPr>…</rPr><t>…</t></r>…",
	// phonetic runs "<rPh>…</rPh>".
	Strings []string
	// WriteStrings writes the <si> elements instead of Strings (a large
	// table, streamed); the table's counts are then left out.
	WriteStrings func(w io.Writer) error
	// NumFmts are the workbook's custom number formats (ids from 164), and
	// CellXfs the numFmtId of each cell format, s="0", s="1"…: a cell's
	// style. The first is the default (0, General) when CellXfs is nil.
	NumFmts []NumFmt
	CellXfs []int
	// Openpyxl writes the workbook as openpyxl writes one, not as Excel
	// does (xlsx_openpyxl.go): its Sheets' rows only.
	Openpyxl bool
}

// NumFmt is a custom number format.
type NumFmt struct {
	ID   int
	Code string
}

// Sheet is one worksheet: its name and the rows of its <sheetData>.
type Sheet struct {
	Name      string
	Dimension string // "A1:H9"; "" writes none
	Rows      string
	// WriteRows writes the rows instead of Rows (a large sheet, streamed).
	WriteRows func(w io.Writer) error
}

const xmlHeader = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\r\n"

// modified is the time the parts carry, so that a workbook's bytes depend
// on its content only.
var modified = time.Date(2024, 8, 27, 9, 30, 0, 0, time.UTC)

// Write writes the workbook as a zip, deflated as Excel deflates its parts
// (or as openpyxl writes it: Openpyxl).
func (wb Workbook) Write(out io.Writer) error {
	if wb.Openpyxl {
		return wb.writeOpenpyxl(out)
	}
	zw := zip.NewWriter(out)
	part := func(name string, write func(w io.Writer) error) error {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: modified})
		if err != nil {
			return err
		}
		bw := bufio.NewWriterSize(w, 64<<10)
		if _, err := io.WriteString(bw, xmlHeader); err != nil {
			return err
		}
		if err := write(bw); err != nil {
			return err
		}
		return bw.Flush()
	}
	text := func(s string) func(w io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	parts := []struct {
		name  string
		write func(w io.Writer) error
	}{
		{"[Content_Types].xml", text(wb.contentTypes())},
		{"_rels/.rels", text(`<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/extended-properties" Target="docProps/app.xml"/>` +
			`<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/>` +
			`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/>` +
			`</Relationships>`)},
		{"xl/workbook.xml", text(wb.workbook())},
		{"xl/_rels/workbook.xml.rels", text(wb.workbookRels())},
	}
	for i, sh := range wb.Sheets {
		parts = append(parts, struct {
			name  string
			write func(w io.Writer) error
		}{fmt.Sprintf("xl/worksheets/sheet%d.xml", i+1), sh.write(i == 0)})
	}
	parts = append(parts, []struct {
		name  string
		write func(w io.Writer) error
	}{
		{"xl/styles.xml", text(wb.styles())},
		{"xl/sharedStrings.xml", wb.sharedStrings},
		{"docProps/core.xml", text(`<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" ` +
			`xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:dcmitype="http://purl.org/dc/dcmitype/" ` +
			`xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><dc:creator>crmimport fixtures</dc:creator><cp:lastModifiedBy>crmimport fixtures</cp:lastModifiedBy>` +
			`<dcterms:created xsi:type="dcterms:W3CDTF">2024-08-27T09:30:00Z</dcterms:created><dcterms:modified xsi:type="dcterms:W3CDTF">2024-08-27T09:30:00Z</dcterms:modified></cp:coreProperties>`)},
		{"docProps/app.xml", text(wb.app())},
	}...)
	for _, p := range parts {
		if err := part(p.name, p.write); err != nil {
			return fmt.Errorf("write %s: %w", p.name, err)
		}
	}
	return zw.Close()
}

// WriteFile writes the workbook to a file.
func (wb Workbook) WriteFile(p string) error {
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := wb.Write(bw); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Bytes is the workbook's file.
func (wb Workbook) Bytes(tb testing.TB) []byte {
	tb.Helper()
	var b strings.Builder
	require.NoError(tb, wb.Write(&b))
	return []byte(b.String())
}

func (wb Workbook) contentTypes() string {
	var b strings.Builder
	b.WriteString(`<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
		`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
		`<Default Extension="xml" ContentType="application/xml"/>` +
		`<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>`)
	for i := range wb.Sheets {
		fmt.Fprintf(&b, `<Override PartName="/xl/worksheets/sheet%d.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>`, i+1)
	}
	b.WriteString(`<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>` +
		`<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>` +
		`<Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/>` +
		`<Override PartName="/docProps/app.xml" ContentType="application/vnd.openxmlformats-officedocument.extended-properties+xml"/></Types>`)
	return b.String()
}

func (wb Workbook) workbook() string {
	var b strings.Builder
	b.WriteString(`<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" ` +
		`xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" ` +
		`xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" mc:Ignorable="x15 xr xr6 xr10 xr2" ` +
		`xmlns:x15="http://schemas.microsoft.com/office/spreadsheetml/2010/11/main" xmlns:xr="http://schemas.microsoft.com/office/spreadsheetml/2014/revision" ` +
		`xmlns:xr6="http://schemas.microsoft.com/office/spreadsheetml/2016/revision6" xmlns:xr10="http://schemas.microsoft.com/office/spreadsheetml/2016/revision10" ` +
		`xmlns:xr2="http://schemas.microsoft.com/office/spreadsheetml/2015/revision2">` +
		`<fileVersion appName="xl" lastEdited="7" lowestEdited="7" rupBuild="27328"/>`)
	if wb.Date1904 {
		b.WriteString(`<workbookPr date1904="1" defaultThemeVersion="166925"/>`)
	} else {
		b.WriteString(`<workbookPr defaultThemeVersion="166925"/>`)
	}
	b.WriteString(`<bookViews><workbookView xWindow="-120" yWindow="-120" windowWidth="29040" windowHeight="15840" xr2:uid="{00000000-000D-0000-FFFF-FFFF00000000}"/></bookViews><sheets>`)
	for i, sh := range wb.Sheets {
		fmt.Fprintf(&b, `<sheet name="%s" sheetId="%d" r:id="rId%d"/>`, escape(sh.Name), i+1, i+1)
	}
	b.WriteString(`</sheets><calcPr calcId="191029"/></workbook>`)
	return b.String()
}

func (wb Workbook) workbookRels() string {
	var b strings.Builder
	b.WriteString(`<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">`)
	n := len(wb.Sheets)
	fmt.Fprintf(&b, `<Relationship Id="rId%d" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/>`, n+2)
	fmt.Fprintf(&b, `<Relationship Id="rId%d" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/>`, n+1)
	for i := range wb.Sheets {
		fmt.Fprintf(&b, `<Relationship Id="rId%d" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet%d.xml"/>`, i+1, i+1)
	}
	b.WriteString(`</Relationships>`)
	return b.String()
}

func (sh Sheet) write(selected bool) func(w io.Writer) error {
	return func(w io.Writer) error {
		var b strings.Builder
		b.WriteString(`<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" ` +
			`xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" ` +
			`xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" mc:Ignorable="x14ac xr xr2 xr3" ` +
			`xmlns:x14ac="http://schemas.microsoft.com/office/spreadsheetml/2009/9/ac" xmlns:xr="http://schemas.microsoft.com/office/spreadsheetml/2014/revision" ` +
			`xmlns:xr2="http://schemas.microsoft.com/office/spreadsheetml/2015/revision2" xmlns:xr3="http://schemas.microsoft.com/office/spreadsheetml/2016/revision3" ` +
			`xr:uid="{00000000-0001-0000-0000-000000000000}">`)
		if sh.Dimension != "" {
			fmt.Fprintf(&b, `<dimension ref="%s"/>`, sh.Dimension)
		}
		if selected {
			b.WriteString(`<sheetViews><sheetView tabSelected="1" workbookViewId="0"/></sheetViews>`)
		} else {
			b.WriteString(`<sheetViews><sheetView workbookViewId="0"/></sheetViews>`)
		}
		b.WriteString(`<sheetFormatPr defaultRowHeight="15" x14ac:dyDescent="0.25"/><sheetData>`)
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
		if sh.WriteRows != nil {
			if err := sh.WriteRows(w); err != nil {
				return err
			}
		} else if _, err := io.WriteString(w, sh.Rows); err != nil {
			return err
		}
		_, err := io.WriteString(w, `</sheetData><pageMargins left="0.7" right="0.7" top="0.75" bottom="0.75" header="0.3" footer="0.3"/></worksheet>`)
		return err
	}
}

func (wb Workbook) styles() string {
	var b strings.Builder
	b.WriteString(`<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" ` +
		`xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" mc:Ignorable="x14ac x16r2 xr" ` +
		`xmlns:x14ac="http://schemas.microsoft.com/office/spreadsheetml/2009/9/ac" xmlns:x16r2="http://schemas.microsoft.com/office/spreadsheetml/2015/02/main" ` +
		`xmlns:xr="http://schemas.microsoft.com/office/spreadsheetml/2014/revision">`)
	if len(wb.NumFmts) > 0 {
		fmt.Fprintf(&b, `<numFmts count="%d">`, len(wb.NumFmts))
		for _, f := range wb.NumFmts {
			fmt.Fprintf(&b, `<numFmt numFmtId="%d" formatCode="%s"/>`, f.ID, escape(f.Code))
		}
		b.WriteString(`</numFmts>`)
	}
	b.WriteString(`<fonts count="2" x14ac:knownFonts="1"><font><sz val="11"/><color theme="1"/><name val="Calibri"/><family val="2"/><scheme val="minor"/></font>` +
		`<font><b/><sz val="11"/><color theme="1"/><name val="Calibri"/><family val="2"/><scheme val="minor"/></font></fonts>` +
		`<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>` +
		`<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>` +
		`<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>`)
	xfs := wb.CellXfs
	if xfs == nil {
		xfs = []int{0}
	}
	fmt.Fprintf(&b, `<cellXfs count="%d">`, len(xfs))
	for _, id := range xfs {
		if id == 0 {
			b.WriteString(`<xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>`)
		} else {
			fmt.Fprintf(&b, `<xf numFmtId="%d" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>`, id)
		}
	}
	b.WriteString(`</cellXfs><cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>` +
		`<dxfs count="0"/><tableStyles count="0" defaultTableStyle="TableStyleMedium2" defaultPivotStyle="PivotStyleLight16"/></styleSheet>`)
	return b.String()
}

func (wb Workbook) sharedStrings(w io.Writer) error {
	const open = `<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"`
	if wb.WriteStrings != nil {
		if _, err := io.WriteString(w, open+`>`); err != nil {
			return err
		}
		if err := wb.WriteStrings(w); err != nil {
			return err
		}
		_, err := io.WriteString(w, `</sst>`)
		return err
	}
	var b strings.Builder
	// count is the number of cells that name a string; Excel writes it, no
	// reader needs it: the unique count stands in for it.
	fmt.Fprintf(&b, open+` count="%d" uniqueCount="%d">`, len(wb.Strings), len(wb.Strings))
	for _, s := range wb.Strings {
		b.WriteString("<si>" + s + "</si>")
	}
	b.WriteString(`</sst>`)
	_, err := io.WriteString(w, b.String())
	return err
}

func (wb Workbook) app() string {
	var names strings.Builder
	for _, sh := range wb.Sheets {
		names.WriteString("<vt:lpstr>" + escape(sh.Name) + "</vt:lpstr>")
	}
	return fmt.Sprintf(`<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties" `+
		`xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes"><Application>Microsoft Excel</Application><DocSecurity>0</DocSecurity>`+
		`<ScaleCrop>false</ScaleCrop><HeadingPairs><vt:vector size="2" baseType="variant"><vt:variant><vt:lpstr>Worksheets</vt:lpstr></vt:variant>`+
		`<vt:variant><vt:i4>%d</vt:i4></vt:variant></vt:vector></HeadingPairs><TitlesOfParts><vt:vector size="%d" baseType="lpstr">%s</vt:vector></TitlesOfParts>`+
		`<LinksUpToDate>false</LinksUpToDate><SharedDoc>false</SharedDoc><HyperlinksChanged>false</HyperlinksChanged><AppVersion>16.0300</AppVersion></Properties>`,
		len(wb.Sheets), len(wb.Sheets), names.String())
}

// escape escapes s for an XML attribute or text.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// XLSXFixtureDir is fixtures/xlsx.
func XLSXFixtureDir(tb testing.TB) string {
	tb.Helper()
	_, self, _, ok := runtime.Caller(0)
	require.True(tb, ok)
	return filepath.Join(filepath.Dir(self), "..", "..", "..", "fixtures", "xlsx")
}

// XLSXSeeds adds the workbooks of fixtures/xlsx, the twins included, to a
// fuzz target.
func XLSXSeeds(f *testing.F, add func(data []byte)) {
	var matches []string
	err := filepath.WalkDir(XLSXFixtureDir(f), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".xlsx") {
			matches = append(matches, p)
		}
		return err
	})
	require.NoError(f, err)
	require.NotEmpty(f, matches)
	for _, p := range matches {
		data, err := os.ReadFile(p)
		require.NoError(f, err)
		add(data)
	}
}

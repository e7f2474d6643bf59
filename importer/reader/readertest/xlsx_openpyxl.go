package readertest

import (
	"archive/zip"
	"bufio"
	"fmt"
	"io"
	"strings"
)

// A workbook that a script writes with openpyxl (3.1) rather than one a
// spreadsheet application saved: openpyxl computes no formula, so a
// formula cell holds its formula and an empty value (<f>…</f><v></v>),
// and the workbook asks the application that opens it to compute them
// (fullCalcOnLoad). Text is written as inline strings (t="inlineStr"),
// numbers as t="n"; the parts come in openpyxl's order, the workbook's
// relationships with absolute targets. Excel or LibreOffice, opening and
// saving such a file, writes each formula's value beside it.

// writeOpenpyxl writes wb as openpyxl writes a workbook: its Sheets' Rows
// are the caller's XML, as openpyxl would write them; its Strings, number
// formats and the 1904 date system are not used (openpyxl's defaults).
func (wb Workbook) writeOpenpyxl(out io.Writer) error {
	zw := zip.NewWriter(out)
	part := func(name string, write func(w io.Writer) error) error {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: modified})
		if err != nil {
			return err
		}
		bw := bufio.NewWriterSize(w, 64<<10)
		if _, err := io.WriteString(bw, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"); err != nil {
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
	type namedPart struct {
		name  string
		write func(w io.Writer) error
	}
	parts := []namedPart{
		{"docProps/app.xml", text(`<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties" ` +
			`xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes"><Application>Microsoft Excel</Application>` +
			`<AppVersion>3.1</AppVersion></Properties>`)},
		{"docProps/core.xml", text(`<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" ` +
			`xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:dcmitype="http://purl.org/dc/dcmitype/" ` +
			`xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><dc:creator>openpyxl</dc:creator>` +
			`<dcterms:created xsi:type="dcterms:W3CDTF">2024-08-27T09:30:00Z</dcterms:created><dcterms:modified xsi:type="dcterms:W3CDTF">2024-08-27T09:30:00Z</dcterms:modified></cp:coreProperties>`)},
	}
	for i, sh := range wb.Sheets {
		parts = append(parts, namedPart{fmt.Sprintf("xl/worksheets/sheet%d.xml", i+1), sh.writeOpenpyxl()})
	}
	parts = append(parts, []namedPart{
		{"xl/sharedStrings.xml", text(`<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" uniqueCount="0"/>`)},
		{"xl/styles.xml", text(`<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><numFmts count="0"/>` +
			`<fonts count="1"><font><name val="Calibri"/><family val="2"/><color theme="1"/><sz val="11"/><scheme val="minor"/></font></fonts>` +
			`<fills count="2"><fill><patternFill/></fill><fill><patternFill patternType="gray125"/></fill></fills>` +
			`<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>` +
			`<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>` +
			`<cellXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" pivotButton="0" quotePrefix="0" xfId="0"/></cellXfs>` +
			`<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0" hidden="0"/></cellStyles>` +
			`<tableStyles count="0" defaultTableStyle="TableStyleMedium9" defaultPivotStyle="PivotStyleLight16"/></styleSheet>`)},
		{"_rels/.rels", text(`<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/>` +
			`<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/>` +
			`<Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/extended-properties" Target="docProps/app.xml"/>` +
			`</Relationships>`)},
		{"xl/workbook.xml", text(wb.openpyxlWorkbook())},
		{"xl/_rels/workbook.xml.rels", text(wb.openpyxlRels())},
		{"[Content_Types].xml", text(wb.contentTypes())},
	}...)
	for _, p := range parts {
		if err := part(p.name, p.write); err != nil {
			return fmt.Errorf("write %s: %w", p.name, err)
		}
	}
	return zw.Close()
}

func (wb Workbook) openpyxlWorkbook() string {
	var b strings.Builder
	b.WriteString(`<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><workbookPr/><workbookProtection/>` +
		`<bookViews><workbookView visibility="visible" minimized="0" showHorizontalScroll="1" showVerticalScroll="1" showSheetTabs="1" ` +
		`tabRatio="600" firstSheet="0" activeTab="0" autoFilterDateGrouping="1"/></bookViews><sheets>`)
	for i, sh := range wb.Sheets {
		fmt.Fprintf(&b, `<sheet xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" name="%s" sheetId="%d" state="visible" r:id="rId%d"/>`,
			escape(sh.Name), i+1, i+1)
	}
	b.WriteString(`</sheets><definedNames/><calcPr calcId="124519" fullCalcOnLoad="1"/></workbook>`)
	return b.String()
}

func (wb Workbook) openpyxlRels() string {
	var b strings.Builder
	b.WriteString(`<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">`)
	for i := range wb.Sheets {
		fmt.Fprintf(&b, `<Relationship Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="/xl/worksheets/sheet%d.xml" Id="rId%d"/>`, i+1, i+1)
	}
	n := len(wb.Sheets)
	fmt.Fprintf(&b, `<Relationship Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="/xl/styles.xml" Id="rId%d"/>`, n+1)
	fmt.Fprintf(&b, `<Relationship Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="/xl/sharedStrings.xml" Id="rId%d"/>`, n+2)
	b.WriteString(`</Relationships>`)
	return b.String()
}

func (sh Sheet) writeOpenpyxl() func(w io.Writer) error {
	return func(w io.Writer) error {
		var b strings.Builder
		b.WriteString(`<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">` +
			`<sheetPr><outlinePr summaryBelow="1" summaryRight="1"/><pageSetUpPr/></sheetPr>`)
		if sh.Dimension != "" {
			fmt.Fprintf(&b, `<dimension ref="%s"/>`, sh.Dimension)
		}
		b.WriteString(`<sheetViews><sheetView workbookViewId="0"><selection activeCell="A1" sqref="A1"/></sheetView></sheetViews>` +
			`<sheetFormatPr baseColWidth="8" defaultRowHeight="15"/><sheetData>`)
		b.WriteString(sh.Rows)
		b.WriteString(`</sheetData><pageMargins left="0.75" right="0.75" top="1" bottom="1" header="0.5" footer="0.5"/></worksheet>`)
		_, err := io.WriteString(w, b.String())
		return err
	}
}

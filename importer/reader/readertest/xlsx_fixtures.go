package readertest

// XLSXFixtures are the workbooks of fixtures/xlsx, by file name, written
// as Excel writes them (fixtures/xlsx/README.md says what each cell
// holds). TestXLSXFixtures writes them with -update and checks, without,
// that the committed files hold exactly these parts.
func XLSXFixtures() map[string]Workbook {
	return map[string]Workbook{
		"contacts.xlsx":   contactsWorkbook(),
		"deals-1904.xlsx": dealsWorkbook(),
	}
}

// contactsWorkbook: the 1900 date system; shared strings (rich text, a
// phonetic run, _xHHHH_ escapes), inline strings, numeric ids, dates,
// formulas with and without cached values, error cells, an empty row, a
// sparse row, a cell past the header, a second sheet and an empty third.
func contactsWorkbook() Workbook {
	const bold = `<rPr><b/><sz val="11"/><color theme="1"/><rFont val="Calibri"/><family val="2"/><scheme val="minor"/></rPr>`
	return Workbook{
		Strings: []string{
			`<t>id</t>`, `<t>first_name</t>`, `<t>last_name</t>`, `<t>email</t>`, `<t>phone</t>`, `<t>created_at</t>`, // 0–5
			`<t>signed_up</t>`, `<t>score</t>`, `<t>vip</t>`, `<t>company_id</t>`, `<t>note</t>`, // 6–10
			`<t>Ann</t>`, `<t>Lee</t>`, `<t>ann@example.com</t>`, `<t xml:space="preserve"> +1 555 0100</t>`, // 11–14
			"<t xml:space=\"preserve\">Called twice_x000D_\nno answer</t>", // 15
			`<t>Bob</t>`, `<r><t>Sto</t></r><r>` + bold + `<t>ne</t></r>`, // 16–17
			`<t>太田</t><rPh sb="0" eb="2"><t>オオタ</t></rPh><phoneticPr fontId="1" type="noConversion"/>`, // 18
			`<t>Hiro</t>`, `<t>snake_x005F_x000D_case</t>`, `<t>Dana</t>`, `<t>dana@example.com</t>`, // 19–22
			`<t>Eve</t>`, `<t>stray</t>`, `<t>Fay</t>`, `<t>fay@example.com</t>`, // 23–26
			`<t>Gus</t>`, `<t>gus@example.com</t>`, `<t>Hal</t>`, // 27–29
		},
		NumFmts: []NumFmt{{ID: 164, Code: `yyyy\-mm\-dd\ hh:mm:ss`}},
		// s="1" m/d/yyyy, s="2" m/d/yyyy h:mm, s="3" h:mm:ss, s="4" the
		// custom date-time, s="5" #,##0.00.
		CellXfs: []int{0, 14, 22, 21, 164, 4},
		Sheets: []Sheet{{
			Name: "Contacts", Dimension: "A1:L10",
			Rows: `<row r="1" spans="1:11" x14ac:dyDescent="0.25">` +
				`<c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="s"><v>2</v></c><c r="D1" t="s"><v>3</v></c>` +
				`<c r="E1" t="s"><v>4</v></c><c r="F1" t="s"><v>5</v></c><c r="G1" t="s"><v>6</v></c><c r="H1" t="s"><v>7</v></c>` +
				`<c r="I1" t="s"><v>8</v></c><c r="J1" t="s"><v>9</v></c><c r="K1" t="s"><v>10</v></c></row>` +
				`<row r="2" spans="1:11" x14ac:dyDescent="0.25">` +
				`<c r="A2"><v>20676798568</v></c><c r="B2" t="s"><v>11</v></c><c r="C2" t="s"><v>12</v></c><c r="D2" t="s"><v>13</v></c>` +
				`<c r="E2" t="s"><v>14</v></c><c r="F2" s="2"><v>45327.577083333334</v></c><c r="G2" s="1"><v>45292</v></c>` +
				`<c r="H2"><v>0.1</v></c><c r="I2" t="b"><v>1</v></c><c r="J2"><v>1234</v></c><c r="K2" t="s"><v>15</v></c></row>` +
				`<row r="3" spans="1:11" x14ac:dyDescent="0.25">` +
				`<c r="A3"><v>20676798569</v></c><c r="B3" t="s"><v>16</v></c><c r="C3" t="s"><v>17</v></c>` +
				`<c r="D3" t="str"><f>LOWER("BOB@EXAMPLE.COM")</f><v>bob@example.com</v></c>` +
				`<c r="F3" s="4"><v>45328.25</v></c><c r="G3" s="1"><v>60</v></c><c r="H3"><v>0.30000000000000004</v></c>` +
				`<c r="I3" t="b"><v>0</v></c><c r="J3" t="e"><f>VLOOKUP(B3,Companies!A:B,2,FALSE)</f><v>#N/A</v></c>` +
				`<c r="K3" t="inlineStr"><is><t>Met at the fair</t></is></c></row>` +
				`<row r="4" spans="1:11" x14ac:dyDescent="0.25"><c r="B4" s="1"/><c r="D4" t="str"><f>""</f><v></v></c></row>` +
				`<row r="5" spans="1:11" x14ac:dyDescent="0.25">` +
				`<c r="A5"><v>9.91214345678901E+18</v></c><c r="B5" t="s"><v>19</v></c><c r="C5" t="s"><v>18</v></c>` +
				`<c r="F5" s="2"><v>61</v></c><c r="G5" s="1"><v>1</v></c>` +
				`<c r="I5" t="b"><f>TRUE()</f><v>1</v></c><c r="J5" t="e"><v>#REF!</v></c><c r="K5" t="s"><v>20</v></c></row>` +
				`<row r="6" spans="1:11" x14ac:dyDescent="0.25">` +
				`<c r="A6"><v>123456789012345</v></c><c r="B6" t="s"><v>21</v></c><c r="D6" t="s"><v>22</v></c>` +
				`<c r="F6" s="3"><v>0.75</v></c><c r="H6" s="5"><v>-1234.5</v></c><c r="J6" t="e"><f>1/0</f><v>#DIV/0!</v></c></row>` +
				`<row r="7" spans="1:12" x14ac:dyDescent="0.25">` +
				`<c r="A7"><v>20676798570</v></c><c r="B7" t="s"><v>23</v></c><c r="H7"><f>H2*2</f></c><c r="L7" t="s"><v>24</v></c></row>` +
				`<row r="8" spans="1:11" x14ac:dyDescent="0.25">` +
				`<c r="A8"><v>20676798571</v></c><c r="B8" t="s"><v>25</v></c><c r="D8" t="s"><v>26</v></c>` +
				`<c r="G8" s="1"><v>2958465</v></c><c r="H8"><v>9.9999999999999995E-8</v></c></row>` +
				`<row r="10" spans="1:11" x14ac:dyDescent="0.25"><c r="A10"><v>20676798572</v></c><c r="B10" t="s"><v>11</v></c></row>`,
		}, {
			Name: "Archived", Dimension: "A1:C3",
			Rows: `<row r="1" spans="1:3" x14ac:dyDescent="0.25"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="s"><v>3</v></c></row>` +
				`<row r="2" spans="1:3" x14ac:dyDescent="0.25"><c r="A2"><v>20676798580</v></c><c r="B2" t="s"><v>27</v></c><c r="C2" t="s"><v>28</v></c></row>` +
				`<row r="3" spans="1:3" x14ac:dyDescent="0.25"><c r="A3"><v>20676798581</v></c><c r="B3" t="s"><v>29</v></c></row>`,
		}, {
			Name: "Empty", Dimension: "A1",
		}},
	}
}

// dealsWorkbook: the 1904 date system (Excel for Mac's), custom number
// formats for dates and amounts, a formula's cached number, a negative
// "date".
func dealsWorkbook() Workbook {
	return Workbook{
		Date1904: true,
		Strings: []string{`<t>id</t>`, `<t>name</t>`, `<t>amount</t>`, `<t>close_date</t>`, `<t>closed_at</t>`, `<t>won</t>`,
			`<t>Big deal</t>`, `<t>Small deal</t>`, `<t>Day zero</t>`},
		NumFmts: []NumFmt{
			{ID: 164, Code: `yyyy\-mm\-dd`},
			{ID: 165, Code: `[$-409]m/d/yy\ h:mm\ AM/PM;@`},
			{ID: 166, Code: `#,##0.00\ "€";[Red]\-#,##0.00\ "€"`},
		},
		// s="1" yyyy-mm-dd, s="2" m/d/yy h:mm AM/PM, s="3" an amount in
		// euros, s="4" m/d/yyyy (built in).
		CellXfs: []int{0, 164, 165, 166, 14},
		Sheets: []Sheet{{
			Name: "Deals", Dimension: "A1:F4",
			Rows: `<row r="1" spans="1:6" x14ac:dyDescent="0.2">` +
				`<c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="s"><v>2</v></c><c r="D1" t="s"><v>3</v></c>` +
				`<c r="E1" t="s"><v>4</v></c><c r="F1" t="s"><v>5</v></c></row>` +
				`<row r="2" spans="1:6" x14ac:dyDescent="0.2">` +
				`<c r="A2"><v>4001</v></c><c r="B2" t="s"><v>6</v></c><c r="C2" s="3"><v>125000.5</v></c>` +
				`<c r="D2" s="1"><v>43861</v></c><c r="E2" s="2"><v>43861.5625</v></c><c r="F2" t="b"><v>1</v></c></row>` +
				`<row r="3" spans="1:6" x14ac:dyDescent="0.2">` +
				`<c r="A3"><v>4002</v></c><c r="B3" t="s"><v>7</v></c><c r="C3" s="3"><v>0.1</v></c>` +
				`<c r="D3" s="4"><v>0</v></c><c r="E3" s="2"><v>1.0000115740740741</v></c><c r="F3" t="b"><v>0</v></c></row>` +
				`<row r="4" spans="1:6" x14ac:dyDescent="0.2">` +
				`<c r="A4"><v>4003</v></c><c r="B4" t="s"><v>8</v></c><c r="C4" s="3"><f>C2*2</f><v>250001</v></c>` +
				`<c r="D4" s="1"><v>-1</v></c><c r="F4" t="e"><v>#N/A</v></c></row>`,
		}},
	}
}

package profile

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/importer/reader"
	"crmimport/ledger"
)

// TestBuiltinProfilesLoad: every embedded profile is valid, named like its
// file, and reads an id for every kind it reads.
func TestBuiltinProfilesLoad(t *testing.T) {
	t.Parallel()
	names := BuiltinNames()
	require.Contains(t, names, "canonical")
	for _, n := range names {
		p, err := Builtin(n)
		require.NoError(t, err, n)
		require.Equal(t, n, p.Name, "profiles/%s.yaml names itself", n)
		require.True(t, p.BuiltIn)
		require.NotEmpty(t, p.Description, n)
		for _, k := range p.Kinds() {
			require.NotNil(t, p.kinds[k].fields["id"], "%s: %s has an id", n, k)
		}
	}
}

// TestCanonicalProfileIsTheDocumentedLayout: the canonical profile maps
// each canonical field from the column of its own name, and its files are
// the six documented names (SPEC §4).
func TestCanonicalProfileIsTheDocumentedLayout(t *testing.T) {
	t.Parallel()
	p := Canonical()
	require.True(t, p.MatchEmail)
	require.True(t, p.MatchDomain)
	require.False(t, p.repeatedFirst)
	for _, k := range canon.Kinds() {
		spec := p.kinds[k]
		require.NotNil(t, spec, k)
		require.Equal(t, []string{k.Plural() + ".csv", k.Plural() + ".json", k.Plural() + ".jsonl", k.Plural() + ".ndjson"}, p.FilePatterns(k))
		require.Len(t, spec.fields, len(canon.Fields(k)), k)
		for _, f := range canon.Fields(k) {
			require.Equal(t, []string{f}, spec.fields[f].columns, "%s.%s", k, f)
		}
		require.Empty(t, spec.links)
	}
	for name, want := range map[string]ledger.Kind{"contacts.csv": ledger.Contact, "COMPANIES.JSON": ledger.Company,
		"notes.jsonl": ledger.Note, "deals.csv.gz": ledger.Deal, "leads.csv": ledger.Lead, "tickets.csv": "", "contacts.xlsx": ledger.Contact, "contacts.xls": ""} {
		ks, _, ok := p.FileKinds(name)
		require.Equal(t, want != "", ok, name)
		if ok {
			require.Equal(t, []ledger.Kind{want}, ks, name)
		}
	}
}

// TestProfileValidation: a profile file is checked strictly, and each
// error names the file, the line, the key and what is wrong.
func TestProfileValidation(t *testing.T) {
	t.Parallel()
	const base = "name: acme\ndescription: test\nkinds:\n  contact:\n    files: [people.csv]\n    fields:\n      id: ID\n"
	cases := map[string]struct {
		text string
		want []string
	}{
		"NotYAML":         {"name: [", []string{"acme.yaml: not YAML or JSON"}},
		"Empty":           {"", []string{"the file is empty"}},
		"UnknownTopKey":   {base + "colour: blue\n", []string{`acme.yaml:8: colour: unknown key "colour"`}},
		"NoName":          {"kinds:\n  contact:\n    files: [a.csv]\n    fields: {id: ID}\n", []string{"name: missing"}},
		"BadName":         {strings.Replace(base, "name: acme", "name: Acme Corp", 1), []string{`name: "Acme Corp" is not a profile name`}},
		"UnknownKind":     {base + "  ticket:\n    files: [t.csv]\n    fields: {id: ID}\n", []string{"acme.yaml:8: kinds.ticket: unknown kind"}},
		"PluralKind":      {strings.Replace(base, "  contact:", "  contacts:", 1), []string{"kinds.contacts: unknown kind"}},
		"UnknownField":    {base + "      emial: Email\n", []string{"acme.yaml:8: kinds.contact.fields.emial: unknown field of contact (its fields: id, first_name"}},
		"NoID":            {strings.Replace(base, "      id: ID\n", "      email: Email\n", 1), []string{"kinds.contact.fields: no id"}},
		"NoFiles":         {strings.Replace(base, "    files: [people.csv]\n", "", 1), []string{"kinds.contact.files: missing"}},
		"BadPattern":      {strings.Replace(base, "[people.csv]", "[\"peo[ple.csv\"]", 1), []string{`kinds.contact.files[0]: "peo[ple.csv" is not a file name pattern`}},
		"NoExtension":     {strings.Replace(base, "[people.csv]", "[people]", 1), []string{`kinds.contact.files[0]: "people" does not end in .csv`}},
		"BadMatch":        {base + "match: [phone]\n", []string{`match: unknown natural key "phone"`}},
		"BadIDs":          {base + "ids: hubspot\n", []string{`ids: unknown id rule "hubspot"`}},
		"BadDate":         {base + "dates: [\"DD.MM.YYYY\", \"DD/MM/YYYY hh:mm Q\"]\n", []string{`dates[1]: date format "DD/MM/YYYY hh:mm Q": unknown "Q"`}},
		"DateWithoutDay":  {base + "dates: [\"MM/YYYY\"]\n", []string{"needs a year (YYYY or YY) and a day"}},
		"BadRepeated":     {base + "repeated_headers: last\n", []string{`repeated_headers: unknown rule "last"`}},
		"LinkToNonParent": {base + "    links:\n      - {column: Deal, kind: deal}\n", []string{"kinds.contact.links[0].kind: a contact cannot link to a deal (it links to: company, user)"}},
		"LinkKindAndPrefixes": {base + "    links:\n      - {column: X, kind: company, prefixes: {\"001\": company}}\n",
			[]string{"kinds.contact.links[0]: say either kind"}},
		"LinkByNameWithoutParent": {base + "    links:\n      - {column: Org, kind: company, by: name}\n",
			[]string{"links by name to company, which the profile does not read"}},
		"UnknownLinkKey": {base + "    links:\n      - {column: Org, kind: company, separator: \";\"}\n",
			[]string{`kinds.contact.links[0].separator: unknown key "separator" (known here: column, kind, prefixes, list, by, name)`}},
		"DefaultForID": {strings.Replace(base, "id: ID", "id: {columns: [ID], default: x}", 1), []string{"an id has no default"}},
		"BodyFileOutside": {"name: acme\nkinds:\n  note:\n    files:\n      - {file: n.csv, body_file: \"../{Id}\"}\n    fields: {id: Id}\n",
			[]string{"body_file: \"../{Id}\": a body file is a path inside the export"}},
		"JoinWithoutKey": {"name: acme\nkinds:\n  deal:\n    files:\n      - file: d.csv\n        join:\n          - {file: r.csv, links: [{column: C, kind: contact}]}\n    fields: {id: Id}\n",
			[]string{"kinds.deal.files[0].join[0].key: missing"}},
		"OneColumnTwoFields": {base + "      first_name: [Name]\n      last_name: [Surname, Name]\n",
			[]string{`kinds.contact.fields.last_name: column "Name" also gives first_name`}},
		"SeveralErrorsAtOnce": {base + "colour: blue\nids: x\n", []string{`unknown key "colour"`, `unknown id rule "x"`}},
		"SheetOfJSON": {strings.Replace(base, "files: [people.csv]", "files: [{file: people.json, sheet: People}]", 1),
			[]string{`kinds.contact.files[0].sheet: "people.json" is not a spreadsheet's pattern (.xlsx or .csv): only a workbook has sheets`}},
		"EmptySheet": {strings.Replace(base, "files: [people.csv]", "files: [{file: people.xlsx, sheet: \" \"}]", 1),
			[]string{"kinds.contact.files[0].sheet: names no sheet"}},
		"DateOnlyNotADate": {base + "      email: {columns: [Email], date_only: true}\n", []string{"kinds.contact.fields.email.date_only: email is not a date"}},
		"DateOnlyNeitherTrueNorColumns": {base + "      created_at: {columns: [Created], date_only: yes please}\n",
			[]string{`kinds.contact.fields.created_at.date_only: expected true, false or a list of the field's columns that hold a date, found "yes please"`}},
		"DateOnlyColumnNotTheField's": {base + "      created_at: {columns: [Created, Since], date_only: [Modified]}\n",
			[]string{`kinds.contact.fields.created_at.date_only: "Modified" is not one of the field's columns (Created, Since)`}},
		// Issue 26 item 3: value maps are validated like the rest, and a
		// status from two flags is a deal's alone.
		"MapToNoStatus": {"name: acme\nkinds:\n  deal:\n    files: [d.csv]\n    fields:\n      id: Id\n      status: {columns: [Status], map: {Won: won, Closed: closed}}\n",
			[]string{`acme.yaml:7: kinds.deal.fields.status.map.Closed: status "closed" is not open, won or lost`}},
		"MapToNoFlag": {"name: acme\nkinds:\n  activity:\n    files: [a.csv]\n    fields:\n      id: Id\n      done: {columns: [State], map: {Finished: finished}}\n",
			[]string{`kinds.activity.fields.done.map.Finished: done "finished" is not true or false`}},
		"FlagsNotStatus": {base + "      title: {flags: {won: A, closed: B}}\n", []string{"kinds.contact.fields.title.flags: flags give a deal's status alone, not title"}},
		"FlagsAndColumns": {"name: acme\nkinds:\n  deal:\n    files: [d.csv]\n    fields:\n      id: Id\n      status: {columns: [Status], flags: {won: IsWon, closed: IsClosed}}\n",
			[]string{"kinds.deal.fields.status: columns and flags both give status: one or the other"}},
		"FlagsHalf": {"name: acme\nkinds:\n  deal:\n    files: [d.csv]\n    fields:\n      id: Id\n      status: {flags: {won: IsWon}}\n",
			[]string{"kinds.deal.fields.status.flags: expected {won: COLUMN, closed: COLUMN}"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := Load("acme.yaml", []byte(c.text))
			require.Error(t, err)
			for _, w := range c.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
	p, err := Load("acme.yaml", []byte(base))
	require.NoError(t, err)
	require.False(t, p.BuiltIn)
	require.Equal(t, []ledger.Kind{ledger.Contact}, p.Kinds())
}

// TestDateLayout: a profile's date formats, written with tokens.
func TestDateLayout(t *testing.T) {
	t.Parallel()
	for spec, want := range map[string]string{
		"DD.MM.YYYY": "02.01.2006", "M/D/YY h:mm A": "1/2/06 3:04 PM", "YYYY-MM-DD HH:mm:ss": "2006-01-02 15:04:05",
		"D.M.YYYY H:mm": "2.1.2006 15:04",
	} {
		got, _, err := dateLayout(spec)
		require.NoError(t, err, spec)
		require.Equal(t, want, got, spec)
	}
	formats := []dateFormat{{layout: "02.01.2006"}, {layout: "02.01.2006 15:04", hasTime: true}}
	require.Equal(t, "2024-03-05", profileDate(formats, "05.03.2024"))
	require.Equal(t, "2024-03-05T14:30:00", profileDate(formats, "05.03.2024 14:30"))
	require.Equal(t, "2024-03-05", profileDate(formats, "2024-03-05"), "ISO stays as it is")
	require.Equal(t, "5 March", profileDate(formats, "5 March"), "left for validation to fail")
}

// TestSalesforceID: 15-character ids become 18 with the case checksum;
// 18-character ids, empty lookups and tree references.
func TestSalesforceID(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"0014600001TvgfW":    "0014600001TvgfWAAR", // the real sample's Edge Communications
		"0034600001Odz7h":    "0034600001Odz7hAAB",
		"0064600000J5S5a":    "0064600000J5S5aAAF",
		"0014600001TvgfWAAR": "0014600001TvgfWAAR",
		"0014600001tvgfw":    "0014600001tvgfwAAA", // another record: case matters in 15
		"000000000000000AAA": "",
		"@AcmeRef":           "AcmeRef",
		" 0034600001Odz7h ":  "0034600001Odz7hAAB",
		"not-an-id-at-all":   "not-an-id-at-all",
		"12345678901234!":    "12345678901234!",
	} {
		require.Equal(t, want, salesforceID(in), in)
	}
}

// TestWhereColumnMissing: a file whose rows a profile filters by a column
// it does not have fails its task, rather than read as holding nothing.
func TestWhereColumnMissing(t *testing.T) {
	t.Parallel()
	p, err := Builtin("salesforce")
	require.NoError(t, err)
	m := NewMapper(p, ledger.Note, "ContentVersion.csv")
	err = m.CheckHeader([]string{"Id", "ContentDocumentId", "IsLatest", "Title"})
	require.EqualError(t, err, `ContentVersion.csv:1: no "FileType" column: the salesforce profile reads only the rows whose FileType is "SNOTE"`)
	require.NoError(t, NewMapper(p, ledger.Note, "ContentVersion.csv").CheckHeader([]string{"Id", "FileType", "IsLatest"}))
}

// TestPipedriveCurrencySpellings: issue 15 item 4. Pipedrive writes the
// deal's currency as `Deal - Currency` or, in older and some current
// exports, `Deal - Currency of Value`; both are the currency, not extra.
func TestPipedriveCurrencySpellings(t *testing.T) {
	t.Parallel()
	p, err := Builtin("pipedrive")
	require.NoError(t, err)
	for _, header := range []string{"Deal - Currency", "Deal - Currency of Value"} {
		m := NewMapper(p, ledger.Deal, "deals-1-20240827.csv")
		cols := []string{"Deal - ID", "Deal - Title", "Deal - Value", header}
		require.NoError(t, m.CheckHeader(cols), header)
		r := m.Map(reader.Row{Line: 2, Cols: []reader.Col{{Name: cols[0], Value: "21"}, {Name: cols[1], Value: "Bread"},
			{Name: cols[2], Value: "48000"}, {Name: cols[3], Value: "EUR"}}})
		require.Equal(t, "EUR", r.Get("currency"), header)
		require.NotContains(t, r.ExtraJSON(), "EUR", header)
	}
}

// TestWorkbookPatterns: a workbook is a file like a CSV (issue 15 item
// 1): a table pattern matches a .csv and an .xlsx of the same name either
// way, and a file pattern may name the one sheet of a workbook to read.
func TestWorkbookPatterns(t *testing.T) {
	t.Parallel()
	p, err := Load("acme.yaml", []byte("name: acme\nkinds:\n  contact:\n    files: [\"*people*.csv\"]\n    fields: {id: ID}\n"+
		"  deal:\n    files: [{file: \"deals-*.xlsx\", sheet: Open deals}, \"*.jsonl\"]\n    fields: {id: ID}\n"))
	require.NoError(t, err)
	for name, want := range map[string]ledger.Kind{
		"people-4321.xlsx": ledger.Contact, "people-4321.csv": ledger.Contact, "PEOPLE.XLSX": ledger.Contact,
		"deals-2024.xlsx": ledger.Deal, "deals-2024.csv": ledger.Deal, "people.xls": "", "people.xlsx.gz": ledger.Contact,
		"deals.json": "", "people.json": "",
	} {
		ks, _, ok := p.FileKinds(name)
		require.Equal(t, want != "", ok, name)
		if ok {
			require.Equal(t, []ledger.Kind{want}, ks, name)
		}
	}
	_, f, _ := p.FileKinds("people.xlsx")
	require.Equal(t, reader.FormatXLSX, f, "the format is the file's own, whatever the pattern's")
	require.Equal(t, "Open deals", p.Sheet(ledger.Deal, "deals-2024.xlsx"))
	require.Equal(t, "", p.Sheet(ledger.Contact, "people.xlsx"), "no sheet named: each sheet with a header row")
}

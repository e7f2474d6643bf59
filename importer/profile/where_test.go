package profile

import (
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/importer/reader"
	"crmimport/ledger"
)

// A partner export split into companies and contacts by a flag, and a
// lead export that feeds contacts and their notes (SPEC §4, issue 23 item 9).
const splitProfile = `name: partners
booleans: {true: ["Ja"], false: ["Nein"]}
kinds:
  company:
    files: [{file: "res.partner*.csv", where: {is_company: true}}]
    fields: {id: id, name: name, domain: website}
  contact:
    files:
      - {file: "res.partner*.csv", where: {is_company: false, type: [contact, private]}}
      - "crm.lead*.csv"
    fields: {id: id, last_name: name, email: email, company_id: parent_id}
  note:
    files: ["crm.lead*.csv"]
    fields: {id: id, body: description}
    links: [{column: id, kind: contact}]
`

var partnerHeader = []string{"id", "name", "is_company", "type", "parent_id", "email", "website", "city"}

func partnerRow(line int, vals ...string) reader.Row {
	row := reader.Row{Line: line}
	for i, v := range vals {
		row.Cols = append(row.Cols, reader.Col{Name: partnerHeader[i], Value: v})
	}
	return row
}

// TestOneFileSeveralKinds: the profile gives each file to every kind whose
// patterns match it, in plan order; a where written true or false is a
// flag, anything else values as written.
func TestOneFileSeveralKinds(t *testing.T) {
	t.Parallel()
	p, err := Load("partners.yaml", []byte(splitProfile))
	require.NoError(t, err)
	kinds, format, ok := p.FileKinds("res.partner-2024.csv")
	require.True(t, ok)
	require.Equal(t, reader.FormatCSV, format)
	require.Equal(t, []ledger.Kind{ledger.Company, ledger.Contact}, kinds)
	kinds, _, _ = p.FileKinds("crm.lead.csv")
	require.Equal(t, []ledger.Kind{ledger.Contact, ledger.Note}, kinds)

	spec := p.fileSpec(ledger.Contact, "res.partner.csv")
	require.Equal(t, []whereCond{{column: "is_company", isFlag: true}, {column: "type", values: []string{"contact", "private"}}}, spec.where)
	require.Equal(t, []string{`res.partner*.csv (the rows whose is_company is false and type is "contact" or "private")`, "crm.lead*.csv"},
		p.FilesDescribed(ledger.Contact))
	require.Equal(t, []SharedPattern{
		{Pattern: "res.partner*.csv", Kinds: []ledger.Kind{ledger.Company, ledger.Contact}, Split: true},
		{Pattern: "crm.lead*.csv", Kinds: []ledger.Kind{ledger.Contact, ledger.Note}},
	}, p.SharedPatterns())

	// A quoted "true" is a value like any other: matched as written.
	q, err := Load("q.yaml", []byte(`name: q
kinds:
  company:
    files: [{file: "p.csv", where: {is_company: "True"}}]
    fields: {id: id, name: name}
`))
	require.NoError(t, err)
	require.Equal(t, []whereCond{{column: "is_company", values: []string{"True"}}}, q.fileSpec(ledger.Company, "p.csv").where)
}

// TestWhereSplitsRowsBetweenKinds: each kind takes the rows its where
// takes and excludes the others; the first planned kind says which rows no
// kind takes; a flag that cannot be read fails its row in the first
// planned kind that reads it, and is excluded from the others.
func TestWhereSplitsRowsBetweenKinds(t *testing.T) {
	t.Parallel()
	p, err := Load("partners.yaml", []byte(splitProfile))
	require.NoError(t, err)
	company := NewMapper(p, ledger.Company, "res.partner.csv")
	contact := NewMapper(p, ledger.Contact, "res.partner.csv")
	for _, m := range []*Mapper{company, contact} {
		require.NoError(t, m.CheckHeader(partnerHeader))
	}
	type outcome struct {
		excluded, untaken bool
		err               string
	}
	for _, tc := range []struct {
		name             string
		row              reader.Row
		company, contact outcome
	}{
		{"Company", partnerRow(2, "p1", "Bakery AB", "True", "contact"), outcome{}, outcome{excluded: true}},
		{"Person", partnerRow(3, "p2", "Anna", "false", "contact", "p1"), outcome{excluded: true}, outcome{}},
		{"ProfileSpelling", partnerRow(4, "p3", "Berg AB", "Ja", "contact"), outcome{}, outcome{excluded: true}},
		{"EmptyIsFalse", partnerRow(5, "p4", "Per", "", "private"), outcome{excluded: true}, outcome{}},
		{"NoKindTakesIt", partnerRow(6, "p5", "Warehouse", "False", "delivery"),
			outcome{excluded: true, untaken: true}, outcome{excluded: true}},
		{"FlagUnread", partnerRow(7, "p6", "Nyström Trä", "Company", "contact"),
			outcome{err: `is_company "Company" is neither true nor false: the partners profile reads the row as a company or a contact by it`},
			outcome{excluded: true}},
		// A row another condition leaves out is not the kind's, whatever
		// its flag: the company task fails it alone.
		{"FlagUnreadTypeOut", partnerRow(8, "p7", "Dock", "maybe", "delivery"),
			outcome{err: `is_company "maybe" is neither true nor false`}, outcome{excluded: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []struct {
				m    *Mapper
				want outcome
			}{{company, tc.company}, {contact, tc.contact}} {
				r := c.m.Map(tc.row)
				require.Equal(t, c.want.excluded, r.Excluded, "%s excluded", c.m.Kind())
				require.Equal(t, c.want.untaken, r.Untaken, "%s untaken", c.m.Kind())
				if c.want.err == "" {
					require.Nil(t, r.Err, "%s", c.m.Kind())
					continue
				}
				require.NotNil(t, r.Err, "%s fails the row", c.m.Kind())
				require.Contains(t, r.Err.Reason, c.want.err)
				require.Equal(t, tc.row.Line, r.Err.Line)
			}
		})
	}

	// With --only contacts, the contact task is the first planned: it
	// counts the rows no kind takes, and fails the flag it cannot read.
	only := NewMapper(p, ledger.Contact, "res.partner.csv")
	only.Planned([]ledger.Kind{ledger.Contact})
	r := only.Map(partnerRow(6, "p5", "Warehouse", "False", "delivery"))
	require.True(t, r.Excluded && r.Untaken)
	r = only.Map(partnerRow(7, "p6", "Nyström Trä", "Company", "contact"))
	require.NotNil(t, r.Err)
	require.False(t, r.Excluded)
}

// TestExtraHoldsOnlyWhatNoTakingKindMaps: a kind's extra holds only the
// columns that no kind taking the row maps: a lead's description is its
// note's, not its contact's extra; a company row keeps its email, which
// only the contacts (another row's kind) map. A column no kind maps is kept
// with every kind.
func TestExtraHoldsOnlyWhatNoTakingKindMaps(t *testing.T) {
	t.Parallel()
	p, err := Load("partners.yaml", []byte(splitProfile))
	require.NoError(t, err)

	lead := reader.Row{Line: 2, Cols: []reader.Col{{Name: "id", Value: "l1"}, {Name: "name", Value: "Anna"},
		{Name: "email", Value: "anna@example.com"}, {Name: "description", Value: "<p>Two ovens.</p>"}, {Name: "stage_id", Value: "New"}}}
	c := NewMapper(p, ledger.Contact, "crm.lead.csv").Map(lead)
	require.Equal(t, map[string]any{"stage_id": "New"}, c.Extra)
	n := NewMapper(p, ledger.Note, "crm.lead.csv").Map(lead)
	require.Equal(t, map[string]any{"stage_id": "New"}, n.Extra)
	require.Equal(t, "<p>Two ovens.</p>", n.Get("body"))
	require.Equal(t, []LinkValue{{Field: "contact_id", Label: "id", ID: "l1", Shown: "l1"}}, n.Links())

	company := NewMapper(p, ledger.Company, "res.partner.csv")
	r := company.Map(partnerRow(2, "p1", "Bakery AB", "True", "contact", "", "info@bakery.example.com", "bakery.example.com", "Stockholm"))
	require.Equal(t, map[string]any{"is_company": "True", "type": "contact", "email": "info@bakery.example.com", "city": "Stockholm"}, r.Extra)
	contact := NewMapper(p, ledger.Contact, "res.partner.csv")
	r = contact.Map(partnerRow(3, "p2", "Anna", "False", "contact", "p1", "anna@bakery.example.com", "anna.example.com", "Stockholm"))
	require.Equal(t, map[string]any{"is_company": "False", "type": "contact", "website": "anna.example.com", "city": "Stockholm"}, r.Extra,
		"a person's website: no company takes the row")

	cols := NewMapper(p, ledger.Note, "crm.lead.csv").Columns([]string{"id", "name", "email", "description", "stage_id"}, nil)
	require.Equal(t, []ledger.Kind{ledger.Contact}, cols[1].OtherKinds)
	require.True(t, cols[1].OtherKindsTakeAll, "the contacts take every row of a lead export")
	require.Equal(t, ColumnExtra, cols[1].Field)
	require.Nil(t, cols[4].OtherKinds)
}

// TestPrefixOfAnObjectNotImported: R6b. A prefix may name the object of
// ids the profile does not import ({not_imported: case}): a link value of
// it is kept, naming the object; a prefix no rule takes names the column
// and the id's key prefix.
func TestPrefixOfAnObjectNotImported(t *testing.T) {
	t.Parallel()
	p, err := Builtin("salesforce")
	require.NoError(t, err)
	m := NewMapper(p, ledger.Activity, "Task.csv")
	r := m.Map(reader.Row{Line: 2, Cols: []reader.Col{{Name: "Id", Value: "00T5g00000Tk001EAB"},
		{Name: "WhoId", Value: "00Q5g00000LdWx1EAF"}, {Name: "WhatId", Value: "5005g00000Cs001AAB"}, {Name: "AccountId", Value: ""}}})
	require.Equal(t, []LinkValue{
		{Field: "lead_id", Label: "WhoId", ID: "00Q5g00000LdWx1EAF", Shown: "00Q5g00000LdWx1EAF"},
		{Field: "WhatId", Label: "WhatId", Shown: "5005g00000Cs001AAB", Never: "a case"},
	}, r.Links(), "a lead (00Q) is a link; a case is not imported")
	r = m.Map(reader.Row{Line: 3, Cols: []reader.Col{{Name: "Id", Value: "00T5g00000Tk002EAB"},
		{Name: "WhoId", Value: ""}, {Name: "WhatId", Value: "7015g00000Cp001AAB"}, {Name: "AccountId", Value: ""}}})
	require.Equal(t, []LinkValue{{Field: "WhatId", Label: "WhatId", Shown: "7015g00000Cp001AAB", Never: "a record of another object (WhatId 701…)"}},
		r.Links())

	_, err = Load("x.yaml", []byte("name: x\nkinds:\n  note:\n    files: [n.csv]\n    fields: {id: Id, body: Body}\n"+
		"    links: [{column: ParentId, prefixes: {\"500\": {not_imported: \"\"}, \"501\": {kind: case}}}]\n"))
	require.ErrorContains(t, err, `x.yaml:6: kinds.note.links[0].prefixes.500: names no object`)
	require.ErrorContains(t, err, `kinds.note.links[0].prefixes.501.kind: unknown key "kind" (known here: not_imported, ignore)`)

	// A user (005) is ignored, as an owner: no link, kept nowhere; but a
	// note on a user alone is linked to a user (R6b).
	note := NewMapper(p, ledger.Note, "Note.csv")
	r = note.Map(reader.Row{Line: 2, Cols: []reader.Col{{Name: "Id", Value: "0025g00000Nt003AAB"},
		{Name: "ParentId", Value: "0055g00000AbCdEAAV"}, {Name: "AccountId", Value: ""}, {Name: "Body", Value: "x"}}})
	require.Empty(t, r.Links())
	require.Equal(t, []string{"a user"}, r.Ignored())
	require.Empty(t, r.Extra)
}

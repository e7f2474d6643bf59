package profile

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/importer/reader"
	"crmimport/ledger"
)

// TestIDFromValues: an id made of columns is a digest of the values, each
// trimmed, NFC-normalised and length-prefixed, the same in every run and
// on every machine (pinned below), behind a readable prefix; all values
// empty make no id (SPEC §4).
func TestIDFromValues(t *testing.T) {
	t.Parallel()
	anna := IDFromValues([]string{"Anna Lindqvist", "anna@example.com"})
	// The exact digest is the contract of README "Ids made of columns":
	// SHA-256 over "14:Anna Lindqvist16:anna@example.com", its first 32 hex
	// digits (sha256sum gives the same).
	require.Equal(t, "anna-lindqvist.66138543f5893c7dcb1fc69ebb655969", anna)

	// Length-prefixed: the values' boundaries are part of the id.
	require.NotEqual(t, IDFromValues([]string{"ab", "c"}), IDFromValues([]string{"a", "bc"}))
	require.NotEqual(t, IDFromValues([]string{"a", ""}), IDFromValues([]string{"", "a"}))
	// NFC: "é" written as one rune or as "e" and a combining accent is one value.
	require.Equal(t, IDFromValues([]string{"Jos\u00e9 Ek", "x"}), IDFromValues([]string{"Jose\u0301 Ek", "x"}))
	// Spaces around a value and the spellings of empty do not count.
	require.Equal(t, anna, IDFromValues([]string{"  Anna Lindqvist ", "anna@example.com\t"}))
	require.Equal(t, IDFromValues([]string{"Anna", ""}), IDFromValues([]string{"Anna", "null"}))
	// Case counts: an id is compared exactly.
	require.NotEqual(t, anna, IDFromValues([]string{"Anna Lindqvist", "Anna@example.com"}))

	// All empty: no id, so the record fails "missing id".
	require.Equal(t, "", IDFromValues([]string{"", " ", "#N/A"}))
	require.Equal(t, "", IDFromValues([]string{""}))

	// The prefix: the first value's ASCII letters and digits, accents
	// dropped; none, just the digest.
	require.True(t, strings.HasPrefix(IDFromValues([]string{"Nyström Trä AB", "x"}), "nystrom-tra-ab."))
	require.Regexp(t, `^[0-9a-f]{32}$`, IDFromValues([]string{"", "anna@example.com"}))
	require.Regexp(t, `^[0-9a-f]{32}$`, IDFromValues([]string{"李小龍", "x"}))
	long := IDFromValues([]string{"Lindqvist Bakery and Pastry Wholesale AB", "x"})
	require.Equal(t, "lindqvist-bakery-and-pas", long[:strings.IndexByte(long, '.')])
}

const idFromProfile = `name: sheet
kinds:
  company:
    files: ["companies.csv"]
    fields:
      id: {from: [Name]}
      name: Name
  contact:
    files: ["people.csv"]
    fields:
      id: {from: [Name, E-Mail, Ort]}
      last_name: Name
      email: E-Mail
`

// TestIDFromMapsRows: the mapper makes each row's id from its values of
// the id's columns, which still give their fields; a column of the id
// that no field maps is kept in extra; a header without one of them is
// refused, naming it.
func TestIDFromMapsRows(t *testing.T) {
	t.Parallel()
	p, err := Load("sheet.yaml", []byte(idFromProfile))
	require.NoError(t, err)
	require.Equal(t, []string{"Name", "E-Mail", "Ort"}, p.IDFrom(ledger.Contact))
	require.Equal(t, []string{"last_name", "email", "extra.Ort"}, p.IDFromFields(ledger.Contact))
	require.Nil(t, p.IDFrom(ledger.Deal))

	m := NewMapper(p, ledger.Contact, "people.csv")
	header := []string{"Name", "E-Mail", "Ort", "Telefon"}
	require.NoError(t, m.CheckHeader(header))
	row := func(line int, vals ...string) reader.Row {
		r := reader.Row{Line: line}
		for i, v := range vals {
			r.Cols = append(r.Cols, reader.Col{Name: header[i], Value: v})
		}
		return r
	}
	r := m.Map(row(2, "Anna Lindqvist", "anna@example.com", "Stockholm", "+46 8 555 01 10"))
	require.Equal(t, IDFromValues([]string{"Anna Lindqvist", "anna@example.com", "Stockholm"}), r.ID)
	require.Equal(t, "Anna Lindqvist", r.Get("last_name"))
	require.Equal(t, "anna@example.com", r.Get("email"))
	require.Equal(t, map[string]any{"Ort": "Stockholm", "Telefon": "+46 8 555 01 10"}, r.Extra)
	require.Equal(t, r.ID, m.Map(row(3, "Anna Lindqvist", "anna@example.com", "Stockholm", "")).ID, "the same values, the same id")
	require.Empty(t, m.Map(row(4, "", "", "", "+46 8 555 01 11")).ID, "all empty: a missing id")

	// What inspect tells of each column: the id's columns say so.
	var parts []string
	for _, c := range m.Columns(header, nil) {
		parts = append(parts, c.Name+">"+c.Field+":"+strings.Join(c.IDFrom, ","))
	}
	require.Equal(t, []string{"Name>last_name:Name,E-Mail,Ort", "E-Mail>email:Name,E-Mail,Ort", "Ort>extra:Name,E-Mail,Ort", "Telefon>extra:"}, parts)

	err = NewMapper(p, ledger.Contact, "people.csv").CheckHeader([]string{"Name", "Email-Adresse", "Telefon"})
	var fe *reader.FileError
	require.True(t, errors.As(err, &fe), "%v", err)
	require.Contains(t, fe.Reason, `the header lacks "E-Mail", "Ort": the sheet profile makes each contact's id from the values of Name, E-Mail, Ort`)
}

// TestIDFromRefusals: an empty from, a column listed twice (as the mapper
// matches names) or from beside anything else is refused at load, naming
// the line.
func TestIDFromRefusals(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ id, want string }{
		"Empty":        {`{from: []}`, "sheet.yaml:6: kinds.contact.fields.id.from: names no column: list the columns whose values make the id"},
		"Twice":        {"{from: [Name, E-Mail, email]}", `sheet.yaml:6: kinds.contact.fields.id.from[2]: "email" is listed twice (first as "E-Mail")`},
		"WithColumns":  {"{from: [Name, E-Mail], columns: [ID]}", "sheet.yaml:6: kinds.contact.fields.id: from makes the id of the listed columns' values alone: columns cannot go with it"},
		"WithDefault":  {"{default: x, from: [Name]}", "sheet.yaml:6: kinds.contact.fields.id: from makes the id of the listed columns' values alone: default cannot go with it"},
		"NotAList":     {"{from: Name}", `sheet.yaml:6: kinds.contact.fields.id.from: expected a list of the columns whose values make the id, found "Name"`},
		"EmptyColumn":  {`{from: [Name, " "]}`, "sheet.yaml:6: kinds.contact.fields.id.from: a column name is empty"},
		"NotForFields": {"", ""},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if tc.id == "" {
				// from is the id's alone: another field's mapping refuses it.
				_, err := Load("sheet.yaml", []byte("name: sheet\nkinds:\n  contact:\n    files: [people.csv]\n    fields:\n      id: ID\n      email: {from: [Name]}\n"))
				require.ErrorContains(t, err, `sheet.yaml:7: kinds.contact.fields.email.from: unknown key "from"`)
				return
			}
			text := "name: sheet\nkinds:\n  contact:\n    files: [people.csv]\n    fields:\n      id: " + tc.id + "\n      last_name: Name\n"
			_, err := Load("sheet.yaml", []byte(text))
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

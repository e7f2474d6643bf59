package profile

import (
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/ledger"
)

// TestColumnsAndLinks: what a mapper tells of a header is what it maps —
// a multi-value field, a repeated header kept in extra under its second
// name, alternate link columns, a list, a link by name, a plain link field
// — and which side files its task reads (issue 13 item 4).
func TestColumnsAndLinks(t *testing.T) {
	t.Parallel()
	p, err := Load("mine.yaml", []byte(`
name: mine
repeated_headers: first
kinds:
  company:
    files: [orgs.csv]
    fields: {id: Id, name: Name}
  contact:
    files: [people.csv]
    fields:
      id: Id
      email: {columns: [Emails], multi: ","}
      company_id: Org
    links:
      - {column: [Org Name, Company Name], kind: company, by: name}
      - {column: Other Orgs, kind: company, list: ";"}
`))
	require.NoError(t, err)
	m := NewMapper(p, ledger.Contact, "people.csv")
	orgID := Link{Field: "company_id", Kind: ledger.Company, Columns: []string{"Org"}}
	byName := Link{Field: "company_id", Kind: ledger.Company, Columns: []string{"Org Name", "Company Name"}, ByName: true}
	list := Link{Field: "company_id", Kind: ledger.Company, Columns: []string{"Other Orgs"}, List: ";"}
	require.Equal(t, []Link{orgID, byName, list}, m.Links())

	cols := m.Columns([]string{"Id", "Emails", "Org", "Org Name", "Company Name", "Other Orgs", "id", "Notes"}, nil)
	require.Equal(t, []Column{
		{Name: "Id", Field: "id"},
		{Name: "Emails", Field: "email", Multi: ","},
		{Name: "Org", Field: "company_id", Link: &orgID},
		{Name: "Org Name", Field: "company_id", Link: &byName, Alternate: 1, Alternates: 2},
		{Name: "Company Name", Field: "company_id", Link: &byName, Alternate: 2, Alternates: 2},
		{Name: "Other Orgs", Field: "company_id", Link: &list},
		{Name: "id", Field: ColumnExtra},
		{Name: "Notes", Field: ColumnExtra},
	}, cols)

	side := []SideFile{{Role: "names:company", File: "orgs.csv"}, {Role: "names:deal", File: "deals.csv"}, {Role: "join:x.csv", File: "x.csv"}}
	require.Equal(t, side[:1], m.SideFilesRead(side), "the parents' names its links by name read")
	require.Empty(t, NewMapper(p, ledger.Company, "orgs.csv").SideFilesRead(side))

	// A header repeated exactly: the second is kept in extra as Name#2.
	cols = NewMapper(p, ledger.Company, "orgs.csv").Columns([]string{"Id", "Name", "Name"}, nil)
	require.Equal(t, Column{Name: "Name", Field: ColumnExtra, ExtraName: "Name#2"}, cols[2])
}

package suggest

import (
	"context"
	"encoding/csv"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/importer/input"
	"crmimport/importer/profile"
	"crmimport/importer/reader/readertest"
	"crmimport/ledger"
)

// fileOf is the draft's file of that name (and sheet, "name!sheet").
func fileOf(t *testing.T, d *Draft, key string) *File {
	t.Helper()
	for _, f := range d.Files {
		if draftKey(f) == key {
			return f
		}
	}
	t.Fatalf("%s: not in the draft", key)
	return nil
}

func columnOf(t *testing.T, f *File, name string) *Column {
	t.Helper()
	for _, c := range f.Columns {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("%s: no column %q", f.Name, name)
	return nil
}

// TestSuggestLinksNoCountColumn: a Pipedrive export whose count columns
// hold small numbers equal to organization ids (issue 26: 431 people once
// linked to the wrong organization) links by "Organization ID" and
// "Contact person ID" only; a count, a quantity, a picture id, an
// apartment number and a header that says nothing ("Value 2") are no
// links.
func TestSuggestLinksNoCountColumn(t *testing.T) {
	d, err := Suggest(context.Background(), []string{fixture("suggest/pipedrive-counts")}, Options{Hide: []string{"pipedrive"}})
	require.NoError(t, err)
	people := fileOf(t, d, "people-5150-20260201.csv")
	require.Equal(t, ledger.Contact, people.Kind, people.KindWhy)
	require.Equal(t, "company_id", columnOf(t, people, "Organization ID").Field)
	for _, name := range []string{"Total activities", "Email messages count", "Open deals", "Apartment", "Profile picture", "Value 2"} {
		c := columnOf(t, people, name)
		_, isLink := canonLinkParent(c.Field)
		require.False(t, isLink, "%q is no link: %s", name, c.Why)
		require.Contains(t, c.Why, "ids of the export's companies, but its name says no company id: a number, not a link")
	}
	deals := fileOf(t, d, "deals-5150-20260201.csv")
	require.Equal(t, "company_id", columnOf(t, deals, "Organization ID").Field)
	require.Equal(t, "contact_id", columnOf(t, deals, "Contact person ID").Field)
	for _, name := range []string{"Product quantity", "Total activities"} {
		c := columnOf(t, deals, name)
		_, isLink := canonLinkParent(c.Field)
		require.False(t, isLink, "%q is no link: %s", name, c.Why)
	}
}

// TestSuggestLeavesJoinTablesOut: Salesforce's OpportunityContactRole and
// ContentDocumentLink, and a file named for no kind whose rows pair a
// deal's id with a contact's, are join tables: left out, saying so; the
// enhanced notes of ContentVersion are left out saying what they are.
func TestSuggestLeavesJoinTablesOut(t *testing.T) {
	d, err := Suggest(context.Background(), []string{fixture("salesforce")}, Options{Hide: []string{"salesforce"}})
	require.NoError(t, err)
	for _, name := range []string{"OpportunityContactRole.csv", "ContentDocumentLink.csv"} {
		f := fileOf(t, d, name)
		require.Empty(t, f.Kind, "%s: %s", name, f.KindWhy)
		require.Contains(t, f.KindWhy, "join table")
	}
	cv := fileOf(t, d, "ContentVersion.csv")
	require.Empty(t, cv.Kind)
	require.Contains(t, cv.KindWhy, "enhanced notes")
	require.Contains(t, string(d.YAML()), "#   ContentVersion.csv: left out: its ids (068…) are Salesforce's ContentVersion: files, and the\n#     enhanced notes")

	dir := t.TempDir()
	write := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600))
	}
	write("deals.csv", "Deal ID,Deal name,Amount\nD1,Ovens,100\nD2,Trucks,200\n")
	write("contacts.csv", "Contact ID,First name,Last name,Email\nC1,Ann,Lee,ann@example.com\nC2,Bob,Stone,bob@example.com\n")
	write("roles.csv", "Deal ID,Contact ID,Role,Created\nD1,C1,Buyer,2024-01-02\nD2,C2,Owner,2024-01-03\nD2,C1,User,2024-01-04\n")
	d, err = Suggest(context.Background(), []string{dir}, Options{})
	require.NoError(t, err)
	roles := fileOf(t, d, "roles.csv")
	require.Empty(t, roles.Kind, roles.KindWhy)
	require.Contains(t, roles.KindWhy, `a join table: each row pairs a deal ("Deal ID") with a contact ("Contact ID")`)
	require.NoError(t, d.Check())
}

// TestSuggestReadsSalesforceByIDPrefix: Data Loader extracts, named
// extract.csv whatever their object, with upper-case headers, are told
// apart by their ids' prefixes; the empty lookup 000000000000000AAA is a
// spelling of empty, and the draft reads ids as Salesforce's.
func TestSuggestReadsSalesforceByIDPrefix(t *testing.T) {
	d, err := Suggest(context.Background(), []string{fixture("suggest/dataloader")}, Options{Hide: []string{"salesforce"}})
	require.NoError(t, err)
	require.Equal(t, ledger.Company, fileOf(t, d, "extract.csv").Kind)
	contacts := fileOf(t, d, "extract (1).csv")
	require.Equal(t, ledger.Contact, contacts.Kind)
	require.Contains(t, contacts.KindWhy, "Salesforce Contact ids (003…)")
	require.Equal(t, "company_id", columnOf(t, contacts, "ACCOUNTID").Field)
	require.Equal(t, ledger.Deal, fileOf(t, d, "extract (2).csv").Kind)
	require.Equal(t, "salesforce", d.IDs)
	require.Contains(t, d.Empty, salesforceEmptyID)
	require.NoError(t, d.Check())
	require.Contains(t, string(d.YAML()), "ids: salesforce\n")
}

// TestSuggestReadsTheFirstOfJoinedValues: Pipedrive joins a person's
// emails and phones with ", " (898 contacts once failed on it): the draft
// reads the first as the field, and no row fails for it.
func TestSuggestReadsTheFirstOfJoinedValues(t *testing.T) {
	d, err := Suggest(context.Background(), []string{fixture("suggest/pipedrive-counts")}, Options{Hide: []string{"pipedrive"}})
	require.NoError(t, err)
	people := fileOf(t, d, "people-5150-20260201.csv")
	for _, name := range []string{"Email - Work", "Phone - Work"} {
		c := columnOf(t, people, name)
		require.Equal(t, ", ", c.Multi, "%s: %s", name, c.Why)
	}
	require.Contains(t, string(d.YAML()), `email: {columns: ["Email - Work"], multi: ", "}`)
	m, err := Preview(context.Background(), d, people.Ref, "", 10, input.DefaultLimits())
	require.NoError(t, err)
	require.Empty(t, m.Problem)
	require.NotEmpty(t, m.Rows)
	for _, r := range m.Rows {
		require.Empty(t, r.Error, "line %d", r.Line)
	}
	require.Equal(t, "hannah.okafor@example.com", m.Rows[0].Fields["email"])
}

// TestSuggestAsksWhichWayDatesRead: a column whose every date reads
// either way (08/03/2021) is left unplaced with the question and its
// choices, in the draft and its YAML; one with days past the 12th is read
// day first, saying which values settle it.
func TestSuggestAsksWhichWayDatesRead(t *testing.T) {
	d, err := Suggest(context.Background(), []string{fixture("suggest/dates")}, Options{})
	require.NoError(t, err)
	deals := fileOf(t, d, "deals.csv")
	close := columnOf(t, deals, "Close date")
	require.Empty(t, close.Field, close.Why)
	require.Equal(t, []string{"DD/MM/YYYY", "MM/DD/YYYY"}, close.DateChoices)
	require.Contains(t, close.Question, "24 values readable either way (DD/MM/YYYY or MM/DD/YYYY), none that settle it")
	require.Empty(t, deals.DateFormats)

	tasks := fileOf(t, d, "tasks.csv")
	due := columnOf(t, tasks, "Due date")
	require.Equal(t, "due_at", due.Field)
	require.Contains(t, due.Why, "written DD/MM/YYYY: 10 of its 20 dates (such as 15/03/2021) can only be read so")
	require.Equal(t, []string{"DD/MM/YYYY"}, tasks.DateFormats)

	y := string(d.YAML())
	require.Contains(t, y, `# QUESTION: deals.csv: is "Close date" (close_date) written day first (DD/MM/YYYY) or month first (MM/DD/YYYY)?`)
	require.Contains(t, y, `dates: ["DD/MM/YYYY"]`)
	require.NoError(t, d.Check())
	_, err = profile.Load("dates.yaml", d.YAML())
	require.NoError(t, err)
}

// TestSuggestTakesNoKindFromANameAlone: a file named for a kind whose
// columns are no field of it is left out, saying so; the same columns'
// file named for nothing is too, and a file named for nothing whose
// columns are a kind's is read as that kind.
func TestSuggestTakesNoKindFromANameAlone(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600))
	}
	write("contacts.csv", "Ref,Region,Quota\nR1,North,10\nR2,South,12\n")
	write("export-7.csv", "Ref,First name,Last name,Email,Job title\nP1,Ann,Lee,ann@example.com,Buyer\nP2,Bob,Stone,bob@example.com,Owner\n")
	d, err := Suggest(context.Background(), []string{dir}, Options{})
	require.NoError(t, err)
	c := fileOf(t, d, "contacts.csv")
	require.Empty(t, c.Kind)
	require.Contains(t, c.KindWhy, `its name says "contacts", but none of its columns is a contact field: a kind is never taken from a name alone`)
	require.Equal(t, ledger.Contact, fileOf(t, d, "export-7.csv").Kind)
}

// TestSuggestSaysWhenFilesWriteDatesBothWays: one file writes the day
// first, another the month first, each settled by its values: both
// formats are written, with a comment that one list serves every file.
func TestSuggestSaysWhenFilesWriteDatesBothWays(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600))
	}
	write("deals.csv", "Deal ID,Deal name,Close date\nD1,Ovens,25/03/2021\nD2,Trucks,04/02/2021\n")
	write("tasks.csv", "Task ID,Subject,Due date\nT1,Call,03/25/2021\nT2,Visit,02/04/2021\n")
	d, err := Suggest(context.Background(), []string{dir}, Options{})
	require.NoError(t, err)
	require.Equal(t, []string{"DD/MM/YYYY"}, fileOf(t, d, "deals.csv").DateFormats)
	require.Equal(t, []string{"MM/DD/YYYY"}, fileOf(t, d, "tasks.csv").DateFormats)
	y := string(d.YAML())
	require.Contains(t, y, "# Some files write the day first and others the month first")
	require.Contains(t, y, `dates: ["DD/MM/YYYY", "MM/DD/YYYY"]`)
	// Each column's own format is written on its field and read first
	// (issue 26 item 5): a task's 02/04/2021 is the 4th of February, not
	// read day first because the deals' format comes first in the list.
	require.Contains(t, y, `close_date: {columns: ["Close date"], dates: ["DD/MM/YYYY"]}`)
	require.Contains(t, y, `due_at: {columns: ["Due date"], dates: ["MM/DD/YYYY"]}`)
	tasks := fileOf(t, d, "tasks.csv")
	m, err := Preview(context.Background(), d, tasks.Ref, "", 10, input.DefaultLimits())
	require.NoError(t, err)
	require.Equal(t, "2021-02-04", m.Rows[1].Fields["due_at"])
}

// TestSuggestLinksNoCountColumnOfAWorkbook: the incident's export was a
// workbook, its counts and ids number cells: the same export saved as
// .xlsx links by "Organization ID" only.
func TestSuggestLinksNoCountColumnOfAWorkbook(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"organizations-5150-20260201", "people-5150-20260201", "deals-5150-20260201"} {
		in, err := os.Open(filepath.Join(fixture("suggest/pipedrive-counts"), name+".csv"))
		require.NoError(t, err)
		table, err := csv.NewReader(in).ReadAll()
		require.NoError(t, in.Close())
		require.NoError(t, err)
		wb := readertest.Workbook{Sheets: []readertest.Sheet{numberSheet(name[:strings.Index(name, "-")], table)}}
		require.NoError(t, wb.WriteFile(filepath.Join(dir, name+".xlsx")))
	}
	d, err := Suggest(context.Background(), []string{dir}, Options{Hide: []string{"pipedrive"}})
	require.NoError(t, err)
	people := fileOf(t, d, "people-5150-20260201.xlsx")
	require.Equal(t, "company_id", columnOf(t, people, "Organization ID").Field)
	for _, c := range people.Columns {
		if parent, isLink := canonLinkParent(c.Field); isLink && parent != ledger.User {
			require.Equal(t, "Organization ID", c.Name, "a link to a %s: %s", parent, c.Why)
		} else if isLink {
			require.Equal(t, "Owner", c.Name, "a person's owner is the one link to a user: %s", c.Why)
		}
	}
}

// numberSheet writes a table as a worksheet: whole numbers as number
// cells, as Pipedrive's XLSX export writes ids and counts, the rest as
// inline strings.
func numberSheet(name string, table [][]string) readertest.Sheet {
	var b strings.Builder
	for r, row := range table {
		fmt.Fprintf(&b, `<row r="%d">`, r+1)
		for c, v := range row {
			ref := fmt.Sprintf("%c%d", 'A'+c, r+1)
			switch {
			case v == "":
			case r > 0 && strings.Trim(v, "0123456789") == "":
				fmt.Fprintf(&b, `<c r="%s"><v>%s</v></c>`, ref, v)
			default:
				fmt.Fprintf(&b, `<c r="%s" t="inlineStr"><is><t>%s</t></is></c>`, ref, html.EscapeString(v))
			}
		}
		b.WriteString(`</row>`)
	}
	return readertest.Sheet{Name: name, Rows: b.String()}
}

// TestSuggestTakesOwnerColumns (issue 26 item 1): a Zoho-style export
// names each record's owner in "… Owner" — the person as the export
// writes them, whom a users file gives an email: a link to a user, never a
// company's (its header says "Account"), and never a field.
func TestSuggestTakesOwnerColumns(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Accounts_2024_01_05.csv"), []byte("Record Id,Account Name,Website,Account Owner,Created Time\n"+
		"zcrm_1,Brightwater Bakery,brightwater.example.com,Jane Admin,2024-01-02 10:00:00\n"+
		"zcrm_2,Harbor Logistics,harbor.example.com,Jane Admin,2024-01-03 10:00:00\n"), 0o600))
	d, err := Suggest(context.Background(), []string{dir}, Options{Hide: []string{"hubspot", "pipedrive"}})
	require.NoError(t, err)
	owner := columnOf(t, fileOf(t, d, "Accounts_2024_01_05.csv"), "Account Owner")
	require.Equal(t, "owner_id", owner.Field, owner.Why)
	require.Contains(t, owner.Why, "the record's owner")
}

// TestSuggestReadsZohoLeads (issue 26 item 2): a Zoho-style Leads_*.csv
// is drafted as leads — their status is the CRM's own words, their
// company a name, their owner a link to a user.
func TestSuggestReadsZohoLeads(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Leads_2024_01_05.csv"), []byte(
		"Record Id,First Name,Last Name,Company,Email,Lead Source,Lead Status,Lead Owner,Created Time\n"+
			"zcrm_20,Pieter,de Vries,Harbor Logistics,pieter@example.com,Web Download,Contacted,Jane Admin,2024-01-02 10:00:00\n"+
			"zcrm_21,Sara,Ek,Ek Advokat,sara@example.com,Trade Show,Not Contacted,Jane Admin,2024-01-03 10:00:00\n"), 0o600))
	d, err := Suggest(context.Background(), []string{dir}, Options{})
	require.NoError(t, err)
	f := fileOf(t, d, "Leads_2024_01_05.csv")
	require.Equal(t, ledger.Lead, f.Kind, f.KindWhy)
	for col, field := range map[string]string{"Record Id": "id", "Company": "company_name", "Lead Source": "lead_source",
		"Lead Status": "status", "Lead Owner": "owner_id", "Email": "email"} {
		c := columnOf(t, f, col)
		require.Equal(t, field, c.Field, "%s: %s", col, c.Why)
	}
	require.NoError(t, d.Check())
}

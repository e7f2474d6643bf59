package profile

import (
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/importer/reader"
	"crmimport/ledger"
)

// TestExtraThatCannotBeJSONFailsTheRecord: issue 11 item 21. Extra columns
// that cannot be written as JSON fail their record (nothing is dropped
// silently); before, the record imported without them.
func TestExtraThatCannotBeJSONFailsTheRecord(t *testing.T) {
	t.Parallel()
	fields := canon.FieldsOf(ledger.Contact)
	r := Record{Kind: ledger.Contact, ID: "c1", fields: fields, vals: make([]string, len(fields.Names))}
	r.vals[fields.Index["id"]], r.vals[fields.Index["first_name"]] = "c1", "Ann"
	r.addExtra("nested", reader.Col{Name: "nested", Value: `{"broken":`, Nested: true})
	r.Validate()
	require.Contains(t, r.invalid, "extra columns cannot be kept as JSON")
}

// TestDateOnlyIsADate: issue 23 item 11. A field a profile says is
// date_only stores the date a value gives, whatever its time (it kept the
// time when it was not midnight); date_only may name the columns that hold
// dates among a field's alternates, so that a date-time column beside them
// keeps its time (Salesforce's Event.ActivityDateTime beside
// Task.ActivityDate).
func TestDateOnlyIsADate(t *testing.T) {
	t.Parallel()
	p, err := Load("acme.yaml", []byte(`name: acme
description: test
kinds:
  company:
    files: [accounts.csv]
    fields:
      id: ID
      name: Name
      created_at: {columns: [Created], date_only: true}
  activity:
    files: [tasks.csv]
    fields:
      id: ID
      subject: Subject
      due_at: {columns: [Start, Day], date_only: [Day]}
`))
	require.NoError(t, err)
	row := func(cols ...string) reader.Row {
		r := reader.Row{Line: 2}
		for i := 0; i < len(cols); i += 2 {
			r.Cols = append(r.Cols, reader.Col{Name: cols[i], Value: cols[i+1]})
		}
		return r
	}
	m := NewMapper(p, ledger.Company, "accounts.csv")
	for in, want := range map[string]string{
		"2017-04-28 14:01:59": "2017-04-28", "2017-04-28T14:01:59": "2017-04-28", "2016-12-31 00:00:00": "2016-12-31",
		"2016-12-31": "2016-12-31", "not a date": "not a date",
	} {
		r := m.Map(row("ID", "a1", "Name", "Acme", "Created", in))
		require.Equal(t, want, r.Get("created_at"), in)
	}
	m = NewMapper(p, ledger.Activity, "tasks.csv")
	r := m.Map(row("ID", "t1", "Subject", "Demo", "Start", "2024-03-07 10:00:00", "Day", "2024-03-07 00:00:00"))
	require.Equal(t, "2024-03-07 10:00:00", r.Get("due_at"), "a date-time column keeps its time")
	r = m.Map(row("ID", "t2", "Subject", "Call", "Start", "", "Day", "2024-03-05 09:30:00"))
	require.Equal(t, "2024-03-05", r.Get("due_at"), "a date column gives a date")
}

// TestNULIsKeptInExtraAndFailsAMappedField: issue 23 item 8 (SPEC §4). A
// NUL byte in a column the profile keeps in extra is kept there (JSON
// \u0000) and the record says so, for the run to count; one in a column the
// profile reads — a field, an alternate, a link — fails the row (R4),
// naming the field and where the byte stands when the reader knows it.
func TestNULIsKeptInExtraAndFailsAMappedField(t *testing.T) {
	t.Parallel()
	p, err := Builtin("salesforce")
	require.NoError(t, err)
	m := NewMapper(p, ledger.Deal, "Opportunity.csv")
	row := func(name, accountID, plan string, nul ...reader.NULField) reader.Row {
		return reader.Row{Line: 7, NUL: nul, Cols: []reader.Col{{Name: "Id", Value: "0065g00000NuOp1AAF"}, {Name: "Name", Value: name},
			{Name: "AccountId", Value: accountID}, {Name: "ClosingPlan__c", Value: plan}, {Name: "NextStep", Value: "Call\x00"}}}
	}

	r := m.Map(row("Wholesale bread", "0015g00000NuAc1AAF", "<p>Tasting\x00</p>", reader.NULField{Col: 3, Where: ", at line 7, column 80"},
		reader.NULField{Col: 4, Where: ", at line 7, column 90"}))
	require.Nil(t, r.Err)
	require.Equal(t, []string{"ClosingPlan__c", "NextStep"}, r.NULKept())
	r.Validate()
	_, invalid := r.Values()
	require.Empty(t, invalid)
	require.Equal(t, `{"ClosingPlan__c":"\u003cp\u003eTasting\u0000\u003c/p\u003e","NextStep":"Call\u0000"}`, r.ExtraJSON())

	r = m.Map(row("Bakery\x00 ovens", "0015g00000NuAc1AAF", "", reader.NULField{Col: 1, Where: ", at line 7, column 25"},
		reader.NULField{Col: 4, Where: ", at line 7, column 90"}))
	require.NotNil(t, r.Err)
	require.Equal(t, `a NUL byte in field 2 ("Name"), at line 7, column 25: text never holds one (binary data in the export?); `+
		`the profile reads this column as name (a NUL in a column kept in extra is kept)`, r.Err.Reason)
	require.Equal(t, "Opportunity.csv", r.Err.File)
	require.Equal(t, 7, r.Err.Line)

	r = m.Map(row("Fleet", "0015g00000NuAc1\x00AF", ""))
	require.NotNil(t, r.Err, "a link column is read too")
	require.Contains(t, r.Err.Reason, `a NUL byte in field 3 ("AccountId"): text never holds one`)

	r = m.Map(reader.Row{Line: 9, Cols: []reader.Col{{Name: "Id", Value: "0065g00000NuOp\x009AAF"}, {Name: "Name", Value: "x"}}})
	require.NotNil(t, r.Err)
	require.Empty(t, r.ID, "an id holding a NUL is no id: no database text holds one; the raw row keeps it")
	require.Contains(t, r.RawJSON(), `"Id":"0065g00000NuOp\u00009AAF"`)
}

// TestADealsStatusFromAnExportsWordsOrFlags: issue 26 item 3 (SPEC §4). The
// built-in profiles give a deal's status from Pipedrive's Status in the
// user's language (a value map) and from Salesforce's IsWon and IsClosed
// (won, else lost when closed, else open), its pipeline from Pipeline; the
// flags' columns are read, not kept in extra; a flag that cannot be read
// fails the row, naming the column; a file without them gives no status.
func TestADealsStatusFromAnExportsWordsOrFlags(t *testing.T) {
	t.Parallel()
	row := func(cols ...string) reader.Row {
		r := reader.Row{Line: 2}
		for i := 0; i < len(cols); i += 2 {
			r.Cols = append(r.Cols, reader.Col{Name: cols[i], Value: cols[i+1]})
		}
		return r
	}
	sf, err := Builtin("salesforce")
	require.NoError(t, err)
	m := NewMapper(sf, ledger.Deal, "Opportunity.csv")
	for _, c := range []struct{ won, closed, want string }{{"1", "1", "won"}, {"0", "1", "lost"}, {"0", "0", "open"}, {"", "", "open"}, {"true", "false", "won"}} {
		r := m.Map(row("Id", "006000000000001AAA", "Name", "Renewal", "StageName", "Closed Won", "IsWon", c.won, "IsClosed", c.closed))
		require.Nil(t, r.Err)
		require.Equal(t, c.want, r.Get("status"), "IsWon %q IsClosed %q", c.won, c.closed)
		require.Empty(t, r.Extra, "the flags are read, not kept in extra")
		r.Validate()
		v, bad := r.Values()
		require.Empty(t, bad)
		require.Equal(t, c.want, v.Get("status"))
	}
	r := m.Map(row("Id", "006000000000001AAA", "Name", "Renewal", "IsWon", "maybe", "IsClosed", "1"))
	require.NotNil(t, r.Err)
	require.Equal(t, `IsWon "maybe" is neither true nor false: the salesforce profile reads the deal's status from it`, r.Err.Reason)
	r = NewMapper(sf, ledger.Deal, "Opportunity.csv").Map(row("Id", "006000000000001AAA", "Name", "Renewal"))
	require.Nil(t, r.Err)
	require.Empty(t, r.Get("status"), "an export without the flags says nothing of the status")

	pd, err := Builtin("pipedrive")
	require.NoError(t, err)
	m = NewMapper(pd, ledger.Deal, "deals-123.csv")
	for in, want := range map[string]string{"Won": "won", "lost": "lost", "Open": "open", "Gewonnen": "won", "Perdido": "lost"} {
		r := m.Map(row("Deal - ID", "7", "Deal - Title", "Fleet", "Deal - Status", in, "Deal - Pipeline", "Default pipeline"))
		r.Validate()
		v, bad := r.Values()
		require.Empty(t, bad, in)
		require.Equal(t, want, v.Get("status"), in)
		require.Equal(t, "Default pipeline", v.Get("pipeline"))
	}
	r = m.Map(row("Deal - ID", "8", "Deal - Title", "Fleet", "Deal - Status", "Deleted"))
	r.Validate()
	_, bad := r.Values()
	require.Equal(t, `status "Deleted" is not open, won or lost (a profile maps an export's own words with map:)`, bad)
}

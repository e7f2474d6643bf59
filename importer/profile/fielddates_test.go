package profile

import (
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/importer/reader"
	"crmimport/ledger"
)

// TestAFieldsOwnDateFormats: issue 26 item 5. A field's dates are tried for
// its columns before the profile's: a deal's Closing Date written day
// first reads as such while the profile's month-first list reads every
// other date; a value neither reads fails its row as before, and
// DateProblem says so for the column's values before a run.
func TestAFieldsOwnDateFormats(t *testing.T) {
	t.Parallel()
	p, err := Load("zoho.yaml", []byte(`name: zoho
dates: [MM/DD/YYYY]
kinds:
  deal:
    files: [deals.csv]
    fields:
      id: Record Id
      name: Deal Name
      close_date: {columns: [Closing Date], dates: [DD/MM/YYYY]}
      created_at: Created Time
`))
	require.NoError(t, err)
	m := NewMapper(p, ledger.Deal, "deals.csv")
	row := func(closing, created string) Record {
		r := m.Map(reader.Row{Line: 2, Cols: []reader.Col{{Name: "Record Id", Value: "z1"}, {Name: "Deal Name", Value: "Bread"},
			{Name: "Closing Date", Value: closing}, {Name: "Created Time", Value: created}}})
		m.Complete(&r)
		return r
	}
	r := row("08/03/2021", "08/03/2021")
	_, invalid := r.Values()
	require.Empty(t, invalid)
	require.Equal(t, "2021-03-08", r.Get("close_date"), "the field's own format: day first")
	require.Equal(t, "2021-08-03", r.Get("created_at"), "the profile's: month first")
	r = row("31/03/2021", "")
	require.Equal(t, "2021-03-31", r.Get("close_date"))
	r = row("2021-03-31", "")
	require.Equal(t, "2021-03-31", r.Get("close_date"), "ISO 8601 is read whatever the formats")
	r = row("March 8th", "")
	_, invalid = r.Values()
	require.Contains(t, invalid, `"March 8th" is not a date`)

	require.Empty(t, p.DateProblem(ledger.Deal, "close_date", "31/03/2021"))
	require.Contains(t, p.DateProblem(ledger.Deal, "created_at", "31/03/2021"), `created_at "31/03/2021" is not a date`,
		"the profile's month-first format does not read a 31st month")
}

// TestFieldDatesAreValidatedAtLoad: an unknown format is refused naming its
// line and place, and so is a field's dates on a field that is no date.
func TestFieldDatesAreValidatedAtLoad(t *testing.T) {
	t.Parallel()
	_, err := Load("zoho.yaml", []byte(`name: zoho
kinds:
  deal:
    files: [deals.csv]
    fields:
      id: Record Id
      name: {columns: [Deal Name], dates: [DD/MM/YYYY]}
      close_date:
        columns: [Closing Date]
        dates:
          - DD/MM/YYYY
          - DD/QQ/YYYY
`))
	require.Error(t, err)
	require.Contains(t, err.Error(), "zoho.yaml:7: kinds.deal.fields.name.dates: name is not a date")
	require.Contains(t, err.Error(), `zoho.yaml:12: kinds.deal.fields.close_date.dates[1]: date format "DD/QQ/YYYY": unknown "Q"`)
}

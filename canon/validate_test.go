package canon_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/ledger"
)

func TestParseDate(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"2024-03-01":                "2024-03-01",
		"2024-03-01T10:00:00Z":      "2024-03-01T10:00:00Z",
		"2024-03-01T10:00:00+02:00": "2024-03-01T10:00:00+02:00",
		"2024-03-01 10:00:00":       "2024-03-01T10:00:00",
		"2024-03-01T10:00:00.250":   "2024-03-01T10:00:00.25",
		"2024-03-01T10:00":          "2024-03-01T10:00:00",
	} {
		got, ok := canon.ParseDate(in)
		require.True(t, ok, in)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []string{"2/5/24 1:51", "31/12/2024", "2024-13-01", "next Tuesday", "2024-02-30", "20240301"} {
		_, ok := canon.ParseDate(bad)
		require.False(t, ok, bad)
	}
}

// TestValidateStoresADateAsADateAndADomainAsAHost: issue 23 item 11. A
// deal's close_date is a date (SPEC §11: "a date as a date"), whatever
// time the source gives with it; a company's domain is a host, the one R5
// matches on (SPEC §4: lower-cased, without scheme, "www.", port or path).
func TestValidateStoresADateAsADateAndADomainAsAHost(t *testing.T) {
	t.Parallel()
	deal := func(closeDate string) []string {
		vals := make([]string, len(canon.Fields(ledger.Deal)))
		vals[canon.FieldsOf(ledger.Deal).Index["id"]] = "d1"
		vals[canon.FieldsOf(ledger.Deal).Index["name"]] = "Deal"
		vals[canon.FieldsOf(ledger.Deal).Index["close_date"]] = closeDate
		return vals
	}
	for in, want := range map[string]string{
		"2016-12-31":                "2016-12-31",
		"2017-04-28T14:01:59":       "2017-04-28",
		"2017-04-28 14:01:59":       "2017-04-28",
		"2017-04-28T00:00:00":       "2017-04-28",
		"2017-04-28T23:30:00-05:00": "2017-04-28", // the day as written, not moved to another zone
		"2017-04-28T14:01:59.250Z":  "2017-04-28",
	} {
		v, invalid := canon.Validate(ledger.Deal, deal(in))
		require.Empty(t, invalid, in)
		require.Equal(t, want, v.Get("close_date"), in)
	}
	_, invalid := canon.Validate(ledger.Deal, deal("2017-04-28T25:00:00"))
	require.Contains(t, invalid, `close_date "2017-04-28T25:00:00" is not a date`)

	company := func(domain string) []string {
		vals := make([]string, len(canon.Fields(ledger.Company)))
		vals[canon.FieldsOf(ledger.Company).Index["id"]] = "c1"
		vals[canon.FieldsOf(ledger.Company).Index["name"]] = "Acme"
		vals[canon.FieldsOf(ledger.Company).Index["domain"]] = domain
		return vals
	}
	for in, want := range map[string]string{
		"acme.example.com": "acme.example.com",
		"https://www.Acme.example.com/en/about?utm=x#top": "acme.example.com",
		"http://acme.example.com:8080/":                   "acme.example.com",
		"WWW.ACME.EXAMPLE.COM.":                           "acme.example.com",
		"info@acme.example.com":                           "acme.example.com",
	} {
		v, invalid := canon.Validate(ledger.Company, company(in))
		require.Empty(t, invalid, in)
		require.Equal(t, want, v.Get("domain"), in)
		require.Equal(t, canon.DomainKey(in), v.Get("domain"), "what is stored is what matches (R5): %s", in)
	}
	// Other date fields keep their time: they are date-times.
	vals := deal("2017-04-28")
	vals[canon.FieldsOf(ledger.Deal).Index["created_at"]] = "2017-04-28 14:01:59"
	v, invalid := canon.Validate(ledger.Deal, vals)
	require.Empty(t, invalid)
	require.Equal(t, "2017-04-28T14:01:59", v.Get("created_at"))
}

// TestADealsStatusIsOpenWonOrLost: SPEC §4, issue 26 item 3. A deal's
// status is one of three words, in any case; any other fails the record
// with a reason that says how a profile maps an export's own words; a
// profile's value map is judged by the same rule when it is loaded
// (ValueProblem).
func TestADealsStatusIsOpenWonOrLost(t *testing.T) {
	t.Parallel()
	deal := func(status, pipeline string) []string {
		fs := canon.FieldsOf(ledger.Deal)
		vals := make([]string, len(fs.Names))
		vals[fs.Index["id"]], vals[fs.Index["name"]] = "d1", "Deal"
		vals[fs.Index["status"]], vals[fs.Index["pipeline"]] = status, pipeline
		return vals
	}
	for in, want := range map[string]any{"won": "won", " Lost ": "lost", "OPEN": "open", "": nil} {
		v, invalid := canon.Validate(ledger.Deal, deal(in, "Sales"))
		require.Empty(t, invalid, in)
		require.Equal(t, want, v.Get("status"), in)
		require.Equal(t, "Sales", v.Get("pipeline"))
	}
	_, invalid := canon.Validate(ledger.Deal, deal("Gewonnen", ""))
	require.Equal(t, `status "Gewonnen" is not open, won or lost (a profile maps an export's own words with map:)`, invalid)

	require.Empty(t, canon.ValueProblem(ledger.Deal, "status", "won"))
	require.Contains(t, canon.ValueProblem(ledger.Deal, "status", "closed"), `status "closed" is not open, won or lost`)
	require.Empty(t, canon.ValueProblem(ledger.Deal, "stage", "closed"), "a stage is any text")
	require.Contains(t, canon.ValueProblem(ledger.Activity, "done", "finished"), `done "finished" is not true or false`)
	require.Contains(t, canon.ValueProblem(ledger.Deal, "close_date", "soon"), `close_date "soon" is not a date`)
	require.Contains(t, canon.ValueProblem(ledger.Deal, "amount", "lots"), `amount "lots" is not a number`)
}

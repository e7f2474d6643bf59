package report

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSafeCell: every start a spreadsheet runs as a formula (OWASP's
// =, +, -, @, tab and carriage return; | and %; their full-width forms;
// each after blanks a spreadsheet skips), and nothing else.
func TestSafeCell(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"=1+2": "'=1+2", "+1 555": "'+1 555", "-5": "'-5", "@SUM(A1)": "'@SUM(A1)", "\tx": "'\tx", "\rx": "'\rx",
		"|calc": "'|calc", "%0A": "'%0A",
		"\uff1d1+2": "'\uff1d1+2", "\uff0b1": "'\uff0b1", "\uff0d5": "'\uff0d5", "\uff20SUM(A1)": "'\uff20SUM(A1)",
		"\uff5ccalc": "'\uff5ccalc", "\uff05x": "'\uff05x",
		" =x": "' =x", "\u00a0=x": "'\u00a0=x", "\u3000\uff1dx": "'\u3000\uff1dx", "\u200b@x": "'\u200b@x", "\ufeff+x": "'\ufeff+x",
		"  \u00a0 -x": "'  \u00a0 -x", "\n=x": "'\n=x",
		"": "", "Acme": "Acme", "a=b": "a=b", "'quoted": "'quoted", " Acme": " Acme", "\u00a0": "\u00a0", "5%": "5%",
		"x|y": "x|y", "1-2": "1-2", "\u2212 5": "\u2212 5",
	} {
		require.Equal(t, want, SafeCell(in), "%q", in)
	}
}

// TestRawCells: record_failures.raw in file order, strings as text, nested
// values as JSON, an unparseable record's text under "(text)", and a raw
// value that is no object kept whole.
func TestRawCells(t *testing.T) {
	t.Parallel()
	require.Equal(t, []RawCell{{"id", "c-1"}, {"name", ""}, {"amount", "12.50"}, {"tags", `["a","b"]`}, {"(text)", "c-1,\"broken"}},
		rawCells(`{"id":"c-1","name":null,"amount":12.50,"tags":["a", "b"],"(text)":"c-1,\"broken"}`))
	require.Equal(t, []RawCell{{"z", "1"}, {"a", "2"}}, rawCells(`{"z":"1","a":"2"}`), "file order, not sorted")
	require.Equal(t, []RawCell{{"(raw)", "not json"}}, rawCells("not json"))
	require.Empty(t, rawCells(""))
}

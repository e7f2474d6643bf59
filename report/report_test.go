package report

import (
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/phases"
)

func TestCount(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{0: "0", 12: "12", 999: "999", 1204: "1,204", 1234567: "1,234,567", -4500: "-4,500"} {
		require.Equal(t, want, Count(n))
	}
}

// TestBar: the four outcomes in their order, every non-zero outcome
// visible, always the same width.
func TestBar(t *testing.T) {
	t.Parallel()
	require.Equal(t, "##########", Bar(phases.Counts{Imported: 5}, 10))
	require.Equal(t, "#####=====", Bar(phases.Counts{Imported: 5, Unchanged: 5}, 10))
	require.Equal(t, "########~!", Bar(phases.Counts{Imported: 998, Skipped: 1, Failed: 1}, 10))
	require.Equal(t, "..........", Bar(phases.Counts{}, 10))
	for _, c := range []phases.Counts{{Imported: 1, Unchanged: 1, Skipped: 1, Failed: 1}, {Unchanged: 7, Failed: 3}, {Skipped: 2}} {
		require.Len(t, Bar(c, 30), 30)
	}
}

func TestDuration(t *testing.T) {
	t.Parallel()
	ms := func(n int64) *int64 { return &n }
	require.Equal(t, "—", Duration(nil), "R15: a gap is shown, never estimated")
	require.Equal(t, "61ms", Duration(ms(61)))
	require.Equal(t, "5.1s", Duration(ms(5120)))
	require.Equal(t, "2m5s", Duration(ms(125_000)))
}

// TestProgressText: a task's progress as the text report and the CLI bar
// write it: the percent rounded down (never 100% before it is), "—" for
// an unknown size, the rate and the time left rounded up.
func TestProgressText(t *testing.T) {
	t.Parallel()
	f := func(v float64) *float64 { return &v }
	require.Equal(t, "—", Percent(phases.Progress{}))
	require.Equal(t, "0%", Percent(phases.Progress{Percent: f(0)}))
	require.Equal(t, "37%", Percent(phases.Progress{Percent: f(37.9)}))
	require.Equal(t, "99%", Percent(phases.Progress{Percent: f(99.9)}))
	require.Equal(t, "100%", Percent(phases.Progress{Percent: f(100)}))
	require.Equal(t, "", Pace(phases.Progress{}))
	require.Equal(t, "4,210 records/s, 13s left", Pace(phases.Progress{RecordsPerSecond: f(4209.6), SecondsLeft: f(12.1)}))
	require.Equal(t, "12 records/s", Pace(phases.Progress{RecordsPerSecond: f(12), SecondsLeft: f(0)}), "done: no time left to tell")
	require.Equal(t, "3m5s", Left(184.2))
	require.Equal(t, "2h5m", Left(2*3600+4*60+40))
	require.Equal(t, "1s", Left(0.2))
}

package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// -columns measures what it names, the columns those need in the same round
// (a rerun needs the first run's database; the batch script's run, the
// rerun after a fix) and always sqlite3's .import, to which every ratio is
// taken; empty is the whole table.
func TestParseColumns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		want     map[string]bool
	}{
		{"EmptyIsEveryColumn", "", nil},
		{"ImportAlways", "floor", map[string]bool{"import": true, "floor": true}},
		{"RerunNeedsTheRun", "rerun", map[string]bool{"import": true, "run": true, "rerun": true}},
		{"OnlyNeedsTheFix", "only", map[string]bool{"import": true, "run": true, "fix": true, "only": true}},
		{"SpacesTrimmed", "run, undo", map[string]bool{"import": true, "run": true, "undo": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseColumns(tc.in)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
	_, err := parseColumns("run,bogus")
	require.ErrorContains(t, err, `unknown column "bogus"`)
}

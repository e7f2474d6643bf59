package main

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/fixtures/gen"
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
		{"DeltaNeedsTheRun", "delta", map[string]bool{"import": true, "run": true, "delta": true}},
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

// Each shape's table runs its columns in the order of columnKeys, which is
// the order -columns documents; the delta column (SPEC §11) runs in both,
// after the first run and the rerun (and the rerun floor) and before the
// columns that go on with the database they left.
func TestTableColumns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		shape         string
		before, after []string
	}{
		{gen.ShapeRealistic, []string{"run", "rerun", "rerunfloor"}, []string{"fix", "only", "undo", "pgrun", "pgrerun"}},
		{gen.ShapeClean, []string{"run", "rerun"}, []string{"reread", "undo", "pgrun", "pgrerun"}},
	} {
		t.Run(tc.shape, func(t *testing.T) {
			keys, names := tableColumns(tc.shape, nil)
			require.Len(t, names, len(keys))
			at := func(k string) int {
				i := slices.Index(columnKeys, k)
				require.GreaterOrEqual(t, i, 0, k)
				return i
			}
			for i := 1; i < len(keys); i++ {
				require.Less(t, at(keys[i-1]), at(keys[i]), "%s runs before %s", keys[i-1], keys[i])
			}
			d := slices.Index(keys, "delta")
			require.GreaterOrEqual(t, d, 0)
			require.Equal(t, "rerun, 10% changed, --update", names[d])
			for _, k := range tc.before {
				require.Less(t, slices.Index(keys, k), d, k)
			}
			for _, k := range tc.after {
				require.Greater(t, slices.Index(keys, k), d, k)
			}

			only, err := parseColumns("delta")
			require.NoError(t, err)
			keys, _ = tableColumns(tc.shape, only)
			require.Equal(t, []string{"import", "run", "delta"}, keys)
		})
	}
}

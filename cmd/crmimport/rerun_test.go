package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/fixtures/gen"
	"crmimport/phases"
	"crmimport/store/storetest"
)

// A rerun of the same export counts every record unchanged without reading
// its files, and says so in the run log; --reread reads them and tells the
// same (R2).
func TestRerunAndReread(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	exp, err := gen.Write(dir, gen.Config{Contacts: 150, Seed: 11})
	require.NoError(t, err)
	storetest.RunAddress(t, func(t *testing.T, db string) {
		args := func(more ...string) []string {
			return append([]string{"--db", db, "--json", "--quiet", "run", "--tenant", "acme", "--source", "canonical"}, append(more, dir)...)
		}
		first := crm(t, nil, args()...)
		require.Equal(t, 0, first.code, first.stderr)

		notRead := func(run int64) int {
			var n int
			require.NoError(t, storetest.OpenFile(t, db).QueryRow(`SELECT count(*) FROM run_log WHERE migration_id = ? AND message LIKE ?`,
				run, "%counted unchanged without reading it again%").Scan(&n))
			return n
		}
		unchanged := map[string]phases.Counts{}
		for k, n := range exp.Records {
			unchanged[k] = phases.Counts{Unchanged: int64(n)}
		}
		rerun := crm(t, nil, args()...)
		require.Equal(t, 0, rerun.code, rerun.stderr)
		require.Equal(t, unchanged, rerun.summary(t).Kinds)
		require.Equal(t, len(exp.Records), notRead(rerun.summary(t).Run), "no file read again")

		reread := crm(t, nil, args("--reread")...)
		require.Equal(t, 0, reread.code, reread.stderr)
		require.Equal(t, unchanged, reread.summary(t).Kinds)
		require.Zero(t, notRead(reread.summary(t).Run), "--reread reads every file")

		help := crm(t, nil, "run", "--help")
		require.Contains(t, help.stdout, "--reread")
	})
}

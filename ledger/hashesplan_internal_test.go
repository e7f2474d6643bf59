package ledger

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/store"
)

// TestSetHashesFindsEachSlotByItsKey (R17's hashes, issue 25 item 8): each
// statement SetHashesMany runs on SQLite finds every slot it sets by the
// slot table's whole key. From 64 slots a statement on, SQLite planned the
// join with the VALUES list as a scan of every slot of the kind, probing
// the list: a rerun in which half the records changed took 57 s where
// statements of 16 slots take 16 s. The sizes it tries are those the
// statements take (store.StatementRows up to setHashesRows).
func TestSetHashesFindsEachSlotByItsKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "crm.db"))
	require.NoError(t, err)
	defer db.Close()

	most := setHashesRows(store.SQLite)
	for n := most; n >= 1; n = store.StatementRows(n - 1) {
		args := make([]any, 0, 4*n+3)
		for i := 0; i < n; i++ {
			args = append(args, "n1", 1, 2, "1 x")
		}
		args = append(args, "acme", "canonical", string(Note))
		rows, err := db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+setHashesSQL(n), args...)
		require.NoError(t, err)
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
			plan = append(plan, detail)
		}
		require.NoError(t, rows.Err())
		require.NoError(t, rows.Close())
		var slots []string
		for _, line := range plan {
			if strings.Contains(line, "migration_records") {
				slots = append(slots, line)
			}
		}
		require.Equal(t, []string{"SEARCH migration_records USING PRIMARY KEY (tenant_id=? AND source=? AND kind=? AND source_id=?)"}, slots,
			"%d slots a statement: the plan %q", n, plan)
		if n == 1 {
			break
		}
	}
}

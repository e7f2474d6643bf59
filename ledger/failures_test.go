package ledger_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/ledger"
	"crmimport/store"
	"crmimport/store/storetest"
)

// TestRecordFailuresKeepsEachRow: R4, a failed record claims nothing and
// keeps its row in record_failures — more than one statement's chunk of
// them, each with its reason's class, a row without a source id with
// NULL — and no slot.
func TestRecordFailuresKeepsEachRow(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		_, err := db.ExecContext(ctx, `INSERT INTO migrations (id, tenant_id, source, status, started_at) VALUES (1, 'acme', 'hubspot', 'running', '2026-01-05')`)
		require.NoError(t, err)
		_, err = db.ExecContext(ctx, `INSERT INTO migration_tasks (id, migration_id, kind, phase, status, updated_at) VALUES (4, 1, 'contact', 2, 'running', '2026-01-05')`)
		require.NoError(t, err)
		var fs []ledger.Failure
		for i := range 300 {
			fs = append(fs, ledger.Failure{Run: 1, Task: 4, Kind: ledger.Contact, SourceID: fmt.Sprintf("c-%03d", i), File: "contacts.csv", Line: i + 2,
				Reason: fmt.Sprintf("email: not an email address (%d)", i%3), Raw: `{"email":"x"}`})
		}
		fs[299].SourceID = ""
		inTx(t, db, func(l *ledger.Ledger, tx *sql.Tx) {
			require.NoError(t, l.RecordFailures(ctx, "contacts", fs))
		})
		var n, classes, noID, slots int
		require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*), count(DISTINCT reason_class), count(*) - count(source_id) FROM record_failures
			WHERE migration_id = 1 AND task_id = 4 AND kind = 'contact' AND file = 'contacts.csv' AND raw = '{"email":"x"}'`).Scan(&n, &classes, &noID))
		want := map[string]bool{}
		for _, f := range fs {
			want[store.ReasonClass(f.Reason)] = true
		}
		require.Equal(t, []int{300, len(want), 1}, []int{n, classes, noID}, "every row, with its reason's class")
		var class string
		require.NoError(t, db.QueryRowContext(ctx, `SELECT reason_class FROM record_failures WHERE source_id = 'c-000'`).Scan(&class))
		require.Equal(t, store.ReasonClass(fs[0].Reason), class)
		require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM migration_records`).Scan(&slots))
		require.Zero(t, slots, "a failure claims nothing")
	})
}

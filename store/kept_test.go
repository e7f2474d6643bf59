package store

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/store/pgtest"
)

// A run's statements are kept from one batch transaction to the next
// (Kept): prepared in the first transaction that asks, kept after it
// commits, taken by the later ones without being prepared again — and a
// kept statement still runs in the transaction that takes it, so that a
// rollback (R12: a batch is all or nothing) takes back what it wrote.
func TestKeptStatementsRunInTheirTransaction(t *testing.T) {
	ctx := context.Background()
	c, err := pgtest.Start(ctx, "")
	require.NoError(t, err, "start a throwaway PostgreSQL cluster")
	t.Cleanup(func() { require.NoError(t, c.Stop()) })

	for name, addr := range map[string]string{"sqlite": filepath.Join(t.TempDir(), "crm.db"), "postgres": c.DSN() + "&search_path=kept"} {
		t.Run(name, func(t *testing.T) {
			db, err := Open(ctx, addr)
			require.NoError(t, err)
			defer db.Close()
			_, err = db.ExecContext(ctx, `CREATE TABLE kept_rows (x INTEGER NOT NULL)`)
			require.NoError(t, err)
			const insert = `INSERT INTO kept_rows (x) VALUES (?)`
			k := NewKept(db)
			defer func() { require.NoError(t, k.Close()) }()

			write := func(x int, commit bool) {
				t.Helper()
				tx, err := db.BeginTx(ctx, nil)
				require.NoError(t, err)
				defer tx.Rollback()
				st, err := k.Prepare(ctx, tx, insert)
				require.NoError(t, err)
				_, err = st.ExecContext(ctx, x)
				require.NoError(t, err)
				if commit {
					require.NoError(t, tx.Commit())
					k.Keep(ctx) // between transactions, as a batch's Committed does
				}
			}

			write(1, true)
			require.Len(t, k.kept, 1, "kept once its transaction committed")
			require.Empty(t, k.fresh)
			write(2, false) // rolled back
			require.Empty(t, k.fresh, "taken from what was kept, not prepared again")
			write(3, true)
			require.Len(t, k.kept, 1)

			var got []int
			rows, err := db.QueryContext(ctx, `SELECT x FROM kept_rows ORDER BY x`)
			require.NoError(t, err)
			for rows.Next() {
				var x int
				require.NoError(t, rows.Scan(&x))
				got = append(got, x)
			}
			require.NoError(t, rows.Err())
			require.Equal(t, []int{1, 3}, got, "the kept statement wrote in the transaction that took it, and went with its rollback")

			// Without Kept, a statement is prepared in its transaction.
			var none *Kept
			tx, err := db.BeginTx(ctx, nil)
			require.NoError(t, err)
			st, err := none.Prepare(ctx, tx, insert)
			require.NoError(t, err)
			_, err = st.ExecContext(ctx, 4)
			require.NoError(t, err)
			require.NoError(t, tx.Rollback())
			none.Keep(ctx)
			require.NoError(t, none.Close())
			var n int
			require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM kept_rows`).Scan(&n))
			require.Equal(t, 2, n)
		})
	}
}

package target_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/store"
	"crmimport/store/storetest"
	"crmimport/target"
)

// TestWriterAndDelete: rows written by Writer are the rows canon validated,
// with their links, extra and natural keys; Delete takes them back children
// first (R16), a parent refused while a child still links to it, and only
// the tenant's own rows.
func TestWriterAndDelete(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		d := store.DialectOf(db)
		tx, err := store.Begin(ctx, db)
		require.NoError(t, err)
		defer tx.Rollback()
		company, bad := canon.Validate(ledger.Company, valuesOf(ledger.Company, map[string]string{"id": "co1", "name": "Acme", "domain": "https://www.Acme.example/"}))
		require.Empty(t, bad)
		contact, bad := canon.Validate(ledger.Contact, valuesOf(ledger.Contact, map[string]string{"id": "c1", "first_name": "Ann", "email": " Ann@Acme.example"}))
		require.Empty(t, bad)
		next, err := target.NextID(ctx, d, tx, ledger.Company)
		require.NoError(t, err)
		require.Equal(t, int64(1), next)
		w := target.NewWriter(tx, d, "acme", "2026-12-01T00:00:00Z")
		defer w.Close()
		require.NoError(t, w.Insert(ctx, []target.Row{{Kind: ledger.Company, ID: 1, Values: company}}))
		require.NoError(t, w.Insert(ctx, []target.Row{{Kind: ledger.Contact, ID: 7, Values: contact, Links: map[string]int64{"company_id": 1},
			Extra: `{"Lead Source":"Fair"}`}}))
		var got string
		require.NoError(t, tx.QueryRowContext(ctx, `SELECT name || '|' || domain_key || '|' || c.email_key || '|' || c.company_id || '|' || c.extra
		FROM companies, contacts c`).Scan(&got))
		require.Equal(t, `Acme|acme.example|ann@acme.example|1|{"Lead Source":"Fair"}`, got)
		ids, err := target.IDs(ctx, d, tx, ledger.Contact)
		require.NoError(t, err)
		require.Equal(t, int64(1), ids.Next(), "the allocator, not the rows written by hand, gives ids")
		require.NoError(t, target.AdvanceIDs(ctx, d, tx, ledger.Contact, 7))
		next, err = target.NextID(ctx, d, tx, ledger.Contact)
		require.NoError(t, err)
		require.Equal(t, int64(8), next, "advanced past 7")

		// In a savepoint (store.Try): PostgreSQL refuses the rest of a
		// transaction after a failed statement, and this one goes on.
		err = store.Try(ctx, tx, func() error {
			_, err := target.Delete(ctx, tx, ledger.Company, "acme", []int64{1})
			return err
		})
		require.True(t, store.IsConstraint(err), "a parent is refused while its child links to it: %v", err)
		n, err := target.Delete(ctx, tx, ledger.Contact, "globex", []int64{7})
		require.NoError(t, err)
		require.Zero(t, n, "another tenant's delete takes nothing")
		for _, k := range canon.ChildrenFirst() {
			ids := map[ledger.Kind][]int64{ledger.Contact: {7}, ledger.Company: {1}}[k]
			n, err := target.Delete(ctx, tx, k, "acme", ids)
			require.NoError(t, err)
			require.Equal(t, int64(len(ids)), n, k)
		}
		var left int
		require.NoError(t, tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM companies) + (SELECT count(*) FROM contacts)`).Scan(&left))
		require.Zero(t, left)
		require.NoError(t, tx.Commit())
	})
}

func valuesOf(k ledger.Kind, m map[string]string) []string {
	fs := canon.FieldsOf(k)
	vals := make([]string, len(fs.Names))
	for f, v := range m {
		vals[fs.Index[f]] = v
	}
	return vals
}

// A row that several final slots name (R5: a record matched to a row
// another created) is told in the export's terms by its slots' source
// ids in the order of their bytes, on every engine, whatever order the
// slots were written in: the first stands for the row where no hash tells
// which (a before-image's link), and a server returns rows in an order of
// its own (issue 28's crash suite on PostgreSQL met two).
func TestParentSourceIDsAreInOrder(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		for i, id := range []string{"ct-9", "ct-10", "CT-1", "ct-057"} {
			_, err := db.ExecContext(ctx, `INSERT INTO migration_records (tenant_id, source, kind, source_id, id, migration_id, record_type, record_id, action, created_at)
VALUES ('acme', 'canonical', 'contact', ?, ?, NULL, 'contacts', 7, ?, '2026-12-03T00:00:00Z')`, id, 100+i, []string{"created", "matched"}[min(i, 1)])
			require.NoError(t, err)
		}
		// The engine's order is made another than that of the bytes:
		// SQLite reverses what it returns unordered, PostgreSQL reads its
		// heap in the order the slots were written.
		tx, err := db.BeginTx(ctx, nil)
		require.NoError(t, err)
		switch d := store.DialectOf(db); d {
		case store.SQLite:
			_, err = tx.ExecContext(ctx, `PRAGMA reverse_unordered_selects = ON`)
			defer func() { _, _ = db.Exec(`PRAGMA reverse_unordered_selects = OFF`) }() // after the rollback: the pool's one connection, as it was
		case store.Postgres:
			_, err = tx.ExecContext(ctx, `SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_indexonlyscan = off`)
		default:
			t.Fatalf("engine %s: say how its order is made another", d)
		}
		defer func() { _ = tx.Rollback() }() // first of the two, on a failure too
		require.NoError(t, err)
		ids, err := target.ParentSourceIDs(ctx, tx, "acme", "canonical", ledger.Contact, 7)
		require.NoError(t, tx.Rollback()) // only read
		require.NoError(t, err)
		require.Equal(t, []string{"CT-1", "ct-057", "ct-10", "ct-9"}, ids)
	})
}

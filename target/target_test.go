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

package target_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/store"
	"crmimport/store/storetest"
	"crmimport/target"
)

// TestUpdateManyIsUpdate (R17): UpdateMany leaves every row as Update, one
// row at a time, leaves it — rows grouped by the columns they change,
// groups larger than one statement, a natural key and a link among them,
// rows that change nothing — and a row that is not there (gone, or
// another tenant's) fails it (R11).
func TestUpdateManyIsUpdate(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		d := store.DialectOf(db)
		contact := func(i int, name, email string) canon.Values {
			v, bad := canon.Validate(ledger.Contact, valuesOf(ledger.Contact, map[string]string{
				"id": fmt.Sprint("c", i), "first_name": name, "email": email}))
			require.Empty(t, bad)
			return v
		}
		const n = 700
		tx, err := store.Begin(ctx, db)
		require.NoError(t, err)
		w := target.NewWriter(tx, d, "acme", "2026-12-01T00:00:00Z")
		for c := int64(1); c <= 2; c++ {
			v, bad := canon.Validate(ledger.Company, valuesOf(ledger.Company, map[string]string{"id": fmt.Sprint("co", c), "name": "Acme"}))
			require.Empty(t, bad)
			require.NoError(t, w.Insert(ctx, []target.Row{{Kind: ledger.Company, ID: c, Values: v}}))
		}
		var ids []int64
		for i := 1; i <= n; i++ {
			require.NoError(t, w.Insert(ctx, []target.Row{{Kind: ledger.Contact, ID: int64(i), Values: contact(i, "Ann", fmt.Sprintf("ann%d@example.com", i)),
				Links: map[string]int64{"company_id": 1}}}))
			ids = append(ids, int64(i))
		}
		w.Close()
		require.NoError(t, tx.Commit())

		// What each row becomes: a name (300 rows: two statements), an
		// email and a company (the rest but every seventh), nothing.
		changes := func(tx *sql.Tx) ([]*target.Row, []target.State) {
			before, err := target.ReadRows(ctx, tx, d, ledger.Contact, "acme", ids)
			require.NoError(t, err)
			var rows []*target.Row
			var befores []target.State
			for i := 1; i <= n; i++ {
				r := &target.Row{Kind: ledger.Contact, ID: int64(i), Values: contact(i, "Ann", fmt.Sprintf("ann%d@example.com", i)),
					Links: map[string]int64{"company_id": 1}}
				switch {
				case i <= 300:
					r.Values = contact(i, fmt.Sprint("Ann ", i), fmt.Sprintf("ann%d@example.com", i))
				case i%7 != 0:
					r.Values = contact(i, "Ann", fmt.Sprintf("ANN.%d@example.com", i))
					r.Links = map[string]int64{"company_id": 2}
				}
				rows, befores = append(rows, r), append(befores, before[int64(i)])
			}
			return rows, befores
		}
		after := func(update func(tx *sql.Tx, rows []*target.Row, befores []target.State) error) map[int64]target.State {
			tx, err := store.Begin(ctx, db)
			require.NoError(t, err)
			defer tx.Rollback()
			rows, befores := changes(tx)
			require.NoError(t, update(tx, rows, befores))
			got, err := target.ReadRows(ctx, tx, d, ledger.Contact, "acme", ids)
			require.NoError(t, err)
			return got
		}
		many := after(func(tx *sql.Tx, rows []*target.Row, befores []target.State) error {
			return target.UpdateMany(ctx, tx, d, "acme", rows, befores)
		})
		one := after(func(tx *sql.Tx, rows []*target.Row, befores []target.State) error {
			for i, r := range rows {
				if err := target.Update(ctx, tx, "acme", r, befores[i]); err != nil {
					return err
				}
			}
			return nil
		})
		require.Equal(t, one, many)
		require.Equal(t, "Ann 299", many[299].Values["first_name"])
		require.Equal(t, "ann.302@example.com", many[302].Values["email_key"])
		require.Equal(t, int64(2), many[302].Values["company_id"])
		require.Equal(t, int64(1), many[700].Values["company_id"], "a row that changes nothing")

		for _, tenant := range []string{"acme", "globex"} {
			tx, err := store.Begin(ctx, db)
			require.NoError(t, err)
			rows, befores := changes(tx)
			if tenant == "acme" {
				rows[250].ID = n + 50 // gone
			}
			err = target.UpdateMany(ctx, tx, d, tenant, rows, befores)
			require.ErrorContains(t, err, "(R11)", "a row that is not the tenant's fails the update")
			require.NoError(t, tx.Rollback())
		}
	})
}

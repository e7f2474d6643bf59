package target_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/store"
	"crmimport/store/storetest"
	"crmimport/target"
)

// The row writer's PostgreSQL text writes what its SQLite text writes: a
// row of every kind, with links, a deal's exact amount, an activity's done,
// an email's from and to, an extra column, in one statement per kind and
// in a statement of several rows (issue 17).
func TestWriterWritesTheSameOnPostgres(t *testing.T) {
	t.Parallel()
	pg := storetest.OpenDialect(t, store.Postgres)
	lite := storetest.OpenDialect(t, store.SQLite)
	require.Equal(t, dump(t, lite), dump(t, pg))
	require.Contains(t, dump(t, pg), "12345678901234567.89", "the amount as the exact text it was validated as")
}

func dump(t *testing.T, db *sql.DB) string {
	t.Helper()
	ctx := context.Background()
	tx, err := store.Begin(ctx, db)
	require.NoError(t, err)
	defer tx.Rollback()
	row := func(k ledger.Kind, m map[string]string) canon.Values {
		v, bad := canon.Validate(k, valuesOf(k, m))
		require.Empty(t, bad, k)
		return v
	}
	w := target.NewWriter(tx, store.DialectOf(db), "acme", "2026-12-01T00:00:00.000000Z")
	defer w.Close()
	require.NoError(t, w.Insert(ctx, []target.Row{
		{Kind: ledger.Company, ID: 1, Values: row(ledger.Company, map[string]string{"id": "co1", "name": "Acme", "domain": "acme.example"})},
		{Kind: ledger.Company, ID: 2, Values: row(ledger.Company, map[string]string{"id": "co2", "name": "Beta", "created_at": "2024-03-01"}), Extra: `{"x":"1"}`},
	}))
	require.NoError(t, w.Insert(ctx, []target.Row{{Kind: ledger.Contact, ID: 3, Values: row(ledger.Contact, map[string]string{"id": "c1", "first_name": "Ann", "email": "Ann@Acme.example"}),
		Links: map[string]int64{"company_id": 1}}}))
	require.NoError(t, w.Insert(ctx, []target.Row{{Kind: ledger.Deal, ID: 4, Values: row(ledger.Deal, map[string]string{"id": "d1", "name": "Big", "amount": "12345678901234567.89", "currency": "EUR"}),
		Links: map[string]int64{"company_id": 2, "contact_id": 3}}}))
	require.NoError(t, w.Insert(ctx, []target.Row{{Kind: ledger.Note, ID: 5, Values: row(ledger.Note, map[string]string{"id": "n1", "body": "it's a 'note' with ? in it"}),
		Links: map[string]int64{"contact_id": 3, "deal_id": 4}}}))
	require.NoError(t, w.Insert(ctx, []target.Row{{Kind: ledger.Activity, ID: 6, Values: row(ledger.Activity, map[string]string{"id": "a1", "type": "call", "done": "true"}),
		Links: map[string]int64{"company_id": 1}}}))
	require.NoError(t, w.Insert(ctx, []target.Row{{Kind: ledger.Email, ID: 7, Values: row(ledger.Email, map[string]string{"id": "e1", "subject": "Hi", "from": "a@b", "to": "c@d"}),
		Links: map[string]int64{"contact_id": 3}}}))
	var out []string
	for _, q := range []string{
		`SELECT id, name, coalesce(domain_key, ''), coalesce(created_at, ''), coalesce(extra, '') FROM companies ORDER BY id`,
		`SELECT id, first_name, email_key, company_id, imported_at FROM contacts ORDER BY id`,
		`SELECT id, amount, currency, company_id, contact_id FROM deals ORDER BY id`,
		`SELECT id, body, contact_id, coalesce(company_id, 0), deal_id FROM notes ORDER BY id`,
		`SELECT id, type, done, company_id, tenant_id FROM activities ORDER BY id`,
		`SELECT id, subject, "from", "to", contact_id FROM emails ORDER BY id`,
	} {
		rows, err := tx.QueryContext(ctx, q)
		require.NoError(t, err, q)
		for rows.Next() {
			var v [5]any
			require.NoError(t, rows.Scan(&v[0], &v[1], &v[2], &v[3], &v[4]))
			var s []string
			for _, x := range v {
				if b, ok := x.([]byte); ok {
					x = string(b)
				}
				s = append(s, fmt.Sprint(x))
			}
			out = append(out, strings.Join(s, "|"))
		}
		require.NoError(t, rows.Err())
		rows.Close()
	}
	return strings.Join(out, "\n")
}

package target_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/ledger"
	"crmimport/store"
	"crmimport/store/storetest"
	"crmimport/target"
)

// TestPlaceholdersAndLinks: what `ledger load`, doctor and undo ask of the
// target tables, on both dialects — placeholder rows written from a query
// of the caller's (the first row of an id, the later ones doing nothing),
// the ids a table already holds, its last id, a row's state, the rows
// that link to others and the placeholders, a final slot whose row is
// missing or another tenant's, and rows deleted by a query's list.
func TestPlaceholdersAndLinks(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		_, err := db.Exec(`INSERT INTO companies (id, tenant_id, name, imported_at) VALUES (3, 'acme', 'Acme', 'now')`)
		require.NoError(t, err)

		tx, err := store.Begin(ctx, db)
		require.NoError(t, err)
		defer tx.Rollback()
		const rows = `
SELECT 5 AS id, ? AS tenant_id, 'first of 5' AS label, '{"source":"crm"}' AS extra, 'now' AS imported_at, 1 AS ord
UNION ALL SELECT 5, ?, 'second of 5', NULL, 'now', 2
UNION ALL SELECT 6, ?, 'six', NULL, 'now', 3`
		n, err := target.InsertPlaceholders(ctx, tx, ledger.Company, rows, []any{"acme", "acme", "acme"})
		require.NoError(t, err)
		require.Equal(t, int64(2), n, "the first row of an id is written, the later one does nothing")
		var label string
		require.NoError(t, tx.QueryRowContext(ctx, `SELECT name FROM companies WHERE id = 5`).Scan(&label))
		require.Equal(t, "first of 5", label)

		var taken []int64
		require.NoError(t, target.Taken(ctx, tx, ledger.Company, `SELECT 6 AS id UNION ALL SELECT 3 UNION ALL SELECT 9 UNION ALL SELECT 3`, nil,
			func(id int64) error { taken = append(taken, id); return nil }))
		require.Equal(t, []int64{3, 6}, taken, "in order, once each, only the ids the table holds")
		last, err := target.MaxID(ctx, tx, ledger.Company)
		require.NoError(t, err)
		require.Equal(t, int64(6), last)
		last, err = target.MaxID(ctx, tx, ledger.Deal)
		require.NoError(t, err)
		require.Zero(t, last, "an empty table")

		_, err = tx.ExecContext(ctx, `INSERT INTO contacts (id, tenant_id, last_name, company_id, imported_at) VALUES
			(10, 'acme', 'Ann', 3, 'now'), (11, 'acme', 'Bob', NULL, 'now'), (12, 'globex', 'Cy', NULL, 'now')`)
		require.NoError(t, err)
		_, err = tx.ExecContext(ctx, `INSERT INTO notes (id, tenant_id, body, contact_id, deal_id, imported_at) VALUES
			(20, 'acme', 'About Ann', 10, NULL, 'now')`)
		require.NoError(t, err)
		links := map[int64][]int64{}
		for _, k := range []ledger.Kind{ledger.Contact, ledger.Note} {
			require.NoError(t, target.EachLink(ctx, tx, k, "acme", func(id int64, parents []int64) error {
				links[id] = append([]int64(nil), parents...)
				return nil
			}))
		}
		require.Equal(t, map[int64][]int64{10: {3, 0}, 20: {10, 0, 0, 0, 0}}, links, "only the rows that link, 0 where they do not (contact, lead, company, deal, owner)")
		var placeholders []int64
		require.NoError(t, target.EachPlaceholder(ctx, tx, ledger.Company, "acme", func(id int64) { placeholders = append(placeholders, id) }))
		require.ElementsMatch(t, []int64{5, 6}, placeholders)

		_, err = tx.ExecContext(ctx, `INSERT INTO migration_records (tenant_id, source, kind, source_id, id, record_type, record_id, action, created_at) VALUES
			('acme', 'crm', 'contact', 'k10', 1, 'contacts', 10, 'created', 'now'),
			('acme', 'crm', 'contact', 'k12', 2, 'contacts', 12, 'matched', 'now'),
			('acme', 'crm', 'company', 'x99', 3, 'companies', 99, 'created', 'now')`)
		require.NoError(t, err)
		missing := `SELECT source_id FROM migration_records r WHERE ` + target.MissingRow("r.kind", "r.record_id", "r.tenant_id") + ` ORDER BY source_id`
		got, err := tx.QueryContext(ctx, missing)
		require.NoError(t, err)
		var ids []string
		for got.Next() {
			var id string
			require.NoError(t, got.Scan(&id))
			ids = append(ids, id)
		}
		require.NoError(t, got.Err())
		got.Close()
		require.Equal(t, []string{"k12", "x99"}, ids, "a row of another tenant, a row that is not there")

		gone, err := target.DeleteListed(ctx, tx, ledger.Note, "acme", `SELECT record_id FROM migration_records WHERE source_id = ?`, []any{"nothing"})
		require.NoError(t, err)
		require.Empty(t, gone)
		_, err = tx.ExecContext(ctx, `INSERT INTO migration_records (tenant_id, source, kind, source_id, id, record_type, record_id, action, created_at) VALUES
			('acme', 'crm', 'note', 'n20', 4, 'notes', 20, 'created', 'now')`)
		require.NoError(t, err)
		gone, err = target.DeleteListed(ctx, tx, ledger.Note, "acme", `SELECT record_id FROM migration_records WHERE kind = ? AND source_id = ?`, []any{"note", "n20"})
		require.NoError(t, err)
		require.Len(t, gone, 1, "the row removed, returned as it was")
		require.Contains(t, gone, int64(20))
		require.NoError(t, tx.Commit())

		found, placeholder, err := target.RowState(ctx, db, ledger.Company, 5, "acme")
		require.NoError(t, err)
		require.True(t, found && placeholder, "a placeholder loaded from a dump")
		found, placeholder, err = target.RowState(ctx, db, ledger.Company, 3, "acme")
		require.NoError(t, err)
		require.True(t, found && !placeholder)
		found, _, err = target.RowState(ctx, db, ledger.Contact, 12, "acme")
		require.NoError(t, err)
		require.False(t, found, "another tenant's row")
		total, err := target.Count(ctx, db)
		require.NoError(t, err)
		require.Equal(t, int64(3+3), total, "companies 3, 5, 6; contacts 10, 11, 12; the note deleted")
	})
}

package forensics

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"crmimport/store"
	"crmimport/store/storetest"
)

// TestReadLedgerReadsTheScopeAndNoMore: ReadLedger reads only the columns
// a dump's load reads (never a production column of its own, such as an
// api_token, onto the disk), only the tenant's or the run's rows, and
// removes its copy when closed.
func TestReadLedgerReadsTheScopeAndNoMore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	addr := storetest.PostgresDSN(t)
	admin, err := store.PostgresDB(addr)
	require.NoError(t, err)
	defer admin.Close()
	var schema string
	require.NoError(t, admin.QueryRowContext(ctx, `SELECT current_setting('search_path')`).Scan(&schema))
	_, err = admin.ExecContext(ctx, `CREATE SCHEMA `+schema+`;
CREATE TABLE migrations (id bigint, tenant_id text, source text, status text, started_at timestamptz,
    cancellation_requested boolean, stats jsonb, api_token text);
CREATE TABLE migration_tasks (id bigint, migration_id bigint, kind text, status text, job_id text);
CREATE TABLE migration_records (id bigint, tenant_id text, source text, kind text, source_id text, migration_id bigint,
    action text, created_at timestamptz, detail jsonb);
INSERT INTO migrations VALUES
    (1, 'acme', 'hubspot', 'succeeded', '2026-01-05 10:00:00+01', false, '{"contacts": {"imported": 1}}', 'secret-1'),
    (2, 'acme', 'hubspot', 'running', '2026-01-06 09:00:00+00', true, NULL, 'secret-2'),
    (3, 'initech', 'canonical', 'failed', '2026-01-07 09:00:00+00', false, NULL, 'secret-3');
INSERT INTO migration_tasks VALUES (1, 1, 'contacts', 'succeeded', 'job-1'), (2, 2, 'notes', 'running', 'job-2'),
    (3, 3, 'companies', 'failed', 'job-3');
INSERT INTO migration_records VALUES
    (1, 'acme', 'hubspot', 'contacts', 'c-1', 1, 'created', '2026-01-05 09:00:01+00', NULL),
    (2, 'acme', 'hubspot', 'notes', 'n-1', 2, 'skipped', '2026-01-06 09:00:01+00', '{"contact_id": "c-9"}'),
    (3, 'initech', 'canonical', 'companies', 'co-1', 3, 'skipped', '2026-01-07 09:00:01+00', NULL)`)
	require.NoError(t, err)
	prod, err := store.OpenLedgerOnly(ctx, addr)
	require.NoError(t, err)
	defer prod.Close()

	for _, tc := range []struct {
		scope              Scope
		runs, tasks, slots string
		tenants            []string
	}{
		{Scope{}, "1,2,3", "1,2,3", "c-1,n-1,co-1", []string{"acme", "initech"}},
		{Scope{Tenant: "acme"}, "1,2", "1,2", "c-1,n-1", []string{"acme"}},
		{Scope{Run: 2}, "2", "2", "n-1", []string{"acme"}},
		{Scope{Tenant: "nobody"}, "", "", "", nil},
	} {
		p, err := ReadLedger(ctx, prod, "prod", tc.scope, time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC))
		require.NoError(t, err, "%+v", tc.scope)
		b, err := os.ReadFile(filepath.Join(p.dir, "migrations.csv"))
		require.NoError(t, err)
		require.NotContains(t, string(b), "api_token")
		require.NotContains(t, string(b), "secret")
		require.Equal(t, tc.runs, column(t, p.DB, `SELECT id FROM migrations ORDER BY id`), "%+v", tc.scope)
		require.Equal(t, tc.tasks, column(t, p.DB, `SELECT id FROM migration_tasks ORDER BY id`), "%+v", tc.scope)
		require.Equal(t, tc.slots, column(t, p.DB, `SELECT source_id FROM migration_records ORDER BY id`), "%+v", tc.scope)
		if tc.tenants != nil {
			require.Equal(t, tc.tenants, p.Load.Tenants)
		}
		if tc.scope.Tenant == "acme" {
			require.Equal(t, "1,1,contact", column(t, p.DB, `SELECT cancellation_requested FROM migrations WHERE id = 2
				UNION ALL SELECT imported FROM migration_tasks WHERE id = 1 UNION ALL SELECT kind FROM migration_tasks WHERE id = 1`),
				"production's types read as a dump's: a boolean, the stats' plural kinds")
			require.Equal(t, "2026-01-05T09:00:00.000000Z", column(t, p.DB, `SELECT started_at FROM migrations WHERE id = 1`))
		}
		require.NoError(t, p.Close())
		_, err = os.Stat(p.dir)
		require.ErrorIs(t, err, os.ErrNotExist, "the copy is removed")
	}

	// A row that a dump's load refuses fails the read, saying which.
	_, err = admin.ExecContext(ctx, `INSERT INTO migrations (id, tenant_id, source, status, started_at) VALUES (4, 'umbrella', 's', 'done', now())`)
	require.NoError(t, err)
	_, err = ReadLedger(ctx, prod, "prod", Scope{Tenant: "umbrella"}, time.Now())
	require.ErrorContains(t, err, "read the ledger at prod")
	require.ErrorContains(t, err, `migrations.csv:2: status: "done" is not a run status`)
	require.NotContains(t, err.Error(), os.TempDir(), "the copy's folder is ours, not the user's")
}

// column is one column of a query's rows, comma-separated.
func column(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	rows, err := db.Query(q)
	require.NoError(t, err)
	defer rows.Close()
	out := ""
	for rows.Next() {
		var v string
		require.NoError(t, rows.Scan(&v))
		if out != "" {
			out += ","
		}
		out += v
	}
	require.NoError(t, rows.Err())
	return out
}

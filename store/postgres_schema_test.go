package store

import (
	"context"
	"database/sql"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/store/pgtest"
)

// PostgreSQL's schema (schema/postgres) loads on a real server, and its
// triggers keep the rules SQLite's keep: a skip taken over leaves its
// before-image (R16), a final slot removed moves its tenant and source's
// epoch (R2's same-input shortcut), except under an undo's hold (schema 9).
func TestPostgresSchemaAndItsTriggers(t *testing.T) {
	ctx := context.Background()
	c, err := pgtest.Start(ctx, "")
	require.NoError(t, err, "start a throwaway PostgreSQL cluster")
	t.Cleanup(func() { require.NoError(t, c.Stop()) })
	db, err := PostgresDB(c.DSN())
	require.NoError(t, err)
	defer db.Close()
	schema, err := os.ReadFile("schema/postgres/001_schema.sql")
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, string(schema))
	require.NoError(t, err)

	exec := func(q string, args ...any) {
		t.Helper()
		_, err := db.ExecContext(ctx, q, args...)
		require.NoError(t, err, q)
	}
	one := func(q string, args ...any) string {
		t.Helper()
		var s sql.NullString
		require.NoError(t, db.QueryRowContext(ctx, q, args...).Scan(&s), q)
		return s.String
	}
	exec(`INSERT INTO migrations (id, tenant_id, source, status, started_at) VALUES (1, 'acme', 'hubspot', 'succeeded', 't1'), (2, 'acme', 'hubspot', 'running', 't2')`)
	_, err = db.ExecContext(ctx, `INSERT INTO migrations (id, tenant_id, source, status, started_at) VALUES (3, 'acme', 'hubspot', 'running', 't3')`)
	require.True(t, IsUnique(err), "one live run per tenant (R13): %v", err)

	slot := `INSERT INTO migration_records (tenant_id, source, kind, source_id, id, migration_id, record_type, record_id, action, reason, created_at)
		VALUES ('acme', 'hubspot', ?, ?, ?, ?, ?, ?, ?, ?, 't')`
	exec(slot, "note", "n-1", 1, 1, nil, nil, "skipped", "not linked to any record")
	exec(`UPDATE migration_records SET migration_id = 2, action = 'created', record_type = 'notes', record_id = 7 WHERE source_id = 'n-1'`)
	require.Equal(t, "1|not linked to any record|2", one(`SELECT migration_id || '|' || reason || '|' || taken_by FROM slot_before WHERE source_id = 'n-1'`))

	epoch := func() string {
		return one(`SELECT coalesce((SELECT n FROM ledger_epochs WHERE tenant_id = 'acme' AND source = 'hubspot'), 0)`)
	}
	require.Equal(t, "0", epoch())
	exec(slot, "contact", "c-1", 2, 1, "contacts", 1, "created", nil)
	exec(slot, "contact", "c-2", 3, 1, "contacts", 2, "created", nil)
	exec(`DELETE FROM migration_records WHERE source_id = 'c-1'`)
	require.Equal(t, "1", epoch(), "a final slot deleted by hand moves the epoch")

	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = tx.ExecContext(ctx, `INSERT INTO epoch_hold (held) VALUES (1)`)
	require.NoError(t, err)
	_, err = tx.ExecContext(ctx, `DELETE FROM migration_records WHERE source_id IN ('c-2', 'n-1')`)
	require.NoError(t, err)
	_, err = tx.ExecContext(ctx, `DELETE FROM epoch_hold`)
	require.NoError(t, err)
	require.NoError(t, tx.Commit())
	require.Equal(t, "1", epoch(), "under the hold, the triggers stand aside")
}

// OpenPostgres makes the schema its address names (crmimport by default),
// upgrades it to the newest version once, and opens it again as it is; two
// addresses with different search paths are two ledgers.
func TestOpenPostgresMakesAndUpgradesItsSchema(t *testing.T) {
	ctx := context.Background()
	c, err := pgtest.Start(ctx, "")
	require.NoError(t, err, "start a throwaway PostgreSQL cluster")
	t.Cleanup(func() { require.NoError(t, c.Stop()) })
	pgSteps, err := steps(Postgres)
	require.NoError(t, err)
	for range 2 {
		db, err := OpenPostgres(ctx, c.DSN())
		require.NoError(t, err)
		v, err := Postgres.schemaVersion(ctx, db)
		require.NoError(t, err)
		require.Equal(t, len(pgSteps), v)
		var n int
		require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = 'migration_records'`,
			DefaultPostgresSchema).Scan(&n))
		require.Equal(t, 1, n)
		require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM id_allocators`).Scan(&n))
		require.Equal(t, 9, n, "seeded once: six target tables, users, leads and the slots")
		require.NoError(t, db.Close())
	}
	other, err := OpenPostgres(ctx, c.DSN()+"&search_path=other")
	require.NoError(t, err)
	defer other.Close()
	_, err = other.ExecContext(ctx, `INSERT INTO migrations (id, tenant_id, source, status, started_at) VALUES (1, 'a', 's', 'running', 't')`)
	require.NoError(t, err)
	var n int
	require.NoError(t, other.QueryRowContext(ctx, `SELECT count(*) FROM crmimport.migrations`).Scan(&n))
	require.Zero(t, n, "the other schema's ledger is its own")
	_, err = OpenPostgres(ctx, "mysql://x")
	require.ErrorContains(t, err, "not a postgres:// address")

	// A session whose search_path does not name the schema (psql, a
	// repair) changes a slot: the triggers find their tables still.
	_, err = other.ExecContext(ctx, `INSERT INTO migration_records (tenant_id, source, kind, source_id, id, migration_id, record_type, record_id, action, created_at)
		VALUES ('a', 's', 'contact', 'c-1', 1, 1, 'contacts', 1, 'created', 't'), ('a', 's', 'note', 'n-1', 2, 1, NULL, NULL, 'skipped', 't')`)
	require.NoError(t, err)
	bare, err := PostgresDB(c.DSN() + "&search_path=public")
	require.NoError(t, err)
	defer bare.Close()
	_, err = bare.ExecContext(ctx, `DELETE FROM other.migration_records WHERE source_id = 'c-1'`)
	require.NoError(t, err, "final_slot_moved keeps its schema")
	_, err = bare.ExecContext(ctx, `UPDATE other.migration_records SET migration_id = 2 WHERE source_id = 'n-1'`)
	require.NoError(t, err, "slot_taken_over keeps its schema")
	require.NoError(t, other.QueryRowContext(ctx, `SELECT (SELECT n FROM ledger_epochs WHERE tenant_id = 'a') + (SELECT count(*) FROM slot_before)`).Scan(&n))
	require.Equal(t, 2, n, "the epoch moved and the before-image was kept, in the schema's own tables")
}

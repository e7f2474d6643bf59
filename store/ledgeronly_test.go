package store

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"crmimport/store/pgtest"
)

// A production engine's ledger (issue 17 item 5): LedgerOnly finds a
// schema that holds the three ledger tables and no crmimport database, and
// nothing else; OpenLedgerOnly opens it for reading only — the server
// refuses every write — makes nothing, and refuses a file or a schema
// without the three tables, naming what it lacks.
func TestAProductionLedgerIsReadOnly(t *testing.T) {
	ctx := context.Background()
	c, err := pgtest.Start(ctx, "")
	require.NoError(t, err, "start a throwaway PostgreSQL cluster")
	t.Cleanup(func() { require.NoError(t, c.Stop()) })

	file := filepath.Join(t.TempDir(), "crm.db")
	only, err := LedgerOnly(ctx, file)
	require.NoError(t, err)
	require.False(t, only, "a file is crmimport's own")
	_, err = OpenLedgerOnly(ctx, file)
	require.ErrorContains(t, err, "a production ledger is read on its PostgreSQL server")

	ours, err := Open(ctx, c.DSN()+"&search_path=ours")
	require.NoError(t, err)
	defer ours.Close()
	_, err = ours.ExecContext(ctx, `CREATE SCHEMA prod;
CREATE TABLE prod.migrations (id bigint, tenant_id text, api_token text);
CREATE TABLE prod.migration_tasks (id bigint);
CREATE TABLE prod.migration_records (id bigint);
INSERT INTO prod.migrations VALUES (1, 'acme', 'secret');
CREATE SCHEMA half;
CREATE TABLE half.migrations (id bigint)`)
	require.NoError(t, err)

	for schema, want := range map[string]bool{"ours": false, "prod": true, "half": false, "nowhere": false} {
		only, err := LedgerOnly(ctx, c.DSN()+"&search_path="+schema)
		require.NoError(t, err, schema)
		require.Equal(t, want, only, schema)
	}
	_, err = OpenLedgerOnly(ctx, c.DSN()+"&search_path=half")
	require.ErrorContains(t, err, "schema half holds no production ledger: it has no migration_tasks, migration_records")

	prod, err := OpenLedgerOnly(ctx, c.DSN()+"&search_path=prod")
	require.NoError(t, err)
	defer prod.Close()
	var tenant string
	require.NoError(t, prod.QueryRowContext(ctx, `SELECT tenant_id FROM migrations WHERE id = ?`, 1).Scan(&tenant))
	require.Equal(t, "acme", tenant)
	for _, stmt := range []string{`INSERT INTO migrations (id) VALUES (2)`, `UPDATE migrations SET api_token = NULL`,
		`DELETE FROM migrations`, `CREATE TABLE crmimport_schema_version (version integer)`} {
		_, err := prod.ExecContext(ctx, stmt)
		var pe *pgconn.PgError
		require.ErrorAs(t, err, &pe, stmt)
		require.Equal(t, "25006", pe.Code, "%s: read_only_sql_transaction", stmt)
	}
	var tables int
	require.NoError(t, ours.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema = 'prod'`).Scan(&tables))
	require.Equal(t, 3, tables, "nothing was made")
	require.NoError(t, ours.QueryRowContext(ctx, `SELECT count(*) FROM prod.migrations WHERE api_token = 'secret'`).Scan(&tables))
	require.Equal(t, 1, tables, "nothing was changed")
}

// PsqlOf: the address psql takes — no search_path, which libpq refuses,
// no password — and the statement that sets the schema, quoted: a name
// written in double quotes in the address (a quote in it doubled, as the
// server reads a search_path) is that name, capitals and all.
func TestPsqlOf(t *testing.T) {
	p, err := PsqlOf(`postgres://crm:s3cret@db.internal/migrations?search_path="it's ""X"""&sslmode=require`)
	require.NoError(t, err)
	require.Equal(t, "postgres://crm@db.internal/migrations?sslmode=require", p.Address)
	require.Equal(t, `SET search_path TO "it's ""X"""`, p.SearchPath)
	p, err = PsqlOf("postgres://crm@db.internal/migrations?password=s3cret&search_path=acme")
	require.NoError(t, err)
	require.Equal(t, "postgres://crm@db.internal/migrations", p.Address)
	p, err = PsqlOf("postgres://crm@db.internal/migrations?options=-c%20geqo%3Doff&search_path=acme")
	require.NoError(t, err)
	require.Equal(t, "postgres://crm@db.internal/migrations?options=-c%20geqo%3Doff", p.Address, "a space stays a space to libpq (not a '+')")
	p, err = PsqlOf("postgres://crm@db.internal/migrations")
	require.NoError(t, err)
	require.Equal(t, `SET search_path TO "crmimport"`, p.SearchPath)
	_, err = PsqlOf("crm.db")
	require.Error(t, err)
}

package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
)

// A production engine's own ledger (issue 17 item 5): a PostgreSQL schema
// that holds the three ledger tables of SPEC §6 — migrations,
// migration_tasks and migration_records, with columns of its own beside
// SPEC's — and none of crmimport's. doctor, `ledger why` and report read
// it as it is (package forensics), and nothing is ever written to it.

// LedgerTables are the tables of a production engine's ledger.
var LedgerTables = []string{"migrations", "migration_tasks", "migration_records"}

// ledgerTablesSQL: of the schema's tables, the ledger's, and whether
// crmimport's schema version is there (a crmimport database).
const ledgerTablesSQL = `
SELECT coalesce(string_agg(table_name, ',' ORDER BY table_name) FILTER (WHERE table_name IN ('migrations', 'migration_tasks', 'migration_records')), ''),
       coalesce(bool_or(table_name = 'crmimport_schema_version'), false)
FROM information_schema.tables WHERE table_schema = ?`

// LedgerOnly tells whether the schema at addr holds a production engine's
// ledger and no crmimport database: the three ledger tables, and no
// crmimport_schema_version. It writes nothing. A SQLite file's path is
// never one.
func LedgerOnly(ctx context.Context, addr string) (bool, error) {
	return DialectAt(addr).ledgerOnly(ctx, addr)
}

func (d Dialect) ledgerOnly(ctx context.Context, addr string) (bool, error) {
	switch d {
	case SQLite:
		return false, nil
	case Postgres:
		return pgLedgerOnly(ctx, addr)
	default:
		panic(d.Untaught("store.LedgerOnly"))
	}
}

// pgLedgerOnly is LedgerOnly of a server's schema.
func pgLedgerOnly(ctx context.Context, addr string) (bool, error) {
	db, a, err := openLedgerReader(ctx, addr)
	if err != nil {
		return false, err
	}
	defer db.Close()
	have, ours, err := a.ledgerTables(ctx, db)
	return err == nil && !ours && len(have) == len(LedgerTables), err
}

// OpenLedgerOnly opens the production engine's ledger at addr, a
// postgres:// address, for reading only: every transaction of its pool is
// read-only on the server's word (default_transaction_read_only), and
// nothing is made or upgraded. A schema that lacks one of the three ledger
// tables is refused, naming it.
func OpenLedgerOnly(ctx context.Context, addr string) (*sql.DB, error) {
	return DialectAt(addr).openLedgerOnly(ctx, addr)
}

func (d Dialect) openLedgerOnly(ctx context.Context, addr string) (*sql.DB, error) {
	switch d {
	case SQLite:
		return nil, fmt.Errorf("%s: a production ledger is read on its PostgreSQL server (--db postgres://…); "+
			"a SQLite file is crmimport's own database, read without --ledger-only", addr)
	case Postgres:
		return pgOpenLedgerOnly(ctx, addr)
	default:
		panic(d.Untaught("store.OpenLedgerOnly"))
	}
}

// pgOpenLedgerOnly is OpenLedgerOnly of a server's schema.
func pgOpenLedgerOnly(ctx context.Context, addr string) (*sql.DB, error) {
	db, a, err := openLedgerReader(ctx, addr)
	if err != nil {
		return nil, err
	}
	have, _, err := a.ledgerTables(ctx, db)
	if err != nil {
		db.Close()
		return nil, err
	}
	if len(have) < len(LedgerTables) {
		db.Close()
		var missing []string
		for _, t := range LedgerTables {
			if !slices.Contains(have, t) {
				missing = append(missing, t)
			}
		}
		return nil, fmt.Errorf("%s: schema %s holds no production ledger: it has no %s (a ledger is migrations, migration_tasks and migration_records)",
			a, a.schema, strings.Join(missing, ", "))
	}
	return db, nil
}

// openLedgerReader opens a read-only pool on the server at addr.
func openLedgerReader(ctx context.Context, addr string) (*sql.DB, pgAddress, error) {
	a, err := parsePostgres(addr)
	if err != nil {
		return nil, a, err
	}
	db, err := a.connect(ctx, a.with("default_transaction_read_only", "on"), Readers)
	return db, a, err
}

// ledgerTables are the ledger tables the address's schema holds, and
// whether it is a crmimport database.
func (a pgAddress) ledgerTables(ctx context.Context, db *sql.DB) (have []string, ours bool, err error) {
	var list string
	if err := db.QueryRowContext(ctx, ledgerTablesSQL, a.schema).Scan(&list, &ours); err != nil {
		return nil, false, fmt.Errorf("open %s: %w", a, err)
	}
	if list != "" {
		have = strings.Split(list, ",")
	}
	return have, ours, nil
}

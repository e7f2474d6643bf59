// Package storetest holds the database helpers of the packages' tests: a
// real database in the test's own folder, another handle on it as a second
// process has, and Run, which runs a test once on each dialect that store
// knows, so that the rules' tests hold on every one. Non-test code never
// imports it.
package storetest

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/store"
)

// OpenDB opens a new SQLite database, a file in t.TempDir(), through
// store.Open; it is closed when the test ends.
func OpenDB(t testing.TB) *sql.DB {
	t.Helper()
	return OpenFile(t, filepath.Join(t.TempDir(), "crm.db"))
}

// OpenFile opens the database at path through store.Open, which creates it
// when absent; it is closed when the test ends.
func OpenFile(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := store.Open(context.Background(), path)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// Run runs test once per dialect, as a subtest named after the dialect,
// each time on a new, empty database of it. The subtests run one after
// the other, within the test: what follows Run sees what they did.
func Run(t *testing.T, test func(t *testing.T, db *sql.DB)) {
	t.Helper()
	for _, b := range backends() {
		t.Run(string(b.dialect), func(t *testing.T) { test(t, b.open(t)) })
	}
}

// RunAddress runs test once per dialect, as Run does, with the address of
// a new database that nothing has made yet: a file's path in the test's
// folder, or a postgres:// address of a new schema. It is for tests that
// name the database to a command line (--db) or a child process.
func RunAddress(t *testing.T, test func(t *testing.T, addr string)) {
	t.Helper()
	for _, b := range backends() {
		t.Run(string(b.dialect), func(t *testing.T) { test(t, b.address(t)) })
	}
}

// Open opens the database at addr (a path or a postgres:// address)
// through store.Open; it is closed when the test ends.
func Open(t testing.TB, addr string) *sql.DB {
	t.Helper()
	return backendOf(t, store.DialectAt(addr)).openAt(t, addr)
}

// OpenDialect opens a new, empty database of dialect d, closed when the
// test ends: a second database beside the one Run gave.
func OpenDialect(t testing.TB, d store.Dialect) *sql.DB {
	t.Helper()
	return backendOf(t, d).open(t)
}

// Reopen opens another handle on db's database, as a second process has
// its own; it is closed when the test ends.
func Reopen(t testing.TB, db *sql.DB) *sql.DB {
	t.Helper()
	return backendOf(t, store.DialectOf(db)).reopen(t, db)
}

// backend is how the tests get databases of one dialect.
type backend struct {
	dialect store.Dialect
	open    func(t testing.TB) *sql.DB              // a new, empty database
	reopen  func(t testing.TB, db *sql.DB) *sql.DB  // another handle on db's
	address func(t testing.TB) string               // where a new database would be
	openAt  func(t testing.TB, addr string) *sql.DB // the database at an address
}

// backends are the dialects the tests run on: every engine that store
// knows (store.Engines), so that every test that goes through Run runs on
// each, and a new engine fails here until it is given its test databases.
func backends() []backend {
	var out []backend
	for _, d := range store.Engines() {
		switch d {
		case store.SQLite:
			out = append(out, backend{dialect: d, open: OpenDB, reopen: reopenFile, address: newFile, openAt: OpenFile})
		case store.Postgres:
			out = append(out, backend{dialect: d, open: openPG, reopen: reopenPG, address: PostgresDSN, openAt: OpenPostgres})
		default:
			panic(d.Untaught("storetest.backends"))
		}
	}
	return out
}

func backendOf(t testing.TB, d store.Dialect) backend {
	t.Helper()
	for _, b := range backends() {
		if b.dialect == d {
			return b
		}
	}
	t.Fatalf("storetest: no test database for dialect %q", d)
	return backend{}
}

// newFile is a path in the test's folder where no file is yet.
func newFile(t testing.TB) string { return filepath.Join(t.TempDir(), "crm.db") }

// reopenFile opens the file that db has open once more.
func reopenFile(t testing.TB, db *sql.DB) *sql.DB {
	t.Helper()
	path, err := store.File(context.Background(), db)
	require.NoError(t, err)
	require.NotEmpty(t, path, "a database in memory cannot be opened twice")
	return OpenFile(t, path)
}

// Schema6 are the statements that take a database of the latest schema
// back to how schema 6 left it (no reason classes and their indexes, no
// excluded rows counted, no hold on the epoch, no revisits, no undo, no
// pending links (R6a) nor counts per kind beside the tasks', no hashes
// nor changes at the source (R17), no deal status nor pipeline, no users
// nor owners, no leads, no pending edits of the review grid, one
// epoch for the whole ledger, no count of NUL bytes kept): tests of an
// older file make one from a new one with them, then lower it further.
var Schema6 = []string{
	`DROP TABLE record_edits`, `DROP INDEX record_failures_file`, `DROP INDEX record_failures_file_kind`, `DROP INDEX record_failures_file_class`, `DROP INDEX record_failures_file_kind_class`,
	`DROP TABLE record_changes`, `DROP TABLE record_updates`,
	`ALTER TABLE migration_records DROP COLUMN digest`, `ALTER TABLE migration_records DROP COLUMN hashes`,
	`ALTER TABLE migration_tasks DROP COLUMN updated`, `ALTER TABLE migration_tasks DROP COLUMN overwritten`,
	`ALTER TABLE migration_tasks DROP COLUMN outdated`, `ALTER TABLE migration_tasks DROP COLUMN conflict`,
	`ALTER TABLE migration_tasks DROP COLUMN deleted_since`, `ALTER TABLE migration_tasks DROP COLUMN adopted`,
	`ALTER TABLE migration_tasks DROP COLUMN reverted`,
	`DROP TABLE run_kind_counts`, `DROP TABLE pending_links`, `DROP TABLE replaced_links`,
	`DROP INDEX migration_records_skips`, `DROP INDEX record_failures_source`, `DROP INDEX record_failures_kind_class`,
	`DROP INDEX record_failures_class`, `DROP INDEX record_failures_order`, `ALTER TABLE record_failures DROP COLUMN reason_class`,
	`ALTER TABLE migration_tasks DROP COLUMN excluded`, `ALTER TABLE migration_tasks DROP COLUMN untaken`,
	`DROP TABLE epoch_hold`, `DROP TABLE task_revisits`,
	`DROP TRIGGER final_slot_deleted`, `DROP TRIGGER final_slot_changed`, `DROP TRIGGER slot_taken_over`,
	`DROP TABLE undo_items`, `DROP TABLE slot_before`, `DROP TABLE ledger_epochs`,
	`CREATE TABLE ledger_epoch (n INTEGER NOT NULL)`, `INSERT INTO ledger_epoch (n) VALUES (0)`,
	`CREATE TRIGGER final_slot_deleted AFTER DELETE ON migration_records WHEN OLD.action IN ('created', 'matched')
	 BEGIN UPDATE ledger_epoch SET n = n + 1; END`,
	`CREATE TRIGGER final_slot_changed AFTER UPDATE ON migration_records WHEN OLD.action IN ('created', 'matched')
	 BEGIN UPDATE ledger_epoch SET n = n + 1; END`,
	`DROP INDEX contacts_company`, `DROP INDEX deals_company`, `DROP INDEX deals_contact`,
	`DROP INDEX notes_contact`, `DROP INDEX notes_company`, `DROP INDEX notes_deal`,
	`DROP INDEX activities_contact`, `DROP INDEX activities_company`, `DROP INDEX activities_deal`,
	`DROP INDEX emails_contact`, `DROP INDEX emails_company`, `DROP INDEX emails_deal`,
	`ALTER TABLE migrations DROP COLUMN undoes`, `ALTER TABLE migrations DROP COLUMN undone_by`,
	`ALTER TABLE migration_tasks DROP COLUMN removed`, `ALTER TABLE migration_tasks DROP COLUMN released`,
	`ALTER TABLE migration_tasks DROP COLUMN restored`, `ALTER TABLE migration_tasks DROP COLUMN cleared`,
	`ALTER TABLE migration_tasks DROP COLUMN nul_kept`,
	`ALTER TABLE deals DROP COLUMN status`, `ALTER TABLE deals DROP COLUMN pipeline`,
	// Owners and users (schema 18): an owner_id column is a foreign key,
	// which DROP COLUMN refuses, so its REFERENCES clause goes first, with
	// the user kind of the CHECKs, in the schema's text (as schema 18 put
	// them there), the schema's version moved for the connection to read it.
	// Leads (schema 19) go first, the same way: their links are foreign
	// keys too.
	`DROP INDEX notes_lead`, `DROP INDEX activities_lead`, `DROP INDEX emails_lead`,
	`PRAGMA writable_schema = ON`,
	`UPDATE sqlite_schema SET sql = replace(replace(sql, 'lead_id INTEGER REFERENCES leads (id)', 'lead_id INTEGER'),
	 ', ''lead''', '') WHERE type = 'table'`,
	`PRAGMA writable_schema = OFF`, `PRAGMA schema_version = 90000`,
	`ALTER TABLE notes DROP COLUMN lead_id`, `ALTER TABLE activities DROP COLUMN lead_id`, `ALTER TABLE emails DROP COLUMN lead_id`,
	`DROP TABLE leads`, `DELETE FROM id_allocators WHERE name = 'leads'`,
	`DROP INDEX companies_owner`, `DROP INDEX contacts_owner`, `DROP INDEX deals_owner`, `DROP INDEX notes_owner`,
	`DROP INDEX activities_owner`, `DROP INDEX users_email_key`,
	`PRAGMA writable_schema = ON`,
	`UPDATE sqlite_schema SET sql = replace(replace(sql, 'owner_id INTEGER REFERENCES users (id)', 'owner_id INTEGER'),
	 'CHECK (kind IN (''user'', ''company''', 'CHECK (kind IN (''company''') WHERE type = 'table'`,
	`PRAGMA writable_schema = OFF`, `PRAGMA schema_version = 100000`,
	`ALTER TABLE companies DROP COLUMN owner_id`, `ALTER TABLE contacts DROP COLUMN owner_id`, `ALTER TABLE deals DROP COLUMN owner_id`,
	`ALTER TABLE notes DROP COLUMN owner_id`, `ALTER TABLE activities DROP COLUMN owner_id`, `DROP TABLE users`,
	`ALTER TABLE migration_tasks DROP COLUMN unowned`, `DELETE FROM id_allocators WHERE name = 'users'`,
	`PRAGMA user_version = 6`,
}

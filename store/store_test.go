package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOpenCreatesPrivateFileWithSettings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "crm.db")
	db, err := Open(ctx, path)
	require.NoError(t, err)
	defer db.Close()

	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "SPEC §6: the file holds customer data")

	var mode string
	require.NoError(t, db.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode))
	require.Equal(t, "wal", mode)
	var fk int
	require.NoError(t, db.QueryRowContext(ctx, `PRAGMA foreign_keys`).Scan(&fk))
	require.Equal(t, 1, fk)
	var busy int
	require.NoError(t, db.QueryRowContext(ctx, `PRAGMA busy_timeout`).Scan(&busy))
	require.Equal(t, int(lockTry.Milliseconds()), busy, "Begin waits; SQLite answers busy soon")
	var v int
	require.NoError(t, db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v))
	require.Equal(t, Version(), v)
	var temp int
	require.NoError(t, db.QueryRowContext(ctx, `PRAGMA temp_store`).Scan(&temp))
	require.Equal(t, 1, temp, "temporary data in files (FILE): a chunk's savepoint journal in memory cost 36 MiB at 4x (issue 28)")

	// The -wal file SQLite creates takes the database file's mode.
	_, err = db.ExecContext(ctx, `INSERT INTO run_log (migration_id, at, level, message) SELECT 1, 'x', 'info', 'y' WHERE 0`)
	require.NoError(t, err)
	wal, err := os.Stat(path + "-wal")
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), wal.Mode().Perm())
}

func TestOpenUpgradesOlderFileInPlace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "crm.db")
	db, err := Open(ctx, path)
	require.NoError(t, err)
	// Make the file look as if an older binary wrote it: version 0, no tables.
	_, err = db.ExecContext(ctx, `PRAGMA foreign_keys = OFF`)
	require.NoError(t, err)
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table'`)
	require.NoError(t, err)
	var tables []string
	for rows.Next() {
		var name string
		require.NoError(t, rows.Scan(&name))
		tables = append(tables, name)
	}
	require.NoError(t, rows.Close())
	require.NotEmpty(t, tables)
	for _, table := range tables {
		_, err := db.ExecContext(ctx, `DROP TABLE `+table)
		require.NoError(t, err)
	}
	_, err = db.ExecContext(ctx, `PRAGMA user_version = 0`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	db, err = Open(ctx, path)
	require.NoError(t, err)
	defer db.Close()
	var n int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'migration_records'`).Scan(&n))
	require.Equal(t, 1, n)
}

// TestOpenUpgradesVersion1File: a file written by a binary that knew schema
// 1 opens with this one and is upgraded in place, its rows kept (SPEC §6):
// version 2 marks runs loaded from a dump and placeholder target rows.
func TestOpenUpgradesVersion1File(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "crm.db")
	all, err := steps(SQLite)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(all), 2)
	raw, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	_, err = raw.ExecContext(ctx, all[0].sql)
	require.NoError(t, err)
	_, err = raw.ExecContext(ctx, `PRAGMA user_version = 1`)
	require.NoError(t, err)
	_, err = raw.ExecContext(ctx, `INSERT INTO companies (id, tenant_id, name, imported_at) VALUES (7, 'acme', 'Acme', 'then')`)
	require.NoError(t, err)
	_, err = raw.ExecContext(ctx, `INSERT INTO migrations (id, tenant_id, source, status, started_at) VALUES (3, 'acme', 'canonical', 'succeeded', 'then')`)
	require.NoError(t, err)
	require.NoError(t, raw.Close())

	db, err := Open(ctx, path)
	require.NoError(t, err)
	defer db.Close()
	var v int
	require.NoError(t, db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v))
	require.Equal(t, Version(), v)
	require.GreaterOrEqual(t, v, 2)
	var name string
	var fromDump int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT name, from_dump FROM companies WHERE id = 7`).Scan(&name, &fromDump))
	require.Equal(t, "Acme", name, "the upgrade keeps the rows")
	require.Equal(t, 0, fromDump, "a row imported before the upgrade is no placeholder")
	var dump sql.NullString
	require.NoError(t, db.QueryRowContext(ctx, `SELECT dump FROM migrations WHERE id = 3`).Scan(&dump))
	require.False(t, dump.Valid, "a run made here was not loaded from a dump")
	_, err = db.ExecContext(ctx, `UPDATE companies SET from_dump = 2 WHERE id = 7`)
	require.True(t, IsConstraint(err), "from_dump is 0 or 1: %v", err)
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "crm.db")
	db, err := Open(ctx, path)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `PRAGMA user_version = 999`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	_, err = Open(ctx, path)
	require.ErrorContains(t, err, "newer than this crmimport knows")
}

func TestOpenBadPaths(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	file := filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o600))

	_, err := Open(ctx, filepath.Join(dir, "missing", "crm.db"))
	require.ErrorContains(t, err, "does not exist")
	_, err = Open(ctx, filepath.Join(file, "crm.db"))
	require.ErrorContains(t, err, "is not a folder")
	_, err = Open(ctx, dir)
	require.ErrorContains(t, err, "is a folder")
	notDB := filepath.Join(dir, "contacts.csv")
	require.NoError(t, os.WriteFile(notDB, []byte(strings.Repeat("id,name\n1,Acme\n", 200)), 0o600))
	_, err = Open(ctx, notDB)
	require.ErrorContains(t, err, "is not a SQLite database file", "a CSV passed as --db is refused, not overwritten")
}

func TestConstraintErrorsAreClassifiedByCode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "crm.db"))
	require.NoError(t, err)
	defer db.Close()
	_, err = db.ExecContext(ctx, `INSERT INTO contacts (tenant_id, company_id, imported_at) VALUES ('t', 42, 'now')`)
	require.Error(t, err)
	require.True(t, IsConstraint(err), "foreign key: %v", err)
	require.False(t, IsUnique(err))
	_, err = db.ExecContext(ctx, `INSERT INTO migrations (tenant_id, source, status, started_at) VALUES ('t', 's', 'running', 'x'), ('t', 's', 'running', 'y')`)
	require.True(t, IsUnique(err), "R13 index: %v", err)
	_, err = db.ExecContext(ctx, `SELECT * FROM nowhere`)
	require.False(t, IsConstraint(err))
}

// TestOpenUpgradesVersion3FileToExactAmounts: issue 11 item 6. Schema 4
// keeps a deal's amount as the decimal text it was validated as; a file of
// schema 3 (amount NUMERIC) is rebuilt in place while notes, activities and
// emails point at its deals, every row and link kept, foreign keys on again
// afterwards.
func TestOpenUpgradesVersion3FileToExactAmounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "crm.db")
	fileOfVersion(t, path, 3,
		`INSERT INTO companies (id, tenant_id, name, imported_at) VALUES (1, 'acme', 'Acme', 'then')`,
		`INSERT INTO deals (id, tenant_id, name, amount, company_id, imported_at) VALUES (5, 'acme', 'Big', '12000.50', 1, 'then')`,
		`INSERT INTO deals (id, tenant_id, name, amount, imported_at) VALUES (6, 'acme', 'Round', '1500', 'then')`,
		`INSERT INTO deals (id, tenant_id, name, imported_at) VALUES (7, 'acme', 'None', 'then')`,
		`INSERT INTO notes (id, tenant_id, body, deal_id, imported_at) VALUES (9, 'acme', 'n', 5, 'then')`,
		`INSERT INTO activities (id, tenant_id, deal_id, imported_at) VALUES (10, 'acme', 6, 'then')`,
	)

	db, err := Open(ctx, path)
	require.NoError(t, err)
	defer db.Close()
	var v int
	require.NoError(t, db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v))
	require.Equal(t, Version(), v)
	rows, err := db.QueryContext(ctx, `SELECT id, coalesce(amount, '<null>'), typeof(amount), coalesce(company_id, 0) FROM deals ORDER BY id`)
	require.NoError(t, err)
	var got []string
	for rows.Next() {
		var id, company int
		var amount, typ string
		require.NoError(t, rows.Scan(&id, &amount, &typ, &company))
		got = append(got, fmt.Sprintf("%d|%s|%s|%d", id, amount, typ, company))
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"5|12000.5|text|1", "6|1500|text|0", "7|<null>|null|0"}, got,
		"amounts as SQLite printed them, now as text; links kept")
	var links int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM notes n JOIN deals d ON d.id = n.deal_id`).Scan(&links))
	require.Equal(t, 1, links, "a note still points at its deal")
	var fk int
	require.NoError(t, db.QueryRowContext(ctx, `PRAGMA foreign_keys`).Scan(&fk))
	require.Equal(t, 1, fk, "foreign keys are on again after the rebuild")
	_, err = db.ExecContext(ctx, `INSERT INTO notes (tenant_id, body, deal_id, imported_at) VALUES ('acme', 'x', 404, 'now')`)
	require.True(t, IsConstraint(err), "foreign keys hold: %v", err)

	const exact = "12345678901234567.89"
	long := strings.Repeat("9", 400)
	for i, a := range []string{exact, long} {
		_, err = db.ExecContext(ctx, `INSERT INTO deals (id, tenant_id, name, amount, imported_at) VALUES (?, 'acme', 'x', ?, 'now')`, 20+i, a)
		require.NoError(t, err)
		var back string
		require.NoError(t, db.QueryRowContext(ctx, `SELECT amount FROM deals WHERE id = ?`, 20+i).Scan(&back))
		require.Equal(t, a, back, "an amount is stored exactly as given")
	}
}

// TestOpenUpgradesVersion5FileToTaskProgress: a file of schema 5 opens and
// gains schema 6's progress columns; its tasks keep their checkpoints and
// counts, and hold 0 and NULL there (size unknown, no attempt noted); the
// columns refuse a negative count.
func TestOpenUpgradesVersion5FileToTaskProgress(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "crm.db")
	fileOfVersion(t, path, 5,
		`INSERT INTO migrations (id, tenant_id, source, status, started_at) VALUES (1, 'acme', 'canonical', 'running', 'then')`,
		`INSERT INTO migration_tasks (id, migration_id, kind, phase, status, checkpoint, imported, updated_at)
			VALUES (1, 1, 'company', 1, 'succeeded', '{"rows":30,"line":31}', 30, 'then'),
			       (2, 1, 'contact', 2, 'running', '{"rows":40,"line":41}', 40, 'then')`,
	)

	db, err := Open(ctx, path)
	require.NoError(t, err)
	defer db.Close()
	var v int
	require.NoError(t, db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v))
	require.Equal(t, Version(), v)
	rows, err := db.QueryContext(ctx, `SELECT id, status, checkpoint, imported, input_size, read_bytes,
		coalesce(attempt_started_at, '<null>'), attempt_rows, attempt_bytes FROM migration_tasks ORDER BY id`)
	require.NoError(t, err)
	var got []string
	for rows.Next() {
		var id, imported, size, read, arows, abytes int64
		var status, cp, at string
		require.NoError(t, rows.Scan(&id, &status, &cp, &imported, &size, &read, &at, &arows, &abytes))
		got = append(got, fmt.Sprintf("%d|%s|%s|%d|%d|%d|%s|%d|%d", id, status, cp, imported, size, read, at, arows, abytes))
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{
		`1|succeeded|{"rows":30,"line":31}|30|0|0|<null>|0|0`,
		`2|running|{"rows":40,"line":41}|40|0|0|<null>|0|0`,
	}, got, "checkpoints and counts kept; progress unknown")
	for _, col := range []string{"input_size", "read_bytes", "attempt_rows", "attempt_bytes"} {
		_, err = db.ExecContext(ctx, `UPDATE migration_tasks SET `+col+` = -1 WHERE id = 2`)
		require.True(t, IsConstraint(err), "%s is never negative: %v", col, err)
	}
}

// TestOpenUpgradesVersion6FileToUndo: a file of schema 6 opens and gains
// schema 7 (R16): every tenant and source with runs starts at the global
// epoch it had, so that a task that vouched for its input still does (R2),
// and from then on a final slot removed moves the epoch of its own tenant
// and source only; a claim that takes a skip over keeps its before-image.
func TestOpenUpgradesVersion6FileToUndo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "crm.db")
	fileOfVersion(t, path, 6,
		`UPDATE ledger_epoch SET n = 3`,
		`INSERT INTO migrations (id, tenant_id, source, status, started_at) VALUES (1, 'acme', 'canonical', 'succeeded', 'then'),
			(2, 'beta', 'hubspot', 'succeeded', 'then')`,
		`INSERT INTO migration_records (tenant_id, source, kind, source_id, id, migration_id, record_type, record_id, action, created_at)
			VALUES ('acme', 'canonical', 'note', 'n1', 1, 1, NULL, NULL, 'skipped', 'then'),
			       ('beta', 'hubspot', 'note', 'n2', 2, 2, 'notes', 7, 'created', 'then')`,
	)

	db, err := Open(ctx, path)
	require.NoError(t, err)
	defer db.Close()
	epochs := func() []string {
		return queryStrings(t, db, `SELECT tenant_id || '/' || source || '=' || n FROM ledger_epochs ORDER BY 1`)
	}
	require.Equal(t, []string{"acme/canonical=3", "beta/hubspot=3"}, epochs())
	_, err = db.ExecContext(ctx, `DELETE FROM migration_records WHERE source_id = 'n2'`)
	require.NoError(t, err)
	require.Equal(t, []string{"acme/canonical=3", "beta/hubspot=4"}, epochs(), "a final slot removed moves its own tenant and source only")
	_, err = db.ExecContext(ctx, `UPDATE migration_records SET migration_id = 9, reason = 'later' WHERE source_id = 'n1'`)
	require.NoError(t, err)
	require.Equal(t, []string{"acme/canonical/note/n1 taken by 9 from 1"},
		queryStrings(t, db, `SELECT tenant_id || '/' || source || '/' || kind || '/' || source_id || ' taken by ' || taken_by || ' from ' || migration_id FROM slot_before`))
	require.Equal(t, []string{"acme/canonical=3", "beta/hubspot=4"}, epochs(), "a skip taken over moves no epoch")
}

// fileOfVersion writes a database file as schema n left it: the first n
// schema steps, user_version n, then stmts (rows of that schema).
func fileOfVersion(t *testing.T, path string, n int, stmts ...string) {
	t.Helper()
	all, err := steps(SQLite)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(all), n)
	raw, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer raw.Close()
	for _, s := range all[:n] {
		tx, err := raw.Begin()
		require.NoError(t, err)
		_, err = tx.Exec(s.sql)
		require.NoError(t, err, s.name)
		if s.fill != nil {
			require.NoError(t, s.fill(context.Background(), tx), s.name)
		}
		require.NoError(t, tx.Commit())
	}
	for _, s := range append([]string{fmt.Sprintf("PRAGMA user_version = %d", n)}, stmts...) {
		_, err = raw.Exec(s)
		require.NoError(t, err, s)
	}
}

func queryStrings(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		out = append(out, s)
	}
	require.NoError(t, rows.Err())
	return out
}

// TestDialectOfAnOpenedFile: a handle of Open knows its dialect, and the
// dialect tells the file it has open.
func TestDialectOfAnOpenedFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "crm.db")
	db, err := Open(ctx, path)
	require.NoError(t, err)
	defer db.Close()
	require.Equal(t, SQLite, DialectOf(db))
	file, err := File(ctx, db)
	require.NoError(t, err)
	abs, err := filepath.Abs(path)
	require.NoError(t, err)
	require.Equal(t, abs, file)
}

// TestStopGrowthFailsAWriteAsAFullDisk: the "full" failpoint's ground
// (SPEC §8): held at its size, the database refuses a write that needs
// room, and takes it once it may grow again.
func TestStopGrowthFailsAWriteAsAFullDisk(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "crm.db"))
	require.NoError(t, err)
	defer db.Close()
	tx, err := Begin(ctx, db)
	require.NoError(t, err)
	defer tx.Rollback()
	const insert = `INSERT INTO companies (tenant_id, name, imported_at) VALUES ('acme', ?, 'now')`
	// Free pages, as rows deleted leave them: a write that fits in them
	// needs no growth, so the write of the failpoint is larger.
	_, err = tx.ExecContext(ctx, insert, strings.Repeat("y", 40_000))
	require.NoError(t, err)
	_, err = tx.ExecContext(ctx, `DELETE FROM companies`)
	require.NoError(t, err)
	page, free, grow, err := StopGrowth(ctx, tx)
	require.NoError(t, err)
	require.Greater(t, page, int64(0))
	require.Positive(t, free, "the deleted row's pages are free")
	_, err = tx.ExecContext(ctx, insert, strings.Repeat("x", int((free+4)*page)))
	require.ErrorContains(t, err, "full")
	require.NoError(t, grow())
	_, err = tx.ExecContext(ctx, insert, strings.Repeat("x", int((free+4)*page)))
	require.NoError(t, err, "room again once it may grow")
}

// An allocator that is not there (a table changed behind the engine's
// back) fails a save of its ids, the first and every later one, instead of
// writing nothing and giving the ids again next time.
func TestIDsSaveFailsWithoutTheirAllocator(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "crm.db"))
	require.NoError(t, err)
	defer db.Close()
	tx, err := Begin(ctx, db)
	require.NoError(t, err)
	defer tx.Rollback()
	ids, err := SQLite.TakeIDs(ctx, tx, "companies")
	require.NoError(t, err)
	ids.Next()
	require.NoError(t, ids.Save(ctx))
	_, err = tx.ExecContext(ctx, `DELETE FROM id_allocators WHERE name = 'companies'`)
	require.NoError(t, err)
	ids.Next()
	for range 2 {
		require.ErrorContains(t, ids.Save(ctx), "ids of companies: no allocator")
	}
	require.ErrorContains(t, SQLite.AdvanceIDs(ctx, tx, "companies", 9), "ids of companies: no allocator")
}

// TestKindChecksAdmitUsersOnTheConnectionThatRewroteThem: schemas 18 and
// 19 rewrite the kind CHECKs of migration_tasks and migration_records in
// the schema table. The connection that ran the steps (the file's one
// writer) must enforce the new text at once — a user task and slot, a lead
// task and slot are admitted — and still refuse a kind that is none.
func TestKindChecksAdmitUsersOnTheConnectionThatRewroteThem(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "crm.db"))
	require.NoError(t, err)
	defer db.Close()
	_, err = db.ExecContext(ctx, `INSERT INTO migrations (id, tenant_id, source, status, started_at) VALUES (1, 'acme', 'canonical', 'succeeded', 'now')`)
	require.NoError(t, err)
	task := `INSERT INTO migration_tasks (migration_id, kind, phase, status, updated_at) VALUES (1, ?, 1, 'pending', 'now')`
	_, err = db.ExecContext(ctx, task, "user")
	require.NoError(t, err, "a users task")
	_, err = db.ExecContext(ctx, `INSERT INTO migration_records (tenant_id, source, kind, source_id, id, action, created_at)
		VALUES ('acme', 'canonical', 'user', 'u1', 1, 'skipped', 'now')`)
	require.NoError(t, err, "a user's slot")
	_, err = db.ExecContext(ctx, task, "lead")
	require.NoError(t, err, "a leads task")
	_, err = db.ExecContext(ctx, `INSERT INTO migration_records (tenant_id, source, kind, source_id, id, action, created_at)
		VALUES ('acme', 'canonical', 'lead', 'l1', 2, 'skipped', 'now')`)
	require.NoError(t, err, "a lead's slot")
	_, err = db.ExecContext(ctx, task, "ticket")
	require.ErrorContains(t, err, "CHECK constraint failed", "a kind the table does not have")
}

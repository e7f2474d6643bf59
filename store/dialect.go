package store

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"path"

	sqlite "modernc.org/sqlite"
)

// Dialect is what differs between the databases crmimport can keep its
// tables in, and nothing more — not an interface over every statement
// (STYLE 16): the settings of a connection, beginning a write transaction
// (Begin), telling busy, constraint and unique-key errors apart (IsBusy,
// IsConstraint, IsUnique), the schema's folder and version, foreign keys
// off for a schema step, a consistent copy of a database, where temporary
// data goes (SpillTemp), the file a handle has open (File), and a database
// that may not grow (StopGrowth, for the "full" failpoint).
//
// The engine passes *sql.DB and *sql.Tx around, never a Dialect: a handle
// tells its own (DialectOf), and the package's functions ask it (Begin,
// IsUnique, SpillTemp, FileID, Upgrade). Two exist: SQLite, a file, and
// PostgreSQL, a schema of a server (issue 17), each with its schema in its
// own folder (schema/sqlite/, schema/postgres/); storetest runs the rule
// tests on both.
//
// Most statements are one text for both. Where a statement cannot be
// (JSON functions, group_concat, an alias PostgreSQL requires), its
// PostgreSQL text stands beside its SQLite text, chosen by the dialect of
// the handle, so that a statement stays whole beside its rule (STYLE 3).
// On PostgreSQL every write transaction holds one advisory lock (Begin):
// the writers are serialized as SQLite's are, so that no transaction
// meets a serialization failure or a deadlock with another writer; a
// statement that may be refused and after which the transaction goes on
// runs in a savepoint (Try), as PostgreSQL refuses the rest of a
// transaction after a failed statement.
//
// Ids are given out by the dialect's allocators (TakeIDs, AdvanceIDs:
// ids.go), never as max(id) + 1. The ? and ?N placeholders every statement
// is written with are SQLite's; PostgreSQL's driver (PostgresDriver)
// rebinds them to $N on their way (Rebind).
type Dialect string

// SQLite is the dialect of a file that Open opens (modernc.org/sqlite).
const SQLite Dialect = "sqlite"

// Postgres is the dialect of a PostgreSQL database (issue 17), through
// PostgresDriver.
const Postgres Dialect = "postgres"

// DialectOf is the dialect of db, a handle that Open or OpenExisting
// returned, told by its driver. A handle of a driver that store does not
// know is a mistake of the program: DialectOf panics.
func DialectOf(db *sql.DB) Dialect {
	switch drv := db.Driver().(type) {
	case *sqlite.Driver:
		return SQLite
	case pgDriver:
		return Postgres
	default:
		panic(fmt.Sprintf("store: no dialect for database driver %T", drv))
	}
}

// params are the settings of every connection Open makes, in the URI that
// opens the file: the ones the ledger rules depend on (SPEC §6, STYLE 2)
// and the ones measured to make an import faster.
func (d Dialect) params() url.Values {
	q := url.Values{}
	// SQLite's own wait for a lock is short: Begin does the waiting, with
	// tries close enough together to find the lock free between two batches
	// of a busy run.
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", lockTry.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "journal_mode(WAL)")
	// Under WAL, NORMAL syncs at checkpoints, not at every commit: a crash
	// of the process (SIGKILL) loses nothing committed; a power cut may
	// lose the last committed batches, never consistency — a batch's rows,
	// slots and checkpoint commit together, so what survives agrees (R12).
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", fmt.Sprintf("cache_size(%d)", -CacheKiB))
	// The savepoint around each chunk of claims and rows journals the pages
	// it changes: in memory, not in a temporary file.
	q.Add("_pragma", "temp_store(MEMORY)")
	// Copy the WAL into the database every 64 MiB rather than every 4 MiB:
	// a page written by many batches is copied once (5% of an import).
	q.Add("_pragma", "wal_autocheckpoint(16384)")
	// Every transaction takes the write lock as it begins (BEGIN
	// IMMEDIATE), so that Begin is where a writer waits for another.
	q.Set("_txlock", "immediate")
	return q
}

// schemaDir is the folder of the dialect's numbered schema files.
func (d Dialect) schemaDir() string { return path.Join("schema", string(d)) }

// queryer is a *sql.DB or a *sql.Tx.
type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

const userVersionSQL = `PRAGMA user_version`

// PostgreSQL has no user_version: the schema's version is the one row of
// a table of crmimport's own (in the search path's first schema), and 0
// while that table is not there.
const pgSetVersionSQL = `CREATE TABLE IF NOT EXISTS crmimport_schema_version (version integer NOT NULL);
DELETE FROM crmimport_schema_version;`

// schemaVersion reads the version of the database's schema.
func (d Dialect) schemaVersion(ctx context.Context, q queryer) (int, error) {
	var v int
	if d == Postgres {
		var there bool
		if err := q.QueryRowContext(ctx, `SELECT to_regclass('crmimport_schema_version') IS NOT NULL`).Scan(&there); err != nil || !there {
			return 0, err
		}
		err := q.QueryRowContext(ctx, `SELECT version FROM crmimport_schema_version`).Scan(&v)
		return v, err
	}
	err := q.QueryRowContext(ctx, userVersionSQL).Scan(&v)
	return v, err
}

// setSchemaVersion records the schema's version in tx, the transaction of
// the step that brings it there.
func (d Dialect) setSchemaVersion(ctx context.Context, tx *sql.Tx, v int) error {
	if d == Postgres {
		if _, err := tx.ExecContext(ctx, pgSetVersionSQL); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO crmimport_schema_version (version) VALUES (?)`, v)
		return err
	}
	// PRAGMA takes no parameters; the version is our own number.
	_, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v))
	return err
}

const (
	foreignKeysOffSQL = `PRAGMA foreign_keys = OFF`
	foreignKeysOnSQL  = `PRAGMA foreign_keys = ON`
)

// foreignKeysOff turns foreign keys off on conn until on is called, for a
// schema step that rebuilds a table others refer to. PRAGMA foreign_keys
// is a no-op inside a transaction: it is set before the step's
// transaction begins and restored after it ends.
func (d Dialect) foreignKeysOff(ctx context.Context, conn *sql.Conn) (on func() error, err error) {
	if _, err := conn.ExecContext(ctx, foreignKeysOffSQL); err != nil {
		return nil, err
	}
	return func() error {
		_, err := conn.ExecContext(context.WithoutCancel(ctx), foreignKeysOnSQL)
		return err
	}, nil
}

const foreignKeyCheckSQL = `PRAGMA foreign_key_check`

// foreignKeysHold fails when a row refers to a row that is not there: what
// a step with foreign keys off checks before it commits.
func (d Dialect) foreignKeysHold(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, foreignKeyCheckSQL)
	if err != nil {
		return err
	}
	defer rows.Close()
	if rows.Next() {
		var table, parent string
		var rowid sql.NullInt64
		var fk int
		if err := rows.Scan(&table, &rowid, &parent, &fk); err != nil {
			return err
		}
		return fmt.Errorf("row %d of %s refers to a row of %s that is not there", rowid.Int64, table, parent)
	}
	return rows.Err()
}

const copyIntoSQL = `VACUUM INTO ?`

// copyInto writes a consistent copy of db's database to dest, a new file,
// without writing to db's.
func (d Dialect) copyInto(ctx context.Context, db *sql.DB, dest string) error {
	_, err := db.ExecContext(ctx, copyIntoSQL, dest)
	return err
}

// spillTempSQL and keepTempSQL: where the connection keeps temporary tables
// and the sorts of large statements. Open keeps them in memory (a batch's
// savepoint journal is small and hot).
const (
	spillTempSQL = `PRAGMA temp_store = FILE`
	keepTempSQL  = `PRAGMA temp_store = MEMORY`
)

// SpillTemp moves the connection's temporary tables and sorts to a
// temporary file, which SQLite deletes when it closes it, until restore is
// called: for work whose temporary data grows with its input (`ledger
// load` stages a dump of any size), so that memory does not. Call it
// outside a transaction; the pool's one connection (Open) keeps the
// setting for the transactions begun meanwhile.
func (d Dialect) SpillTemp(ctx context.Context, db *sql.DB) (restore func() error, err error) {
	if d == Postgres {
		// The server keeps a session's temporary tables in its own
		// buffers (temp_buffers) and writes them out beyond that.
		return func() error { return nil }, nil
	}
	if _, err := db.ExecContext(ctx, spillTempSQL); err != nil {
		return nil, fmt.Errorf("temporary storage in a file: %w", err)
	}
	return func() error {
		if _, err := db.ExecContext(context.WithoutCancel(ctx), keepTempSQL); err != nil {
			return fmt.Errorf("temporary storage back in memory: %w", err)
		}
		return nil
	}, nil
}

const databaseListSQL = `PRAGMA database_list`

// File is the path of the file that db has open as its main database: ""
// for a database in memory.
func (d Dialect) File(ctx context.Context, db *sql.DB) (string, error) {
	if d == Postgres {
		return "", nil // a server's database is no file
	}
	rows, err := db.QueryContext(ctx, databaseListSQL)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	for rows.Next() {
		var seq int
		var name, file string
		if err := rows.Scan(&seq, &name, &file); err != nil {
			return "", err
		}
		if name == "main" {
			return file, nil
		}
	}
	return "", rows.Err()
}

const (
	pageCountSQL = `PRAGMA page_count`
	pageSizeSQL  = `PRAGMA page_size`
	// noPageLimitSQL is SQLite's own limit, the largest it knows.
	noPageLimitSQL = `PRAGMA max_page_count = 4294967294`
)

// StopGrowth holds the database at the size it has until grow is called,
// so that a write that needs more room fails in tx as it would on a full
// disk: the "full" failpoint (SPEC §8). page is how many bytes a page of
// the file holds; a write of a few pages does not fit.
func (d Dialect) StopGrowth(ctx context.Context, tx *sql.Tx) (page int64, grow func() error, err error) {
	var pages int64
	if err := tx.QueryRowContext(ctx, pageCountSQL).Scan(&pages); err != nil {
		return 0, nil, err
	}
	if err := tx.QueryRowContext(ctx, pageSizeSQL).Scan(&page); err != nil {
		return 0, nil, err
	}
	// PRAGMA takes no parameters; the numbers are SQLite's own.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA max_page_count = %d`, pages)); err != nil {
		return 0, nil, err
	}
	return page, func() error {
		_, err := tx.ExecContext(ctx, noPageLimitSQL)
		return err
	}, nil
}

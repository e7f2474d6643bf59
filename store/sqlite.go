package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// What only SQLite has: the settings of a connection to a file, its
// schema's version (PRAGMA user_version), foreign keys off for a schema
// step, a consistent copy (VACUUM INTO), temporary data in a file, the
// file a handle has open, a file held at its size (the "full" failpoint)
// and its drivers' result codes.

// sqliteParams are the settings of every connection Open makes, in the
// URI that opens the file: the ones the ledger rules depend on (SPEC §6,
// STYLE 2) and the ones measured to make an import faster.
func sqliteParams() url.Values {
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
	// Temporary data in files, SQLite's own default. The multi-row
	// statements of a batch, and the savepoint around each chunk of claims
	// and rows, journal the pages they change first — the statements
	// nearly all of them: at the seed's scale 378,000 pages without the
	// savepoint, 384,000 with it, 330,000 of them by the target rows'
	// inserts. SQLite opens a statement journal for a multi-row statement
	// that may stop halfway, and these may three ways: they give each row
	// its id (the rowid's type is checked), their foreign keys are
	// immediate, and NOT NULL and CHECK abort. Taking all three away and
	// the savepoint too (an experiment: foreign keys deferred, INSERT OR
	// FAIL, ids given by SQLite) left 48,000 pages and took a first run
	// from 11.2 s to 9.0 s. It is not done: deferred keys refuse a row
	// only at COMMIT, where the batch fails whole and no record can be
	// named (R4), and a failed chunk could no longer be taken back alone
	// (issue 28). In memory that journal was 1 KiB pieces, each allocated
	// and freed (modernc's allocator: 3.2 million page faults in a first
	// run at four times the seed's scale); in a file, it is buffered
	// 64 KiB at a time before the file. That run: peak RSS 267 -> 233 MiB,
	// and 158 -> 141 MiB at the seed's scale, in the same time within the
	// noise (issue 28). The temporary tables and sorts of
	// work that grows with its input (`ledger load`'s stage, a fix folder's
	// sorts) go to files too, so that memory does not grow with them.
	q.Add("_pragma", "temp_store(FILE)")
	// Copy the WAL into the database every 64 MiB rather than every 4 MiB:
	// a page written by many batches is copied once (5% of an import).
	q.Add("_pragma", "wal_autocheckpoint(16384)")
	// Every transaction takes the write lock as it begins (BEGIN
	// IMMEDIATE), so that Begin is where a writer waits for another.
	q.Set("_txlock", "immediate")
	return q
}

const userVersionSQL = `PRAGMA user_version`

// sqliteSchemaVersion reads the file's schema version (user_version).
func sqliteSchemaVersion(ctx context.Context, q queryer) (int, error) {
	var v int
	err := q.QueryRowContext(ctx, userVersionSQL).Scan(&v)
	return v, err
}

// sqliteSetSchemaVersion sets the file's user_version in tx.
func sqliteSetSchemaVersion(ctx context.Context, tx *sql.Tx, v int) error {
	// PRAGMA takes no parameters; the version is our own number.
	_, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v))
	return err
}

const (
	foreignKeysOffSQL = `PRAGMA foreign_keys = OFF`
	foreignKeysOnSQL  = `PRAGMA foreign_keys = ON`
)

// sqliteForeignKeysOff turns foreign keys off on conn until on is called.
// PRAGMA foreign_keys is a no-op inside a transaction: it is set before
// the step's transaction begins and restored after it ends.
func sqliteForeignKeysOff(ctx context.Context, conn *sql.Conn) (on func() error, err error) {
	if _, err := conn.ExecContext(ctx, foreignKeysOffSQL); err != nil {
		return nil, err
	}
	return func() error {
		_, err := conn.ExecContext(context.WithoutCancel(ctx), foreignKeysOnSQL)
		return err
	}, nil
}

const foreignKeyCheckSQL = `PRAGMA foreign_key_check`

// sqliteForeignKeysHold fails when a row refers to a row that is not
// there: what a step with foreign keys off checks before it commits.
func sqliteForeignKeysHold(ctx context.Context, tx *sql.Tx) error {
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

// sqliteCopyInto writes a consistent copy of db's database to dest, a new
// file, without writing to db's.
func sqliteCopyInto(ctx context.Context, db *sql.DB, dest string) error {
	_, err := db.ExecContext(ctx, copyIntoSQL, dest)
	return err
}

const databaseListSQL = `PRAGMA database_list`

// sqliteFile is File of a SQLite handle.
func sqliteFile(ctx context.Context, db *sql.DB) (string, error) {
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
	freelistSQL  = `PRAGMA freelist_count`
	// noPageLimitSQL is SQLite's own limit, the largest it knows.
	noPageLimitSQL = `PRAGMA max_page_count = 4294967294`
)

// StopGrowth holds the SQLite file that tx writes to at the size it has
// until grow is called, so that a write that needs more room fails in tx
// as it would on a full disk: the "full" failpoint (SPEC §8) on SQLite
// (a server's is DiskFull). page is how many bytes a page of the file
// holds, free how many pages the file has free (what rows deleted left):
// a write of free pages and a few more does not fit.
func StopGrowth(ctx context.Context, tx *sql.Tx) (page, free int64, grow func() error, err error) {
	var pages int64
	if err := tx.QueryRowContext(ctx, pageCountSQL).Scan(&pages); err != nil {
		return 0, 0, nil, err
	}
	if err := tx.QueryRowContext(ctx, freelistSQL).Scan(&free); err != nil {
		return 0, 0, nil, err
	}
	if err := tx.QueryRowContext(ctx, pageSizeSQL).Scan(&page); err != nil {
		return 0, 0, nil, err
	}
	// PRAGMA takes no parameters; the numbers are SQLite's own.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA max_page_count = %d`, pages)); err != nil {
		return 0, 0, nil, err
	}
	return page, free, func() error {
		_, err := tx.ExecContext(ctx, noPageLimitSQL)
		return err
	}, nil
}

// sqliteIsConstraint: a *sqlite.Error of result code SQLITE_CONSTRAINT.
func sqliteIsConstraint(err error) bool { return primaryCode(err) == sqlite3.SQLITE_CONSTRAINT }

// sqliteIsUnique: SQLite's UNIQUE or PRIMARY KEY constraint failure.
func sqliteIsUnique(err error) bool {
	c := extendedCode(err)
	return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

// sqliteIsPrimaryKey: SQLite's PRIMARY KEY constraint failure.
func sqliteIsPrimaryKey(err error) bool {
	return extendedCode(err) == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

// sqliteIsBusy: SQLite giving up on a lock held by another connection.
func sqliteIsBusy(err error) bool {
	c := primaryCode(err)
	return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
}

func extendedCode(err error) int {
	var e *sqlite.Error
	if errors.As(err, &e) {
		return e.Code()
	}
	return 0
}

func primaryCode(err error) int {
	return extendedCode(err) & 0xff
}

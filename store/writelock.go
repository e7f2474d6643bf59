package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The write lock on PostgreSQL. Every write transaction takes it first
// (beginPostgres), and the work that makes or upgrades a schema takes it
// for its session (sessionWriteLock): the engine's writes are written for
// one writer at a time, as SQLite's BEGIN IMMEDIATE gives them on a file.
//
// One schema is one ledger, as one file is (two addresses with different
// search paths are two ledgers), so the lock is the schema's: writers of
// two schemas of one database never wait for each other. They did, on one
// lock for the whole database, for as long as the other's batch or load
// lasted and without a word (issue 23 item 22), and a dry run's batches on
// its copy held up the runs on the original. A writer that waits for its
// schema's lock for LockNotice says whose lock it waits for (WithNotice).

// PostgreSQL's advisory locks are keyed by one bigint or by two integers,
// two spaces that never meet.
const (
	// schemaLockClass is the first key of a schema's write lock ("crmw"
	// in ASCII); the second is hashtext(schema), the server's own hash of
	// the schema's name.
	schemaLockClass = 0x63726d77
	// databaseLock is the one lock of a whole database that crmimport
	// took before issue 23 ("crmimport" in ASCII, cut to 63 bits). A
	// writer takes it shared before its schema's, so that a crmimport of
	// before, which takes it alone and exclusively, still takes turns with
	// this one on a schema they share (a team's machines upgraded one by
	// one), while writers of this one never wait for each other on it.
	databaseLock = 0x63726d696d706f72
)

// LockNotice is how long a writer waits for the write lock before it says
// whose lock it waits for: many batches long.
const LockNotice = 2 * time.Second

// tryXactLockSQL takes the write lock of schema ?3 (the session's current
// schema when it is empty) for the transaction, if it is free, without
// waiting: the database lock shared, then the schema's (CASE evaluates in
// order: the schema's is never taken without the other). It answers the
// schema — NULL when it is not there — and true (both taken), false (the
// schema's is another writer's) or NULL (the database lock is a crmimport
// of before's).
const tryXactLockSQL = `SELECT s, CASE WHEN pg_try_advisory_xact_lock_shared(?1) THEN pg_try_advisory_xact_lock(?2, hashtext(s)) END
FROM (SELECT coalesce(nullif(?3, ''), current_schema()) AS s) q`

// trySessionLockSQL is tryXactLockSQL for the session: the locks stay
// with it after the transaction ends, until unlocked.
const trySessionLockSQL = `SELECT s, CASE WHEN pg_try_advisory_lock_shared(?1) THEN pg_try_advisory_lock(?2, hashtext(s)) END
FROM (SELECT coalesce(nullif(?3, ''), current_schema()) AS s) q`

// Waiting for one lock: the database's (shared), or the schema's.
const (
	xactDatabaseLockSQL    = `SELECT pg_advisory_xact_lock_shared(?)`
	xactSchemaLockSQL      = `SELECT pg_advisory_xact_lock(?, hashtext(?))`
	sessionDatabaseLockSQL = `SELECT pg_advisory_lock_shared(?)`
	sessionSchemaLockSQL   = `SELECT pg_advisory_lock(?, hashtext(?))`
)

// sessionUnlockSQL lets go of the session's write lock: both locks, each
// of which must have been held.
const sessionUnlockSQL = `SELECT pg_advisory_unlock(?1, hashtext(?2)), pg_advisory_unlock_shared(?3)`

// beginPostgres begins a transaction that holds the write lock of its
// schema, waiting for it (PostgreSQL queues the waiters) for as long as
// ctx lets it.
func beginPostgres(ctx context.Context, db beginner) (*sql.Tx, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	if _, err := takeWriteLock(ctx, tx, "", false); err != nil {
		tx.Rollback()
		return nil, fmt.Errorf("begin: take the write lock: %w", err)
	}
	return tx, nil
}

// sessionWriteLock takes the write lock of schema ("" for the session's
// current schema) for conn's session, until unlock: for the work whose
// transactions must begin once the lock is theirs (a schema made or
// upgraded), since a transaction reads the catalog as it stood when it
// began. A transaction of the session that takes the lock again
// (beginPostgres) has it at once.
//
// unlock says whether the server let go of it. A session whose lock could
// not be taken whole or let go of is not given back to the pool, whose
// later writers would all wait on it: its connection is closed, and the
// lock goes with it.
func sessionWriteLock(ctx context.Context, conn *sql.Conn, schema string) (unlock func() error, err error) {
	discard := func(err error) error {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn }) // closed, never pooled again
		return fmt.Errorf("take the write lock: %w", err)
	}
	// In a transaction of its own, so that the wait can be timed in a
	// savepoint (waitLock); session locks outlive it.
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("take the write lock: %w", err)
	}
	defer tx.Rollback()
	if schema, err = takeWriteLock(ctx, tx, schema, true); err != nil {
		return nil, discard(err)
	}
	if err := tx.Commit(); err != nil {
		return nil, discard(err)
	}
	return func() error {
		var mine, shared bool
		err := conn.QueryRowContext(context.WithoutCancel(ctx), sessionUnlockSQL, int64(schemaLockClass), schema, int64(databaseLock)).Scan(&mine, &shared)
		if err == nil && !(mine && shared) {
			err = errors.New("the server held no such lock for the session")
		}
		if err != nil {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn }) // closed, never pooled again
			return fmt.Errorf("let go of the write lock: %w (its connection is closed)", err)
		}
		return nil
	}, nil
}

// takeWriteLock takes the write lock of schema ("": the session's current
// schema) in tx, for the transaction or for its session, and returns the
// schema's name. It waits as long as ctx lets it: for the database lock
// when a crmimport of before holds it, then for the schema's.
func takeWriteLock(ctx context.Context, tx *sql.Tx, schema string, session bool) (string, error) {
	try, dbLock, schemaLock := tryXactLockSQL, xactDatabaseLockSQL, xactSchemaLockSQL
	if session {
		try, dbLock, schemaLock = trySessionLockSQL, sessionDatabaseLockSQL, sessionSchemaLockSQL
	}
	var name sql.NullString
	var got sql.NullBool
	if err := tx.QueryRowContext(ctx, try, int64(databaseLock), int64(schemaLockClass), schema).Scan(&name, &got); err != nil {
		return "", err
	}
	if !name.Valid {
		return "", errors.New("the address's schema is not there (dropped since it was opened?)")
	}
	schema = name.String
	if got.Valid && got.Bool {
		return schema, nil
	}
	if !got.Valid {
		if err := waitLock(ctx, tx, schema, true, dbLock, int64(databaseLock)); err != nil {
			return "", err
		}
	}
	return schema, waitLock(ctx, tx, schema, false, schemaLock, int64(schemaLockClass), schema)
}

// waitLock runs stmt, which waits for one lock, in tx. When ctx carries a
// notice (WithNotice), it first waits LockNotice at most, then tells whose
// lock it waits for, and waits on.
func waitLock(ctx context.Context, tx *sql.Tx, schema string, database bool, stmt string, args ...any) error {
	if notice := noticeOf(ctx); notice != nil {
		got, err := lockWithin(ctx, tx, LockNotice, stmt, args...)
		if err != nil || got {
			return err
		}
		msg, err := lockHolders(ctx, tx, schema, database)
		if err != nil {
			return err
		}
		if msg != "" { // "" when its holder let go of it meanwhile
			notice(msg)
		}
	}
	_, err := tx.ExecContext(ctx, stmt, args...)
	return err
}

// Waiting for a lock a while at most: the server's lock_timeout, set for
// the transaction in a savepoint, so that a wait that times out (SQLSTATE
// 55P03) is rolled back to it, with the setting, and tx goes on.
const (
	lockTimeoutSQL     = `SELECT current_setting('lock_timeout')`
	setLockTimeoutSQL  = `SELECT set_config('lock_timeout', ?, true)`
	lockSavepointSQL   = `SAVEPOINT crmimport_lock`
	lockRollbackSQL    = `ROLLBACK TO SAVEPOINT crmimport_lock`
	lockReleaseSQL     = `RELEASE SAVEPOINT crmimport_lock`
	lockNotAvailable   = "55P03"
	lockTimeoutSetting = "%dms"
)

// lockWithin runs stmt, which waits for a lock, in tx, waiting d at most:
// got is false when the wait timed out, and tx goes on.
func lockWithin(ctx context.Context, tx *sql.Tx, d time.Duration, stmt string, args ...any) (got bool, err error) {
	var was string
	if err := tx.QueryRowContext(ctx, lockTimeoutSQL).Scan(&was); err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, lockSavepointSQL); err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, setLockTimeoutSQL, fmt.Sprintf(lockTimeoutSetting, d.Milliseconds())); err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, stmt, args...); err != nil {
		if pgCode(err) != lockNotAvailable {
			return false, err
		}
		if _, err := tx.ExecContext(ctx, lockRollbackSQL); err != nil {
			return false, err
		}
		_, err := tx.ExecContext(ctx, lockReleaseSQL)
		return false, err
	}
	if _, err := tx.ExecContext(ctx, lockReleaseSQL); err != nil {
		return false, err
	}
	_, err = tx.ExecContext(ctx, setLockTimeoutSQL, was)
	return err == nil, err
}

// lockHoldersSQL: the server processes that hold a lock a writer waits
// for, with what the server knows of them: the name of their application
// (crmimport's says whose pid on which host: pgAddress), where they
// connect from, and for how long their transaction has run (-1 outside
// one: a lock held for a session).
const lockHoldersSQL = `
SELECT l.pid, coalesce(a.application_name, ''), coalesce(host(a.client_addr), ''),
       coalesce(floor(extract(epoch FROM clock_timestamp() - a.xact_start))::bigint, -1)
FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.locktype = 'advisory' AND l.granted AND l.pid <> pg_backend_pid()
  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`

// schemaLockHoldersSQL: those of the schema ?2's write lock.
const schemaLockHoldersSQL = lockHoldersSQL + `
  AND l.classid = (?1::int4)::oid AND l.objid = hashtext(?2)::oid AND l.objsubid = 2
ORDER BY l.pid`

// databaseLockHoldersSQL: the crmimports of before that hold the database
// lock (exclusively: the shared holders are of this one, and never in the
// way of another).
const databaseLockHoldersSQL = lockHoldersSQL + `
  AND l.classid = (?1::int4)::oid AND l.objid = (?2::int4)::oid AND l.objsubid = 1 AND l.mode = 'ExclusiveLock'
ORDER BY l.pid`

// lockHolders says whose lock a writer waits for ("" when no one holds it
// any more): the schema's write lock, or the database lock (database).
func lockHolders(ctx context.Context, tx *sql.Tx, schema string, database bool) (string, error) {
	stmt, args := schemaLockHoldersSQL, []any{int64(schemaLockClass), schema}
	what := "the write lock of schema " + schema
	if database {
		stmt, args = databaseLockHoldersSQL, []any{int64(databaseLock >> 32), int64(databaseLock & 0xffffffff)}
		what = "the write lock of the whole database that a crmimport older than this one takes for the writes to schema " + schema
	}
	rows, err := tx.QueryContext(ctx, stmt, args...)
	if err != nil {
		return "", fmt.Errorf("who holds %s: %w", what, err)
	}
	defer rows.Close()
	var holders, pids []string
	for rows.Next() {
		var pid, secs int64
		var app, from string
		if err := rows.Scan(&pid, &app, &from, &secs); err != nil {
			return "", err
		}
		var about []string
		if app != "" {
			about = append(about, app)
		}
		if from != "" {
			about = append(about, "from "+from)
		}
		if secs >= 0 {
			about = append(about, fmt.Sprintf("in a transaction for %s", time.Duration(secs)*time.Second))
		} else {
			about = append(about, "for its session, outside a transaction")
		}
		holders = append(holders, fmt.Sprintf("server process %d (%s)", pid, strings.Join(about, ", ")))
		pids = append(pids, fmt.Sprint(pid))
	}
	if err := rows.Err(); err != nil || len(holders) == 0 {
		return "", err
	}
	return fmt.Sprintf("waiting for %s, held by %s: this write goes on when it is let go of (SELECT * FROM pg_stat_activity WHERE pid IN (%s) shows its holder)",
		what, strings.Join(holders, ", "), strings.Join(pids, ", ")), nil
}

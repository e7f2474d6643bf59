package store

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"time"
)

// Begin starts a write transaction on db, in db's dialect (Dialect.Begin).
// Every write of crmimport begins here.
func Begin(ctx context.Context, db *sql.DB) (*sql.Tx, error) {
	return DialectOf(db).Begin(ctx, db)
}

// Begin starts a write transaction that takes the write lock at once (on
// SQLite BEGIN IMMEDIATE, a setting of every connection Open makes). When
// another process holds the lock, Begin tries again every millisecond or
// so, for as long as BusyTimeout: SQLite's own busy handler sleeps up to
// 100 ms between tries, and a waiter that sleeps that long rarely meets the
// moment between a busy run's batches (see BatchPause) — it could wait for
// a whole run, or give up with "database is locked".
func (d Dialect) Begin(ctx context.Context, db beginner) (*sql.Tx, error) {
	switch d {
	case SQLite:
		return beginSQLite(ctx, db)
	case Postgres:
		return beginPostgres(ctx, db)
	default:
		panic(d.Untaught("store.Dialect.Begin"))
	}
}

// beginSQLite is Begin on a file.
func beginSQLite(ctx context.Context, db beginner) (*sql.Tx, error) {
	deadline := time.Now().Add(BusyTimeout)
	for {
		tx, err := db.BeginTx(ctx, nil)
		if err == nil || !sqliteIsBusy(err) || time.Now().After(deadline) {
			if err != nil {
				return nil, fmt.Errorf("begin: %w", err)
			}
			return tx, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(500+rand.IntN(1000)) * time.Microsecond):
		}
	}
}

// beginner is a *sql.DB, or one of its connections (*sql.Conn) where a
// setting of the connection must hold for the transaction.
type beginner interface {
	BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error)
}

// BatchPause is how long a run leaves the write lock free after each batch
// commits, so that another process waiting in Begin (a second tenant's run,
// stop, resume) gets its turn: a few milliseconds against a batch of a few
// hundred.
const BatchPause = 2 * time.Millisecond

// Try runs f inside a savepoint of tx and, when f fails, takes its writes
// back to the savepoint, so that tx goes on: PostgreSQL refuses every
// later statement of a transaction in which one statement failed, where
// SQLite goes on. A statement that may be refused (a unique index, as the
// admission index refuses a second live run) and after which the
// transaction reads or writes more goes through Try.
func Try(ctx context.Context, tx *sql.Tx, f func() error) error {
	if _, err := tx.ExecContext(ctx, `SAVEPOINT crmimport_try`); err != nil {
		return err
	}
	if err := f(); err != nil {
		if _, rerr := tx.ExecContext(ctx, `ROLLBACK TO SAVEPOINT crmimport_try`); rerr != nil {
			return fmt.Errorf("%w (and its savepoint could not be rolled back to: %v)", err, rerr)
		}
		if _, rerr := tx.ExecContext(ctx, `RELEASE SAVEPOINT crmimport_try`); rerr != nil {
			return fmt.Errorf("%w (and its savepoint could not be released: %v)", err, rerr)
		}
		return err
	}
	_, err := tx.ExecContext(ctx, `RELEASE SAVEPOINT crmimport_try`)
	return err
}

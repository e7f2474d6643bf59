package store

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"time"
)

// Begin starts a write transaction (BEGIN IMMEDIATE: it takes the write
// lock at once). When another process holds the lock, Begin tries again
// every millisecond or so, for as long as BusyTimeout: SQLite's own busy
// handler sleeps up to 100 ms between tries, and a waiter that sleeps that
// long rarely meets the moment between a busy run's batches (see
// BatchPause) — it could wait for a whole run, or give up with "database is
// locked". Every write of crmimport begins here.
func Begin(ctx context.Context, db beginner) (*sql.Tx, error) {
	deadline := time.Now().Add(BusyTimeout)
	for {
		tx, err := db.BeginTx(ctx, nil)
		if err == nil || !IsBusy(err) || time.Now().After(deadline) {
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
func SpillTemp(ctx context.Context, db *sql.DB) (restore func() error, err error) {
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

package store

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// Kept are the statements a run prepares, kept from one batch transaction
// to the next. A batch's writers prepared each of theirs in the batch's
// transaction, and the transaction's end let them go: a run at scale 1
// (61 batches) spent 0.43 s of its writer's CPU preparing the same few
// dozen statements again, a claim's with its triggers the dearest.
//
// A statement is prepared in a transaction the first time (Prepare), and
// again outside any, once, after that transaction commits (Keep): later
// transactions take the kept one (sql.Tx.StmtContext), which on the same
// connection is the same prepared statement, not a new one. Keep runs
// between two transactions only: on SQLite the pool is one connection,
// which the open transaction holds. nil Kept keeps nothing.
type Kept struct {
	db    *sql.DB
	mu    sync.Mutex
	kept  map[string]*sql.Stmt
	fresh map[string]bool // prepared in a transaction since the last Keep
}

// NewKept keeps the statements of db's transactions.
func NewKept(db *sql.DB) *Kept {
	return &Kept{db: db, kept: map[string]*sql.Stmt{}, fresh: map[string]bool{}}
}

// Prepare is query prepared for tx: the kept statement, or one prepared
// in tx, to be kept at the next Keep.
func (k *Kept) Prepare(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	if k == nil {
		return tx.PrepareContext(ctx, query)
	}
	k.mu.Lock()
	st := k.kept[query]
	if st == nil {
		k.fresh[query] = true
	}
	k.mu.Unlock()
	if st != nil {
		return tx.StmtContext(ctx, st), nil
	}
	return tx.PrepareContext(ctx, query)
}

// Keep prepares, outside any transaction, the statements prepared in
// transactions since it last ran. The caller holds no transaction of db.
// A statement it cannot prepare is left to be prepared in each
// transaction, as without Kept: keeping is a saving, never a condition.
func (k *Kept) Keep(ctx context.Context) {
	if k == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for q := range k.fresh {
		delete(k.fresh, q)
		if k.kept[q] != nil {
			continue
		}
		if st, err := k.db.PrepareContext(ctx, q); err == nil {
			k.kept[q] = st
		}
	}
}

// Close lets go of the kept statements.
func (k *Kept) Close() error {
	if k == nil {
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	var errs []error
	for q, st := range k.kept {
		errs = append(errs, st.Close())
		delete(k.kept, q)
	}
	clear(k.fresh)
	return errors.Join(errs...)
}

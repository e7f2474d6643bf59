package store

import (
	"context"
	"database/sql"
	"fmt"
)

// Ids of the target tables and of the ledger's slots are given out by an
// allocator per table (the table id_allocators: SQLite's schema 5,
// PostgreSQL's first; advanceSQL is each engine's spelling of moving one
// on), never as max(id) + 1: an id is never given
// again once its row is deleted (R16, undo), and `ledger load` moves the
// allocators past the ids it loads (AdvanceIDs). What must hold on every
// dialect is pinned by TestIDsAreNeverGivenTwice.

// IDs gives out the ids of one table inside a write transaction, in
// order, from where its allocator stands.
type IDs struct {
	d    Dialect
	tx   *sql.Tx
	name string
	next int64
	save *sql.Stmt // AdvanceIDs's statement, prepared on the first Save
}

const takeIDsSQL = `SELECT next FROM id_allocators WHERE name = ?`

// TakeIDs reads the allocator of table name in tx, a write transaction (on
// SQLite it holds the write lock, so that no other writer gives out ids
// meanwhile). Save writes back how far ids were given out.
func (d Dialect) TakeIDs(ctx context.Context, tx *sql.Tx, name string) (*IDs, error) {
	a := &IDs{d: d, tx: tx, name: name}
	if err := tx.QueryRowContext(ctx, takeIDsSQL, name).Scan(&a.next); err != nil {
		return nil, fmt.Errorf("ids of %s: %w", name, err)
	}
	return a, nil
}

// Next gives out the next id.
func (a *IDs) Next() int64 {
	id := a.next
	a.next++
	return id
}

// Mark is where the next id stands; Reset gives out ids from a mark again
// (a chunk taken back before it committed).
func (a *IDs) Mark() int64 { return a.next }

// Reset gives out ids from mark again.
func (a *IDs) Reset(mark int64) { a.next = mark }

// Save writes back how far ids were given out. It only ever moves the
// allocator forward: after a savepoint took a write of it back, the ids
// given out since are still not given again.
//
// The ledger saves after every claim (a savepoint may take the claim back
// with its save): the statement is prepared once per IDs, not each time.
func (a *IDs) Save(ctx context.Context) error {
	if a.save == nil {
		st, err := a.tx.PrepareContext(ctx, a.d.advanceSQL())
		if err != nil {
			return fmt.Errorf("ids of %s: %w", a.name, err)
		}
		a.save = st // closed with the transaction
	}
	res, err := a.save.ExecContext(ctx, a.next-1, a.name)
	return advanced(a.name, res, err)
}

const advanceIDsSQL = `UPDATE id_allocators SET next = max(next, ? + 1) WHERE name = ?`

// pgAdvanceIDsSQL is advanceIDsSQL in PostgreSQL's spelling: its max of
// two values is greatest, and the parameter is typed.
const pgAdvanceIDsSQL = `UPDATE id_allocators SET next = greatest(next, CAST(? AS bigint) + 1) WHERE name = ?`

// advanceSQL is d's advanceIDsSQL.
func (d Dialect) advanceSQL() string {
	switch d {
	case SQLite:
		return advanceIDsSQL
	case Postgres:
		return pgAdvanceIDsSQL
	default:
		panic(d.Untaught("store.Dialect.advanceSQL"))
	}
}

// AdvanceIDs makes the allocator of table name give out ids past id only.
func (d Dialect) AdvanceIDs(ctx context.Context, tx *sql.Tx, name string, id int64) error {
	res, err := tx.ExecContext(ctx, d.advanceSQL(), id, name)
	return advanced(name, res, err)
}

// advanced checks that advanceIDsSQL changed the allocator of name.
func advanced(name string, res sql.Result, err error) error {
	if err != nil {
		return fmt.Errorf("ids of %s: %w", name, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("ids of %s: no allocator (%d rows changed, %v)", name, n, err)
	}
	return nil
}

// NextID is where the allocator of table name stands: the id it gives out
// next.
func (d Dialect) NextID(ctx context.Context, tx *sql.Tx, name string) (int64, error) {
	var next int64
	if err := tx.QueryRowContext(ctx, takeIDsSQL, name).Scan(&next); err != nil {
		return 0, fmt.Errorf("ids of %s: %w", name, err)
	}
	return next, nil
}

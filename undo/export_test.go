package undo

import (
	"context"
	"database/sql"
)

// InsertItems and InsertOwnItems write p's items as Start does: row by row
// from the plan, and in one statement from the ledger.
func InsertItems(ctx context.Context, tx *sql.Tx, undoID int64, p *Plan) error {
	return insertItems(ctx, tx, undoID, p)
}

func InsertOwnItems(ctx context.Context, tx *sql.Tx, undoID int64, p *Plan) error {
	return insertOwnItems(ctx, tx, undoID, p)
}

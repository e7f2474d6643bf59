package ledger

import (
	"context"
	"database/sql"
	"fmt"
)

// A writer that changes many final slots in one transaction (an undo's
// batch, R16; an import's chunk of updates, R17) holds the triggers that
// move the epoch once per slot (schema 9's epoch_hold) and moves it itself,
// once per source, before its commit (ReleaseEpoch): the epoch is only
// compared for equality (R2's same-input shortcut), so a step of one for
// the transaction means what a step per slot meant. No other connection
// ever sees the hold, and a transaction that does not commit leaves
// nothing of it.

const (
	holdEpochSQL    = `INSERT INTO epoch_hold (held) VALUES (1)`
	releaseEpochSQL = `DELETE FROM epoch_hold`
	// moveEpochSQL moves the epoch of a tenant and source as the triggers
	// do (schema 7): by one. The row's own n is named with its table, as
	// PostgreSQL finds a bare n ambiguous beside excluded.n.
	moveEpochSQL = `INSERT INTO ledger_epochs (tenant_id, source, n) VALUES (?, ?, 1)
ON CONFLICT (tenant_id, source) DO UPDATE SET n = ledger_epochs.n + 1`
)

// Execer runs a statement in a transaction.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// HoldEpoch makes the triggers that move the epoch stand aside in tx.
func HoldEpoch(ctx context.Context, tx Execer) error {
	if _, err := tx.ExecContext(ctx, holdEpochSQL); err != nil {
		return fmt.Errorf("hold the ledger's epoch: %w", err)
	}
	return nil
}

// ReleaseEpoch ends tx's hold on the epoch, and moves the epoch of tenant
// and each of sources once.
func ReleaseEpoch(ctx context.Context, tx Execer, tenant string, sources ...string) error {
	res, err := tx.ExecContext(ctx, releaseEpochSQL)
	if err != nil {
		return fmt.Errorf("end the hold on the ledger's epoch: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("the hold on the ledger's epoch was not there to end (%d rows, %v)", n, err)
	}
	for _, s := range sources {
		if _, err := tx.ExecContext(ctx, moveEpochSQL, tenant, s); err != nil {
			return fmt.Errorf("move the ledger's epoch: %w", err)
		}
	}
	return nil
}

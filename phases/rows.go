package phases

import (
	"context"
	"database/sql"
	"fmt"
)

// RowsError is an UPDATE that changed another number of rows than it had
// to (R11): a write that reports success is not a write that happened.
type RowsError struct {
	Stmt string
	Want int64
	Got  int64
}

func (e *RowsError) Error() string {
	return fmt.Sprintf("%s changed %d rows, want %d", e.Stmt, e.Got, e.Want)
}

// expectRows runs an UPDATE (or DELETE) that moves a run or a task and
// checks that it changed exactly want rows. Every such statement goes
// through here; none ignores its count.
func expectRows(ctx context.Context, tx *sql.Tx, want int64, name, query string, args ...any) error {
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	got, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if got != want {
		return &RowsError{Stmt: name, Want: want, Got: got}
	}
	return nil
}

package phases

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/ledger"
	"crmimport/store/storetest"
)

// TestBarrier: R7, one case per rule of the barrier.
func TestBarrier(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		current  int
		fenceAt  int // the phase the database holds, when someone else moved it
		tasks    []taskState
		want     barrierVerdict
		wantRows bool
		after    int // current_phase afterwards
	}{
		{name: "ARunningTaskKeepsPhase2Open", current: 2,
			tasks: []taskState{{ledger.Company, TaskSucceeded, 0}, {ledger.Contact, TaskRunning, 0}, {ledger.Deal, TaskPending, 0}},
			want:  barrierVerdict{Open: true}, after: 2},
		{name: "APendingTaskKeepsPhase5Open", current: 5,
			tasks: []taskState{{ledger.Activity, TaskSucceeded, 0}, {ledger.Email, TaskPending, 0}},
			want:  barrierVerdict{Open: true}, after: 5},
		{name: "FailedTasksDoNotHoldTheBarrier", current: 2,
			tasks: []taskState{{ledger.Contact, TaskFailed, 0}, {ledger.Deal, TaskPending, 0}},
			want:  barrierVerdict{Failed: true}, after: 2},
		{name: "ClosedPhaseMovesToNext", current: 1,
			tasks: []taskState{{ledger.Company, TaskSucceeded, 0}, {ledger.Contact, TaskPending, 0}},
			want:  barrierVerdict{Moved: 2}, after: 2},
		{name: "NoTasksInPhase3GoTo4", current: 2,
			tasks: []taskState{{ledger.Contact, TaskSucceeded, 0}, {ledger.Note, TaskPending, 0}},
			want:  barrierVerdict{Moved: 4}, after: 4},
		{name: "LastPhaseClosed", current: 5,
			tasks: []taskState{{ledger.Note, TaskSucceeded, 0}, {ledger.Activity, TaskSucceeded, 0}, {ledger.Email, TaskCancelled, 0}},
			want:  barrierVerdict{Last: true}, after: 5},
		{name: "FenceLostIsRowsError", current: 1, fenceAt: 3,
			tasks:    []taskState{{ledger.Company, TaskSucceeded, 0}, {ledger.Contact, TaskPending, 0}},
			wantRows: true, after: 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			storetest.Run(t, func(t *testing.T, db *sql.DB) {
				at := c.current
				if c.fenceAt != 0 {
					at = c.fenceAt
				}
				id := seedRun(t, db, RunRunning, at, thisOwner(t, db), c.tasks...)
				tx, err := db.BeginTx(ctx, nil)
				require.NoError(t, err)
				defer tx.Rollback()
				v, err := checkBarrier(ctx, tx, id, c.current)
				if c.wantRows {
					var rows *RowsError
					require.ErrorAs(t, err, &rows, "R11: a fenced move that changes no row is an error")
					require.Equal(t, int64(0), rows.Got)
				} else {
					require.NoError(t, err)
					require.Equal(t, c.want, v)
				}
				require.NoError(t, tx.Commit())
				require.Equal(t, c.after, runOf(t, db, id).CurrentPhase)
			})
		})
	}
}

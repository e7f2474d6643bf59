package phases

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/ledger"
	"crmimport/store/storetest"
)

// TestProgressCommitsWithTheCheckpoint: R12, a task's progress is stored
// with its checkpoint in the batch's transaction: the size the work opened
// with (or the planned one), the bytes read, which never go back and are
// the size once the task succeeds; a batch that rolls back leaves the
// progress of the last one that committed, a resumed task starts from it,
// and its new attempt's start is noted with the checkpoint it starts from.
func TestProgressCommitsWithTheCheckpoint(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		e := newEngine(db)
		spec := fullPlan()
		spec.Tasks = spec.Tasks[slices.IndexFunc(spec.Tasks, func(t TaskSpec) bool { return t.Kind == ledger.Company }):][:1]
		spec.Tasks[0].Size = 900 // planned; the work opens with its own
		run, err := e.Plan(ctx, spec)
		require.NoError(t, err)
		require.Equal(t, int64(900), tasksOf(t, db, run.ID)[ledger.Company].Size, "the planned size, before any batch")

		var stored []string
		progress := func() string {
			tk := tasksOf(t, db, run.ID)[ledger.Company]
			return fmt.Sprintf("%d %d/%d", tk.Checkpoint.Rows, tk.Read, tk.Size)
		}
		open := func(size int64, reads []int64, failAt int) OpenFunc {
			return func(ctx context.Context, r Run, tk Task) (*Work, error) {
				rows, n := tk.Checkpoint.Rows, 0
				return &Work{Size: size, Close: func() error { return nil },
					Next: func(ctx context.Context, tx *sql.Tx) (Batch, error) {
						n++
						if n == failAt {
							return Batch{}, errors.New("cannot read")
						}
						return Batch{Checkpoint: Checkpoint{Rows: rows + int64(n)*10}, Read: reads[n-1],
							Done: n == len(reads), Committed: func() { stored = append(stored, progress()) }}, nil
					}}, nil
			}
		}
		// The reader reports 200 after 300: its count never goes back.
		run, err = e.Execute(ctx, run.ID, open(1000, []int64{300, 200, 700, 800, 900}, 4))
		require.NoError(t, err)
		require.Equal(t, RunFailed, run.Status)
		require.Equal(t, []string{"10 300/1000", "20 300/1000", "30 700/1000"}, stored)
		require.Equal(t, "30 700/1000", progress(), "the batch that rolled back left the last committed progress")
		tk := tasksOf(t, db, run.ID)[ledger.Company]
		require.NotNil(t, tk.Attempt.StartedAt)
		require.Equal(t, Attempt{StartedAt: tk.Attempt.StartedAt, Rows: 0, Bytes: 0}, tk.Attempt, "the first attempt began at the start")

		_, rearmed, err := e.Resume(ctx, run.ID, nil)
		require.NoError(t, err)
		require.Len(t, rearmed, 1)
		tk = tasksOf(t, db, run.ID)[ledger.Company]
		require.Nil(t, tk.Attempt.StartedAt, "re-armed: its attempt is over")
		require.Equal(t, int64(700), tk.Read, "R8: the progress is kept with the checkpoint")

		stored = nil
		var began Task
		e.OnTask = func(tk Task) { began = tk }
		run, err = e.Execute(ctx, run.ID, open(0, []int64{750, 760}, 0)) // a size unknown to the work: the task's stands
		require.NoError(t, err)
		require.Equal(t, RunSucceeded, run.Status)
		require.Equal(t, int64(700), began.Read, "the resumed task starts from its stored progress")
		require.NotNil(t, began.Attempt.StartedAt)
		require.Equal(t, int64(30), began.Attempt.Rows)
		require.Equal(t, int64(700), began.Attempt.Bytes)
		require.Equal(t, []string{"40 750/1000", "50 1000/1000"}, stored, "succeeded: read to its end")
	})
}

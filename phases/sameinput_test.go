package phases

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/ledger"
	"crmimport/store/storetest"
)

// sameInputRun plans and runs one companies task with input key "k"; its
// one batch reports counts and, if during is set, runs it in the batch's
// transaction first.
func sameInputRun(t *testing.T, e *Engine, counts Counts, during string) Run {
	t.Helper()
	ctx := context.Background()
	run, err := e.Plan(ctx, PlanSpec{Tenant: "acme", Source: "canonical", Options: map[string]any{},
		Tasks: []TaskSpec{{Kind: ledger.Company, Phase: Phase(ledger.Company), File: "companies.csv", InputKey: "k"}}})
	require.NoError(t, err)
	run, err = e.Execute(ctx, run.ID, func(ctx context.Context, run Run, task Task) (*Work, error) {
		return &Work{Next: func(ctx context.Context, tx *sql.Tx) (Batch, error) {
			if during != "" {
				if _, err := tx.ExecContext(ctx, during); err != nil {
					return Batch{}, err
				}
			}
			return Batch{Checkpoint: Checkpoint{Rows: 10, Line: 11}, Counts: counts, Done: true}, nil
		}, Close: func() error { return nil }}, nil
	})
	require.NoError(t, err)
	return run
}

// vouched plans a second run over the same input and tells whether a task
// vouches for it.
func vouched(t *testing.T, e *Engine) (SameInput, bool) {
	t.Helper()
	ctx := context.Background()
	run, err := e.Plan(ctx, PlanSpec{Tenant: "acme", Source: "canonical", Options: map[string]any{},
		Tasks: []TaskSpec{{Kind: ledger.Company, Phase: Phase(ledger.Company), File: "companies.csv", InputKey: "k"}}})
	require.NoError(t, err)
	tasks, err := LoadTasks(ctx, e.DB, run.ID)
	require.NoError(t, err)
	same, found, err := FindSameInput(ctx, e.DB, run, tasks[0])
	require.NoError(t, err)
	return same, found
}

const insertFinalSlot = `INSERT INTO migration_records (tenant_id, source, kind, source_id, id, record_id, action, created_at)
VALUES ('acme', 'canonical', 'company', 'c1', 1, 1, 'created', '2026-01-01T00:00:00Z')`

// A task vouches for its input only when it left every record final and
// no final slot went away from its beginning to now (sameinput.go).
func TestSameInputVouchesOnlyForWhatIsStillFinal(t *testing.T) {
	ctx := context.Background()
	all := Counts{Imported: 7, Matched: 2, Unchanged: 3}
	for _, c := range []struct {
		name         string
		counts       Counts
		during, then string // SQL in the task's batch; after the run
		want         bool
	}{
		{name: "all final", counts: all, want: true},
		{name: "a record skipped", counts: Counts{Imported: 9, Skipped: 1}},
		{name: "a record failed", counts: Counts{Imported: 9, Failed: 1}},
		{name: "a duplicate", counts: Counts{Imported: 9, Failed: 1, Duplicate: 1}},
		{name: "a skip taken over", counts: all, during: `UPDATE migration_records SET action = 'created' WHERE source_id = 'c1'`, want: true},
		{name: "a final slot deleted during the task", counts: all, during: `DELETE FROM migration_records WHERE source_id = 'c1'`},
		{name: "a final slot deleted after the task", counts: all, then: `DELETE FROM migration_records WHERE source_id = 'c1'`},
		{name: "a final slot changed after the task", counts: all, then: `UPDATE migration_records SET action = 'skipped' WHERE source_id = 'c1'`},
		{name: "a skipped slot deleted after the task", counts: all, then: `DELETE FROM migration_records WHERE source_id = 's1'`, want: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := storetest.OpenDB(t)
			e := newEngine(db)
			_, err := db.ExecContext(ctx, insertFinalSlot)
			require.NoError(t, err)
			_, err = db.ExecContext(ctx, `INSERT INTO migration_records (tenant_id, source, kind, source_id, id, action, reason, created_at)
				VALUES ('acme', 'canonical', 'company', 's1', 2, 'skipped', 'not linked to any record', '2026-01-01T00:00:00Z')`)
			require.NoError(t, err)
			if c.name == "a skip taken over" {
				_, err = db.ExecContext(ctx, `UPDATE migration_records SET action = 'skipped' WHERE source_id = 'c1'`)
				require.NoError(t, err)
			}
			first := sameInputRun(t, e, c.counts, c.during)
			if c.then != "" {
				_, err := db.ExecContext(ctx, c.then)
				require.NoError(t, err)
			}
			same, found := vouched(t, e)
			require.Equal(t, c.want, found)
			if c.want {
				tasks := tasksOf(t, db, first.ID)
				require.Equal(t, SameInput{Task: tasks[ledger.Company].ID, Run: first.ID, Records: 10,
					Checkpoint: Checkpoint{Rows: 10, Line: 11}}, same)
			}
		})
	}
}

// A task planned without an input key, or a key of another input, or
// another tenant's task, vouches for nothing.
func TestSameInputNeedsTheSameKeyTenantAndSource(t *testing.T) {
	ctx := context.Background()
	db := storetest.OpenDB(t)
	e := newEngine(db)
	sameInputRun(t, e, Counts{Imported: 10}, "")
	for _, c := range []struct {
		tenant, source, key string
		want                bool
	}{
		{"acme", "canonical", "k", true},
		{"acme", "canonical", "other", false},
		{"acme", "canonical", "", false},
		{"other", "canonical", "k", false},
		{"acme", "hubspot", "k", false},
	} {
		run, err := e.Plan(ctx, PlanSpec{Tenant: c.tenant, Source: c.source, Options: map[string]any{},
			Tasks: []TaskSpec{{Kind: ledger.Company, Phase: Phase(ledger.Company), File: "companies.csv", InputKey: c.key}}})
		require.NoError(t, err)
		tasks, err := LoadTasks(ctx, db, run.ID)
		require.NoError(t, err)
		_, found, err := FindSameInput(ctx, db, run, tasks[0])
		require.NoError(t, err)
		require.Equal(t, c.want, found, "%+v", c)
		_, err = db.ExecContext(ctx, `UPDATE migrations SET status = 'cancelled' WHERE id = ?`, run.ID)
		require.NoError(t, err)
	}
}

// A task resumed at a checkpoint keeps the epoch of its beginning: a final
// slot removed between its first batches and its resume is seen.
func TestSameInputSeesWhatWentAwayBeforeAResume(t *testing.T) {
	ctx := context.Background()
	db := storetest.OpenDB(t)
	e := newEngine(db)
	_, err := db.ExecContext(ctx, insertFinalSlot)
	require.NoError(t, err)
	run, err := e.Plan(ctx, PlanSpec{Tenant: "acme", Source: "canonical", Options: map[string]any{},
		Tasks: []TaskSpec{{Kind: ledger.Company, Phase: Phase(ledger.Company), File: "companies.csv", InputKey: "k"}}})
	require.NoError(t, err)
	failSecond := true
	open := func(ctx context.Context, run Run, task Task) (*Work, error) {
		rows := task.Checkpoint.Rows
		return &Work{Next: func(ctx context.Context, tx *sql.Tx) (Batch, error) {
			if rows == 10 && failSecond {
				return Batch{}, sql.ErrConnDone
			}
			rows += 10
			return Batch{Checkpoint: Checkpoint{Rows: rows, Line: rows + 1}, Counts: Counts{Imported: 10},
				Done: rows == 20, Committed: func() {}}, nil
		}, Close: func() error { return nil }}, nil
	}
	run, err = e.Execute(ctx, run.ID, open)
	require.NoError(t, err)
	require.Equal(t, RunPartial, run.Status, "batch 1 imported, batch 2 failed")
	_, err = db.ExecContext(ctx, `DELETE FROM migration_records WHERE source_id = 'c1'`)
	require.NoError(t, err)
	failSecond = false
	_, _, err = e.Resume(ctx, run.ID, nil)
	require.NoError(t, err)
	run, err = e.Execute(ctx, run.ID, open)
	require.NoError(t, err)
	require.Equal(t, RunSucceeded, run.Status)
	_, found := vouched(t, e)
	require.False(t, found, "a slot went away while the task was under way")
}

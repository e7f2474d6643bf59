package phases

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/ledger"
	"crmimport/store/storetest"
)

// seedLoaded is seedRun for a run loaded from a dump: no owner, no files,
// production's counters on its tasks.
func seedLoaded(t *testing.T, db *sql.DB, status RunStatus, current int, tasks ...taskState) int64 {
	t.Helper()
	id := seedRun(t, db, status, current, Owner{}, tasks...)
	_, err := db.Exec(`UPDATE migrations SET dump = '/dumps/prod', owner_host = NULL, owner_pid = NULL, owner_started = NULL,
		heartbeat_at = NULL, duration_ms = 1000, finished_at = started_at WHERE id = ?`, id)
	require.NoError(t, err)
	_, err = db.Exec(`UPDATE migration_tasks SET file = NULL, failed = 6 WHERE migration_id = ?`, id)
	require.NoError(t, err)
	return id
}

// planAll gives every unfinished task a local file named after its kind.
func planAll(ctx context.Context, run Run, unfinished []Task) (Replan, error) {
	p := Replan{Options: map[string]any{"input": "/local"}, Inputs: map[int64]TaskSpec{}}
	for _, t := range unfinished {
		p.Inputs[t.ID] = TaskSpec{File: "/local/" + t.Kind.Plural() + ".csv", Format: "csv", Encoding: "utf-8", Fingerprint: "fp-local"}
	}
	return p, nil
}

// TestResumeFromReplansAFalselyFinishedRun: the stranded retry of the
// write-up, loaded from a dump — succeeded at phase 5 while its contacts
// are pending in phase 2 — resumed over local files: the contacts task
// reads its new file from the start, the barrier is back at phase 2 (R8),
// and the run finishes there and on (R7, R9).
func TestResumeFromReplansAFalselyFinishedRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.OpenDB(t)
	e := newEngine(db)
	id := seedLoaded(t, db, RunSucceeded, 5,
		taskState{kind: ledger.Company, status: TaskSucceeded, rows: 4},
		taskState{kind: ledger.Contact, status: TaskPending, rows: 40},
		taskState{kind: ledger.Deal, status: TaskFailed})

	run, planned, err := e.ResumeFrom(ctx, id, planAll)
	require.NoError(t, err)
	require.Equal(t, RunRunning, run.Status)
	require.Equal(t, 2, run.CurrentPhase, "R8: the barrier rewinds to the earliest pending phase")
	require.Equal(t, e.Self, run.Owner)
	require.Nil(t, run.DurationMS)
	require.JSONEq(t, `{"input":"/local"}`, string(run.Options))
	require.Len(t, planned, 2)
	tasks := tasksOf(t, db, id)
	for _, k := range []ledger.Kind{ledger.Contact, ledger.Deal} {
		require.Equal(t, TaskPending, tasks[k].Status)
		require.Equal(t, "/local/"+k.Plural()+".csv", tasks[k].File)
		require.Equal(t, "fp-local", tasks[k].Fingerprint, "R10: the fingerprint of the file it reads now")
		require.Equal(t, Checkpoint{}, tasks[k].Checkpoint, "from the beginning")
		require.Equal(t, Counts{}, tasks[k].Counts, "its counters start over with it")
		require.Empty(t, tasks[k].LastError)
	}
	require.Equal(t, "", tasks[ledger.Company].File, "a finished task is left as production left it")
	require.Equal(t, int64(6), tasks[ledger.Company].Counts.Failed)

	run, err = e.Execute(ctx, id, fakeOpen(map[ledger.Kind]*fakeInput{ledger.Contact: {batches: 1}, ledger.Deal: {batches: 2}}, nil))
	require.NoError(t, err)
	require.Equal(t, RunPartial, run.Status, "the company task's production failures still count (R9)")
	require.NotNil(t, run.DurationMS)
	require.Equal(t, Counts{Imported: 20}, run.Stats[ledger.Deal])
}

// TestResumeFromRefuses: a run planned here (its files are its own, R10),
// a plan that fails, and a run with nothing unfinished change nothing.
func TestResumeFromRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.OpenDB(t)
	e := newEngine(db)

	local := seedRun(t, db, RunFailed, 2, Owner{}, taskState{kind: ledger.Contact, status: TaskFailed})
	_, _, err := e.ResumeFrom(ctx, local, planAll)
	var st *StateError
	require.ErrorAs(t, err, &st)
	require.Contains(t, err.Error(), "not loaded from a dump")

	loaded := seedLoaded(t, db, RunPartial, 4, taskState{kind: ledger.Contact, status: TaskPending})
	boom := errors.New("no contacts file")
	_, _, err = e.ResumeFrom(ctx, loaded, func(context.Context, Run, []Task) (Replan, error) { return Replan{}, boom })
	require.ErrorIs(t, err, boom)
	require.Equal(t, RunPartial, runOf(t, db, loaded).Status, "a refused plan changes nothing")
	require.Equal(t, 4, runOf(t, db, loaded).CurrentPhase)

	_, _, err = e.ResumeFrom(ctx, loaded, func(context.Context, Run, []Task) (Replan, error) { return Replan{}, nil })
	require.ErrorContains(t, err, "either a file or a reason to drop it")
	require.Equal(t, RunPartial, runOf(t, db, loaded).Status)

	done := seedLoaded(t, db, RunSucceeded, 2, taskState{kind: ledger.Contact, status: TaskSucceeded})
	_, _, err = e.ResumeFrom(ctx, done, planAll)
	require.ErrorContains(t, err, "has no unfinished task")
}

// TestResumeFromDropsAndAdds: two unfinished tasks of one kind and one
// local file: one reads it, the other is cancelled with the reason; two
// files of a kind with one task: the second gets a task of its own.
func TestResumeFromDropsAndAdds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.OpenDB(t)
	e := newEngine(db)
	id := seedLoaded(t, db, RunFailed, 4,
		taskState{kind: ledger.Contact, status: TaskFailed}, taskState{kind: ledger.Contact, status: TaskCancelled},
		taskState{kind: ledger.Note, status: TaskCancelled})
	_, planned, err := e.ResumeFrom(ctx, id, func(_ context.Context, _ Run, un []Task) (Replan, error) {
		require.Len(t, un, 3)
		return Replan{
			Inputs:  map[int64]TaskSpec{un[0].ID: {File: "contacts.csv", Format: "csv"}, un[2].ID: {File: "notes.csv", Format: "csv"}},
			Dropped: map[int64]string{un[1].ID: "superseded"},
			Extra:   []TaskSpec{{Kind: ledger.Note, Phase: 4, File: "notes.jsonl", Format: "jsonl"}},
		}, nil
	})
	require.NoError(t, err)
	require.Len(t, planned, 3)
	rows, err := LoadTasks(ctx, db, id)
	require.NoError(t, err)
	var got []string
	for _, r := range rows {
		got = append(got, string(r.Kind)+" "+string(r.Status)+" "+r.File+" "+r.LastError)
	}
	require.Equal(t, []string{"contact pending contacts.csv ", "contact cancelled  superseded", "note pending notes.csv ",
		"note pending notes.jsonl "}, got)
	require.Equal(t, 2, runOf(t, db, id).CurrentPhase)
}

// TestResumeFromPhasesTasksByKind: a dump whose tasks put contacts and
// notes in phase 1 beside companies. resume --from re-arms each task in
// its kind's phase of crmimport's plan (R7: parents first), an added task
// too whatever its spec says, logs the dump's phase beside the new one,
// and the barrier rewinds to the earliest phase by kind, not the dump's.
func TestResumeFromPhasesTasksByKind(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.OpenDB(t)
	e := newEngine(db)
	id := seedLoaded(t, db, RunFailed, 1,
		taskState{kind: ledger.Company, status: TaskSucceeded},
		taskState{kind: ledger.Note, status: TaskPending},
		taskState{kind: ledger.Contact, status: TaskFailed},
		taskState{kind: ledger.Contact, status: TaskCancelled})
	_, err := db.Exec(`UPDATE migration_tasks SET phase = 1 WHERE migration_id = ?`, id)
	require.NoError(t, err)

	run, planned, err := e.ResumeFrom(ctx, id, func(ctx context.Context, run Run, un []Task) (Replan, error) {
		p, err := planAll(ctx, run, un[:2])
		p.Dropped = map[int64]string{un[2].ID: "superseded"}
		p.Extra = []TaskSpec{{Kind: ledger.Contact, Phase: 1, File: "/local/contacts-2.csv", Format: "csv"}}
		return p, err
	})
	require.NoError(t, err)
	require.Equal(t, 2, run.CurrentPhase, "R8: the barrier rewinds to the earliest pending phase by kind (contacts), not to the dump's 1")
	require.Len(t, planned, 3)
	got := map[string]int{}
	for _, tk := range planned {
		got[tk.File] = tk.Phase
	}
	require.Equal(t, map[string]int{"/local/contacts.csv": 2, "/local/notes.csv": 4, "/local/contacts-2.csv": 2}, got)
	rows, err := LoadTasks(ctx, db, id)
	require.NoError(t, err)
	byID := map[int64]Task{}
	for _, r := range rows {
		byID[r.ID] = r
	}
	require.Equal(t, 1, byID[1].Phase, "a finished task is left as production left it")
	require.Equal(t, TaskCancelled, byID[4].Status)
	require.Equal(t, 2, byID[4].Phase, "a dropped task is in its kind's phase too")

	var msg string
	require.NoError(t, db.QueryRow(`SELECT message FROM run_log WHERE migration_id = ? AND level = 'warning'`, id).Scan(&msg))
	require.Contains(t, msg, "task 2 (notes): phase 1 in the dump, phase 4 by its kind; task 3 (contacts): phase 1 in the dump, "+
		"phase 2 by its kind; task 4 (contacts, dropped): phase 1 in the dump, phase 2 by its kind")

	run, err = e.Execute(ctx, id, fakeOpen(map[ledger.Kind]*fakeInput{ledger.Contact: {batches: 1}, ledger.Note: {batches: 1}}, nil))
	require.NoError(t, err)
	require.Equal(t, RunPartial, run.Status, "the company task's production failures still count (R9)")
}

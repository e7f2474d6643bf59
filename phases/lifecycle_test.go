package phases

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/store"
	"crmimport/store/storetest"
)

func allInputs(batches int) map[ledger.Kind]*fakeInput {
	m := map[ledger.Kind]*fakeInput{}
	for _, k := range canon.Kinds() {
		m[k] = &fakeInput{batches: batches}
	}
	return m
}

// TestFailedPhaseCancelsLaterPhasesAndResumeFinishes: R7, R8, R12.
func TestFailedPhaseCancelsLaterPhasesAndResumeFinishes(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		e := newEngine(db)
		run, err := e.Plan(ctx, fullPlan())
		require.NoError(t, err)

		inputs := allInputs(3)
		inputs[ledger.Contact].failAt = 2
		run, err = e.Execute(ctx, run.ID, fakeOpen(inputs, nil))
		require.NoError(t, err)
		require.Equal(t, RunPartial, run.Status, "companies were imported, contacts failed")
		require.NotNil(t, run.DurationMS)

		ts := tasksOf(t, db, run.ID)
		require.Equal(t, TaskSucceeded, ts[ledger.Company].Status)
		require.Equal(t, TaskFailed, ts[ledger.Contact].Status)
		require.Contains(t, ts[ledger.Contact].LastError, "contacts.csv: line 20: cannot read")
		require.Equal(t, Checkpoint{Rows: 10, Line: 11}, ts[ledger.Contact].Checkpoint, "batch 1 stays committed")
		for _, k := range []ledger.Kind{ledger.Deal, ledger.Note, ledger.Activity, ledger.Email} {
			require.Equal(t, TaskCancelled, ts[k].Status, k)
			require.Equal(t, "not started: phase 2 failed", ts[k].LastError, k)
			require.Empty(t, batchRows(t, db, k), "R7: no later phase ran without its parents")
		}
		require.Equal(t, []string{"contact batch 1"}, batchRows(t, db, ledger.Contact), "R12: the failed batch rolled back whole")
		require.Equal(t, 2, run.CurrentPhase)

		// Resume with the cause fixed.
		inputs[ledger.Contact].failAt = 0
		run, rearmed, err := e.Resume(ctx, run.ID, nil)
		require.NoError(t, err)
		require.Len(t, rearmed, 5)
		require.Equal(t, RunRunning, run.Status)
		require.Equal(t, 2, run.CurrentPhase)
		require.Nil(t, run.DurationMS, "R8: duration_ms cleared")
		require.Nil(t, run.FinishedAt, "R8: finished_at cleared")
		ts = tasksOf(t, db, run.ID)
		require.Equal(t, TaskPending, ts[ledger.Contact].Status)
		require.Empty(t, ts[ledger.Contact].LastError, "R8: last_error cleared")
		require.Equal(t, Checkpoint{Rows: 10, Line: 11}, ts[ledger.Contact].Checkpoint, "R8: checkpoint intact")

		run, err = e.Execute(ctx, run.ID, fakeOpen(inputs, nil))
		require.NoError(t, err)
		require.Equal(t, RunSucceeded, run.Status)
		require.Equal(t, []string{"contact batch 1", "contact batch 2", "contact batch 3"}, batchRows(t, db, ledger.Contact),
			"resume continued at the checkpoint: nothing repeated, nothing missing")
		require.Equal(t, int64(30), run.Stats[ledger.Contact].Imported)
		for _, k := range canon.Kinds() {
			require.Len(t, batchRows(t, db, k), 3, k)
		}
	})
}

// TestResumeRewindsBarrierToFailedWork: the seed's second incident. A run
// whose barrier sits at 5 while its failed work lives in phase 2.
func TestResumeRewindsBarrierToFailedWork(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		id := seedRun(t, db, RunPartial, 5, thisOwner(t, db),
			taskState{ledger.Company, TaskSucceeded, 30}, taskState{ledger.Contact, TaskFailed, 10},
			taskState{ledger.Note, TaskSucceeded, 30}, taskState{ledger.Email, TaskCancelled, 20})
		e := newEngine(db)
		run, rearmed, err := e.Resume(ctx, id, nil)
		require.NoError(t, err)
		require.Len(t, rearmed, 2)
		require.Equal(t, 2, run.CurrentPhase, "R8: the barrier rewinds to where the work is")
		ts := tasksOf(t, db, id)
		require.Equal(t, TaskPending, ts[ledger.Contact].Status)
		require.Equal(t, TaskPending, ts[ledger.Email].Status, "R8: cancelled tasks are re-armed too")
		require.Equal(t, Checkpoint{Rows: 20, Line: 21}, ts[ledger.Email].Checkpoint)

		run, err = e.Execute(ctx, id, fakeOpen(allInputs(3), nil))
		require.NoError(t, err)
		require.Equal(t, RunSucceeded, run.Status)
		require.Equal(t, []string{"contact batch 2", "contact batch 3"}, batchRows(t, db, ledger.Contact))
		require.Equal(t, []string{"email batch 3"}, batchRows(t, db, ledger.Email))
	})
}

// TestFinalizeRefusesWhileWorkIsQueued: R9.
func TestFinalizeRefusesWhileWorkIsQueued(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		id := seedRun(t, db, RunRunning, 5, thisOwner(t, db),
			taskState{ledger.Company, TaskSucceeded, 30}, taskState{ledger.Contact, TaskPending, 0},
			taskState{ledger.Activity, TaskSucceeded, 30})
		e := newEngine(db)
		done, err := e.finalize(ctx, id)
		require.NoError(t, err)
		require.False(t, done)
		run := runOf(t, db, id)
		require.Equal(t, RunRunning, run.Status, "R9: no terminal status while a task is pending")
		require.Nil(t, run.DurationMS)
		require.Equal(t, 2, run.CurrentPhase, "R9: finalize rewinds to the earliest queued phase")

		// Execute from there does the queued work and then finalizes.
		run, err = e.Execute(ctx, id, fakeOpen(allInputs(2), nil))
		require.NoError(t, err)
		require.Equal(t, RunSucceeded, run.Status)
		require.Len(t, batchRows(t, db, ledger.Contact), 2)
	})
}

// TestFinalizeCancellingDoesNotWaitForQueuedWork: "unless the run is being
// cancelled": queued tasks are cancelled with it, never left behind a
// terminal status.
func TestFinalizeCancellingDoesNotWaitForQueuedWork(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		id := seedRun(t, db, RunRunning, 2, thisOwner(t, db),
			taskState{ledger.Company, TaskSucceeded, 30}, taskState{ledger.Contact, TaskPending, 0})
		_, err := db.Exec(`UPDATE migrations SET cancellation_requested = 1 WHERE id = ?`, id)
		require.NoError(t, err)
		done, err := newEngine(db).finalize(ctx, id)
		require.NoError(t, err)
		require.True(t, done)
		require.Equal(t, RunCancelled, runOf(t, db, id).Status)
		require.Equal(t, TaskCancelled, tasksOf(t, db, id)[ledger.Contact].Status)
	})
}

func TestOutcome(t *testing.T) {
	t.Parallel()
	k := func(c Counts) map[ledger.Kind]Counts { return map[ledger.Kind]Counts{ledger.Contact: c} }
	cases := []struct {
		name   string
		cancel bool
		failed int
		stats  map[ledger.Kind]Counts
		want   RunStatus
	}{
		{"AllImported", false, 0, k(Counts{Imported: 5}), RunSucceeded},
		{"SkipsAloneDoNotFail", false, 0, k(Counts{Skipped: 5}), RunSucceeded},
		{"FailedRecordsAreNeverSucceeded", false, 0, k(Counts{Imported: 5, Failed: 1}), RunPartial},
		{"UnchangedCountsAsAccountedFor", false, 0, k(Counts{Unchanged: 5, Failed: 1}), RunPartial},
		{"FailedTaskWithImports", false, 1, k(Counts{Imported: 5}), RunPartial},
		{"NothingAccountedFor", false, 1, k(Counts{Skipped: 3}), RunFailed},
		{"OnlyFailedRecords", false, 0, k(Counts{Failed: 3}), RunFailed},
		{"CancelWins", true, 1, k(Counts{Failed: 3}), RunCancelled},
	}
	for _, c := range cases {
		require.Equal(t, c.want, Outcome(c.cancel, c.failed, c.stats), c.name)
	}
}

// TestRunWithFailedRecordsIsNeverSucceeded through the engine.
func TestRunWithFailedRecordsIsNeverSucceeded(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		e := newEngine(db)
		run, err := e.Plan(ctx, fullPlan())
		require.NoError(t, err)
		inputs := allInputs(1)
		inputs[ledger.Note].failedRecords = 1
		run, err = e.Execute(ctx, run.ID, fakeOpen(inputs, nil))
		require.NoError(t, err)
		require.Equal(t, RunPartial, run.Status)
		require.Equal(t, int64(1), run.Stats[ledger.Note].Failed)
	})
}

// TestTwoResumesNeverBothProceed: R8, the takeover is one fenced UPDATE.
// Two engines on two connections (as two processes) read the same run;
// the second writes only after the first has finished resuming.
func TestTwoResumesNeverBothProceed(t *testing.T) {
	t.Parallel()
	for _, from := range []RunStatus{RunPartial, RunRunning} {
		t.Run(string(from), func(t *testing.T) {
			t.Parallel()
			storetest.Run(t, func(t *testing.T, dbA *sql.DB) {
				ctx := context.Background()
				dbB := storetest.Reopen(t, dbA)
				owner := CurrentOwner()
				if from == RunRunning {
					owner = deadOwner(t) // interrupted
				}
				id := seedRun(t, dbA, from, 2, owner, taskState{ledger.Contact, TaskFailed, 10})
				a, b := newEngine(dbA), newEngine(dbB)
				a.Self.PID, b.Self.PID = 1_000_001, 1_000_002 // two owners

				aRead, bDone := make(chan struct{}), make(chan error)
				var errA error
				var wg sync.WaitGroup
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, _, errA = a.Resume(ctx, id, func(context.Context, Run, []Task) error {
						// A has read the run; let B resume all the way first.
						close(aRead)
						return <-bDone
					})
				}()
				<-aRead
				_, _, errB := b.Resume(ctx, id, nil)
				bDone <- nil
				wg.Wait()
				require.NoError(t, errB)
				var adm *AdmissionError
				require.ErrorAs(t, errA, &adm, "the second resume is refused")
				require.True(t, adm.TakenOver)
				run := runOf(t, dbA, id)
				require.Equal(t, b.Self, run.Owner)
				require.Equal(t, 2, run.Attempts, "one takeover only")
			})
		})
	}
}

// TestResumeRefusesLiveRunAndSucceededRun.
func TestResumeRefusesLiveRunAndSucceededRun(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		live := seedRun(t, db, RunRunning, 2, thisOwner(t, db), taskState{ledger.Contact, TaskRunning, 10})
		_, _, err := newEngine(db).Resume(ctx, live, nil)
		var adm *AdmissionError
		require.ErrorAs(t, err, &adm)
		require.False(t, adm.Interrupted)
		require.Equal(t, live, adm.LiveRun)

		db2 := storetest.OpenDialect(t, store.DialectOf(db))
		done := seedRun(t, db2, RunSucceeded, 5, thisOwner(t, db2), taskState{ledger.Contact, TaskSucceeded, 10})
		_, _, err = newEngine(db2).Resume(ctx, done, nil)
		var st *StateError
		require.ErrorAs(t, err, &st)
		require.ErrorContains(t, err, "nothing to resume")
	})
}

// TestResumeOfPartialRunIsAdmissionControlled: a partial run cannot be
// reopened while another run of the tenant is live.
func TestResumeOfPartialRunIsAdmissionControlled(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		old := seedRun(t, db, RunPartial, 2, thisOwner(t, db), taskState{ledger.Contact, TaskFailed, 10})
		live := seedRun(t, db, RunRunning, 1, thisOwner(t, db), taskState{ledger.Company, TaskRunning, 0})
		_, _, err := newEngine(db).Resume(ctx, old, nil)
		var adm *AdmissionError
		require.ErrorAs(t, err, &adm)
		require.Equal(t, live, adm.LiveRun)
		require.Equal(t, RunPartial, runOf(t, db, old).Status, "a refused resume changes nothing")
		require.Equal(t, TaskFailed, tasksOf(t, db, old)[ledger.Contact].Status)
	})
}

// TestAdmissionRefusedWhileTheLiveRunHoldsTheLock: R13, a live run holds
// the write lock batch after batch; a new plan and a resume of another run
// of its tenant are refused as soon as asked, not after waiting for the lock
// (which would end in "database is locked", or here in the deadline).
func TestAdmissionRefusedWhileTheLiveRunHoldsTheLock(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		old := seedRun(t, db, RunPartial, 2, thisOwner(t, db), taskState{ledger.Contact, TaskFailed, 10})
		live := seedRun(t, db, RunRunning, 1, thisOwner(t, db), taskState{ledger.Company, TaskRunning, 0})

		batch, err := storetest.Reopen(t, db).BeginTx(context.Background(), nil) // the live run's batch: the write lock
		require.NoError(t, err)
		defer batch.Rollback()

		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var adm *AdmissionError
		_, err = newEngine(db).Plan(ctx, fullPlan())
		require.ErrorAs(t, err, &adm)
		require.Equal(t, live, adm.LiveRun)
		_, _, err = newEngine(db).Resume(ctx, old, nil)
		require.ErrorAs(t, err, &adm)
		require.Equal(t, live, adm.LiveRun)
	})
}

// TestResumeReusesIdentityAndPlan: R10, a resumed run keeps its id, its
// start time, its options and its tasks; a check that refuses changes
// nothing.
func TestResumeReusesIdentityAndPlan(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		e := newEngine(db)
		planned, err := e.Plan(ctx, fullPlan())
		require.NoError(t, err)
		before, err := LoadTasks(ctx, db, planned.ID)
		require.NoError(t, err)
		// The process dies right after planning.
		dead := deadOwner(t)
		_, err = db.Exec(`UPDATE migrations SET owner_pid = ?, owner_started = ? WHERE id = ?`, dead.PID, dead.Started, planned.ID)
		require.NoError(t, err)
		require.True(t, e.Interrupted(runOf(t, db, planned.ID)))

		refused := errors.New("contacts.csv changed")
		_, _, err = e.Resume(ctx, planned.ID, func(context.Context, Run, []Task) error { return refused })
		require.ErrorIs(t, err, refused)
		require.Equal(t, dead.PID, runOf(t, db, planned.ID).Owner.PID, "a refused resume leaves the run as it was")

		e2 := newEngine(db)
		e2.Now = func() time.Time { return t0.Add(time.Hour) }
		resumed, _, err := e2.Resume(ctx, planned.ID, nil)
		require.NoError(t, err)
		require.Equal(t, planned.ID, resumed.ID)
		require.Equal(t, planned.StartedAt, resumed.StartedAt, "R10: nothing time-bearing is recomputed")
		require.JSONEq(t, string(planned.Options), string(resumed.Options))
		after, err := LoadTasks(ctx, db, planned.ID)
		require.NoError(t, err)
		require.Len(t, after, len(before))
		for i := range before {
			require.Equal(t, before[i].ID, after[i].ID)
			require.Equal(t, before[i].Fingerprint, after[i].Fingerprint)
			require.Equal(t, before[i].File, after[i].File)
		}
		var runs int
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM migrations`).Scan(&runs))
		require.Equal(t, 1, runs)
	})
}

// TestAdmission: R13, one live run per tenant, by the database.
func TestAdmission(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		e := newEngine(db)
		first, err := e.Plan(ctx, fullPlan())
		require.NoError(t, err)

		_, err = e.Plan(ctx, fullPlan())
		var adm *AdmissionError
		require.ErrorAs(t, err, &adm)
		require.Equal(t, first.ID, adm.LiveRun)
		require.False(t, adm.Interrupted)
		require.ErrorContains(t, err, "crmimport stop")

		other := fullPlan()
		other.Tenant = "globex"
		_, err = e.Plan(ctx, other)
		require.NoError(t, err, "another tenant's run goes ahead")

		var n int
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM migrations WHERE tenant_id = 'acme'`).Scan(&n))
		require.Equal(t, 1, n, "a refused attempt leaves no row")

		// Once its owner is gone, the live run is reported as interrupted.
		dead := deadOwner(t)
		_, err = db.Exec(`UPDATE migrations SET owner_pid = ?, owner_started = ? WHERE id = ?`, dead.PID, dead.Started, first.ID)
		require.NoError(t, err)
		_, err = e.Plan(ctx, fullPlan())
		require.ErrorAs(t, err, &adm)
		require.True(t, adm.Interrupted)
		require.ErrorContains(t, err, "crmimport resume")
	})
}

// TestOwnerLiveness: a dead owner is seen at once by pid and start time; a
// reused pid is not mistaken for the owner; elsewhere the heartbeat decides.
func TestOwnerLiveness(t *testing.T) {
	t.Parallel()
	self := CurrentOwner()
	require.NotEmpty(t, self.Started, "this test runs where /proc tells process start times")
	now := t0
	fresh, stale := now.Add(-time.Second), now.Add(-StaleAfter-time.Second)
	require.True(t, ownerAlive(self, self, &stale, now), "this very process")
	dead := deadOwner(t)
	require.False(t, ownerAlive(self, dead, &fresh, now), "an exited process, however fresh its heartbeat")
	reused := self
	reused.Started = "another-boot/1"
	require.False(t, ownerAlive(self, reused, &fresh, now), "same pid, another start time: pid reuse")
	remote := Owner{Host: "elsewhere", PID: 42, Started: "x"}
	require.True(t, ownerAlive(self, remote, &fresh, now))
	require.False(t, ownerAlive(self, remote, &stale, now))
	require.False(t, ownerAlive(self, remote, nil, now))

	// Issue 23 item 24: a process of this host in another PID namespace (a
	// container sharing the hostname and the kernel) records its own pid,
	// which names another process here (pid 1: this namespace's init) or
	// none: it is judged by its heartbeat, never by this process table.
	parts := strings.Split(self.Started, "/")
	require.Len(t, parts, 3, "this process's start time names its PID namespace: %s", self.Started)
	require.True(t, strings.HasPrefix(parts[1], "pid:["), self.Started)
	contained := Owner{Host: self.Host, PID: 1, Started: parts[0] + "/pid:[4026599999]/" + parts[2]}
	require.True(t, ownerAlive(self, contained, &fresh, now), "a live run in another PID namespace is not interrupted")
	require.False(t, ownerAlive(self, contained, &stale, now), "its heartbeat stopped: interrupted")
	gone := contained
	gone.PID = dead.PID
	require.True(t, ownerAlive(self, gone, &fresh, now), "a pid of another namespace that is free here says nothing")
	older := Owner{Host: self.Host, PID: self.PID, Started: parts[0] + "/" + parts[2]}
	require.True(t, ownerAlive(self, older, &stale, now), "a start time recorded without a namespace (an older binary) is this namespace's")
}

// TestStopBetweenBatches: R14 by context (a signal): the batch in flight
// commits, its task is cancelled with its checkpoint, queued tasks are
// cancelled, the run ends cancelled; resume completes it.
func TestStopBetweenBatches(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		e := newEngine(db)
		run, err := e.Plan(ctx, fullPlan())
		require.NoError(t, err)
		open := fakeOpen(allInputs(3), func(k ledger.Kind, n int) {
			if k == ledger.Contact && n == 2 {
				cancel() // Ctrl-C while batch 2 of contacts is in flight
			}
		})
		run, err = e.Execute(ctx, run.ID, open)
		require.NoError(t, err)
		require.Equal(t, RunCancelled, run.Status)
		require.NotNil(t, run.DurationMS)
		ts := tasksOf(t, db, run.ID)
		require.Equal(t, TaskCancelled, ts[ledger.Contact].Status)
		require.Equal(t, Checkpoint{Rows: 20, Line: 21}, ts[ledger.Contact].Checkpoint, "the batch in flight committed whole")
		require.Equal(t, TaskCancelled, ts[ledger.Deal].Status)
		require.Equal(t, TaskSucceeded, ts[ledger.Company].Status)

		run, _, err = e.Resume(context.Background(), run.ID, nil)
		require.NoError(t, err)
		run, err = e.Execute(context.Background(), run.ID, fakeOpen(allInputs(3), nil))
		require.NoError(t, err)
		require.Equal(t, RunSucceeded, run.Status)
		for _, k := range canon.Kinds() {
			require.Len(t, batchRows(t, db, k), 3, k)
		}
	})
}

// TestStopFromAnotherProcess: stop RUN sets the request in the row; the
// owner sees it with its next heartbeat.
func TestStopFromAnotherProcess(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		other := storetest.Reopen(t, db)
		e := newEngine(db)
		run, err := e.Plan(ctx, fullPlan())
		require.NoError(t, err)
		stopper := newEngine(other)
		stopper.Self.PID = 1_000_003
		// stop RUN arrives while the deals task opens (outside any transaction
		// of the owner, as from another process).
		var once sync.Once
		open := func(ctx context.Context, r Run, t Task) (*Work, error) {
			if t.Kind == ledger.Deal {
				once.Do(func() {
					_, requested, err := stopper.Stop(ctx, run.ID, "a test")
					if err == nil && !requested {
						err = errors.New("not requested")
					}
					if err != nil {
						panic(err)
					}
				})
			}
			return fakeOpen(allInputs(3), nil)(ctx, r, t)
		}
		run, err = e.Execute(ctx, run.ID, open)
		require.NoError(t, err)
		require.Equal(t, RunCancelled, run.Status)
		ts := tasksOf(t, db, run.ID)
		require.Equal(t, TaskCancelled, ts[ledger.Deal].Status)
		require.Equal(t, Checkpoint{Rows: 10, Line: 11}, ts[ledger.Deal].Checkpoint, "one batch, then the stop")
		require.Equal(t, TaskCancelled, ts[ledger.Note].Status)
	})
}

// TestStopInterruptedRunCancelsIt: stop on a run whose process is gone
// cancels it directly.
func TestStopInterruptedRunCancelsIt(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		id := seedRun(t, db, RunRunning, 2, deadOwner(t),
			taskState{ledger.Company, TaskSucceeded, 30}, taskState{ledger.Contact, TaskRunning, 10}, taskState{ledger.Deal, TaskPending, 0})
		run, requested, err := newEngine(db).Stop(ctx, id, "a test")
		require.NoError(t, err)
		require.False(t, requested)
		require.Equal(t, RunCancelled, run.Status)
		ts := tasksOf(t, db, id)
		require.Equal(t, TaskCancelled, ts[ledger.Contact].Status)
		require.Equal(t, Checkpoint{Rows: 10, Line: 11}, ts[ledger.Contact].Checkpoint)
		_, _, err = newEngine(db).Stop(ctx, id, "a test")
		var st *StateError
		require.ErrorAs(t, err, &st)
	})
}

// TestR11UpdatesThatMatchNothingAreErrors: every transition fails loudly
// when its row is not in the from-state.
func TestR11UpdatesThatMatchNothingAreErrors(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		id := seedRun(t, db, RunSucceeded, 5, thisOwner(t, db), taskState{ledger.Contact, TaskSucceeded, 10})
		taskID := tasksOf(t, db, id)[ledger.Contact].ID
		now := ledger.FormatTime(t0)
		for name, f := range map[string]func(tx *sql.Tx) error{
			"StartTaskNotPending":   func(tx *sql.Tx) error { return startTask(ctx, tx, Run{}, taskID, now) },
			"CheckpointNotRunning":  func(tx *sql.Tx) error { return checkpointTask(ctx, tx, taskID, Checkpoint{}, 0, 0, Counts{}, now) },
			"SucceedNotRunning":     func(tx *sql.Tx) error { return succeedTask(ctx, tx, Run{}, taskID, now) },
			"FailNotRunning":        func(tx *sql.Tx) error { return failTask(ctx, tx, taskID, "x", now) },
			"CancelNotRunning":      func(tx *sql.Tx) error { return cancelTask(ctx, tx, taskID, "x", now) },
			"TaskMissing":           func(tx *sql.Tx) error { return startTask(ctx, tx, Run{}, 999, now) },
			"FinalizeTerminalRun":   func(tx *sql.Tx) error { return finalizeRun(ctx, tx, id, RunSucceeded, now, 1, nil, "") },
			"RunMissing":            func(tx *sql.Tx) error { return finalizeRun(ctx, tx, 999, RunSucceeded, now, 1, nil, "") },
			"RequestStopNotRunning": func(tx *sql.Tx) error { return requestStop(ctx, tx, id, "a test") },
			"ReopenFromWrongStatus": func(tx *sql.Tx) error { return reopen(ctx, tx, id, RunPartial, CurrentOwner(), now) },
			"TakeOverNotRunning":    func(tx *sql.Tx) error { return takeOver(ctx, tx, id, CurrentOwner(), CurrentOwner(), now) },
			"MoveBarrierFenceLost":  func(tx *sql.Tx) error { return moveBarrier(ctx, tx, id, 3, 4) },
			"HeartbeatNotOwner": func(tx *sql.Tx) error {
				_, err := heartbeat(ctx, tx, id, Owner{Host: "x", PID: 1, Started: "y"}, now)
				return err
			},
		} {
			t.Run(name, func(t *testing.T) {
				tx, err := db.BeginTx(ctx, nil)
				require.NoError(t, err)
				defer tx.Rollback()
				var rows *RowsError
				require.ErrorAs(t, f(tx), &rows)
				require.Equal(t, int64(1), rows.Want)
				require.Equal(t, int64(0), rows.Got)
			})
		}
	})
}

// TestCommittedRunsOnlyAfterCommit: R12, in-memory state learns a batch
// only once it commits; a rolled-back batch leaves nothing behind.
func TestCommittedRunsOnlyAfterCommit(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		e := newEngine(db)
		var committed []int
		spec := fullPlan()
		spec.Tasks = spec.Tasks[:1]
		run, err := e.Plan(ctx, spec)
		require.NoError(t, err)
		n := 0
		open := func(ctx context.Context, r Run, t Task) (*Work, error) {
			return &Work{
				Next: func(ctx context.Context, tx *sql.Tx) (Batch, error) {
					n++
					k := n
					if k == 2 {
						return Batch{Committed: func() { committed = append(committed, k) }}, errors.New("bad batch")
					}
					return Batch{Checkpoint: Checkpoint{Rows: int64(k)}, Committed: func() { committed = append(committed, k) }}, nil
				},
				Close: func() error { return nil },
			}, nil
		}
		run, err = e.Execute(ctx, run.ID, open)
		require.NoError(t, err)
		require.Equal(t, []int{1}, committed)
		require.Equal(t, RunFailed, run.Status, "nothing accounted for")
	})
}

// TestAdmissionByTheIndex: two runs that pass the quick check at the same
// instant meet the one-live-run index; the second is refused and leaves no
// row (R13: enforced by the database, not by a check-then-insert).
func TestAdmissionByTheIndex(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		e := newEngine(db)
		first, err := e.Plan(ctx, fullPlan())
		require.NoError(t, err)
		spec := fullPlan()
		_, err = e.insertPlan(ctx, spec, spec.Tasks, []byte("{}")) // past the quick check
		var adm *AdmissionError
		require.ErrorAs(t, err, &adm)
		require.Equal(t, first.ID, adm.LiveRun)
		var n int
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM migrations`).Scan(&n))
		require.Equal(t, 1, n)
	})
}

// TestStopRequestReachesATaskThatIsOpening: R14 (issue 11 item 10). A stop
// is a request in the run's row only; the owner reads it between batches
// too, so a task that takes long to open its input (no batch to read the
// request with) is cancelled, checkpoint kept, and the run ends cancelled.
// Without the watch, the open here would give up after a minute and the
// task would fail.
func TestStopRequestReachesATaskThatIsOpening(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		e := newEngine(db)
		run, err := e.Plan(ctx, fullPlan())
		require.NoError(t, err)
		opening := make(chan struct{})
		base := fakeOpen(allInputs(1), nil)
		open := func(ctx context.Context, r Run, task Task) (*Work, error) {
			if task.Kind != ledger.Contact {
				return base(ctx, r, task)
			}
			close(opening)
			select {
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			case <-time.After(time.Minute):
				return nil, errors.New("the open gave up waiting")
			}
		}
		go func() {
			<-opening
			stopper := New(db, nil)
			_, requested, err := stopper.Stop(ctx, run.ID, "a test")
			if err != nil || !requested {
				panic(fmt.Sprintf("stop: requested=%v err=%v", requested, err))
			}
		}()
		run, err = e.Execute(ctx, run.ID, open)
		require.NoError(t, err)
		require.Equal(t, RunCancelled, run.Status)
		ts := tasksOf(t, db, run.ID)
		require.Equal(t, TaskSucceeded, ts[ledger.Company].Status)
		require.Equal(t, TaskCancelled, ts[ledger.Contact].Status)
		require.Contains(t, ts[ledger.Contact].LastError, "stop requested while the task opened its input")
		require.Equal(t, TaskCancelled, ts[ledger.Deal].Status)
	})
}

// TestAdmissionCheckSurfacesErrors: issue 11 item 21. A live run that
// cannot be read is not "no live run": the admission check says why it
// cannot admit the run, instead of going on as if the tenant were free.
func TestAdmissionCheckSurfacesErrors(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		id := seedRun(t, db, RunRunning, 1, thisOwner(t, db), taskState{ledger.Company, TaskRunning, 0})
		_, err := db.ExecContext(ctx, `UPDATE migrations SET stats = 'not json' WHERE id = ?`, id)
		require.NoError(t, err)
		e := newEngine(db)
		err = e.refuseLive(ctx, "acme")
		require.ErrorContains(t, err, "admission check for tenant acme: its live run cannot be read")
		var adm *AdmissionError
		require.False(t, errors.As(err, &adm))
		require.NoError(t, e.refuseLive(ctx, "globex"), "a tenant without a live run is free")
	})
}

// TestAClockThatWentBackGivesNoNegativeDuration (issue 23 item 24, R15): a
// run started at t0 and resumed after the clock was set an hour back ends
// with no negative duration: 0 is recorded, and its log says that the
// duration is not known and why — never a guess.
func TestAClockThatWentBackGivesNoNegativeDuration(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		id := seedRun(t, db, RunCancelled, 2, thisOwner(t, db),
			taskState{ledger.Company, TaskSucceeded, 30}, taskState{ledger.Contact, TaskCancelled, 10})
		e := New(db, nil)
		back := &clock{now: t0.Add(-time.Hour)}
		e.Now = back.Now
		_, _, err := e.Resume(ctx, id, nil)
		require.NoError(t, err)
		run, err := e.Execute(ctx, id, fakeOpen(allInputs(3), nil))
		require.NoError(t, err)
		require.Equal(t, RunSucceeded, run.Status)
		require.NotNil(t, run.DurationMS)
		require.Zero(t, *run.DurationMS, "no negative duration")
		var msg string
		require.NoError(t, db.QueryRow(`SELECT message FROM run_log WHERE migration_id = ? AND level = 'warning' AND message LIKE '%clock%'`, id).Scan(&msg))
		require.Contains(t, msg, "behind the run's start")
		require.Contains(t, msg, "duration is not known")
	})
}

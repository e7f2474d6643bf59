package phases

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"crmimport/failpoint"
	"crmimport/ledger"
	"crmimport/store"
)

// Batch is what the importer reports for one batch, processed inside the
// transaction that the engine owns and commits (R12).
type Batch struct {
	Checkpoint Checkpoint // where the task stands once this batch commits
	// Read is how far into its input (the bytes Work.Size measures) the
	// reader had read to reach Checkpoint: progress, stored with it.
	Read   int64
	Counts Counts // the batch's outcomes, added to the task's counters
	Done   bool   // the input is exhausted: the task succeeds with this batch
	// Committed, if set, runs after the transaction commits, and only then:
	// in-memory indexes learn what the batch wrote only once it is durable.
	Committed func()
}

// Work is the importer's side of one task, opened at the task's checkpoint.
type Work struct {
	// Size is the input's size in bytes as progress measures it (what
	// Batch.Read counts towards), 0 when unknown: the task's planned size
	// stands then. It is stored with every checkpoint.
	Size int64
	// Next processes the next batch of records inside tx.
	Next func(ctx context.Context, tx *sql.Tx) (Batch, error)
	// Close releases the input.
	Close func() error
}

// OpenFunc opens a task's input at its checkpoint. An error fails the task
// (a file that cannot be read) with the error's text as its reason.
type OpenFunc func(ctx context.Context, run Run, t Task) (*Work, error)

// Engine drives runs. Build it with New; its fields are the injected
// identity, clock and hooks.
type Engine struct {
	DB         *sql.DB
	Now        func() time.Time
	Self       Owner
	Failpoints *failpoint.Set
	// OnTask is told when a task starts (for progress display); may be nil.
	OnTask func(Task)
	// OnBatch is told when a batch of a task has committed (for progress
	// display: the task's row holds its progress now); may be nil.
	OnBatch func(Task)
	// OnLog is told every run-log entry as it is written; may be nil.
	OnLog func(runID int64, level, message string)

	batches map[ledger.Kind]int // batches started per kind in this process (failpoints)
}

// New returns an engine on db, owned by this process and the database file
// db has open, with the real clock.
func New(db *sql.DB, fp *failpoint.Set) *Engine {
	self := CurrentOwner()
	// Where the file cannot be told (no inode here), liveness rests on the
	// process and the heartbeat, as for a run of an older schema.
	if id, err := store.FileID(context.Background(), db); err == nil {
		self.File = id
	}
	return &Engine{DB: db, Now: time.Now, Self: self, Failpoints: fp}
}

// StandFor makes e judge runs as the engine of the database file whose
// identity is file (store.FileIDOf) would: a dry run works on a throwaway
// copy of the database, in which a run's owner, working on the database
// itself, is at work all the same (R13: a live run stays live, and its
// refusal says `stop N`, not `resume N`). The copy's own run names that
// file too, and lives in the copy only. "" (no file to stand for) leaves e
// as it is.
func (e *Engine) StandFor(file string) {
	if file != "" {
		e.Self.File = file
	}
}

func (e *Engine) now() string { return ledger.FormatTime(e.Now()) }

// Alive reports whether a running run's owner is still at work (R13).
func (e *Engine) Alive(r Run) bool { return ownerAlive(e.Self, r.Owner, r.HeartbeatAt, e.Now()) }

// Interrupted reports whether r is running with no live owner.
func (e *Engine) Interrupted(r Run) bool { return r.Status == RunRunning && !e.Alive(r) }

func (e *Engine) log(ctx context.Context, tx *sql.Tx, runID int64, level, msg string) error {
	if _, err := tx.ExecContext(ctx, logSQL, runID, e.now(), level, msg); err != nil {
		return fmt.Errorf("write run log: %w", err)
	}
	if e.OnLog != nil {
		e.OnLog(runID, level, msg)
	}
	return nil
}

// Log writes an entry to the run log inside tx (the batch's transaction,
// so that it commits with the batch): what a task found worth telling, such
// as a name that links to several records.
func (e *Engine) Log(ctx context.Context, tx *sql.Tx, runID int64, level, msg string) error {
	return e.log(ctx, tx, runID, level, msg)
}

// inTx runs f in a transaction that it commits; a failed f rolls it back.
func (e *Engine) inTx(ctx context.Context, f func(tx *sql.Tx) error) error {
	tx, err := store.Begin(ctx, e.DB)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := f(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// PlanSpec is what a new run is: its identity and its whole plan.
type PlanSpec struct {
	Tenant  string
	Source  string
	Options any // persisted as JSON, read back on resume
	Tasks   []TaskSpec
	Notices []string // what planning found worth telling (written to the run log)
	// Warnings are what planning found that may have been read wrong
	// without a record failing to say so: written to the run log as
	// warnings.
	Warnings []string
	// Undoes is the run an undo takes back (R16); 0 for an import.
	Undoes int64
	// Walk, if set in place of Tasks, writes what the plan holds beyond
	// its tasks (an undo's items) in the plan's own transaction, once the
	// run has its id (R10), and returns what only that writing finds out:
	// the tasks, the options and more notices (an undo's, which the walk
	// over the tenant that writes its items counts: walked once, not once
	// to count and again to write). Its error refuses the plan: nothing of
	// it stays.
	Walk func(ctx context.Context, tx *sql.Tx, runID int64) (Walked, error)
}

// Walked is what a PlanSpec's Walk found out.
type Walked struct {
	Tasks   []TaskSpec
	Options any
	Notices []string
}

// TaskSpec is one planned task.
type TaskSpec struct {
	Kind        ledger.Kind
	Phase       int
	File        string
	Format      string
	Encoding    string
	Fingerprint string
	// InputKey names everything that decides which records the task reads
	// (see Task.InputKey); "" for none.
	InputKey string
	// Size is the input's size as progress measures it (Task.Size), 0
	// when unknown.
	Size int64
}

const insertRunSQL = `
INSERT INTO migrations (tenant_id, source, status, current_phase, options, started_at,
    owner_host, owner_pid, owner_started, owner_file, heartbeat_at, undoes)
VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, nullif(?, ''), ?, nullif(?, 0))
RETURNING id`

const insertTaskSQL = `
INSERT INTO migration_tasks (migration_id, kind, phase, status, file, format, encoding, fingerprint, input_key, input_size, updated_at)
VALUES (?, ?, ?, 'pending', ?, ?, ?, ?, nullif(?, ''), ?, ?)`

// insertTask adds a pending task to run: the plan of a new run (R10), or a
// task that resume --from adds to a loaded run.
func insertTask(ctx context.Context, tx *sql.Tx, runID int64, t TaskSpec, now string) error {
	if _, err := tx.ExecContext(ctx, insertTaskSQL, runID, string(t.Kind), t.Phase, t.File, t.Format,
		t.Encoding, t.Fingerprint, t.InputKey, max(t.Size, 0), now); err != nil {
		return fmt.Errorf("insert task %s: %w", t.File, err)
	}
	return nil
}

// Plan commits a new run and its whole plan before any record is read (R10).
// The one-live-run index refuses a second live run of the tenant (R13) with
// an *AdmissionError; the refused attempt leaves no row.
func (e *Engine) Plan(ctx context.Context, spec PlanSpec) (Run, error) {
	if len(spec.Tasks) == 0 && spec.Walk == nil {
		return Run{}, errors.New("plan: no tasks")
	}
	tasks, opts, err := planned(spec.Tasks, spec.Options)
	if err != nil {
		return Run{}, err
	}
	if err := e.refuseLive(ctx, spec.Tenant); err != nil {
		return Run{}, err
	}
	return e.insertPlan(ctx, spec, tasks, opts)
}

// planned are tasks in the order of their phases, and options as the run
// keeps them.
func planned(tasks []TaskSpec, options any) ([]TaskSpec, []byte, error) {
	tasks = append([]TaskSpec(nil), tasks...)
	sort.SliceStable(tasks, func(i, j int) bool { return tasks[i].Phase < tasks[j].Phase })
	opts, err := json.Marshal(options)
	if err != nil {
		return nil, nil, fmt.Errorf("plan: options: %w", err)
	}
	return tasks, opts, nil
}

// refuseLive refuses at once when the tenant has a live run (R13): that run
// is seen without the write lock, which it holds batch after batch. The
// unique index stays the authority for two runs that start at the same
// instant.
func (e *Engine) refuseLive(ctx context.Context, tenant string) error {
	live, err := scanRun(e.DB.QueryRowContext(ctx, liveRunSQL, tenant))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		// Not "no live run": a live run that cannot be read is still live.
		return fmt.Errorf("admission check for tenant %s: its live run cannot be read: %w", tenant, err)
	}
	return &AdmissionError{Tenant: tenant, LiveRun: live.ID, Owner: live.Owner, Interrupted: e.Interrupted(live)}
}

// refuseTaken refuses a resume of run at once (R13) when a live process
// owns it, or when it is not running and its tenant has another live run.
func (e *Engine) refuseTaken(ctx context.Context, run Run) error {
	if run.Status != RunRunning {
		return e.refuseLive(ctx, run.Tenant)
	}
	if e.Alive(run) {
		return &AdmissionError{Tenant: run.Tenant, LiveRun: run.ID, Owner: run.Owner}
	}
	return nil
}

// insertPlan writes the run and its tasks in one transaction; the
// one-live-run index refuses a second live run of the tenant.
func (e *Engine) insertPlan(ctx context.Context, spec PlanSpec, tasks []TaskSpec, opts []byte) (Run, error) {
	var id int64
	err := e.inTx(ctx, func(tx *sql.Tx) error {
		now := e.now()
		phase := 0 // a walked plan's, set once its tasks are known
		if len(tasks) > 0 {
			phase = tasks[0].Phase
		}
		err := store.Try(ctx, tx, func() error {
			return tx.QueryRowContext(ctx, insertRunSQL, spec.Tenant, spec.Source, phase, string(opts), now,
				e.Self.Host, e.Self.PID, e.Self.Started, e.Self.File, now, spec.Undoes).Scan(&id)
		})
		if store.IsUnique(err) {
			return e.admissionError(ctx, tx, spec.Tenant)
		}
		if err != nil {
			return fmt.Errorf("plan: insert run: %w", err)
		}
		notices := spec.Notices
		if spec.Walk != nil {
			w, err := spec.Walk(ctx, tx, id)
			if err != nil {
				return err
			}
			if len(w.Tasks) == 0 {
				return errors.New("plan: no tasks")
			}
			if tasks, opts, err = planned(w.Tasks, w.Options); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE migrations SET current_phase = ?, options = ? WHERE id = ?`,
				tasks[0].Phase, string(opts), id); err != nil {
				return fmt.Errorf("plan: %w", err)
			}
			notices = append(slices.Clip(notices), w.Notices...)
		}
		for _, t := range tasks {
			if err := insertTask(ctx, tx, id, t, now); err != nil {
				return fmt.Errorf("plan: %w", err)
			}
		}
		msg := fmt.Sprintf("run %d planned for tenant %s, source %s: %d tasks", id, spec.Tenant, spec.Source, len(tasks))
		if err := e.log(ctx, tx, id, "info", msg); err != nil {
			return err
		}
		for _, n := range notices {
			if err := e.log(ctx, tx, id, "notice", n); err != nil {
				return err
			}
		}
		for _, w := range spec.Warnings {
			if err := e.log(ctx, tx, id, "warning", w); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Run{}, err
	}
	if err := e.Failpoints.Hit("plan"); err != nil {
		return Run{}, err
	}
	return LoadRun(ctx, e.DB, id)
}

const liveRunSQL = `SELECT ` + runColumns + ` FROM migrations WHERE tenant_id = ? AND status = 'running'`

// admissionError names the tenant's live run.
func (e *Engine) admissionError(ctx context.Context, q queryer, tenant string) error {
	live, err := scanRun(q.QueryRowContext(ctx, liveRunSQL, tenant))
	if err != nil {
		return fmt.Errorf("tenant %s has a live run, which could not be read: %w", tenant, err)
	}
	return &AdmissionError{Tenant: tenant, LiveRun: live.ID, Owner: live.Owner, Interrupted: e.Interrupted(live)}
}

const nextPendingSQL = `
SELECT id FROM migration_tasks WHERE migration_id = ? AND phase = ? AND status = 'pending' ORDER BY id LIMIT 1`

// Execute works on a run that this engine owns until the run is terminal or
// stopped. Cancelling ctx requests a stop (Ctrl-C, SIGTERM), as does a stop
// request in the run's row (`crmimport stop` from another process), which
// is read with every batch and, while no batch commits (a task opening its
// file, re-reading ids), at least every StopPoll: the batch in flight
// commits whole, its task is cancelled with its checkpoint, the queued
// tasks are cancelled and the run ends cancelled (R14). Database work
// itself is never cut short by ctx.
func (e *Engine) Execute(ctx context.Context, runID int64, open OpenFunc) (Run, error) {
	db := context.WithoutCancel(ctx)
	ctx, stopWatching := e.watchStop(ctx, runID)
	defer stopWatching()
	for {
		run, err := LoadRun(db, e.DB, runID)
		if err != nil {
			return Run{}, err
		}
		if run.Status != RunRunning {
			return run, nil
		}
		if run.Owner != e.Self {
			return run, fmt.Errorf("run %d is owned by %s, not by this process", run.ID, run.Owner)
		}
		if ctx.Err() != nil || run.CancelRequested {
			return e.stopRun(db, run)
		}
		var taskID int64
		err = e.DB.QueryRowContext(db, nextPendingSQL, run.ID, run.CurrentPhase).Scan(&taskID)
		switch {
		case err == nil:
			if err := e.runTask(ctx, run, taskID, open); err != nil {
				return run, err
			}
			continue
		case !errors.Is(err, sql.ErrNoRows):
			return run, fmt.Errorf("run %d: next task: %w", run.ID, err)
		}
		done, err := e.closePhase(db, run)
		if err != nil || done {
			if err != nil {
				return run, err
			}
			return LoadRun(db, e.DB, runID)
		}
	}
}

// StopPoll is how often a working run reads its row for a stop request
// between batches (R14).
const StopPoll = 500 * time.Millisecond

// errStopRequested is the cause of a stop read from the run's row.
var errStopRequested = errors.New("stop requested through the run's row")

const stopRequestedSQL = `SELECT cancellation_requested FROM migrations WHERE id = ?`

// watchStop returns ctx, cancelled as well (with errStopRequested) once the
// run's row holds a stop request: a task that opens its file or re-reads
// ids for a long while, with no batch to read the request, still stops
// within StopPoll. A read that fails is tried again at the next tick: the
// batches read the request too.
func (e *Engine) watchStop(ctx context.Context, runID int64) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(StopPoll)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			var c int
			if err := e.DB.QueryRowContext(ctx, stopRequestedSQL, runID).Scan(&c); err == nil && c == 1 {
				cancel(errStopRequested)
				return
			}
		}
	}()
	return ctx, func() {
		close(done)
		cancel(nil)
	}
}

// closePhase runs the barrier on the run's current phase and, when the run
// can go no further, finalizes it. done reports a terminal run.
func (e *Engine) closePhase(ctx context.Context, run Run) (done bool, err error) {
	var v barrierVerdict
	err = e.inTx(ctx, func(tx *sql.Tx) error {
		v, err = checkBarrier(ctx, tx, run.ID, run.CurrentPhase)
		if err != nil {
			return err
		}
		switch {
		case v.Open:
			return fmt.Errorf("run %d: phase %d has a running task that no process works on", run.ID, run.CurrentPhase)
		case v.Failed:
			reason := fmt.Sprintf("not started: phase %d failed", run.CurrentPhase)
			n, err := cancelLater(ctx, tx, run.ID, run.CurrentPhase, reason, e.now())
			if err != nil {
				return err
			}
			return e.log(ctx, tx, run.ID, "error", fmt.Sprintf(
				"phase %d closed with a failed task: the run stops here and %d later tasks are cancelled (R7)",
				run.CurrentPhase, n))
		case v.Moved > 0:
			if err := e.Failpoints.Hit(failpoint.Phase(v.Moved)); err != nil {
				return err
			}
			return e.log(ctx, tx, run.ID, "info", fmt.Sprintf("phase %d closed; phase %d begins", run.CurrentPhase, v.Moved))
		}
		return nil
	})
	if err != nil || v.Moved > 0 {
		return false, err
	}
	return e.finalize(ctx, run.ID)
}

// stopRun ends a run whose stop was requested (R14): through its row, told
// as whoever asked wrote it there (Stop), or in this process — Ctrl-C,
// SIGTERM, or the desktop that runs it closing — which asks through the
// row itself now. A request written by other means (an older crmimport, a
// database shell) is told as a request through the row, from no one named.
func (e *Engine) stopRun(ctx context.Context, run Run) (Run, error) {
	err := e.inTx(ctx, func(tx *sql.Tx) error {
		now, err := LoadRun(ctx, tx, run.ID)
		if err != nil {
			return err
		}
		how := now.Message
		switch {
		case !now.CancelRequested:
			how = fmt.Sprintf("stop requested in the process that ran it, %s (Ctrl-C, SIGTERM, or the desktop that ran it closing)", e.Self)
			if err := requestStop(ctx, tx, run.ID, how); err != nil {
				return err
			}
		case how == "":
			how = "stop requested through the run's row"
		}
		n, err := cancelQueued(ctx, tx, run.ID, "cancelled: "+how, e.now())
		if err != nil {
			return err
		}
		return e.log(ctx, tx, run.ID, "warning", fmt.Sprintf("%s: %d queued tasks cancelled", how, n))
	})
	if err != nil {
		return run, err
	}
	if _, err := e.finalize(ctx, run.ID); err != nil {
		return run, err
	}
	return LoadRun(ctx, e.DB, run.ID)
}

// runTask works on one task, batch by batch, until it is done, fails, or a
// stop is requested. It returns an error only when the run itself cannot go
// on (the database is gone, or this process lost the run).
func (e *Engine) runTask(ctx context.Context, run Run, taskID int64, open OpenFunc) error {
	db := context.WithoutCancel(ctx)
	var task Task
	err := e.inTx(db, func(tx *sql.Tx) error {
		if err := startTask(db, tx, run, taskID, e.now()); err != nil {
			return err
		}
		tasks, err := LoadTasks(db, tx, run.ID)
		if err != nil {
			return err
		}
		for _, t := range tasks {
			if t.ID == taskID {
				task = t
			}
		}
		return e.log(db, tx, run.ID, "info", fmt.Sprintf("task %d: %s from %s, phase %d, starting at record %d",
			task.ID, task.Kind.Plural(), task.File, task.Phase, task.Checkpoint.Rows))
	})
	if err != nil {
		return err
	}
	if e.OnTask != nil {
		e.OnTask(task)
	}
	// The task's input is opened with ctx: a stop while it opens (a long
	// re-read of ids, say) cancels the task, checkpoint kept.
	work, err := open(ctx, run, task)
	switch {
	case err != nil && ctx.Err() != nil:
		return e.endTask(db, task, cancelTask, "warning", "cancelled: stop requested while the task opened its input (checkpoint kept)")
	case err != nil:
		return e.endTask(db, task, failTask, "error", err.Error())
	}
	defer work.Close()
	for {
		stop, done, err := e.runBatch(ctx, run, task, work)
		var rows *RowsError
		switch {
		case errors.As(err, &rows):
			return err // the run is not ours any more, or the database lies: stop touching it
		case err != nil:
			return e.endTask(db, task, failTask, "error", err.Error())
		case done:
			return nil
		case stop || ctx.Err() != nil:
			return e.endTask(db, task, cancelTask, "warning", "cancelled: stop requested (checkpoint kept)")
		}
	}
}

// runBatch processes and commits one batch: records, slots, failures,
// counters and checkpoint in one transaction (R12).
func (e *Engine) runBatch(ctx context.Context, run Run, task Task, work *Work) (stop, done bool, err error) {
	db := context.WithoutCancel(ctx)
	if e.batches == nil {
		e.batches = map[ledger.Kind]int{}
	}
	e.batches[task.Kind]++
	n := e.batches[task.Kind]
	e.Failpoints.Pause(failpoint.Batch(task.Kind, n))

	tx, err := store.Begin(db, e.DB)
	if err != nil {
		return false, false, fmt.Errorf("batch %d of %s: %w", n, task.Kind.Plural(), err)
	}
	defer tx.Rollback()
	b, err := work.Next(db, tx)
	if err != nil {
		return false, false, fmt.Errorf("batch %d of %s: %w", n, task.Kind.Plural(), err)
	}
	if err := e.Failpoints.Fault(failpoint.Batch(task.Kind, n)); err != nil {
		return false, false, err
	}
	now := e.now()
	read, size := b.Read, work.Size
	if size <= 0 {
		size = task.Size
	}
	if b.Done && size > 0 {
		read = size // the input is read to its end
	}
	if err := checkpointTask(db, tx, task.ID, b.Checkpoint, read, size, b.Counts, now); err != nil {
		return false, false, err
	}
	if b.Done {
		if err := succeedTask(db, tx, run, task.ID, now); err != nil {
			return false, false, err
		}
		msg := fmt.Sprintf("task %d: %s from %s done at record %d", task.ID, task.Kind.Plural(), task.File, b.Checkpoint.Rows)
		if err := e.log(db, tx, run.ID, "info", msg); err != nil {
			return false, false, err
		}
	}
	stop, err = heartbeat(db, tx, run.ID, e.Self, now)
	if err != nil {
		return false, false, err
	}
	if err := e.Failpoints.Fault(failpoint.Commit(task.Kind, n)); err != nil {
		return false, false, fmt.Errorf("commit batch %d of %s: %w", n, task.Kind.Plural(), err)
	}
	if e.Failpoints.Full(failpoint.Commit(task.Kind, n)) {
		if err := fillUp(db, store.DialectOf(e.DB), tx, run.ID); err != nil {
			return false, false, fmt.Errorf("commit batch %d of %s: %w", n, task.Kind.Plural(), err)
		}
	}
	if err := tx.Commit(); err != nil {
		return false, false, fmt.Errorf("commit batch %d of %s: %w", n, task.Kind.Plural(), err)
	}
	if b.Committed != nil {
		b.Committed()
	}
	if e.OnBatch != nil {
		e.OnBatch(task)
	}
	time.Sleep(store.BatchPause) // another process's turn at the write lock
	return stop, b.Done, nil
}

type taskEdge func(ctx context.Context, tx *sql.Tx, id int64, reason, now string) error

// endTask moves a running task to failed or cancelled, in its own
// transaction, and logs why.
func (e *Engine) endTask(ctx context.Context, task Task, edge taskEdge, level, reason string) error {
	return e.inTx(ctx, func(tx *sql.Tx) error {
		if err := edge(ctx, tx, task.ID, reason, e.now()); err != nil {
			return err
		}
		return e.log(ctx, tx, task.RunID, level, fmt.Sprintf("task %d (%s from %s): %s",
			task.ID, task.Kind.Plural(), task.File, reason))
	})
}

// fillUp is the "full" failpoint: the database may not grow any more, and
// one more write needs room, so the database itself fails it as it would
// on a full disk. The limit is lifted again once the transaction is over.
// On PostgreSQL the server fails the write with its own disk_full.
func fillUp(ctx context.Context, d store.Dialect, tx *sql.Tx, runID int64) error {
	switch d {
	case store.SQLite:
		return fillFile(ctx, tx, runID)
	case store.Postgres:
		return store.DiskFull(ctx, tx) // a server's database cannot be held at its size
	default:
		panic(d.Untaught("phases.fillUp"))
	}
}

// fillFile is fillUp on a SQLite file: held at its size (store.StopGrowth).
func fillFile(ctx context.Context, tx *sql.Tx, runID int64) error {
	page, free, grow, err := store.StopGrowth(ctx, tx)
	if err != nil {
		return err
	}
	// More than the file's free pages: a resume after a run that deleted
	// rows (its relinks, an undo) has room in them.
	_, err = tx.ExecContext(ctx, `INSERT INTO run_log (migration_id, at, level, message) VALUES (?, '', 'info', ?)`,
		runID, strings.Repeat("x", int((free+4)*page)))
	if gerr := grow(); gerr != nil {
		return errors.Join(err, gerr)
	}
	if err == nil {
		return errors.New("failpoint full: the database still grew")
	}
	return err
}

package phases

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"crmimport/canon"
	"crmimport/ledger"
)

// RunStatus is a run's state (SPEC §3).
type RunStatus string

const (
	RunRunning   RunStatus = "running"
	RunSucceeded RunStatus = "succeeded"
	RunPartial   RunStatus = "partial"
	RunFailed    RunStatus = "failed"
	RunCancelled RunStatus = "cancelled"
)

// Terminal reports whether the status is final for now (resume may reopen
// partial, failed and cancelled runs).
func (s RunStatus) Terminal() bool { return s != RunRunning }

// TaskStatus is a task's state.
type TaskStatus string

const (
	TaskPending   TaskStatus = "pending"
	TaskRunning   TaskStatus = "running"
	TaskSucceeded TaskStatus = "succeeded"
	TaskFailed    TaskStatus = "failed"
	TaskCancelled TaskStatus = "cancelled"
)

// Phase returns the phase of kind in the default plan (R7), as the table
// of kinds gives it (canon.Phase): every kind after its parents. A kind
// that has no row panics naming it.
func Phase(k ledger.Kind) int { return canon.Phase(k) }

// InPhaseOrder is kinds once each, in the order of their phases (kinds of
// one phase by name): how doctor's repairs and the Skipped page list them.
func InPhaseOrder(kinds []ledger.Kind) []ledger.Kind {
	seen := map[ledger.Kind]bool{}
	var out []ledger.Kind
	for _, k := range kinds {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return Phase(out[i]) < Phase(out[j]) || Phase(out[i]) == Phase(out[j]) && out[i] < out[j]
	})
	return out
}

// Counts are the outcomes of records, per task and rolled up per kind.
// Imported counts created and matched records; Failed counts duplicates.
type Counts struct {
	Imported  int64 `json:"imported"`
	Unchanged int64 `json:"unchanged"`
	Skipped   int64 `json:"skipped"`
	Failed    int64 `json:"failed"`
	Matched   int64 `json:"matched"`
	Unlinked  int64 `json:"unlinked"`
	// Unowned counts records imported with an owner that did not resolve
	// (R6a): never counted in Unlinked.
	Unowned int64 `json:"unowned"`
	// Relinked counts links of this kind's rows that the run completed
	// when their parents arrived (R6a), read or not: a run's count of a
	// kind that no task of the kind holds (KindCounts). An undo counts the
	// links it empties again in Unlinked.
	Relinked  int64 `json:"relinked"`
	Duplicate int64 `json:"duplicate"`
	// Changes at the source (R17, SPEC §11). Of Imported: Updated, the
	// records written as an update of their row (Overwritten of them over
	// a hand edit, under --update=overwrite). Of Unchanged: Outdated, the
	// records whose content differs from what their slot says was last
	// written (Conflict of them because their row was edited since),
	// and DeletedSince, those now deleted in the source. Adopted counts
	// the slots without hashes that took the record's (a dump's
	// placeholder, a slot of an older file).
	Updated      int64 `json:"updated"`
	Overwritten  int64 `json:"overwritten"`
	Outdated     int64 `json:"outdated"`
	Conflict     int64 `json:"conflict"`
	DeletedSince int64 `json:"deleted_since"`
	Adopted      int64 `json:"adopted,omitempty"`
	// NULKept counts the records imported with a NUL byte in a column kept
	// in extra (SPEC §4): kept there, and said in a warning. Given only
	// when there are some.
	NULKept int64 `json:"nul_kept,omitempty"`
	// Excluded counts the rows a task read that are not records of its
	// kind (a profile's where, SPEC §4): no outcome, never a failure.
	Excluded int64 `json:"excluded"`
	// Untaken counts, of those, the rows that no kind of the file takes:
	// counted by the first task of the file, and told as a warning per
	// file (report), not per kind.
	Untaken int64 `json:"-"`
	// An undo's outcomes (R16): target rows removed with their slots,
	// matched slots released, slots given back their before-image, and
	// skips deleted with nothing earlier to give back. Zero for an import.
	Removed  int64 `json:"removed,omitempty"`
	Released int64 `json:"released,omitempty"`
	Restored int64 `json:"restored,omitempty"`
	Cleared  int64 `json:"cleared,omitempty"`
	// Reverted counts the rows an undo gave their before-image back (R17:
	// the updates of the run it takes back).
	Reverted int64 `json:"reverted,omitempty"`
	// Undo makes the JSON of an undo's counts name all four of its
	// outcomes, zeros included (SPEC §10); it is not itself written.
	Undo bool `json:"-"`
}

// MarshalJSON writes the counts; an undo's (Undo) with its four outcomes
// even when they are zero.
func (c Counts) MarshalJSON() ([]byte, error) {
	type plain Counts
	if !c.Undo {
		return json.Marshal(plain(c))
	}
	return json.Marshal(struct {
		plain
		Removed  int64 `json:"removed"`
		Released int64 `json:"released"`
		Restored int64 `json:"restored"`
		Cleared  int64 `json:"cleared"`
		Reverted int64 `json:"reverted"`
	}{plain(c), c.Removed, c.Released, c.Restored, c.Cleared, c.Reverted})
}

// Add adds d to c.
func (c *Counts) Add(d Counts) {
	c.Imported += d.Imported
	c.Unchanged += d.Unchanged
	c.Skipped += d.Skipped
	c.Failed += d.Failed
	c.Matched += d.Matched
	c.Unlinked += d.Unlinked
	c.Unowned += d.Unowned
	c.Relinked += d.Relinked
	c.Duplicate += d.Duplicate
	c.Updated += d.Updated
	c.Overwritten += d.Overwritten
	c.Outdated += d.Outdated
	c.Conflict += d.Conflict
	c.DeletedSince += d.DeletedSince
	c.Adopted += d.Adopted
	c.Reverted += d.Reverted
	c.NULKept += d.NULKept
	c.Excluded += d.Excluded
	c.Untaken += d.Untaken
	c.Removed += d.Removed
	c.Released += d.Released
	c.Restored += d.Restored
	c.Cleared += d.Cleared
}

// Total is the number of records with an outcome.
func (c Counts) Total() int64 { return c.Imported + c.Unchanged + c.Skipped + c.Failed }

// TakenBack is the number of slots an undo took back.
func (c Counts) TakenBack() int64 { return c.Removed + c.Released + c.Restored + c.Cleared }

// Checkpoint is where a task stands: records consumed and the line reached
// in its file (never a byte offset into decoded text).
type Checkpoint struct {
	Rows int64 `json:"rows"`
	Line int64 `json:"line"`
}

// Owner is the process that owns a running run (R13), and the database
// file it has open.
type Owner struct {
	Host    string
	PID     int
	Started string // the process's start time as the OS tells it, against pid reuse
	// File is the database file the owner has open, by device and inode
	// (store.FileID): in a copy of the file, the run's owner is not at
	// work. "" where it is not known (runs of an older schema).
	File string
}

func (o Owner) String() string { return fmt.Sprintf("pid %d on %s", o.PID, o.Host) }

// Run is a row of migrations.
type Run struct {
	ID              int64
	Tenant          string
	Source          string
	Status          RunStatus
	CurrentPhase    int
	CancelRequested bool
	Stats           map[ledger.Kind]Counts
	Options         json.RawMessage
	StartedAt       time.Time
	FinishedAt      *time.Time
	DurationMS      *int64
	Message         string
	Owner           Owner
	HeartbeatAt     *time.Time
	Attempts        int
	// Undoes is the run an undo takes back (R16), 0 for an import;
	// UndoneBy the undo that took this run back, 0 while none has.
	Undoes, UndoneBy int64
}

// PlanWarnings are the warnings planning kept with the run: its planner
// keeps PlanSpec.Warnings in the run's options, under "warnings", so that
// its summary and report repeat them whenever they are shown. A run loaded
// from a dump carries production's options, which may hold anything:
// options that do not read so have no warnings.
func (r Run) PlanWarnings() []string {
	var o struct {
		Warnings []string `json:"warnings"`
	}
	if json.Unmarshal(r.Options, &o) != nil {
		return nil
	}
	return o.Warnings
}

// Task is a row of migration_tasks.
type Task struct {
	ID          int64
	RunID       int64
	Kind        ledger.Kind
	Phase       int
	Status      TaskStatus
	File        string
	Format      string
	Encoding    string
	Fingerprint string
	// InputKey is the file's fingerprint together with everything that
	// decides which records the task reads from it (format, encoding,
	// profile, the files read beside it): two tasks with the same key read
	// the same records. "" for a task planned without one.
	InputKey   string
	Checkpoint Checkpoint
	// Size is the input's size in bytes as progress measures it (a
	// file's, a gzip's compressed, a zip entry's uncompressed), 0 when
	// unknown: a task planned before schema 6 until a batch of it commits.
	Size int64
	// Read is how far into those bytes the committed checkpoint has read
	// (Batch.Read), stored with it: a resumed task starts from it.
	Read      int64
	Attempt   Attempt
	Attempts  int
	LastError string
	Counts    Counts
	UpdatedAt time.Time
}

// Attempt is when a task last started and where its checkpoint stood then
// (records and bytes read), for the rate of that attempt (progress.go).
type Attempt struct {
	StartedAt *time.Time // nil: not started since it was planned or re-armed
	Rows      int64
	Bytes     int64
}

// queryer is a *sql.DB or a *sql.Tx.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// ErrNoRun is returned for a run id that does not exist.
var ErrNoRun = errors.New("no such run")

const runColumns = `id, tenant_id, source, status, current_phase, cancellation_requested, stats, options,
	started_at, finished_at, duration_ms, message, owner_host, owner_pid, owner_started, heartbeat_at, attempts,
	coalesce(owner_file, ''), coalesce(undoes, 0), coalesce(undone_by, 0)`

const loadRunSQL = `SELECT ` + runColumns + ` FROM migrations WHERE id = ?`

// LoadRun reads one run.
func LoadRun(ctx context.Context, q queryer, id int64) (Run, error) {
	r, err := scanRun(q.QueryRowContext(ctx, loadRunSQL, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, fmt.Errorf("run %d: %w", id, ErrNoRun)
	}
	if err != nil {
		return Run{}, fmt.Errorf("load run %d: %w", id, err)
	}
	return r, nil
}

const listRunsSQL = `SELECT ` + runColumns + ` FROM migrations
WHERE ? = '' OR tenant_id = ? ORDER BY id DESC`

// ListRuns reads every run, newest first, of one tenant or ("") all.
func ListRuns(ctx context.Context, q queryer, tenant string) ([]Run, error) {
	rows, err := q.QueryContext(ctx, listRunsSQL, tenant, tenant)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

type scanner interface{ Scan(dest ...any) error }

func scanRun(s scanner) (Run, error) {
	var (
		r                                        Run
		status                                   string
		cancel                                   int
		stats, message, host, started, heartbeat sql.NullString
		startedAt                                string
		finishedAt                               sql.NullString
		duration, pid                            sql.NullInt64
		options                                  string
	)
	err := s.Scan(&r.ID, &r.Tenant, &r.Source, &status, &r.CurrentPhase, &cancel, &stats, &options,
		&startedAt, &finishedAt, &duration, &message, &host, &pid, &started, &heartbeat, &r.Attempts, &r.Owner.File, &r.Undoes, &r.UndoneBy)
	if err != nil {
		return Run{}, err
	}
	r.Status = RunStatus(status)
	r.CancelRequested = cancel == 1
	r.Options = json.RawMessage(options)
	r.Message = message.String
	r.Owner.Host, r.Owner.PID, r.Owner.Started = host.String, int(pid.Int64), started.String
	if r.StartedAt, err = ledger.ParseTime(startedAt); err != nil {
		return Run{}, fmt.Errorf("run %d: started_at: %w", r.ID, err)
	}
	if finishedAt.Valid {
		t, err := ledger.ParseTime(finishedAt.String)
		if err != nil {
			return Run{}, fmt.Errorf("run %d: finished_at: %w", r.ID, err)
		}
		r.FinishedAt = &t
	}
	if heartbeat.Valid {
		t, err := ledger.ParseTime(heartbeat.String)
		if err != nil {
			return Run{}, fmt.Errorf("run %d: heartbeat_at: %w", r.ID, err)
		}
		r.HeartbeatAt = &t
	}
	if duration.Valid {
		d := duration.Int64
		r.DurationMS = &d
	}
	if stats.Valid && stats.String != "" {
		if err := json.Unmarshal([]byte(stats.String), &r.Stats); err != nil {
			return Run{}, fmt.Errorf("run %d: stats: %w", r.ID, err)
		}
	}
	return r, nil
}

const loadTasksSQL = `SELECT id, migration_id, kind, phase, status, file, format, encoding, fingerprint,
	coalesce(input_key, ''), checkpoint, attempts, last_error, imported, matched, unchanged, skipped, failed, duplicate, unlinked, updated_at,
	input_size, read_bytes, attempt_started_at, attempt_rows, attempt_bytes, removed, released, restored, cleared, nul_kept, excluded, untaken,
	updated, overwritten, outdated, conflict, deleted_since, adopted, reverted, unowned
FROM migration_tasks WHERE migration_id = ? ORDER BY phase, id`

// LoadTasks reads a run's tasks in plan order.
func LoadTasks(ctx context.Context, q queryer, runID int64) ([]Task, error) {
	rows, err := q.QueryContext(ctx, loadTasksSQL, runID)
	if err != nil {
		return nil, fmt.Errorf("load tasks of run %d: %w", runID, err)
	}
	defer rows.Close()
	var out []Task
	for rows.Next() {
		var (
			t                                         Task
			kind, status, checkpoint, updatedAt       string
			file, format, enc, fp, lastError, attempt sql.NullString
		)
		err := rows.Scan(&t.ID, &t.RunID, &kind, &t.Phase, &status, &file, &format, &enc, &fp,
			&t.InputKey, &checkpoint, &t.Attempts, &lastError, &t.Counts.Imported, &t.Counts.Matched, &t.Counts.Unchanged,
			&t.Counts.Skipped, &t.Counts.Failed, &t.Counts.Duplicate, &t.Counts.Unlinked, &updatedAt,
			&t.Size, &t.Read, &attempt, &t.Attempt.Rows, &t.Attempt.Bytes,
			&t.Counts.Removed, &t.Counts.Released, &t.Counts.Restored, &t.Counts.Cleared, &t.Counts.NULKept, &t.Counts.Excluded, &t.Counts.Untaken,
			&t.Counts.Updated, &t.Counts.Overwritten, &t.Counts.Outdated, &t.Counts.Conflict, &t.Counts.DeletedSince,
			&t.Counts.Adopted, &t.Counts.Reverted, &t.Counts.Unowned)
		if err != nil {
			return nil, fmt.Errorf("load tasks of run %d: %w", runID, err)
		}
		t.Kind, t.Status = ledger.Kind(kind), TaskStatus(status)
		t.File, t.Format, t.Encoding, t.Fingerprint = file.String, format.String, enc.String, fp.String
		t.LastError = lastError.String
		if err := json.Unmarshal([]byte(checkpoint), &t.Checkpoint); err != nil {
			return nil, fmt.Errorf("task %d: checkpoint %q: %w", t.ID, checkpoint, err)
		}
		if attempt.Valid {
			at, err := ledger.ParseTime(attempt.String)
			if err != nil {
				return nil, fmt.Errorf("task %d: attempt_started_at: %w", t.ID, err)
			}
			t.Attempt.StartedAt = &at
		}
		if t.UpdatedAt, err = ledger.ParseTime(updatedAt); err != nil {
			return nil, fmt.Errorf("task %d: updated_at: %w", t.ID, err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// Rollup sums the tasks' counts per kind; every planned kind is present.
func Rollup(tasks []Task) map[ledger.Kind]Counts {
	out := map[ledger.Kind]Counts{}
	for _, t := range tasks {
		c := out[t.Kind]
		c.Add(t.Counts)
		out[t.Kind] = c
	}
	return out
}

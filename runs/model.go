package runs

import (
	"context"
	"database/sql"
	"time"

	"crmimport/failpoint"
	"crmimport/importer"
	"crmimport/importer/profile"
	"crmimport/importer/runopts"
	"crmimport/phases"
)

// What the faces read of runs and tasks, as phases keeps them (R10–R15):
// plain data, and the engine the faces make once and pass back here.
type (
	Engine     = phases.Engine
	Run        = phases.Run
	Task       = phases.Task
	Counts     = phases.Counts
	RunStatus  = phases.RunStatus
	TaskStatus = phases.TaskStatus
	Progress   = phases.Progress
	// Options are an import's options as its run keeps them (R10).
	Options = runopts.Options
)

// The states a face tells apart (SPEC §3).
const (
	RunRunning    = phases.RunRunning
	RunSucceeded  = phases.RunSucceeded
	RunPartial    = phases.RunPartial
	RunFailed     = phases.RunFailed
	RunCancelled  = phases.RunCancelled
	TaskPending   = phases.TaskPending
	TaskRunning   = phases.TaskRunning
	TaskFailed    = phases.TaskFailed
	TaskCancelled = phases.TaskCancelled
)

// ErrNoRun is a run id the database does not hold.
var ErrNoRun = phases.ErrNoRun

// NewEngine is the engine over db, with the failpoints of fps (SPEC §8;
// nil for none).
func NewEngine(db *sql.DB, fps *failpoint.Set) *Engine { return phases.New(db, fps) }

// LoadRun reads run id.
func LoadRun(ctx context.Context, db *sql.DB, id int64) (Run, error) {
	return phases.LoadRun(ctx, db, id)
}

// ListRuns reads the runs of tenant ("" for all).
func ListRuns(ctx context.Context, db *sql.DB, tenant string) ([]Run, error) {
	return phases.ListRuns(ctx, db, tenant)
}

// LoadTasks reads run id's tasks.
func LoadTasks(ctx context.Context, db *sql.DB, id int64) ([]Task, error) {
	return phases.LoadTasks(ctx, db, id)
}

// LoadedFrom is the dump run id was loaded from, "" for a run planned here.
func LoadedFrom(ctx context.Context, db *sql.DB, id int64) (string, error) {
	return phases.LoadedFrom(ctx, db, id)
}

// TaskProgress and TasksProgress are how far a task, or tasks, have read
// their input, as stored (the run page, the bars and `runs` agree).
func TaskProgress(t Task, now time.Time) Progress { return phases.TaskProgress(t, now) }

// TasksProgress: see TaskProgress.
func TasksProgress(tasks []Task, now time.Time) Progress { return phases.TasksProgress(tasks, now) }

// OptionsOf reads an import's options as its run keeps them.
func OptionsOf(r Run) (Options, error) { return runopts.Decode(r) }

// ProfileByName is the built-in profile of name ("" for canonical); an
// unknown name is a *UsageError listing the others.
func ProfileByName(name string) (*profile.Profile, error) { return importer.ProfileByName(name) }

// ResolveProfile is the profile a --profile value names, as a run reads
// it: a built-in name, or a profile file (a *UsageError when it is wrong).
func ResolveProfile(nameOrFile string) (*profile.Profile, error) {
	return importer.ResolveProfile(nameOrFile)
}

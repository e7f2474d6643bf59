package runs

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"crmimport/importer"
	"crmimport/importer/input"
	"crmimport/phases"
	"crmimport/store"
	"crmimport/undo"
)

// Watch is what a face is told while a run it asked for works: all
// optional. The command line draws its progress bars on the engine,
// stops on a signal once it knows the run's id, and prints the notes on
// stderr; the desktop logs them.
type Watch struct {
	// Engine is given each engine before it works (a dry run's is over
	// the copy), to hang progress on.
	Engine func(e *phases.Engine)
	// Started is told the run's id once it is planned or taken over.
	Started func(id int64)
	// Note is told what happens: the run planned, with its tasks.
	Note func(msg string)
	// Warn is told what went wrong around the run without failing it (a
	// dry run's copy that could not be removed).
	Warn func(msg string)
}

func (w Watch) engine(e *phases.Engine) {
	if w.Engine != nil {
		w.Engine(e)
	}
}

func (w Watch) started(id int64) {
	if w.Started != nil {
		w.Started(id)
	}
}

func (w Watch) note(format string, args ...any) {
	if w.Note != nil {
		w.Note(fmt.Sprintf(format, args...))
	}
}

func (w Watch) warn(format string, args ...any) {
	if w.Warn != nil {
		w.Warn(fmt.Sprintf(format, args...))
	}
}

// Start plans a run of spec and commits it with its plan (R10), before its
// first record is read: with spec.Plan, only the plan a dry run showed
// (*importer.PlanChangedError, exit 8). A second live run of the tenant is
// refused (*phases.AdmissionError, R13). Execute then works on it.
func Start(ctx context.Context, e *phases.Engine, spec Spec) (phases.Run, error) {
	return importer.New(e).Plan(ctx, spec)
}

// Execute works on a planned or resumed run until it ends or ctx stops it
// (R14): an import reads its files (importer), an undo takes back its items
// (undo, R16).
func Execute(ctx context.Context, e *phases.Engine, id int64) (phases.Run, error) {
	run, err := phases.LoadRun(ctx, e.DB, id)
	if err != nil {
		return phases.Run{}, err
	}
	if run.Undoes != 0 {
		return e.Execute(ctx, id, undo.Open(e.DB))
	}
	return importer.New(e).Execute(ctx, id)
}

// Import plans a run of spec on e and works on it to its end: the command
// line's `run`. Its outcome is the run's summary; its error, one that came
// before the run existed (a stop then is *StoppedError).
func Import(ctx context.Context, e *phases.Engine, spec Spec, w Watch) (*Outcome, error) {
	return run(ctx, e, spec, w, "")
}

func run(ctx context.Context, e *phases.Engine, spec Spec, w Watch, dryRun string) (*Outcome, error) {
	w.engine(e)
	// A new tenant named like an existing one is said before the run's
	// notes (issue 27 item 3): asked before the run makes it a tenant.
	like, err := Lookalike(ctx, e.DB, spec.Tenant)
	if err != nil {
		return nil, err
	}
	r, err := Start(ctx, e, spec)
	if err != nil {
		if ctx.Err() != nil {
			return nil, &StoppedError{What: "planning (reading the export's files), before any run existed"}
		}
		return nil, err
	}
	w.started(r.ID)
	if like != "" {
		w.warn("%s", LookalikeWarning(spec.Tenant, like, r.ID, dryRun != ""))
	}
	w.note("run %d planned: tenant %s, source %s — %s", r.ID, r.Tenant, r.Source, Describe(ctx, e, r.ID))
	_, execErr := Execute(ctx, e, r.ID)
	return Finish(ctx, e, r.ID, execErr, dryRun)
}

// DryRun is a run on a throwaway copy of the database at addr
// (store.Throwaway: a copy of the file, or a schema beside a server's,
// dropped after): what the run would do, with nothing written. The copy's
// engine (made by engine) stands for the database (R13: a live run of the
// tenant refuses it as it would the run). Its summary names no run, and the
// database without its password.
func DryRun(ctx context.Context, addr string, engine func(*sql.DB) *phases.Engine, spec Spec, w Watch) (_ *Outcome, err error) {
	standFor, err := store.FileIDOf(addr)
	if err != nil {
		return nil, err
	}
	tmp, cleanup, err := store.Throwaway(ctx, addr)
	if err != nil {
		return nil, err
	}
	defer func() {
		// The dry run is over whatever became of its copy: a copy left
		// behind is a warning that says what to remove, not its failure.
		if err := cleanup(); err != nil {
			w.warn("dry run: %v", err)
		}
	}()
	w.note("dry run: working on a throwaway copy of %s; nothing will be written to it", store.Name(addr))
	db, err := store.Open(ctx, tmp)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	e := engine(db)
	e.StandFor(standFor) // the copy stands for the database (R13)
	return run(ctx, e, spec, w, store.Name(addr))
}

// Describe says what a run will do: its tasks left, by phase.
func Describe(ctx context.Context, e *phases.Engine, id int64) string {
	tasks, err := phases.LoadTasks(ctx, e.DB, id)
	if err != nil {
		return err.Error()
	}
	var parts []string
	for _, t := range tasks {
		if t.Status != phases.TaskPending {
			continue
		}
		p := fmt.Sprintf("%d %s (%s)", t.Phase, t.Kind.Plural(), input.Name(t.File))
		if t.Checkpoint.Rows > 0 {
			p += " from record " + strconv.FormatInt(t.Checkpoint.Rows+1, 10)
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return "no task left to run"
	}
	return fmt.Sprintf("%d tasks: %s", len(parts), strings.Join(parts, ", "))
}

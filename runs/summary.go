package runs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"crmimport/importer/runopts"
	"crmimport/phases"
	"crmimport/report"
	"crmimport/undo"
)

// Report builds run id's page (report.Build) as both faces show it: with
// its --strict taken from the run's own options, so that `report RUN`, the
// run page and the run's own summary give the same advice (exit 7).
func Report(ctx context.Context, db *sql.DB, e *phases.Engine, id int64, withLog bool) (*report.Report, error) {
	r, err := report.Build(ctx, db, e, id, withLog)
	if err != nil {
		return nil, err
	}
	strict(r)
	return r, nil
}

// List is every run of tenant ("" for all), newest first, as Report
// builds each.
func List(ctx context.Context, db *sql.DB, e *phases.Engine, tenant string) ([]*report.Report, error) {
	rs, err := report.List(ctx, db, e, tenant)
	if err != nil {
		return nil, err
	}
	for _, r := range rs {
		strict(r)
	}
	return rs, nil
}

// strict fills r.Strict from the run's options (an undo's, or a run's
// loaded from a dump, have none).
func strict(r *report.Report) {
	if r.Run.Undoes != 0 {
		return
	}
	opts, _ := runopts.Decode(r.Run)
	r.Strict = opts.Strict
}

// Outcome is how a run that a face worked on to its end came out.
type Outcome struct {
	Report *report.Report
	// Err is why the engine could not go on: the run is left for resume.
	Err error
}

// Finish builds the outcome of run id once Execute returned execErr. A dry
// run's (dryRun: the database it left untouched) names no run.
func Finish(ctx context.Context, e *phases.Engine, id int64, execErr error, dryRun string) (*Outcome, error) {
	r, err := Report(context.WithoutCancel(ctx), e.DB, e, id, false)
	if err != nil {
		if execErr != nil {
			return nil, execErr
		}
		return nil, err
	}
	r.DryRun = dryRun
	return &Outcome{Report: r, Err: execErr}, nil
}

// Summary is the run's JSON summary (SPEC §5); a run the engine could not
// go on with says first that resume continues it.
func (o *Outcome) Summary() report.Summary {
	s := o.Report.Summary()
	if o.Err != nil && o.Report.DryRun == "" {
		s.Next = append([]string{fmt.Sprintf("`crmimport resume %d` continues where it stopped", o.Report.Run.ID)}, s.Next...)
	}
	return s
}

// Code is the exit code the outcome calls for: the run's status (3
// partial, 4 failed, 5 cancelled, 7 under --strict for skips, or records
// outdated, in conflict or deleted since at the source: R17), 1 when the
// engine could not go on or the run was interrupted.
func (o *Outcome) Code() int {
	if o.Err != nil {
		return ExitError
	}
	r := o.Report
	return StatusCode(r.Run.Status, r.Interrupted, r.StrictExit())
}

// Undoable is whether the undo of a run would be accepted, as the run
// page's Undo shows it: alone (Total slots), or under cascade (Dependents
// records of other runs); else Why not.
type Undoable struct {
	OK         bool
	Total      int
	Dependents int
	Why        string
}

// CanUndo says whether run id can be undone now (undo.Build, writing
// nothing).
func CanUndo(ctx context.Context, q undo.Querier, e *phases.Engine, id int64) Undoable {
	p, err := undo.Build(ctx, q, e, id, false)
	var (
		adm *phases.AdmissionError
		ref *undo.RefusedError
		dep *undo.DependentsError
	)
	switch {
	case err == nil:
		return Undoable{OK: true, Total: p.Total()}
	case errors.As(err, &adm):
		return Undoable{Why: "the run is live: stop it first (R13), then undo it"}
	case errors.As(err, &ref):
		return Undoable{Why: ref.Msg}
	case errors.As(err, &dep):
		n := 0
		for _, d := range dep.Dependents {
			n += d.Count
		}
		return Undoable{OK: true, Dependents: n}
	default:
		return Undoable{Why: err.Error()}
	}
}

// Page is a run's page as JSON (`report RUN --format json`, the desktop's
// GET /api/runs/RUN): report.Full, with the exit code its outcome calls
// for once it has one — what `crmimport run` or `resume` exited with, or
// would have — so that the faces can be held to the same.
type Page struct {
	report.Full
	ExitCode *int `json:"exit_code,omitempty"`
}

// PageOf is r's page.
func PageOf(r *report.Report) Page {
	p := Page{Full: r.Full()}
	if r.Run.Status != phases.RunRunning || r.Interrupted {
		code := (&Outcome{Report: r}).Code()
		p.ExitCode = &code
	}
	return p
}

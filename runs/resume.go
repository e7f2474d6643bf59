package runs

import (
	"context"
	"fmt"
	"time"

	"crmimport/importer"
	"crmimport/phases"
)

// StartResume re-arms run id (R8) after checking that the files its
// re-armed tasks read are still those it planned (R10); with from, a run
// loaded from a dump is planned over that local export instead
// (importer.ResumeFrom). It returns the run and the tasks re-armed;
// Execute then works on it. A live run of the tenant refuses it (R13).
func StartResume(ctx context.Context, e *phases.Engine, id int64, from string) (phases.Run, []phases.Task, error) {
	imp := importer.New(e)
	if from != "" {
		return imp.ResumeFrom(ctx, id, from)
	}
	return imp.Resume(ctx, id)
}

// Resume re-arms run id and works on it to its end: the command line's
// `resume` (from: see StartResume).
func Resume(ctx context.Context, e *phases.Engine, id int64, from string, w Watch) (*Outcome, error) {
	w.engine(e)
	w.started(id)
	r, rearmed, err := StartResume(ctx, e, id, from)
	if err != nil {
		if ctx.Err() != nil {
			return nil, &StoppedError{What: fmt.Sprintf("checking the files of run %d, before it was resumed", id)}
		}
		return nil, err
	}
	how := "re-armed"
	if from != "" {
		how = "planned over " + from
	}
	w.note("run %d resumed: %d tasks %s — %s", r.ID, len(rearmed), how, Describe(ctx, e, r.ID))
	_, execErr := Execute(ctx, e, r.ID)
	return Finish(ctx, e, r.ID, execErr, "")
}

// Stopped is what a stop came to (R14).
type Stopped struct {
	Run       int64            `json:"run"`
	Status    phases.RunStatus `json:"status"`
	Stopped   bool             `json:"stopped"`   // the run is cancelled
	Requested bool             `json:"requested"` // the stop was asked of a live run, which reads it after its batch in flight
}

// Stop asks run id to stop, by who (as the run's log and its tasks tell
// it): a live run reads the request in its row after its batch in flight;
// one whose process is gone, or that works on another file than this one,
// is cancelled at once. A requested stop is waited for up to wait (0: not
// at all); a run whose process dies meanwhile is cancelled here.
func Stop(ctx context.Context, e *phases.Engine, id int64, by string, wait time.Duration, w Watch) (Stopped, error) {
	r, requested, err := e.Stop(ctx, id, by)
	if err != nil {
		return Stopped{}, err
	}
	if requested {
		w.note("stop requested: run %d stops after its current batch", id)
		deadline := time.Now().Add(wait)
		for r.Status == phases.RunRunning && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
			if r, err = phases.LoadRun(ctx, e.DB, id); err != nil {
				return Stopped{}, err
			}
			if r.Status == phases.RunRunning && e.Interrupted(r) {
				// Its process died before it could stop: cancel it here.
				if r, _, err = e.Stop(ctx, id, by); err != nil {
					return Stopped{}, err
				}
			}
		}
	}
	return Stopped{Run: id, Status: r.Status, Stopped: r.Status == phases.RunCancelled, Requested: requested}, nil
}

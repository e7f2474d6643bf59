package runs

import (
	"context"

	"crmimport/phases"
	"crmimport/undo"
)

// UndoOptions are an undo's options (undo.Options): the run it takes back,
// --cascade, the plan a preview showed (--plan, the page's confirmation)
// with its parts when the face has them, and the batch size.
type UndoOptions = undo.Options

// UndoPreview is what an undo would take back, as `undo --dry-run --json`
// prints it and the page shows it (undo.Preview).
type UndoPreview = undo.Preview

// UndoPlanPart is a part of an undo's plan, as its preview lists it and the
// page sends it back.
type UndoPlanPart = undo.PlanPart

// Dependent is what one other run has that depends on an undone run's
// rows (R16), as a refusal lists it.
type Dependent = undo.Dependent

// UndoBatchSize is how many slots a batch of an undo takes back by default.
const UndoBatchSize = undo.BatchSize

// CheckUndo refuses undo options that cannot be right as written (exit 2):
// a plan that is no digest, parts that are not a preview's, a batch size
// below 1. plan is how the face spells the plan's field.
func CheckUndo(o UndoOptions, plan string) error {
	switch {
	case o.Plan != "" && !undo.ValidDigest(o.Plan):
		return Usagef("%s takes the 64 hex digits of a plan's digest, as `crmimport undo %d --dry-run` prints it "+
			"(and GET /api/runs/%d/undo answers it); got %q", plan, o.Undo, o.Undo, o.Plan)
	case o.BatchSize < 0:
		return Usagef("the batch size must be at least 1, got %d", o.BatchSize)
	}
	if err := undo.CheckParts(o.Shown); err != nil {
		return Usagef("parts are not those of a preview (as GET /api/runs/%d/undo answers them): %v", o.Undo, err)
	}
	return nil
}

// PreviewUndo is what the undo of o.Undo would take back now, writing
// nothing (undo.Build), or its refusal (R16). With o.Plan, a plan that
// changed since is refused (*undo.PlanChangedError, exit 8) with what it
// would take back now.
func PreviewUndo(ctx context.Context, q undo.Querier, e *phases.Engine, o UndoOptions) (UndoPreview, error) {
	p, err := undo.Build(ctx, q, e, o.Undo, o.Cascade)
	if o.Plan != "" && p != nil && p.Digest != o.Plan {
		return UndoPreview{}, &undo.PlanChangedError{Run: o.Undo, Cascade: o.Cascade, Want: o.Plan, Now: p}
	}
	if err != nil {
		return UndoPreview{}, err
	}
	return p.Preview(), nil
}

// StartUndo plans the undo (R16) and commits it (R10: its run, tasks and
// items, before the first is taken back); Execute then works on it. It
// returns the undo's run, how many slots it takes back, and the other runs'
// records it takes back too (--cascade).
func StartUndo(ctx context.Context, e *phases.Engine, o UndoOptions) (phases.Run, int, []Dependent, error) {
	if err := CheckUndo(o, "plan"); err != nil {
		return phases.Run{}, 0, nil, err
	}
	r, p, err := undo.StartWith(ctx, e, o)
	if err != nil {
		return phases.Run{}, 0, nil, err
	}
	return r, p.Total(), p.Dependents, nil
}

// Undo plans the undo of o.Undo and works on it to its end: the command
// line's `undo`.
func Undo(ctx context.Context, e *phases.Engine, o UndoOptions, w Watch) (*Outcome, error) {
	w.engine(e)
	r, total, deps, err := StartUndo(ctx, e, o)
	if err != nil {
		return nil, err
	}
	w.started(r.ID)
	w.note("run %d planned: the undo of run %d — %d slots to take back — %s", r.ID, o.Undo, total, Describe(ctx, e, r.ID))
	for _, d := range deps {
		w.note("taken back too (--cascade): %s", d)
	}
	_, execErr := Execute(ctx, e, r.ID)
	return Finish(ctx, e, r.ID, execErr, "")
}

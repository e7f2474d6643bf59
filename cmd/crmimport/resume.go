package main

import (
	"strconv"
	"sync/atomic"

	"github.com/urfave/cli/v2"

	"crmimport/importer"
)

func (a *app) resumeCommand() *cli.Command {
	return &cli.Command{
		Name:      "resume",
		Aliases:   []string{"retry"},
		Usage:     "continue an interrupted, stopped, partial or failed run where it left off",
		ArgsUsage: "RUN",
		Description: `Re-arms the run's failed and cancelled tasks (and those of a process that is
gone) with their checkpoints, moves the phase barrier back to the earliest of
them, and works from there under the same run id. A run resumed ends in the
same database as a run never interrupted. A file that changed since the run
was planned is refused: start a new run instead, which the ledger makes safe.

Examples:
   crmimport resume 7
   crmimport retry 7 --json`,
		Action: a.resumeAction,
	}
}

func (a *app) resumeAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("resume takes one RUN id")
	}
	id, err := strconv.ParseInt(c.Args().First(), 10, 64)
	if err != nil || id < 1 {
		return usagef("resume: %q is not a run id (see `crmimport runs`)", c.Args().First())
	}
	db, err := a.open(c.Context)
	if err != nil {
		return err
	}
	defer db.Close()
	imp := importer.New(a.engine(db))
	var runID atomic.Int64
	runID.Store(id)
	ctx, stop := a.stopOnSignal(c.Context, runID.Load)
	defer stop()
	progress := a.progress(imp)
	defer progress.finish()

	run, rearmed, err := imp.Resume(ctx, id)
	if err != nil {
		return err
	}
	a.note("run %d resumed: %d tasks re-armed — %s", run.ID, len(rearmed), describePlan(ctx, imp, run.ID))
	_, execErr := imp.Execute(ctx, run.ID)
	progress.finish()
	return a.finish(ctx, imp, run.ID, execErr)
}

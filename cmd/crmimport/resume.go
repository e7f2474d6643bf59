package main

import (
	"sync/atomic"

	"github.com/urfave/cli/v2"

	"crmimport/runs"
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

A run loaded from a dump (` + "`crmimport ledger load`" + `) has no input files here.
--from PATH points its unfinished tasks — pending, running, failed or
cancelled, whatever the run's status, so that you see what the engine does
with a stranded or falsely finished production run — at PATH's files (the
canonical format), each read from its beginning; a kind left to do that PATH
has no file for is refused before anything changes.

Examples:
   crmimport resume 7
   crmimport retry 7 --json
   crmimport --db incident.db resume 1 --from ./export-of-missing-contacts`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "from", Usage: "a local export to plan a run loaded from a dump over (R10)"},
		},
		Action: a.resumeAction,
	}
}

func (a *app) resumeAction(c *cli.Context) error {
	id, err := runArg(c, "resume takes one RUN id (and --from PATH for a run loaded from a dump)")
	if err != nil {
		return err
	}
	from := c.String("from")
	if c.IsSet("from") && from == "" {
		return usagef("--from needs a PATH: a local export in the canonical format")
	}
	db, err := a.open(c.Context)
	if err != nil {
		return err
	}
	defer db.Close()
	var runID atomic.Int64
	ctx, stop := a.stopOnSignal(c.Context, runID.Load)
	defer stop()
	progress := a.progress()
	defer progress.finish()
	out, err := runs.Resume(ctx, a.engine(db), id, from, a.watch(progress, &runID))
	progress.finish()
	return a.finish(out, err)
}

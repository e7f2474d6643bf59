package main

import (
	"time"

	"github.com/urfave/cli/v2"

	"crmimport/phases"
)

func (a *app) stopCommand() *cli.Command {
	return &cli.Command{
		Name:      "stop",
		Usage:     "stop a run: it finishes its batch in flight and ends cancelled",
		ArgsUsage: "RUN",
		Description: `Asks a live run to stop (from another shell; Ctrl-C does the same in the
run's own): the request is written in the run's row — no signal is sent —
and the run reads it after the batch in flight, which commits or rolls back
whole; its tasks are cancelled with their checkpoints, and the run ends
cancelled. A run whose process is gone, or that works on another file than
this one (a copy of the database), is interrupted and cancelled at once.
Either way,
` + "`crmimport resume RUN`" + ` continues it later.

Examples:
   crmimport stop 7
   crmimport stop 7 --wait 0     # ask, do not wait`,
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "wait", Value: time.Minute, Usage: "how long to wait for the run to end (0: do not wait)"},
		},
		Action: a.stopAction,
	}
}

// stopBy is who asks for a stop from here, as the run's log and its tasks
// tell it (R14).
const stopBy = "`crmimport stop`"

func (a *app) stopAction(c *cli.Context) error {
	id, err := runArg(c, "stop takes one RUN id")
	if err != nil {
		return err
	}
	db, err := a.open(c.Context)
	if err != nil {
		return err
	}
	defer db.Close()
	e := a.engine(db)
	run, requested, err := e.Stop(c.Context, id, stopBy)
	if err != nil {
		return err
	}
	if requested {
		a.note("stop requested: run %d stops after its current batch", id)
		deadline := time.Now().Add(c.Duration("wait"))
		for run.Status == phases.RunRunning && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
			if run, err = phases.LoadRun(c.Context, db, id); err != nil {
				return err
			}
			if run.Status == phases.RunRunning && e.Interrupted(run) {
				// Its process died before it could stop: cancel it here.
				if run, _, err = e.Stop(c.Context, id, stopBy); err != nil {
					return err
				}
			}
		}
	}
	stopped := run.Status == phases.RunCancelled
	if a.json {
		return a.writeJSON(map[string]any{"run": id, "status": run.Status, "stopped": stopped, "requested": requested})
	}
	switch {
	case stopped:
		a.say("run %d is cancelled; `crmimport resume %d` continues it where it stopped", id, id)
	case run.Status == phases.RunRunning:
		a.say("run %d has not stopped yet; it will after its current batch (see `crmimport runs`)", id)
	default:
		a.say("run %d ended %s before the stop took effect", id, run.Status)
	}
	return nil
}

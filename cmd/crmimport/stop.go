package main

import (
	"time"

	"github.com/urfave/cli/v2"

	"crmimport/runs"
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
	st, err := runs.Stop(c.Context, a.engine(db), id, stopBy, c.Duration("wait"), runs.Watch{Note: func(msg string) { a.note("%s", msg) }})
	if err != nil {
		return err
	}
	if a.json {
		return a.writeJSON(st)
	}
	switch {
	case st.Stopped:
		a.say("run %d is cancelled; `crmimport resume %d` continues it where it stopped", id, id)
	case st.Status == runs.RunRunning:
		a.say("run %d has not stopped yet; it will after its current batch (see `crmimport runs`)", id)
	default:
		a.say("run %d ended %s before the stop took effect", id, st.Status)
	}
	return nil
}

package main

import (
	"fmt"
	"io"
	"sync/atomic"

	"github.com/urfave/cli/v2"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/report"
	"crmimport/runs"
)

func (a *app) undoCommand() *cli.Command {
	return &cli.Command{
		Name:      "undo",
		Usage:     "take back exactly what one run wrote (R16)",
		ArgsUsage: "RUN",
		Description: `Removes every row that RUN created (with its slot), releases the slots RUN
matched (the matched rows stay: they were found, not made), and gives every
skip that RUN took over back the state it had before — its reason, owner and
time. Nothing else is touched: after the undo, the tenant's rows and ledger
are those before RUN, and a new run of the same export imports its records
again.

An undo is a run of its own: it can be stopped (` + "`crmimport stop`" + `) and
continued (` + "`crmimport resume`" + `), and killed at any instant it ends, once resumed,
where an uninterrupted undo ends. It takes activities and emails back first,
companies last, so that every link holds at every commit.

When rows of other runs link to RUN's rows, or other runs matched them, the
undo is refused and says which (per run and kind, with example ids);
--cascade takes those records back too, and lists them first. A live run
cannot be undone (exit 6: stop it first); an undo, an undone run, or a run
with nothing left to take back is refused (exit 1). --dry-run prints what
the undo would take back, per kind and per run, and writes nothing; it
also prints the plan's digest, which covers every slot the undo would take
back. --plan DIGEST takes back exactly that plan: if another run changed
what the undo would take back since the dry run, nothing is written and the
undo exits 8, saying what it would take back now.

Examples:
   crmimport undo 7 --dry-run
   crmimport undo 7
   crmimport undo 7 --cascade --dry-run
   crmimport undo 7 --cascade --plan 3f9a…   # the digest the dry run printed
   crmimport undo 7 --cascade --json`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "cascade", Usage: "take back the records of other runs that depend on RUN's rows too"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print what would be taken back, per kind, and the plan's digest; write nothing"},
			&cli.StringFlag{Name: "plan", Usage: "take back only the plan whose digest a dry run printed (exit 8 when it changed since)"},
			// Slots per committed batch: small in the crash suite, for many
			// batch boundaries; kept with the undo's run for its resume.
			&cli.IntFlag{Name: "batch-size", Value: runs.UndoBatchSize, Hidden: true},
		},
		Action: a.undoAction,
	}
}

func (a *app) undoAction(c *cli.Context) error {
	id, err := runArg(c, "undo takes one RUN id (see `crmimport runs`)")
	if err != nil {
		return err
	}
	db, err := a.open(c.Context)
	if err != nil {
		return err
	}
	defer db.Close()
	if c.Int("batch-size") < 1 {
		return usagef("--batch-size must be at least 1, got %d", c.Int("batch-size"))
	}
	o := runs.UndoOptions{Undo: id, Cascade: c.Bool("cascade"), Plan: c.String("plan")}
	if n := c.Int("batch-size"); n != runs.UndoBatchSize {
		o.BatchSize = n
	}
	if c.IsSet("plan") && o.Plan == "" {
		return usagef("--plan takes the 64 hex digits of a plan's digest, as `crmimport undo %d --dry-run` prints it; got \"\"", id)
	}
	if err := runs.CheckUndo(o, "--plan"); err != nil {
		return err
	}
	e := a.engine(db)
	if c.Bool("dry-run") {
		v, err := runs.PreviewUndo(c.Context, db, e, o)
		if err != nil {
			return err
		}
		if a.json {
			return a.writeJSON(v)
		}
		writePreview(a.stdout, v)
		return nil
	}
	var runID atomic.Int64
	ctx, stop := a.stopOnSignal(c.Context, runID.Load)
	defer stop()
	progress := a.progress()
	defer progress.finish()
	out, err := runs.Undo(ctx, e, o, a.watch(progress, &runID))
	progress.finish()
	return a.finish(out, err)
}

// writePreview prints what an undo would take back (--dry-run).
func writePreview(w io.Writer, v runs.UndoPreview) {
	fmt.Fprintf(w, "dry run (nothing written) · undo of run %d · tenant %s · source %s · %s slots to take back\n\n",
		v.Undoes, v.Tenant, v.Source, report.Count(int64(v.Total)))
	row := func(name, a, b, c, d, e string) {
		fmt.Fprintf(w, "  %-12s %10s %10s %10s %10s %10s\n", name, a, b, c, d, e)
	}
	row("", "removed", "released", "restored", "cleared", "reverted")
	for _, k := range canon.ChildrenFirst() {
		if n, ok := v.Kinds[string(k)]; ok {
			row(k.Plural(), report.Count(n.Removed), report.Count(n.Released), report.Count(n.Restored), report.Count(n.Cleared),
				report.Count(n.Reverted))
		}
	}
	fmt.Fprintln(w, "\n  removed: rows the run created, with their slots · released: slots it matched (the rows stay)")
	fmt.Fprintln(w, "  restored: skips given back the state they had before the run · cleared: its own skips, deleted")
	fmt.Fprintln(w, "  reverted: rows the run updated, given their values before the update back (R17)")
	if len(v.Dependents) > 0 {
		fmt.Fprintln(w, "\nTaken back too (--cascade):")
		for _, d := range v.Dependents {
			fmt.Fprintf(w, "  - %s\n", d)
		}
	}
	for _, n := range v.Notices {
		fmt.Fprintf(w, "\nnotice: %s\n", n)
	}
	if len(v.Parts) > 0 {
		fmt.Fprintln(w, "\nPer run:")
		for _, part := range v.Parts {
			kind := ledger.Kind(part.Kind).Plural()
			if part.Count == 1 {
				kind = part.Kind
			}
			fmt.Fprintf(w, "  - run %d: %s %s %s\n", part.Run, report.Count(part.Count), kind, part.Fate)
		}
	}
	cascade := ""
	if v.Cascade {
		cascade = " --cascade"
	}
	fmt.Fprintf(w, "\nplan %s\n", v.Plan)
	fmt.Fprintf(w, "\nWhat next:\n  - `crmimport undo %d%s --plan %s` takes back exactly this plan (nothing, exit 8, if a run changed it since)\n"+
		"  - `crmimport undo %d%s` takes back the plan as it is when it starts\n", v.Undoes, cascade, v.Plan, v.Undoes, cascade)
}

package main

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/urfave/cli/v2"

	"crmimport/canon"
	"crmimport/importer"
	"crmimport/ledger"
	"crmimport/report"
	"crmimport/undo"
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
			&cli.IntFlag{Name: "batch-size", Value: undo.BatchSize, Hidden: true},
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
	imp := importer.New(a.engine(db))
	cascade := c.Bool("cascade")
	if c.Int("batch-size") < 1 {
		return usagef("--batch-size must be at least 1, got %d", c.Int("batch-size"))
	}
	plan := c.String("plan")
	if c.IsSet("plan") && !undo.ValidDigest(plan) {
		return usagef("--plan takes the 64 hex digits of a plan's digest, as `crmimport undo %d --dry-run` prints it; got %q", id, plan)
	}
	if c.Bool("dry-run") {
		p, err := undo.Build(c.Context, db, imp.Engine, id, cascade)
		if plan != "" && p != nil && p.Digest != plan {
			// A dry run with --plan says whether that plan still stands.
			return &undo.PlanChangedError{Run: id, Cascade: cascade, Want: plan, Now: p}
		}
		if err != nil {
			return err
		}
		if a.json {
			return a.writeJSON(p.Preview())
		}
		writePreview(a.stdout, p)
		return nil
	}
	var runID atomic.Int64
	ctx, stop := a.stopOnSignal(c.Context, runID.Load)
	defer stop()
	progress := a.progress(imp)
	defer progress.finish()
	o := undo.Options{Undo: id, Cascade: cascade, Plan: plan}
	if n := c.Int("batch-size"); n != undo.BatchSize {
		o.BatchSize = n
	}
	run, p, err := undo.StartWith(ctx, imp.Engine, o)
	if err != nil {
		return err
	}
	runID.Store(run.ID)
	a.note("run %d planned: the undo of run %d — %d slots to take back — %s", run.ID, id, p.Total(), describePlan(ctx, imp, run.ID))
	for _, d := range p.Dependents {
		a.note("taken back too (--cascade): %s", d)
	}
	_, execErr := imp.Execute(ctx, run.ID)
	progress.finish()
	return a.finish(ctx, imp, run.ID, execErr, false)
}

// writePreview prints what an undo would take back (--dry-run).
func writePreview(w io.Writer, p *undo.Plan) {
	v := p.Preview()
	fmt.Fprintf(w, "dry run (nothing written) · undo of run %d · tenant %s · source %s · %s slots to take back\n\n",
		v.Undoes, v.Tenant, v.Source, report.Count(int64(v.Total)))
	row := func(name, a, b, c, d string) {
		fmt.Fprintf(w, "  %-12s %10s %10s %10s %10s\n", name, a, b, c, d)
	}
	row("", "removed", "released", "restored", "cleared")
	for _, k := range canon.ChildrenFirst() {
		if n, ok := v.Kinds[string(k)]; ok {
			row(k.Plural(), report.Count(n.Removed), report.Count(n.Released), report.Count(n.Restored), report.Count(n.Cleared))
		}
	}
	fmt.Fprintln(w, "\n  removed: rows the run created, with their slots · released: slots it matched (the rows stay)")
	fmt.Fprintln(w, "  restored: skips given back the state they had before the run · cleared: its own skips, deleted")
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

// dependentsJSON is the dependents of a refused undo, for --json.
func dependentsJSON(err error) ([]undo.Dependent, bool) {
	var dep *undo.DependentsError
	if errors.As(err, &dep) {
		return dep.Dependents, true
	}
	return nil, false
}

package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/urfave/cli/v2"

	"crmimport/importer"
	"crmimport/importer/input"
	"crmimport/importer/runopts"
	"crmimport/phases"
	"crmimport/report"
	"crmimport/store"
)

func (a *app) runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "plan an import of PATH (a folder, a zip, or one file) and do it",
		ArgsUsage: "PATH [PATH…]",
		Description: `Plans the run (its id, options, input fingerprints and every task are written
before the first record is read), then imports phase by phase: companies,
contacts, deals, notes, then activities and emails. At the end it prints the
four outcomes per kind — imported, unchanged, skipped, failed — and what to
do next.

A rerun of the same export imports nothing twice: records already imported
are counted unchanged. Skipped records (for example notes whose contact was
missing) are taken over by a later run once their parents are there. A file
whose very bytes an earlier run read, leaving every record of it in a final
slot still there, is counted unchanged without being read again (the run log
says so); --reread reads it anyway.

PATH is a folder, a zip (read in place, never extracted), a .gz file or one
file; the several zips of one export (Salesforce's _1.ZIP, _2.ZIP) are given
together, or as a folder that holds them. The profile says which files hold
which kind and which column gives which field: --profile names a built-in
profile (crmimport profiles lists them) or a profile file of your own; by
default it is the built-in profile named like --source.

Examples:
   crmimport run --tenant acme --source canonical ./export
   crmimport run --tenant acme --source salesforce WE_00D5g000001_1.ZIP WE_00D5g000001_2.ZIP
   crmimport run --tenant acme --source hubspot ./hubspot-exports
   crmimport run --tenant acme --source zoho --profile zoho.yaml ./zoho-export.zip
   crmimport run ./export --tenant acme --source canonical --batch-size 5000
   crmimport run --tenant acme --source canonical --only notes,activities ./export
   crmimport --json run --tenant acme --source canonical --strict ./export

A dry run (--dry-run) imports into a throwaway copy of the database and
prints what would happen, and its plan's digest: over the options and every
file it reads with its fingerprint. --plan DIGEST in place of --dry-run
imports exactly that plan: if a file or an option changed since, nothing is
written and the run exits 8, listing the files it reads now with their
fingerprints (the dry run's --json lists them as plan_files).`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "tenant", Usage: "the workspace the data belongs to (required)"},
			&cli.StringFlag{Name: "source", Usage: "the ledger's source name: canonical, salesforce, hubspot, pipedrive, or your own (required)"},
			&cli.StringFlag{Name: "profile", Usage: "the file layout: a built-in profile's name or a profile file (default: the built-in profile named like --source)"},
			&cli.StringFlag{Name: "only", Usage: "import only these kinds, comma-separated (companies,contacts,deals,notes,activities,emails)"},
			&cli.IntFlag{Name: "batch-size", Value: importer.DefaultBatchSize, Usage: "records per committed batch (a crash loses at most one)"},
			&cli.BoolFlag{Name: "strict", Usage: "exit 7 when this run skipped records"},
			&cli.BoolFlag{Name: "dry-run", Usage: "import into a throwaway copy of the database and report what would happen"},
			&cli.StringFlag{Name: "encoding", Usage: "read every file in this encoding (default: each file's own, on the evidence of its bytes: UTF-8, else Windows-1252 with a warning, or UTF-16)"},
			&cli.BoolFlag{Name: "reread", Usage: "read every file, even one whose every record an earlier run of the same bytes left in a final slot"},
			&cli.StringFlag{Name: "plan", Usage: "import only the plan whose digest a dry run printed (exit 8, nothing written, when a file or an option changed since)"},
		},
		Action: a.runAction,
	}
}

func (a *app) runAction(c *cli.Context) error {
	if err := checkPaths(c); err != nil {
		return err
	}
	spec := importer.RunSpec{
		Tenant: strings.TrimSpace(c.String("tenant")), Source: strings.TrimSpace(c.String("source")),
		Profile: c.String("profile"), Input: c.Args().First(), Inputs: c.Args().Tail(), BatchSize: c.Int("batch-size"),
		Strict: c.Bool("strict"), Encoding: c.String("encoding"), Reread: c.Bool("reread"), Plan: c.String("plan"),
	}
	switch {
	case c.IsSet("plan") && !importer.ValidPlan(spec.Plan):
		return usagef("--plan takes the 64 hex digits of a plan's digest, as `crmimport run --dry-run` prints it; got %q", spec.Plan)
	case spec.Tenant == "":
		return usagef("run needs --tenant (the workspace the data belongs to)")
	case spec.Source == "":
		return usagef("run needs --source (the ledger's source name, e.g. canonical)")
	}
	if err := importer.CheckBatchSize(spec.BatchSize); err != nil {
		return usagef("--batch-size: %v", err)
	}
	only, err := parseOnly(c.String("only"))
	if err != nil {
		return err
	}
	spec.Only = only
	dbPath, standFor := a.dbPath, ""
	if c.Bool("dry-run") {
		if standFor, err = store.FileIDOf(a.dbPath); err != nil {
			return err
		}
		tmp, cleanup, err := store.Throwaway(c.Context, a.dbPath)
		if err != nil {
			return err
		}
		defer func() {
			// The dry run is over whatever became of its copy: a copy left
			// behind is a warning, quiet or not, that says what to remove.
			if err := cleanup(); err != nil {
				fmt.Fprintf(a.stderr, "warning: dry run: %v\n", err)
			}
		}()
		a.note("dry run: working on a throwaway copy of %s; nothing will be written to it", store.Name(a.dbPath))
		dbPath = tmp
	}
	db, err := store.Open(c.Context, dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	e := a.engine(db)
	e.StandFor(standFor) // a dry run's copy stands for the database (R13)
	imp := importer.New(e)
	var runID atomic.Int64
	ctx, stop := a.stopOnSignal(c.Context, runID.Load)
	defer stop()
	progress := a.progress(imp)
	defer progress.finish()

	run, err := imp.Plan(ctx, spec)
	if err != nil {
		if ctx.Err() != nil {
			return &stoppedError{what: "planning (reading the export's files), before any run existed"}
		}
		return err
	}
	runID.Store(run.ID)
	a.note("run %d planned: tenant %s, source %s — %s", run.ID, run.Tenant, run.Source, describePlan(ctx, imp, run.ID))
	_, execErr := imp.Execute(ctx, run.ID)
	progress.finish()
	return a.finish(ctx, imp, run.ID, execErr, c.Bool("dry-run"))
}

// finish prints a run's summary and returns the exit its outcome calls for.
// A dry run's summary names no run (its run is in a throwaway copy).
func (a *app) finish(ctx context.Context, imp *importer.Importer, runID int64, execErr error, dryRun bool) error {
	r, err := report.Build(context.WithoutCancel(ctx), imp.Engine.DB, imp.Engine, runID, false)
	if err != nil {
		if execErr != nil {
			return execErr
		}
		return err
	}
	opts, _ := runopts.Decode(r.Run)
	r.Strict = opts.Strict
	if dryRun {
		r.DryRun = store.Name(a.dbPath)
	}
	if execErr != nil {
		// The engine could not go on: the run is left for resume. Say so,
		// with what it holds now, and fail loudly.
		fmt.Fprintf(a.stderr, "crmimport: run %d stopped: %v\n", runID, execErr)
		if a.json {
			s := r.Summary()
			s.Next = append([]string{fmt.Sprintf("`crmimport resume %d` continues where it stopped", runID)}, s.Next...)
			_ = a.writeJSON(struct {
				report.Summary
				Error string `json:"error"`
			}{s, execErr.Error()})
		} else {
			report.WriteSummary(a.stdout, r)
		}
		return &statusExit{code: exitError}
	}
	if a.json {
		if err := a.writeJSON(r.Summary()); err != nil {
			return err
		}
	} else {
		report.WriteSummary(a.stdout, r)
	}
	code := statusCode(r.Run.Status, r.Interrupted, opts.Strict && r.Total.Skipped > 0)
	if code != exitOK {
		return &statusExit{code: code}
	}
	return nil
}

// describePlan says what a run will do: its tasks by phase.
func describePlan(ctx context.Context, imp *importer.Importer, runID int64) string {
	tasks, err := phases.LoadTasks(ctx, imp.Engine.DB, runID)
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

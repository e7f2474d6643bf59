package main

import (
	"fmt"
	"sync/atomic"

	"github.com/urfave/cli/v2"

	"crmimport/report"
	"crmimport/runs"
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
   crmimport run --tenant acme --source canonical --update ./cutover-export
   crmimport run --tenant acme --source hubspot --users owners.csv ./hubspot-exports

Records name their owner (owner_id): Salesforce by a user's id (User.csv),
HubSpot and Pipedrive by the person's name. An owner that no user of the
export (or of --users FILE: id, email, name — the id being the owner as the
export writes it) resolves is counted unowned: the record imports with no
owner, the value kept, and a later run with the users completes it.

A record already imported whose content changed at the source since (a
customer's edit between the trial export and the cutover one) is counted
outdated and left as it is, with the fields that changed; --update writes
it over its row, counted updated (undo RUN gives the row back); a row edited
by hand since it was imported is a conflict, left as it is unless
--update=overwrite.

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
			&cli.StringFlag{Name: "only", Usage: "import only these kinds, comma-separated (" + pluralKinds() + ")"},
			&cli.IntFlag{Name: "batch-size", Value: runs.DefaultBatchSize, Usage: "records per committed batch (a crash loses at most one)"},
			&cli.BoolFlag{Name: "strict", Usage: "exit 7 when this run skipped records"},
			&cli.BoolFlag{Name: "dry-run", Usage: "import into a throwaway copy of the database and report what would happen"},
			&cli.StringFlag{Name: "encoding", Usage: "read every file in this encoding (default: each file's own, on the evidence of its bytes: UTF-8, else Windows-1252 with a warning, or UTF-16)"},
			&cli.StringFlag{Name: "users", Usage: "a users file in the canonical layout (id, email, name), read as users beside the export: id is the owner as the export writes it (Jane Admin), email the person's"},
			&cli.BoolFlag{Name: "reread", Usage: "read every file, even one whose every record an earlier run of the same bytes left in a final slot"},
			&cli.GenericFlag{Name: "update", Value: &updateFlag{}, Usage: "apply the changes at the source that an earlier run imported (R17): rows of records changed since are updated in place, undoably; " +
				"--update=overwrite writes over rows edited by hand since too (without it, such a row is a conflict, left as it is)"},
			&cli.StringFlag{Name: "plan", Usage: "import only the plan whose digest a dry run printed (exit 8, nothing written, when a file or an option changed since)"},
		},
		Action: a.runAction,
	}
}

func (a *app) runAction(c *cli.Context) error {
	if err := checkPaths(c); err != nil {
		return err
	}
	spec := runs.Spec{Tenant: c.String("tenant"), Source: c.String("source"), Profile: c.String("profile"), Input: c.Args().First(),
		Inputs: c.Args().Tail(), BatchSize: c.Int("batch-size"), Strict: c.Bool("strict"), Encoding: c.String("encoding"),
		Reread: c.Bool("reread"), Plan: c.String("plan"), Update: updateOf(c), Users: c.String("users")}
	if c.IsSet("plan") && spec.Plan == "" {
		return usagef("--plan takes the 64 hex digits of a plan's digest, as `crmimport run --dry-run` prints it; got \"\"")
	}
	if err := runs.Check(&spec, runs.CLINames); err != nil {
		return err
	}
	if err := runs.ParseOnly(&spec, "--only", c.String("only")); err != nil {
		return err
	}
	var runID atomic.Int64
	ctx, stop := a.stopOnSignal(c.Context, runID.Load)
	defer stop()
	progress := a.progress()
	defer progress.finish()
	w := a.watch(progress, &runID)
	if c.Bool("dry-run") {
		out, err := runs.DryRun(ctx, a.dbPath, a.engine, spec, w)
		progress.finish()
		return a.finish(out, err)
	}
	db, err := store.Open(c.Context, a.dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	out, err := runs.Import(ctx, a.engine(db), spec, w)
	progress.finish()
	return a.finish(out, err)
}

// watch is what the command line is told while a run works: its progress
// on a bar, its id for a stop on a signal, notes and warnings on stderr.
func (a *app) watch(p *progressView, runID *atomic.Int64) runs.Watch {
	return runs.Watch{Engine: p.watch, Started: runID.Store,
		Note: func(msg string) { a.note("%s", msg) },
		Warn: func(msg string) { fmt.Fprintf(a.stderr, "warning: %s\n", msg) }}
}

// finish prints a run's summary and returns the exit its outcome calls for.
func (a *app) finish(out *runs.Outcome, err error) error {
	if err != nil {
		return err
	}
	r := out.Report
	if out.Err != nil {
		// The engine could not go on: the run is left for resume. Say so,
		// with what it holds now, and fail loudly.
		fmt.Fprintf(a.stderr, "crmimport: run %d stopped: %v\n", r.Run.ID, out.Err)
		if a.json {
			_ = a.writeJSON(struct {
				report.Summary
				Error string `json:"error"`
			}{out.Summary(), out.Err.Error()})
		} else {
			report.WriteSummary(a.stdout, r)
		}
		return exitWith(out.Code())
	}
	if a.json {
		if err := a.writeJSON(out.Summary()); err != nil {
			return err
		}
	} else {
		report.WriteSummary(a.stdout, r)
	}
	if code := out.Code(); code != exitOK {
		return exitWith(code)
	}
	return nil
}

package main

import (
	"github.com/urfave/cli/v2"

	"crmimport/report"
	"crmimport/runs"
	"crmimport/store"
)

func (a *app) runsCommand() *cli.Command {
	return &cli.Command{
		Name:  "runs",
		Usage: "list every run, newest first",
		Description: `Shows each run's id, tenant, source, status (a run whose process is gone shows
as interrupted), phase, the four outcomes and its duration ("—" for a run that
was never finalized: a gap is shown, never estimated). With --json, each run's
tasks too, each with its progress as the database holds it (records, bytes
read of the file's size, percent, rate, time left), as in report --format json.
On a PostgreSQL server it names, after the runs, every copy of the ledger's
data that a dry run made and never dropped (it was killed), with the
statement that drops it (the next dry run drops it too); with --json,
in "dry_run_copies".

Examples:
   crmimport runs
   crmimport runs --tenant acme --json`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "tenant", Usage: "only this tenant's runs"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 0 {
				return usagef("runs takes no arguments")
			}
			db, err := a.open(c.Context)
			if err != nil {
				return err
			}
			defer db.Close()
			reports, err := runs.List(c.Context, db, a.engine(db), c.String("tenant"))
			if err != nil {
				return err
			}
			copies, err := store.LeftCopies(c.Context, db)
			if err != nil {
				return err
			}
			if a.json {
				out := []report.Listed{}
				for _, r := range reports {
					out = append(out, r.Listed())
				}
				return a.writeJSON(map[string]any{"runs": out, "dry_run_copies": append([]store.DryRunCopy{}, copies...)})
			}
			if len(reports) == 0 {
				a.say("no runs yet: start one with `crmimport run --tenant T --source canonical PATH`")
			} else {
				report.WriteRuns(a.stdout, reports)
			}
			report.WriteLeftCopies(a.stdout, copies)
			return nil
		},
	}
}

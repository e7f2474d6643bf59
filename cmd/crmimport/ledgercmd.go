package main

import (
	"bytes"
	"strings"

	"github.com/urfave/cli/v2"

	"crmimport/canon"
	"crmimport/forensics"
	"crmimport/ledger"
)

func (a *app) ledgerCommand() *cli.Command {
	return &cli.Command{
		Name:            "ledger",
		Usage:           "load a production dump of the ledger, and ask it why",
		HideHelpCommand: true,
		Description: `For the engineer holding a dump of a production ledger: load it into a local
file, then ask why records were skipped and by which run (and let
` + "`crmimport doctor`" + ` name the pattern).

Examples:
   crmimport --db incident.db ledger load ./dump
   crmimport --db incident.db ledger why --tenant acme
   crmimport --db incident.db ledger why --tenant acme --kind notes --source-id 29`,
		Subcommands: []*cli.Command{a.ledgerLoadCommand(), a.ledgerWhyCommand()},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usagef("ledger needs a command: `ledger load DUMP` or `ledger why --tenant T` (see `crmimport ledger --help`)")
			}
			return usagef("unknown ledger command %q: use `ledger load DUMP` or `ledger why --tenant T`", c.Args().First())
		},
	}
}

func (a *app) ledgerLoadCommand() *cli.Command {
	return &cli.Command{
		Name:      "load",
		Usage:     "load a production dump of migrations, migration_tasks and migration_records",
		ArgsUsage: "DUMP",
		Description: `DUMP is a folder holding migrations, migration_tasks and migration_records,
each as <table>.csv the way psql writes it —

   \copy (SELECT * FROM migrations WHERE tenant_id = 'acme') TO 'migrations.csv' CSV HEADER

(t/f booleans, empty as NULL, timestamps with or without a zone) — or as
<table>.jsonl. Ids are kept; plural kinds (contacts) become singular;
columns crmimport does not know are ignored and missing optional ones
default. Every created or matched slot gets a placeholder target row,
marked from_dump, so that links resolve and foreign keys hold. A database
that already holds one of the dump's ids refuses the whole load and names
them: load a dump into a file of its own. The load is one transaction and
streams the dump, so that its memory does not grow with it. Tasks in
another phase than their kind's in crmimport's plan load as they are, with
a warning: resume --from re-arms them in their kind's phase.

A loaded run has no input files here. A running one shows as interrupted;
` + "`crmimport resume RUN --from PATH`" + ` plans its unfinished tasks over a local
export, and a plain resume refuses it.

Examples:
   crmimport --db incident.db ledger load ./dump
   crmimport ledger load ./dump --db incident.db --json`,
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("ledger load takes one DUMP folder, got %d: %s", c.NArg(), strings.Join(c.Args().Slice(), " "))
			}
			db, err := a.openOrCreate(c.Context)
			if err != nil {
				return err
			}
			defer db.Close()
			sum, err := forensics.Load(c.Context, db, c.Args().First(), a.engine(db).Now())
			if err != nil {
				return err
			}
			if a.json {
				return a.writeJSON(sum)
			}
			forensics.WriteLoad(a.stdout, sum)
			return nil
		},
	}
}

func (a *app) ledgerWhyCommand() *cli.Command {
	return &cli.Command{
		Name:  "why",
		Usage: "the ledger grouped by kind, action, reason and run — or one record's story",
		Description: `Without --source-id: the tenant's slots grouped by kind, action, reason and the
run that wrote them, with each run's status and a count — the query that
found the poisoned ledger of write-up 000, as a command.

With --source-id: that record's story — its slot, the run that claimed it,
when and why, that run's status, its row, the later runs that left a skip as
it was, its parents now, and every failed attempt at it with file and line.

On a production engine's own ledger (--ledger-only, or a PostgreSQL schema
that holds its three ledger tables and no crmimport database) it reads the
tenant's rows of those tables as they are and writes nothing there; a
story then cannot tell the record's row or its failed attempts, and says so.

Examples:
   crmimport ledger why --tenant acme
   crmimport ledger why --tenant acme --kind notes --run 1
   crmimport ledger why --tenant acme --kind notes --source-id 29
   crmimport ledger why --source-id c-7 --tenant acme --json`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "tenant", Usage: "the tenant whose ledger to read (required)"},
			&cli.StringFlag{Name: "kind", Usage: "only this kind (singular or plural)"},
			&cli.StringFlag{Name: "source-id", Usage: "tell this record's story"},
			&cli.Int64Flag{Name: "run", Usage: "only the slots this run wrote (not with --source-id)"},
			ledgerOnlyFlag(),
		},
		Action: func(c *cli.Context) error {
			tenant := strings.TrimSpace(c.String("tenant"))
			switch {
			case c.NArg() != 0:
				return usagef("ledger why takes no arguments (the record is --source-id ID), got: %s", strings.Join(c.Args().Slice(), " "))
			case tenant == "":
				return usagef("ledger why needs --tenant")
			case c.IsSet("run") && c.IsSet("source-id"):
				return usagef("--run narrows the grouping; a record's story (--source-id) tells every run")
			case c.IsSet("run") && c.Int64("run") < 1:
				return usagef("--run %d is not a run id", c.Int64("run"))
			}
			var kind ledger.Kind
			if k := c.String("kind"); k != "" {
				var err error
				if kind, err = canon.ParseKind(k); err != nil {
					return usagef("--kind: %v", err)
				}
			}
			var buf bytes.Buffer
			var doc any
			if c.IsSet("source-id") {
				st, err := a.story(c, tenant, kind, c.String("source-id"))
				if err != nil {
					return err
				}
				doc = st
				forensics.WriteStory(&buf, st)
			} else {
				g, err := a.why(c, tenant, kind, c.Int64("run"))
				if err != nil {
					return err
				}
				doc = g
				forensics.WriteGrouping(&buf, g)
			}
			if a.json {
				return a.writeJSON(doc)
			}
			_, err := a.stdout.Write(buf.Bytes())
			return err
		},
	}
}

// why groups the ledger of --db: crmimport's own, or a production engine's
// as it is.
func (a *app) why(c *cli.Context, tenant string, kind ledger.Kind, run int64) (*forensics.Grouping, error) {
	p, err := a.production(c, forensics.Scope{Tenant: tenant})
	if err != nil {
		return nil, err
	}
	if p != nil {
		defer p.Close()
		return p.Why(c.Context, a.engine(p.DB), tenant, kind, run)
	}
	db, err := a.open(c.Context)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return forensics.Why(c.Context, db, a.engine(db), tenant, kind, run)
}

// story tells a record's story from the ledger of --db: crmimport's own,
// or a production engine's as it is.
func (a *app) story(c *cli.Context, tenant string, kind ledger.Kind, sourceID string) (*forensics.Story, error) {
	p, err := a.production(c, forensics.Scope{Tenant: tenant})
	if err != nil {
		return nil, err
	}
	if p != nil {
		defer p.Close()
		return p.StoryOf(c.Context, a.engine(p.DB), tenant, kind, sourceID)
	}
	db, err := a.open(c.Context)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return forensics.StoryOf(c.Context, db, a.engine(db), tenant, kind, sourceID)
}

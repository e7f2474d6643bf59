package main

import (
	"strings"

	"github.com/urfave/cli/v2"

	"crmimport/forensics"
	"crmimport/store"
)

func (a *app) doctorCommand() *cli.Command {
	return &cli.Command{
		Name:  "doctor",
		Usage: "name what is wrong with the ledger and the runs, and the command that repairs it",
		Description: `Reads the ledger and the runs (it writes nothing) and names each pattern it
finds, with a count, a few example ids, the rule of SPEC it breaks and the
command that repairs it:

   uniform-skip        every record of a kind a run processed (at least 20) took one skip (R9)
   stale-skips         skips older than a later run of a dump that processed their kind (R3)
   ready-to-take-over  skips whose parent, named in the slot's detail, is imported now (R3, R6)
   stranded-work       pending or running tasks below their run's current phase (R7)
   misphased-tasks     tasks in another phase than their kind's in crmimport's plan (R7)
   false-success       a run that ended with work queued, or succeeded over failures (R9)
   unfinalized         a run without duration_ms, or running with no live owner (R15)
   orphan-slots        a created or matched slot whose target row is missing (R1, R2)
   dry-run-copies      a copy of the data that a killed dry run left on a server (PostgreSQL)

and the incidents of write-up 000 they add up to (the poisoned ledger, the
stranded retry). Each repair is a line to paste whole into a shell, the
command then "# what it does", every argument quoted for a POSIX shell
(replace PATH with the export to read).
Exit code 0 when it finds nothing, 3 when it finds something.

On a production engine's own ledger (--ledger-only, or a PostgreSQL schema
that holds migrations, migration_tasks and migration_records and no
crmimport database) it reads those three tables as they are, in one
read-only transaction, and writes nothing there; orphan-slots cannot be
checked without the target tables, and the output says so and what else it
cannot tell. Its repairs are then for a crmimport database loaded from a
dump of that ledger (crmimport --db incident.db ledger load DUMP).

Examples:
   crmimport doctor
   crmimport doctor --tenant acme --json
   crmimport --db incident.db doctor --tenant acme
   crmimport --db 'postgres://ro@prod-db/engine?search_path=public' doctor --ledger-only`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "tenant", Usage: "only this tenant (default: every tenant)"},
			ledgerOnlyFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 0 {
				return usagef("doctor takes no arguments (narrow it with --tenant T), got: %s", strings.Join(c.Args().Slice(), " "))
			}
			tenant := strings.TrimSpace(c.String("tenant"))
			d, err := a.doctor(c, tenant)
			if err != nil {
				return err
			}
			if a.json {
				err = a.writeJSON(d)
			} else {
				forensics.WriteDiagnosis(a.stdout, d)
			}
			if err == nil && !d.Clean {
				return exitWith(exitFindings)
			}
			return err
		},
	}
}

// doctor reads the database of --db: crmimport's own, or a production
// engine's ledger as it is.
func (a *app) doctor(c *cli.Context, tenant string) (*forensics.Diagnosis, error) {
	p, err := a.production(c, forensics.Scope{Tenant: tenant})
	if err != nil {
		return nil, err
	}
	if p != nil {
		defer p.Close()
		return p.Doctor(c.Context, a.engine(p.DB), tenant)
	}
	db, err := a.open(c.Context)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	// The repairs name the database without its password (store.CommandName).
	return forensics.Doctor(c.Context, db, a.engine(db), forensics.DoctorOptions{Tenant: tenant, DBPath: store.CommandName(a.dbPath)})
}

package main

import (
	"time"

	"github.com/urfave/cli/v2"

	"crmimport/forensics"
	"crmimport/store"
)

// ledgerOnlyFlag is doctor's, `ledger why`'s and report's --ledger-only:
// read --db as a production engine's own ledger (issue 17 item 5).
func ledgerOnlyFlag() cli.Flag {
	return &cli.BoolFlag{Name: "ledger-only", Usage: "--db is a production engine's own PostgreSQL ledger (migrations, " +
		"migration_tasks, migration_records), read as it is and never written (found without it where the schema holds those " +
		"three tables and no crmimport database)"}
}

// production reads the ledger of --db as a production engine's own when
// it is one — --ledger-only, or a PostgreSQL schema that holds the three
// ledger tables and no crmimport database — narrowed to scope
// (forensics.ReadLedger); nil when --db is crmimport's own database. The
// production database is opened read-only, on the server's word.
func (a *app) production(c *cli.Context, scope forensics.Scope) (*forensics.Production, error) {
	if c.Bool("ledger-only") {
		switch d := store.DialectAt(a.dbPath); d {
		case store.SQLite:
			return nil, usagef("--ledger-only reads a production engine's ledger on its PostgreSQL server (--db postgres://…); "+
				"%s is a file: crmimport's own database, read without --ledger-only", a.dbPath)
		case store.Postgres:
		default:
			panic(d.Untaught("main.app.production"))
		}
	}
	if !c.Bool("ledger-only") {
		only, err := store.LedgerOnly(c.Context, a.dbPath)
		if err != nil || !only {
			return nil, err
		}
		a.note("%s holds a production engine's ledger and no crmimport database: read as it is, nothing written to it (--ledger-only)",
			store.Name(a.dbPath))
	}
	prod, err := store.OpenLedgerOnly(c.Context, a.dbPath)
	if err != nil {
		return nil, err
	}
	defer prod.Close()
	p, err := forensics.ReadLedger(c.Context, prod, store.Name(a.dbPath), scope, time.Now())
	if err != nil {
		return nil, err
	}
	for _, w := range p.Load.Warnings {
		a.note("warning: %s", w)
	}
	return p, nil
}

package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"crmimport/fixfile"
	"crmimport/forensics"
	"crmimport/importer/reader"
	"crmimport/runs"
	"crmimport/store"
)

func (a *app) rejectsCommand() *cli.Command {
	return &cli.Command{
		Name:      "rejects",
		Usage:     "a run's failed records as CSV, safe to open in a spreadsheet",
		ArgsUsage: "RUN",
		Description: `Writes the records RUN failed (R4: a failure claims nothing and the next run
tries it again) as CSV: run, kind, source_id, file, line, reason, then the
columns of the raw rows as read (every file's, in the order first seen), so
that they can be fixed and imported again. A cell that starts with =, +, -,
@, a tab, a carriage return, | or %, or with a full-width form of one
(＝ ＋ － ＠ ｜ ％), also after leading blanks (a space, a no-break space,
any white space or zero-width space), is written with a leading ' so that a
spreadsheet shows it as text instead of running it as a formula (an
amount of -5 reads '-5).

With --as-export, --out names a new or empty folder (never one of the
run's input folders) that gets the failed rows as an export of their own:
per input file with failed rows, a file of the same name with that file's
header and its failed rows as read (CSV in UTF-8 with a BOM), reasons.csv
(file, line, id, reason, formula-safe) and crmimport-fix.json (the run,
its source and profile, the side files it read and their fingerprints).
Fix the rows in a spreadsheet and import the folder like any export:
fixed rows import, the others fail again with their reasons, nothing
already imported is touched (R2).

Examples:
   crmimport rejects 7 > rejects.csv
   crmimport rejects 7 --out rejects-7.csv
   crmimport rejects 7 --out fix-7 --as-export
   crmimport run --tenant acme --source salesforce fix-7`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "write the CSV to this file instead of stdout (replaced whole; never the database or another SQLite file); with --as-export, the fix folder"},
			&cli.BoolFlag{Name: "as-export", Usage: "write a fix folder into --out: the failed rows in their files' own layout, reasons.csv and a manifest"},
		},
		Action: a.rejectsAction,
	}
}

func (a *app) rejectsAction(c *cli.Context) error {
	id, err := runArg(c, "rejects takes one RUN id")
	if err != nil {
		return err
	}
	out := c.String("out")
	if c.Bool("as-export") && out == "" {
		return usagef("rejects --as-export writes a folder: name it with --out DIR (a new or empty folder)")
	}
	db, err := a.open(c.Context)
	if err != nil {
		return err
	}
	defer db.Close()
	switch {
	case c.Bool("as-export"):
		return a.fixFolder(c.Context, db, id, out)
	case out != "":
		return a.rejectsTo(c.Context, db, id, out)
	}
	var n int
	if a.json {
		// One JSON document, also on an error: the CSV is held
		// until it is whole (--out or stdout without --json stream).
		var buf bytes.Buffer
		if n, err = forensics.Rejects(c.Context, db, id, &buf); err != nil {
			return err
		}
		return a.writeJSON(map[string]any{"run": id, "failed": n, "csv": buf.String()})
	}
	// A file of data, streamed as it is read (issue 23 item 15): its
	// values as they are (SafeCell keeps a spreadsheet from running them).
	if n, err = forensics.Rejects(c.Context, db, id, a.data); err != nil {
		return err
	}
	if n == 0 {
		return a.noRejects(c.Context, db, id)
	}
	return nil
}

// rejectsTo writes run id's rejects into the file out (--out).
func (a *app) rejectsTo(ctx context.Context, db *sql.DB, id int64, out string) error {
	var n int
	err := store.WriteOutput(a.dbPath, out, func(w io.Writer) (err error) {
		n, err = forensics.Rejects(ctx, db, id, w)
		return err
	})
	if err != nil {
		return err
	}
	if a.json {
		return a.writeJSON(map[string]any{"run": id, "failed": n, "out": out})
	}
	a.say("%d failed records of run %d written to %s", n, id, out)
	return nil
}

// noRejects tells that run id has no failed row to list: none failed, or
// — a run loaded from a dump — its failures were counted where it ran, and
// the dump carries no failed rows (report.UnlistedWords).
func (a *app) noRejects(ctx context.Context, db *sql.DB, id int64) error {
	rep, err := runs.Report(ctx, db, a.engine(db), id, false)
	if err != nil {
		return err
	}
	if words := rep.UnlistedWords(); words != "" {
		a.note("run %d has no failed rows here: %s", id, words)
		return nil
	}
	a.note("run %d has no failed records", id)
	return nil
}

// fixFolder writes run id's fix folder into dir (rejects --as-export).
func (a *app) fixFolder(ctx context.Context, db *sql.DB, id int64, dir string) error {
	res, err := fixfile.Write(ctx, db, id, dir)
	if err != nil {
		return err
	}
	if a.json {
		return a.writeJSON(res)
	}
	if len(res.Files) == 0 {
		a.note("run %d has no failed records: nothing written", id)
		return nil
	}
	a.say("fix folder of run %d written to %s:", id, res.Dir)
	for _, f := range res.Files {
		line := fmt.Sprintf("  %-28s %d %s (%s)", f.Name, f.Rows, reader.Plural(f.Rows, "row", "rows"), f.Kind)
		if f.Unreadable > 0 {
			line += fmt.Sprintf(" (+%d that could not be read as rows: in reasons.csv)", f.Unreadable)
		}
		a.say("%s", line)
	}
	a.say("  %-28s %d reasons", runs.FixReasonsName, res.Reasons)
	a.say("  %-28s the run, its profile and the side files it read", runs.FixManifestName)
	a.say("fix the rows, then: %s", res.Next)
	return nil
}

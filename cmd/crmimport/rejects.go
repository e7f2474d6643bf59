package main

import (
	"bytes"
	"io"

	"github.com/urfave/cli/v2"

	"crmimport/forensics"
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

Examples:
   crmimport rejects 7 > rejects.csv
   crmimport rejects 7 --out rejects-7.csv`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "write the CSV to this file instead of stdout (replaced whole; never the database or another SQLite file)"},
		},
		Action: func(c *cli.Context) error {
			id, err := runArg(c, "rejects takes one RUN id")
			if err != nil {
				return err
			}
			db, err := a.open(c.Context)
			if err != nil {
				return err
			}
			defer db.Close()
			out := c.String("out")
			if out != "" {
				var n int
				err := store.WriteOutput(a.dbPath, out, func(w io.Writer) (err error) {
					n, err = forensics.Rejects(c.Context, db, id, w)
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
			var buf bytes.Buffer
			n, err := forensics.Rejects(c.Context, db, id, &buf)
			if err != nil {
				return err
			}
			switch {
			case a.json:
				return a.writeJSON(map[string]any{"run": id, "failed": n, "csv": buf.String()})
			default:
				// A file of data: its values as they are (safeCell keeps a
				// spreadsheet from running them).
				if _, err := a.data.Write(buf.Bytes()); err != nil {
					return err
				}
			}
			if n == 0 {
				a.note("run %d has no failed records", id)
			}
			return nil
		},
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"crmimport/desktop"
	"crmimport/forensics"
	"crmimport/report"
	"crmimport/runs"
	"crmimport/store"
	"crmimport/visible"
)

func (a *app) reportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "the run page: status, phases, tasks, outcomes per kind, top reasons, log",
		ArgsUsage: "RUN",
		Description: `The run page as text (the default), as JSON (the shape of the desktop's
GET /api/runs/RUN), or as one self-contained HTML file — inline style and
bars, no script, nothing loaded from anywhere — to mail or print. The HTML
report comes in two versions (--for): full, the run page whole (tasks,
files, what next with its commands, the log: the consultant's record), and
customer, what was migrated per kind and what needs the customer's action
in plain words, with no log, no path of this machine, no task and no
command. Both print on A4 and Letter.

On a production engine's own ledger (--ledger-only, or a PostgreSQL schema
that holds its three ledger tables and no crmimport database) it reads the
run's rows of those tables as they are and writes nothing there; the run
page then has no log and no failed records' reasons, and says so.

Examples:
   crmimport report 7
   crmimport report 7 --format json --out run-7.json
   crmimport report 7 --format html --out run-7.html                  # the full version
   crmimport report 7 --format html --for customer --out report-7.html   # the customer's, to mail`,
		Flags: []cli.Flag{
			ledgerOnlyFlag(),
			&cli.StringFlag{Name: "format", Value: "text", Usage: "text, json or html"},
			&cli.StringFlag{Name: "for", Value: string(desktop.ForFull), Usage: "the HTML report's version: full (tasks, commands, log) or customer (what was migrated and what needs their action, in plain words); with --format html only"},
			&cli.StringFlag{Name: "out", Usage: "write the report to this file instead of stdout (replaced whole; never the database or another SQLite file)"},
		},
		Action: a.reportAction,
	}
}

func (a *app) reportAction(c *cli.Context) error {
	id, err := runArg(c, "report takes one RUN id")
	if err != nil {
		return err
	}
	format := c.String("format")
	if a.json && !c.IsSet("format") {
		format = "json"
	}
	if format != "text" && format != "json" && format != "html" {
		return usagef("--format %q: use text, json or html", format)
	}
	audience, err := desktop.ParseAudience(c.String("for"))
	if err != nil {
		return usagef("--for %q: use full or customer (the HTML report's versions)", c.String("for"))
	}
	if c.IsSet("for") && format != "html" {
		return usagef("--for %s: only the HTML report has versions; add --format html (the %s report is the full one)", audience, format)
	}
	r, asIs, err := a.report(c, id)
	if err != nil {
		return err
	}
	page, err := renderReport(format, audience, r, asIs)
	if err != nil {
		return err
	}
	if asIs != nil && format == "html" {
		a.note("%s: the run page has no log and no failed records' reasons (%s)", asIs.Database, strings.Join(asIs.Untold, "; "))
	}
	out := c.String("out")
	if out == "" {
		if a.json && format == "text" {
			return a.writeJSON(map[string]any{"report": string(page)})
		}
		_, err := a.data.Write(page)
		return err
	}
	err = store.WriteOutput(a.dbPath, out, func(w io.Writer) error {
		_, err := w.Write(page)
		return err
	})
	if err != nil {
		return err
	}
	if a.json {
		doc := map[string]any{"run": id, "out": out, "format": format}
		if format == "html" {
			doc["for"] = audience
		}
		return a.writeJSON(doc)
	}
	if format == "html" {
		a.say("report of run %d (%s version) written to %s", id, audience, out)
		return nil
	}
	a.say("report of run %d written to %s", id, out)
	return nil
}

// renderReport is the run page in format (the HTML's version for
// audience). It is made safe to show wherever it goes, a file included:
// the text with every control character from data made visible, the JSON
// with them as \u escapes (the same values to a decoder), the HTML escaped
// by html/template.
func renderReport(format string, audience desktop.Audience, r *report.Report, asIs *forensics.AsIs) ([]byte, error) {
	var buf bytes.Buffer
	switch format {
	case "html":
		if err := desktop.WriteReport(&buf, r, audience); err != nil {
			return nil, err
		}
	case "json":
		var doc any = runs.PageOf(r)
		if asIs != nil {
			doc = struct {
				runs.Page
				LedgerOnly *forensics.AsIs `json:"ledger_only"`
			}{runs.PageOf(r), asIs}
		}
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return nil, err
		}
		buf.Write(visible.JSON(b))
		buf.WriteByte('\n')
	default:
		report.WriteReport(visible.Writer(&buf), r)
		forensics.WriteAsIs(visible.Writer(&buf), asIs)
	}
	return buf.Bytes(), nil
}

// report builds a run's page from the database of --db: crmimport's own,
// or a production engine's ledger as it is, with what that cannot tell.
func (a *app) report(c *cli.Context, id int64) (*report.Report, *forensics.AsIs, error) {
	p, err := a.production(c, forensics.Scope{Run: id})
	if err != nil {
		return nil, nil, err
	}
	if p != nil {
		defer p.Close()
		return p.Report(c.Context, a.engine(p.DB), id)
	}
	db, err := a.open(c.Context)
	if err != nil {
		return nil, nil, err
	}
	defer db.Close()
	r, err := runs.Report(c.Context, db, a.engine(db), id, true)
	return r, nil, err
}

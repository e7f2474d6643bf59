package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"crmimport/canon"
	"crmimport/failpoint"
	"crmimport/runs"
	"crmimport/store"
	"crmimport/visible"
)

// app is the command line: wiring only. Each action parses its flags,
// calls one library function and prints.
type app struct {
	// stdout and stderr carry human text, with every control character
	// from data made visible (visible.Writer); data is stdout as it is,
	// for JSON documents and files of data (rejects CSV) only; bars is
	// stderr as it is, for the progress bars' own control sequences.
	stdout, stderr io.Writer
	data, bars     io.Writer
	getenv         func(string) string
	signals        bool        // Ctrl-C and SIGTERM request a stop (off in in-process tests)
	isTerminal     func() bool // whether stderr is a terminal (progress bars)
	// stdin answers a question (ui over a database that does not exist)
	// when asking is true: a person at a terminal, never a script.
	stdin  io.Reader
	asking func() bool

	// set from the global flags
	dbPath string
	json   bool
	quiet  bool
	fps    *failpoint.Set
}

func newApp(stdout, stderr io.Writer, getenv func(string) string) *app {
	return &app{stdout: visible.Writer(stdout), stderr: visible.Writer(stderr), data: stdout, bars: stderr, getenv: getenv}
}

const helpIntro = `crmimport imports CRM exports (CSV, JSON, JSON Lines; a folder, a zip read in
place, a .gz) into one local SQLite file through an idempotency ledger: every
run is safe to repeat, stop, kill and resume. It never duplicates a record,
never loses one silently, and never reports success when it did nothing. A
source profile (built-in: canonical, salesforce, hubspot, pipedrive; or a
file of your own) says which file holds which kind and which column which
field.

Examples:
   crmimport run --tenant acme --source canonical ./export
   crmimport run --tenant acme --source salesforce WE_00D5g000001_1.ZIP
   crmimport profiles show hubspot
   crmimport runs
   crmimport report 7
   crmimport resume 7
   crmimport run --tenant acme --source canonical --only notes,activities ./export
   crmimport rejects 7 --out rejects.csv

An incident from a production dump:
   crmimport --db incident.db ledger load ./dump
   crmimport --db incident.db doctor
   crmimport --db incident.db ledger why --tenant acme --kind notes

Exit codes: 0 succeeded · 1 error · 2 usage · 3 partial · 4 failed ·
5 cancelled · 6 refused (another run of the tenant is live) ·
7 succeeded with skips under --strict. doctor: 0 nothing found, 3 findings.`

func (a *app) cli() *cli.App {
	c := &cli.App{
		Name:                 "crmimport",
		Usage:                "import CRM exports into SQLite, safely repeatable",
		Description:          helpIntro,
		Writer:               a.stdout,
		ErrWriter:            a.stderr,
		HideHelpCommand:      true,
		HideVersion:          true,
		EnableBashCompletion: false,
		ExitErrHandler:       func(*cli.Context, error) {}, // exit codes are ours (exitCode)
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usagef("%s", err.Error())
		},
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "db", Usage: "the database: a SQLite file, or a PostgreSQL server's postgres://USER@HOST/DB?search_path=SCHEMA (env CRMIMPORT_DB)", Value: "", DefaultText: "crmimport.db"},
			&cli.BoolFlag{Name: "json", Usage: "write exactly one JSON document to stdout (text and progress go to stderr)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress and no notices on stderr"},
		},
		Before: func(c *cli.Context) error {
			a.dbPath = c.String("db")
			if a.dbPath == "" {
				a.dbPath = a.getenv("CRMIMPORT_DB")
			}
			if a.dbPath == "" {
				a.dbPath = "crmimport.db"
			}
			a.json, a.quiet = c.Bool("json"), c.Bool("quiet")
			fps, err := failpoint.Parse(a.getenv(failpoint.Env), canon.ParseKind)
			if err != nil {
				return usagef("%s", err.Error())
			}
			a.fps = fps
			return nil
		},
		Commands: []*cli.Command{a.runCommand(), a.resumeCommand(), a.stopCommand(), a.runsCommand(), a.reportCommand(),
			a.rejectsCommand(), a.undoCommand(), a.ledgerCommand(), a.doctorCommand(), a.profilesCommand(), a.inspectCommand(), a.uiCommand()},
	}
	var usage func(cmds []*cli.Command)
	usage = func(cmds []*cli.Command) {
		for _, cmd := range cmds {
			cmd.OnUsageError = func(_ *cli.Context, err error, _ bool) error { return usagef("%s", err.Error()) }
			usage(cmd.Subcommands)
		}
	}
	usage(c.Commands)
	return c
}

// run runs the command line and returns the process's exit code.
func (a *app) run(ctx context.Context, args []string) int {
	c := a.cli()
	// --json is known before parsing, so that a usage error is JSON too.
	for _, w := range args[1:] {
		if w == "--json" || w == "--json=true" {
			a.json = true
		}
		if w == "--" {
			break
		}
	}
	norm, err := normaliseArgs(c, args)
	if err == nil {
		// What store has to tell while it works (a write waiting for
		// another's lock) is a notice on stderr.
		err = c.RunContext(store.WithNotice(ctx, func(msg string) { a.note("notice: %s", msg) }), norm)
	}
	code := exitCode(err)
	var st *runs.StatusExit
	if err != nil && !errors.As(err, &st) {
		if a.json {
			fmt.Fprintln(a.data, string(visible.JSON(errorJSON(err))))
		}
		fmt.Fprintf(a.stderr, "crmimport: %v\n", err)
	}
	return code
}

// open opens the database of --db, which must exist: a command that only
// reads, or works on runs the file holds, never makes one (a typo in --db
// is an error, not an empty report).
func (a *app) open(ctx context.Context) (*sql.DB, error) {
	return store.OpenExisting(ctx, a.dbPath)
}

// openOrCreate opens the database of --db, making it when absent: for the
// commands that put something in it (run, ledger load).
func (a *app) openOrCreate(ctx context.Context) (*sql.DB, error) {
	return store.Open(ctx, a.dbPath)
}

func (a *app) engine(db *sql.DB) *runs.Engine {
	e := runs.NewEngine(db, a.fps)
	e.OnLog = func(runID int64, level, msg string) {
		if a.quiet || level == "info" {
			return
		}
		fmt.Fprintf(a.stderr, "%s: %s\n", level, msg)
	}
	return e
}

// say writes a line of human text: to stderr under --json, else to stdout.
func (a *app) say(format string, args ...any) {
	w := a.stdout
	if a.json {
		w = a.stderr
	}
	fmt.Fprintf(w, format+"\n", args...)
}

// note writes a line to stderr unless --quiet.
func (a *app) note(format string, args ...any) {
	if !a.quiet {
		fmt.Fprintf(a.stderr, format+"\n", args...)
	}
}

func (a *app) writeJSON(v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(a.data, string(visible.JSON(b)))
	return err
}

// terminal reports whether stderr is a terminal (for progress bars).
func (a *app) terminal() bool {
	if a.isTerminal != nil {
		return a.isTerminal()
	}
	f, ok := a.bars.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// stopServer, as the run id of stopOnSignal, says the process is the
// desktop's server.
const stopServer = -1

// stopOnSignal returns a context cancelled by the first Ctrl-C or SIGTERM:
// the engine then stops after the batch in flight (R14). A second signal
// kills the process at once, which R12 makes safe.
func (a *app) stopOnSignal(ctx context.Context, runID func() int64) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	if !a.signals {
		return ctx, cancel
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			signal.Stop(sigs)
			if id := runID(); id == stopServer {
				fmt.Fprintf(a.stderr, "\n%s: stopping the desktop; imports it runs stop after their current batch "+
					"(`crmimport resume` continues them)\n", strings.ToLower(s.String()))
			} else if id > 0 {
				fmt.Fprintf(a.stderr, "\n%s: stopping after the current batch; `crmimport resume %d` continues later "+
					"(press Ctrl-C again to quit at once, which is safe too)\n", strings.ToLower(s.String()), id)
			} else {
				fmt.Fprintf(a.stderr, "\n%s: stopping before any run is planned or resumed: nothing is written "+
					"(press Ctrl-C again to quit at once)\n", strings.ToLower(s.String()))
			}
			cancel()
		case <-done:
		}
	}()
	return ctx, func() {
		close(done)
		signal.Stop(sigs)
		cancel()
	}
}

package main

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"crmimport/desktop"
	"crmimport/runs"
	"crmimport/store"
)

func (a *app) uiCommand() *cli.Command {
	return &cli.Command{
		Name:  "ui",
		Usage: "the desktop: a local web page for everything the command line does",
		Description: `Serves the desktop from this binary on a loopback address and opens it in the
default browser: the runs (live), a run's page with its progress, Stop, Resume
and Retry, its failed and skipped records, a new import (preview, dry run,
import), the ledger (doctor, ledger why) and the profiles. It works offline;
nothing is fetched from a network.

Only this machine can reach it: --addr must be 127.0.0.1:PORT or [::1]:PORT
(localhost:PORT listens on 127.0.0.1; port 0, the default, takes a free one). Every request carries the random token printed in
the address (a script sends it as Authorization: Bearer TOKEN, with the header
X-Requested-By: crmimport on a POST). Ctrl-C or SIGTERM stops it; an import
started from the page then stops after its batch in flight (resume continues
it).

A --db file that does not exist is not made without a word: at a terminal ui
asks first; elsewhere it stops, unless --create says to start a new one (a
typo in --db would otherwise open an empty desktop beside the real one).

Examples:
   crmimport ui
   crmimport --db demo.db ui
   crmimport --db new-customer.db ui --create
   crmimport --db acme.db ui --addr 127.0.0.1:8642 --no-open
   crmimport --json ui --no-open      # prints {"url": …, "addr": …} when it listens`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:0", Usage: "127.0.0.1:PORT or [::1]:PORT, the loopback address to listen on (port 0: a free one)"},
			&cli.BoolFlag{Name: "no-open", Usage: "do not open the browser"},
			&cli.BoolFlag{Name: "create", Usage: "make the --db file when it does not exist, without asking"},
			&cli.StringFlag{Name: "assets", Usage: "serve the templates and static files from this folder (developing the pages)"},
		},
		Action: a.uiAction,
	}
}

func (a *app) uiAction(c *cli.Context) error {
	if c.NArg() != 0 {
		return usagef("ui takes no arguments")
	}
	if err := desktop.CheckAddr(c.String("addr")); err != nil {
		return usagef("%v", err)
	}
	if err := a.uiDatabase(c.Bool("create")); err != nil {
		return err
	}
	ctx, stop := a.stopOnSignal(c.Context, func() int64 { return stopServer })
	defer stop()
	s, err := desktop.New(c.Context, desktop.Config{DBPath: a.dbPath, Addr: c.String("addr"), Assets: c.String("assets"),
		Engine: func(db *sql.DB) *runs.Engine { return a.engine(db) },
		Log:    func(msg string) { a.note("ui: %s", msg) }})
	if err != nil {
		return err
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve() }()
	if a.json {
		if err := a.writeJSON(map[string]string{"url": s.URL(), "addr": s.Addr()}); err != nil {
			return err
		}
	}
	a.note("crmimport ui: %s", s.URL())
	if !c.Bool("no-open") {
		if err := openBrowser(s.URL()); err != nil {
			a.note("could not open a browser (%v): open the address above", err)
		}
	}
	select {
	case err = <-served:
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return errors.Join(err, s.Shutdown(sctx))
}

// openBrowser opens url in the default browser of the system.
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", cmd.Path, err)
	}
	go cmd.Wait() // reaped when the opener exits
	return nil
}

// uiDatabase checks --db before the desktop makes it: a file that does not
// exist is made when create says so, or when the person at the terminal
// answers yes; else ui stops, naming the file and what to do.
func (a *app) uiDatabase(create bool) error {
	switch d := store.DialectAt(a.dbPath); d {
	case store.Postgres:
		return nil // a server's database: its schema is made as run makes it
	case store.SQLite:
	default:
		panic(d.Untaught("main.app.uiDatabase"))
	}
	if _, err := os.Stat(a.dbPath); !errors.Is(err, fs.ErrNotExist) {
		return nil // there, or not readable: opening it says which
	}
	if create {
		return nil
	}
	if a.json || a.asking == nil || !a.asking() {
		return fmt.Errorf("there is no database at %s: check --db (the runs are in the file you imported into), "+
			"or add --create to start a new, empty one there", a.dbPath)
	}
	fmt.Fprintf(a.stderr, "There is no database at %s. Make a new, empty one there? [y/N] ", a.dbPath)
	answer, _ := bufio.NewReader(a.stdin).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return nil
	}
	return fmt.Errorf("nothing made at %s: give --db the database you imported into (crmimport --db FILE runs lists its runs)", a.dbPath)
}

package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5"

	"crmimport/store"
	"crmimport/store/pgtest"
)

// pgSettings are the bench server's: durable as a real server is (fsync,
// full pages), with synchronous_commit off as the README advises for
// crmimport — a batch whose commit the server had not yet flushed when it
// crashed is lost whole, its checkpoint with it, and the resume redoes it
// (R12).
var pgSettings = strings.Join(benchPG, ", ")

var benchPG = []string{"fsync=on", "full_page_writes=on", "synchronous_commit=off", "shared_buffers=256MB"}

// pgServer is the local server of the PostgreSQL columns.
type pgServer struct {
	c       *pgtest.Cluster
	db      *sql.DB
	version string
}

func startPG() (*pgServer, error) {
	ctx := context.Background()
	c, err := pgtest.Start(ctx, "", benchPG...)
	if err != nil {
		return nil, fmt.Errorf("the PostgreSQL columns need a local server: %w (or leave them out: -columns)", err)
	}
	db, err := store.PostgresDB(c.DSN())
	if err == nil {
		var v string
		if err = db.QueryRowContext(ctx, `SHOW server_version`).Scan(&v); err == nil {
			return &pgServer{c: c, db: db, version: v}, nil
		}
		db.Close()
	}
	_ = c.Stop()
	return nil, err
}

// schema is the address of a schema of the server, which the first run
// makes.
func (p *pgServer) schema(name string) (string, error) {
	if p == nil {
		return "", fmt.Errorf("no PostgreSQL server")
	}
	return p.c.DSN() + "&search_path=" + url.QueryEscape(name), nil
}

// drop drops the schema of addr.
func (p *pgServer) drop(addr string) error {
	u, err := url.Parse(addr)
	if err != nil {
		return err
	}
	name := u.Query().Get("search_path")
	_, err = p.db.Exec("DROP SCHEMA IF EXISTS " + pgx.Identifier{name}.Sanitize() + " CASCADE")
	return err
}

func (p *pgServer) stop() {
	p.db.Close()
	_ = p.c.Stop()
}

// copyCSV loads every CSV of the export into bare tables of a new schema,
// one text column per header field, as `psql \copy` does (load): the
// PostgreSQL floor, as sqlite3's .import is SQLite's. The schema is dropped
// after, outside the timing.
func (p *pgServer) copyCSV(export, schema string) (measure, error) {
	if p == nil {
		return measure{}, fmt.Errorf("no PostgreSQL server")
	}
	m, err := p.load(export, schema)
	if _, derr := p.db.Exec("DROP SCHEMA IF EXISTS " + pgx.Identifier{schema}.Sanitize() + " CASCADE"); err == nil {
		err = derr
	}
	return m, err
}

// load makes schema and loads the export's CSV files into it, through
// psql's \copy, in one psql process, which it times.
func (p *pgServer) load(export, schema string) (measure, error) {
	entries, err := os.ReadDir(export)
	if err != nil {
		return measure{}, err
	}
	name := pgx.Identifier{schema}.Sanitize()
	var script strings.Builder
	fmt.Fprintf(&script, "CREATE SCHEMA %s;\nSET search_path = %s;\n", name, name)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".csv") {
			continue
		}
		path := filepath.Join(export, e.Name())
		header, err := csvHeader(path)
		if err != nil {
			return measure{}, err
		}
		cols := make([]string, len(header))
		for i, h := range header {
			cols[i] = pgx.Identifier{h}.Sanitize() + " text"
		}
		table := pgx.Identifier{strings.TrimSuffix(e.Name(), ".csv")}.Sanitize()
		fmt.Fprintf(&script, "CREATE TABLE %s (%s);\n", table, strings.Join(cols, ", "))
		fmt.Fprintf(&script, "\\copy %s FROM '%s' WITH (FORMAT csv, HEADER true)\n", table, strings.ReplaceAll(path, "'", "''"))
	}
	cmd := exec.Command("psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", p.c.DSN())
	cmd.Stdin = strings.NewReader(script.String())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	m, err := timed(cmd)
	if err == nil && cmd.ProcessState.ExitCode() != 0 {
		err = fmt.Errorf("psql \\copy of %s exited %d: %s", export, cmd.ProcessState.ExitCode(), stderr.String())
	}
	return m, err
}

// csvHeader is the first record of a CSV file.
func csvHeader(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h, err := csv.NewReader(f).Read()
	if err != nil {
		return nil, fmt.Errorf("the header of %s: %w", path, err)
	}
	return h, nil
}

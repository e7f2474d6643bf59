package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
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

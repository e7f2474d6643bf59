package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// PostgresDriver is the database/sql driver name of crmimport's PostgreSQL
// handles (issue 17): pgx's own driver (github.com/jackc/pgx/v5/stdlib),
// with every statement rebound from SQLite's placeholders on its way
// (Rebind), so that the engine's statements are written once and the
// engine keeps *sql.DB and *sql.Tx.
const PostgresDriver = "crmimport-postgres"

func init() {
	sql.Register(PostgresDriver, pgDriver{stdlib.GetDefaultDriver()})
}

// pgDriver opens pgx's connections, wrapped.
type pgDriver struct{ d driver.Driver }

func (p pgDriver) Open(name string) (driver.Conn, error) {
	c, err := p.d.Open(name)
	if err != nil {
		return nil, err
	}
	return &pgConn{Conn: c}, nil
}

// pgConn is a pgx connection whose statements are rebound; everything
// else it passes on as it is.
type pgConn struct{ driver.Conn }

func (c *pgConn) Prepare(query string) (driver.Stmt, error) { return c.Conn.Prepare(Rebind(query)) }

func (c *pgConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if p, ok := c.Conn.(driver.ConnPrepareContext); ok {
		return p.PrepareContext(ctx, Rebind(query))
	}
	return c.Prepare(query)
}

func (c *pgConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if e, ok := c.Conn.(driver.ExecerContext); ok {
		return e.ExecContext(ctx, Rebind(query), args)
	}
	return nil, driver.ErrSkip
}

func (c *pgConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if q, ok := c.Conn.(driver.QueryerContext); ok {
		return q.QueryContext(ctx, Rebind(query), args)
	}
	return nil, driver.ErrSkip
}

func (c *pgConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if b, ok := c.Conn.(driver.ConnBeginTx); ok {
		return b.BeginTx(ctx, opts)
	}
	return c.Conn.Begin() //nolint:staticcheck // the fallback database/sql itself uses
}

func (c *pgConn) Ping(ctx context.Context) error {
	if p, ok := c.Conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (c *pgConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *pgConn) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

func (c *pgConn) CheckNamedValue(nv *driver.NamedValue) error {
	if n, ok := c.Conn.(driver.NamedValueChecker); ok {
		return n.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

// DefaultPostgresSchema is where crmimport keeps its tables on a server
// when the address names no search_path.
const DefaultPostgresSchema = "crmimport"

// OpenPostgres opens the PostgreSQL database at dsn (postgres://…), its
// tables in the first schema its search_path names (DefaultPostgresSchema
// when it names none), made when it is missing, and upgrades them to this
// binary's version (Upgrade).
func OpenPostgres(ctx context.Context, dsn string) (*sql.DB, error) {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, fmt.Errorf("open %s: not a postgres:// address", dsn)
	}
	q := u.Query()
	if q.Get("search_path") == "" {
		q.Set("search_path", DefaultPostgresSchema)
		u.RawQuery = q.Encode()
	}
	schema := strings.TrimSpace(strings.Split(q.Get("search_path"), ",")[0])
	db, err := sql.Open(PostgresDriver, u.String())
	if err != nil {
		return nil, err
	}
	if _, err := db.ExecContext(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{schema}.Sanitize()); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: make schema %s: %w", u.Redacted(), schema, err)
	}
	if err := Upgrade(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", u.Redacted(), err)
	}
	return db, nil
}

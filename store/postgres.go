package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// PostgresDB is a pool of crmimport's PostgreSQL connections to the
// server at dsn, as sql.Open gives one and nothing more: nothing is
// checked, made or upgraded (OpenPostgres does that). Its connections are
// pgx's own (github.com/jackc/pgx/v5/stdlib), with every statement
// rebound from SQLite's placeholders on its way (Rebind), so that the
// engine's statements are written once and the engine keeps *sql.DB and
// *sql.Tx. The pool is opened through a connector (sql.OpenDB), no
// driver registered by name: its Driver is pgDriver, by which DialectOf
// knows it.
func PostgresDB(dsn string) (*sql.DB, error) {
	c, err := pgDriver{stdlib.GetDefaultDriver()}.OpenConnector(dsn)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
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

// OpenConnector is the connector of the pool at name (PostgresDB): pgx's
// own, whose connections are wrapped.
func (p pgDriver) OpenConnector(name string) (driver.Connector, error) {
	c, err := p.d.(driver.DriverContext).OpenConnector(name)
	if err != nil {
		return nil, err
	}
	return pgConnector{c: c, d: p}, nil
}

// pgConnector connects as pgx's connector does, and wraps each
// connection (pgConn); its Driver is pgDriver.
type pgConnector struct {
	c driver.Connector
	d pgDriver
}

func (c pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.c.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &pgConn{Conn: conn}, nil
}

func (c pgConnector) Driver() driver.Driver { return c.d }

// pgConn is a pgx connection whose statements are rebound; everything
// else it passes on as it is.
type pgConn struct{ driver.Conn }

func (c *pgConn) Prepare(query string) (driver.Stmt, error) {
	st, err := c.Conn.Prepare(Rebind(query))
	if err != nil {
		return nil, err
	}
	return pgStmt{st}, nil
}

func (c *pgConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if p, ok := c.Conn.(driver.ConnPrepareContext); ok {
		st, err := p.PrepareContext(ctx, Rebind(query))
		if err != nil {
			return nil, err
		}
		return pgStmt{st}, nil
	}
	return c.Prepare(query)
}

func (c *pgConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if in, ok := copyOf(args); ok {
		return c.copy(ctx, in)
	}
	if e, ok := c.Conn.(driver.ExecerContext); ok {
		r, err := e.ExecContext(ctx, Rebind(query), args)
		return r, explain(err)
	}
	return nil, driver.ErrSkip
}

func (c *pgConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if q, ok := c.Conn.(driver.QueryerContext); ok {
		return q.QueryContext(ctx, Rebind(query), args)
	}
	return nil, driver.ErrSkip
}

// BeginTx begins through pgx's own BeginTx, which its connections have.
func (c *pgConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
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
	if _, ok := nv.Value.(copyIn); ok {
		return nil // CopyIn's rows, which ExecContext copies
	}
	if n, ok := c.Conn.(driver.NamedValueChecker); ok {
		return n.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

// pgStmt is a prepared statement of pgx whose refusals are explained.
type pgStmt struct{ driver.Stmt }

func (s pgStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	if e, ok := s.Stmt.(driver.StmtExecContext); ok {
		r, err := e.ExecContext(ctx, args)
		return r, explain(err)
	}
	return nil, driver.ErrSkip
}

func (s pgStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	if q, ok := s.Stmt.(driver.StmtQueryContext); ok {
		return q.QueryContext(ctx, args)
	}
	return nil, driver.ErrSkip
}

// pgRefusal is a constraint's refusal that names the table and columns it
// guards, as SQLite's messages do ("UNIQUE constraint failed:
// companies.id"), where PostgreSQL names the constraint; it wraps the
// server's error, whose SQLSTATE the Is functions read.
type pgRefusal struct {
	what string // "companies.id"
	err  *pgconn.PgError
}

func (e *pgRefusal) Error() string {
	msg := e.err.Message
	if e.err.Detail != "" {
		msg += ": " + e.err.Detail
	}
	return fmt.Sprintf("%s: %s (SQLSTATE %s)", e.what, msg, e.err.Code)
}

func (e *pgRefusal) Unwrap() error { return e.err }

// explain names the table and columns of a constraint's refusal (class
// 23): the columns from the refusal's detail ("Key (id)=(1) already
// exists.") or its column.
func explain(err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || !strings.HasPrefix(pe.Code, "23") || pe.TableName == "" {
		return err
	}
	cols := pe.ColumnName
	if cols == "" && strings.HasPrefix(pe.Detail, "Key (") {
		if end := strings.Index(pe.Detail, ")="); end > 0 {
			cols = pe.Detail[len("Key ("):end]
		}
	}
	if cols == "" {
		return &pgRefusal{what: pe.TableName, err: pe}
	}
	var what []string
	for _, c := range strings.Split(cols, ",") {
		what = append(what, pe.TableName+"."+strings.TrimSpace(c))
	}
	return &pgRefusal{what: strings.Join(what, ", "), err: pe}
}

// DefaultPostgresSchema is where crmimport keeps its tables on a server
// when the address names no search_path.
const DefaultPostgresSchema = "crmimport"

// ConnectTimeout is how long crmimport waits for a server to answer a
// connection, when the address (connect_timeout=SECONDS) and the
// environment (PGCONNECT_TIMEOUT) name no other: a server that accepts a
// connection and never answers (a port forwarded to nothing, a server
// stopped in a debugger) made every command wait forever (issue 23 item
// 22).
const ConnectTimeout = 10 * time.Second

// OpenPostgres opens the PostgreSQL database at dsn (postgres://…), its
// tables in the schema its search_path names (DefaultPostgresSchema when
// it names none; schemaOf), made when it is missing, and upgrades them to
// this binary's version (Upgrade).
func OpenPostgres(ctx context.Context, dsn string) (*sql.DB, error) {
	return openPostgres(ctx, dsn, true)
}

// pgAddress is a parsed postgres:// address and the schema it names.
type pgAddress struct {
	url     *url.URL // as the server is given it: the schema quoted, the timeout set
	query   pgQuery  // url's query, as the server is given it
	given   string   // as the user wrote it, to name it back (Name)
	schema  string
	timeout string // the connect_timeout in force, to name it in a message
}

// parsePostgres reads a postgres:// address. The server is given the one
// schema that crmimport checks, in double quotes, as its search_path, so
// that it reads the name as crmimport does (issue 23 item 2), and nothing
// else of the list: crmimport's tables are all in that schema, and a
// table the server would find in a later one of the list, were one of
// crmimport's missing, would be another application's. The connection
// gives up on a server that does not answer (ConnectTimeout), and names
// crmimport's process (applicationName).
func parsePostgres(dsn string) (pgAddress, error) {
	u, err := url.Parse(dsn)
	if err != nil || !IsAddress(dsn) {
		return pgAddress{}, fmt.Errorf("open %s: not a postgres:// address", Name(dsn))
	}
	q, err := parsePGQuery(u.RawQuery)
	if err != nil {
		return pgAddress{}, fmt.Errorf("open %s: %w", Name(dsn), err)
	}
	sp, _ := q.get("search_path")
	schema, err := schemaOf(sp)
	if err != nil {
		return pgAddress{}, fmt.Errorf("open %s: %w", Name(dsn), err)
	}
	q = q.set("search_path", pgx.Identifier{schema}.Sanitize())
	timeout, _ := q.get("connect_timeout")
	if timeout == "" {
		timeout = os.Getenv("PGCONNECT_TIMEOUT")
	}
	if timeout == "" {
		timeout = strconv.Itoa(int(ConnectTimeout / time.Second))
		q = q.set("connect_timeout", timeout)
	}
	if _, ok := q.get("application_name"); !ok && os.Getenv("PGAPPNAME") == "" {
		q = q.set("application_name", applicationName())
	}
	u.RawQuery = q.encode()
	return pgAddress{url: u, query: q, given: dsn, schema: schema, timeout: timeout}, nil
}

// applicationName is how crmimport's connections name themselves to the
// server (pg_stat_activity.application_name, at most 63 bytes): the
// process and its host, as a run's owner is named (R13), so that a writer
// waiting for another's lock can say whose it is (lockHolders).
func applicationName() string {
	host, err := os.Hostname()
	if err != nil {
		host = "an unknown host"
	}
	name := fmt.Sprintf("crmimport pid %d on %s", os.Getpid(), host)
	if len(name) > maxIdentifier {
		name = name[:maxIdentifier]
	}
	return name
}

// String is the address with its password hidden.
func (a pgAddress) String() string { return Name(a.given) }

// with is the address with one more parameter.
func (a pgAddress) with(key, value string) string {
	u := *a.url
	u.RawQuery = a.query.set(key, value).encode()
	return u.String()
}

// connect opens a pool of at most conns connections on the server at dsn
// (the address, or one derived from it: with), and makes sure the server
// answers, saying so when it does not in time.
func (a pgAddress) connect(ctx context.Context, dsn string, conns int) (*sql.DB, error) {
	db, err := PostgresDB(dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(conns)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return nil, fmt.Errorf("open %s: the server did not answer within %ss (connect_timeout): check the address and that PostgreSQL runs there, "+
				"or give it longer with connect_timeout=SECONDS in the address: %w", a, a.timeout, err)
		}
		return nil, fmt.Errorf("open %s: %w", a, err)
	}
	return db, nil
}

func openPostgres(ctx context.Context, dsn string, create bool) (*sql.DB, error) {
	a, err := parsePostgres(dsn)
	if err != nil {
		return nil, err
	}
	db, err := a.connect(ctx, a.url.String(), pgConns)
	if err != nil {
		return nil, err
	}
	if !create {
		if err := a.exists(ctx, db); err != nil {
			db.Close()
			return nil, err
		}
	} else if err := a.ours(ctx, db); err != nil {
		// Refused before anything is made: the schema, when it is
		// missing, is made in the transaction of the first schema step
		// (upgrade), so an open that fails leaves none behind either.
		db.Close()
		return nil, err
	}
	if err := upgrade(ctx, db, a.schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", a, err)
	}
	return db, nil
}

// ours refuses a schema that holds tables and no crmimport database, as
// Open refuses another application's SQLite file: crmimport never writes
// its tables among another application's (a production engine's own
// ledger among them, which `doctor` and `ledger why` read as it is).
func (a pgAddress) ours(ctx context.Context, db *sql.DB) error {
	var tables int
	var version bool
	err := db.QueryRowContext(ctx, `SELECT count(*), coalesce(bool_or(table_name = 'crmimport_schema_version'), false)
FROM information_schema.tables WHERE table_schema = ?`, a.schema).Scan(&tables, &version)
	if err != nil {
		return fmt.Errorf("open %s: %w", a, err)
	}
	if tables > 0 && !version {
		return fmt.Errorf("open %s: schema %s holds %d tables and no crmimport database: crmimport writes only to a new or empty schema, "+
			"or one of its own (name another with ?search_path=SCHEMA)", a, a.schema, tables)
	}
	return nil
}

// pgConns bounds a process's connections to the server: one writer at a
// time (the write lock), and the desktop's readers.
const pgConns = 8

// exists refuses an address whose schema holds no crmimport database
// (ErrNoDatabase), as OpenExisting refuses a path where no file is.
func (a pgAddress) exists(ctx context.Context, db *sql.DB) error {
	var there bool
	err := db.QueryRowContext(ctx, `SELECT to_regclass(?) IS NOT NULL`,
		pgx.Identifier{a.schema, "crmimport_schema_version"}.Sanitize()).Scan(&there)
	if err != nil {
		return fmt.Errorf("open %s: %w", a, err)
	}
	if !there {
		return fmt.Errorf("%s: schema %s: %w (a database is made by `crmimport run` or `crmimport ledger load`; check --db or $CRMIMPORT_DB)",
			a, a.schema, ErrNoDatabase)
	}
	return nil
}

// openPostgresReader opens the schema at dsn for reading only: every
// transaction of its pool is read-only, on the server's word.
func openPostgresReader(ctx context.Context, dsn string) (*sql.DB, error) {
	a, err := parsePostgres(dsn)
	if err != nil {
		return nil, err
	}
	db, err := a.connect(ctx, a.with("default_transaction_read_only", "on"), Readers)
	if err != nil {
		return nil, err
	}
	if err := a.exists(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// IsAddress tells a PostgreSQL server's address (postgres://… or
// postgresql://…) from a SQLite file's path, in --db and $CRMIMPORT_DB.
func IsAddress(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// Name is how a database is named to the user: a file's path, or a
// server's address with its password hidden, in the user part and in the
// query (?password=, which pgx reads too).
func Name(s string) string { return DialectAt(s).name(s) }

func (d Dialect) name(s string) string {
	switch d {
	case SQLite:
		return s
	case Postgres:
		return pgName(s)
	default:
		panic(d.Untaught("store.Name"))
	}
}

// pgName is Name of a server's address.
func pgName(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "postgres://…" // not even parsed: say nothing of what it holds
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// CommandName is how a command line to copy into a shell names a database
// (--db): a file's path, or a server's address without its password at
// all, which PGPASSWORD or ~/.pgpass gives there as to psql.
func CommandName(s string) string { return DialectAt(s).commandName(s) }

func (d Dialect) commandName(s string) string {
	switch d {
	case SQLite:
		return s
	case Postgres:
		return pgCommandName(s)
	default:
		panic(d.Untaught("store.CommandName"))
	}
}

// pgCommandName is CommandName of a server's address.
func pgCommandName(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return Name(s)
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	if q, err := parsePGQuery(u.RawQuery); err == nil {
		if _, ok := q.get("password"); ok {
			u.RawQuery = q.without("password").encode()
		}
	}
	return u.String()
}

// DiskFull fails tx on the server with PostgreSQL's own refusal of a write
// on a full disk (SQLSTATE 53100, disk_full), as the "full" failpoint
// (SPEC §8) asks: the database's size cannot be held from a session, as
// SQLite's max_page_count holds a file's.
func DiskFull(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `DO $$ BEGIN
  RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full';
END $$`)
	if err == nil {
		return errors.New("failpoint full: the server did not refuse the write")
	}
	return err
}

// Analyze refreshes the server's statistics of crmimport's tables, on
// PostgreSQL, after a run has written to them (SQLite: nothing to do). A
// run writes thousands of rows into tables whose statistics the server's
// autovacuum refreshes only a minute or more later: a rerun at once after
// it was planned on the statistics of empty tables, and read the ledger's
// key row by row where it had the index (a revisit's lookups: 3.4 s in
// place of 0.4 s for 30,000 records).
//
// Only the tables whose changes since they were last analyzed, past 50
// rows, outnumber the rest of their rows are: a table a first run filled
// (one never analyzed has no rest), one an undo emptied, one a rerun
// begins to fill (the before-images of the skips it takes over) — tables
// that more than doubled, or lost most of their rows. A table that grew by
// less keeps plans that fit it — the planner scales the rows it was told
// of by the table's pages now — and a rerun that added a run's failures
// and places to those of the run before no longer analyzes them: that was
// 0.22 s of a 2.9 s rerun at scale 1. Analyzing every table cost 0.4 s;
// autovacuum's own threshold (50 rows and a tenth) analyzed, on each
// rerun, what every rerun adds.
//
// The server counts a connection's changes only when the connection
// flushes them — at most once a second, and as it closes — so the counts
// lag: a first run's last phase (its emails) was not counted yet when the
// run ended, and the rerun after it analyzed those tables in its place.
// The size of a table's file has no lag: a table whose file holds more
// than twice the pages it had when last analyzed or vacuumed (relpages),
// and 16 pages past that, is analyzed as well.
func Analyze(ctx context.Context, db *sql.DB) error { return DialectOf(db).analyze(ctx, db) }

func (d Dialect) analyze(ctx context.Context, db *sql.DB) error {
	switch d {
	case SQLite:
		return nil // a file's statistics are its own business (no autovacuum to wait for)
	case Postgres:
		return pgAnalyze(ctx, db)
	default:
		panic(d.Untaught("store.Analyze"))
	}
}

// pgAnalyze is Analyze on the server.
func pgAnalyze(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, `SELECT s.relname FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
WHERE s.schemaname = current_schema() AND (s.n_mod_since_analyze > 50 + greatest(s.n_live_tup - s.n_mod_since_analyze, 0)
    OR pg_relation_size(s.relid) > (2 * c.relpages + 16) * current_setting('block_size')::bigint)
ORDER BY s.relname`)
	if err != nil {
		return fmt.Errorf("refresh the server's statistics: %w", err)
	}
	var stale []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return err
		}
		stale = append(stale, pgx.Identifier{t}.Sanitize())
	}
	if err := rows.Close(); err != nil || len(stale) == 0 {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("refresh the server's statistics: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, analyzeSampleSQL); err != nil {
		return fmt.Errorf("refresh the server's statistics: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "ANALYZE "+strings.Join(stale, ", ")); err != nil {
		return fmt.Errorf("refresh the server's statistics: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("refresh the server's statistics: %w", err)
	}
	return nil
}

// analyzeSampleSQL makes Analyze's sample 3,000 rows a table (PostgreSQL's
// default target, 100, samples 30,000), whatever the server's own default:
// the plans of crmimport's statements need each table's size and its keys'
// spread, not the histograms of its notes' bodies, and autovacuum, a minute
// later, gathers the full statistics with the server's own target. At
// scale 1 the first run's ANALYZE of every table took 1.44 s of server time
// with the default and 0.19 s with this (pg_stat_statements), and the
// reruns after it took the same time, 2.5 to 2.8 s (issue 28).
const analyzeSampleSQL = `SET LOCAL default_statistics_target = 10`

// PostgreSQL has no user_version: the schema's version is the one row of
// a table of crmimport's own (in the search path's first schema), and 0
// while that table is not there.
const pgSetVersionSQL = `CREATE TABLE IF NOT EXISTS crmimport_schema_version (version integer NOT NULL);
DELETE FROM crmimport_schema_version;`

// pgSchemaVersion reads the schema's version on the server.
func pgSchemaVersion(ctx context.Context, q queryer) (int, error) {
	var v int
	var there bool
	if err := q.QueryRowContext(ctx, `SELECT to_regclass('crmimport_schema_version') IS NOT NULL`).Scan(&there); err != nil || !there {
		return 0, err
	}
	err := q.QueryRowContext(ctx, `SELECT version FROM crmimport_schema_version`).Scan(&v)
	return v, err
}

// pgSetSchemaVersion records the schema's version on the server, in tx.
func pgSetSchemaVersion(ctx context.Context, tx *sql.Tx, v int) error {
	if _, err := tx.ExecContext(ctx, pgSetVersionSQL); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO crmimport_schema_version (version) VALUES (?)`, v)
	return err
}

// pgIsConstraint: an integrity_constraint_violation (SQLSTATE class 23).
func pgIsConstraint(err error) bool { return strings.HasPrefix(pgCode(err), "23") }

// pgIsUnique: a unique_violation, a primary key's too.
func pgIsUnique(err error) bool { return pgCode(err) == "23505" }

// pgIsPrimaryKey: a unique_violation of a primary key, which PostgreSQL
// names TABLE_pkey, and the schema keeps that name.
func pgIsPrimaryKey(err error) bool {
	var e *pgconn.PgError
	return errors.As(err, &e) && e.Code == "23505" && strings.HasSuffix(e.ConstraintName, "_pkey")
}

// pgIsBusy: serialization_failure, deadlock_detected, lock_not_available.
func pgIsBusy(err error) bool {
	switch pgCode(err) {
	case "40001", "40P01", "55P03":
		return true
	}
	return false
}

// pgCode is the SQLSTATE of a PostgreSQL error, or "".
func pgCode(err error) string {
	var e *pgconn.PgError
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

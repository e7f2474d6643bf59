package store

import (
	"context"
	"database/sql"
	"fmt"
	"path"

	sqlite "modernc.org/sqlite"
)

// Dialect is what differs between the engines crmimport can keep its
// tables in, and nothing more — not an interface over every statement
// (STYLE 16): the settings of a connection, beginning a write transaction
// (Begin), telling busy, constraint and unique-key errors apart (IsBusy,
// IsConstraint, IsUnique), the schema's folder and version, the lock and
// the foreign keys of a schema step, the file a handle has open (File),
// the ids' allocators, the server's statistics (Analyze) and a dry run's
// copies (LeftCopies).
//
// Every choice between engines is a switch with a case per engine, whose
// default panics naming its site (Untaught), or a value per engine chosen
// once (STYLE 19): SQLite is never "whatever is not PostgreSQL". What
// only one engine has stands in that engine's files (sqlite.go;
// postgres.go and the server's own: writelock.go, dryrun.go,
// postgres_copy.go, ledgeronly.go, psql.go, pgquery.go, searchpath.go).
//
// The engine passes *sql.DB and *sql.Tx around, never a Dialect: a handle
// tells its own (DialectOf), a --db name its (DialectAt), and the
// package's functions ask it (Begin, IsUnique, FileID,
// Upgrade). Two exist (Engines): SQLite, a file, and PostgreSQL, a schema
// of a server (issue 17), each with its schema in its own folder
// (schema/sqlite/, schema/postgres/); storetest runs the rule tests on
// each.
//
// Most statements are one text for both. Where a statement cannot be
// (JSON functions, group_concat, an alias PostgreSQL requires), its
// PostgreSQL text stands beside its SQLite text, chosen by the dialect of
// the handle, so that a statement stays whole beside its rule (STYLE 3).
// On PostgreSQL every write transaction holds one advisory lock (Begin):
// the writers are serialized as SQLite's are, so that no transaction
// meets a serialization failure or a deadlock with another writer; a
// statement that may be refused and after which the transaction goes on
// runs in a savepoint (Try), as PostgreSQL refuses the rest of a
// transaction after a failed statement.
//
// Ids are given out by the dialect's allocators (TakeIDs, AdvanceIDs:
// ids.go), never as max(id) + 1. The ? and ?N placeholders every statement
// is written with are SQLite's; PostgreSQL's connector (PostgresDB)
// rebinds them to $N on their way (Rebind).
type Dialect string

// SQLite is the dialect of a file that Open opens (modernc.org/sqlite).
const SQLite Dialect = "sqlite"

// Postgres is the dialect of a PostgreSQL database (issue 17), opened
// through PostgreSQL's connector (PostgresDB).
const Postgres Dialect = "postgres"

// Engines are the dialects store knows, each once: the list that the
// tests loop over (storetest.Run), so that every per-engine choice is seen
// on each, and that a new engine joins — to fail, until it is taught,
// exactly at the choices that panic with Untaught.
func Engines() []Dialect { return []Dialect{SQLite, Postgres} }

// UntaughtError is what a per-engine choice panics with when it meets an
// engine it has no case for: an engine added to Engines and not yet taught
// there. A mistake of the program, never of its input.
type UntaughtError struct {
	Dialect Dialect
	Site    string // the choice: package.Function
}

func (e *UntaughtError) Error() string {
	return fmt.Sprintf("store: engine %q is not taught at %s", string(e.Dialect), e.Site)
}

// Untaught is the panic of the default case of the per-engine choice at
// site, meeting d.
func (d Dialect) Untaught(site string) *UntaughtError { return &UntaughtError{Dialect: d, Site: site} }

// DialectOf is the dialect of db, a handle that Open or OpenExisting
// returned, told by its driver (a PostgreSQL handle's is its connector's:
// PostgresDB). A handle of a driver that store does not know is a mistake
// of the program: DialectOf panics.
func DialectOf(db *sql.DB) Dialect {
	switch drv := db.Driver().(type) {
	case *sqlite.Driver:
		return SQLite
	case pgDriver:
		return Postgres
	default:
		panic(fmt.Sprintf("store: no dialect for database driver %T", drv))
	}
}

// DialectAt is the dialect of the database that name (--db,
// $CRMIMPORT_DB) names: a server's address (postgres://…: IsAddress) is
// PostgreSQL's; a path, any other name, a SQLite file's. The one place a
// name picks its engine.
func DialectAt(name string) Dialect {
	if IsAddress(name) {
		return Postgres
	}
	return SQLite
}

// schemaDir is the folder of the dialect's numbered schema files.
func (d Dialect) schemaDir() string { return path.Join("schema", string(d)) }

// queryer is a *sql.DB or a *sql.Tx.
type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// schemaVersion reads the version of the database's schema.
func (d Dialect) schemaVersion(ctx context.Context, q queryer) (int, error) {
	switch d {
	case SQLite:
		return sqliteSchemaVersion(ctx, q)
	case Postgres:
		return pgSchemaVersion(ctx, q)
	default:
		panic(d.Untaught("store.Dialect.schemaVersion"))
	}
}

// setSchemaVersion records the schema's version in tx, the transaction of
// the step that brings it there.
func (d Dialect) setSchemaVersion(ctx context.Context, tx *sql.Tx, v int) error {
	switch d {
	case SQLite:
		return sqliteSetSchemaVersion(ctx, tx, v)
	case Postgres:
		return pgSetSchemaVersion(ctx, tx, v)
	default:
		panic(d.Untaught("store.Dialect.setSchemaVersion"))
	}
}

// foreignKeysOff turns foreign keys off on conn until on is called, for a
// schema step that rebuilds a table others refer to (fkOff), and
// foreignKeysHold checks, before the step commits, that every row still
// has the rows it refers to. Only SQLite's steps do so.
func (d Dialect) foreignKeysOff(ctx context.Context, conn *sql.Conn) (on func() error, err error) {
	switch d {
	case SQLite:
		return sqliteForeignKeysOff(ctx, conn)
	case Postgres:
		return nil, fmt.Errorf("a PostgreSQL schema step cannot turn foreign keys off (%s): rebuild the table in place", fkOff)
	default:
		panic(d.Untaught("store.Dialect.foreignKeysOff"))
	}
}

func (d Dialect) foreignKeysHold(ctx context.Context, tx *sql.Tx) error {
	switch d {
	case SQLite:
		return sqliteForeignKeysHold(ctx, tx)
	case Postgres:
		return nil // never off (foreignKeysOff)
	default:
		panic(d.Untaught("store.Dialect.foreignKeysHold"))
	}
}

// File is the path of the file that db has open as its main database: ""
// for a database in memory, and for a server's, which is no file.
func File(ctx context.Context, db *sql.DB) (string, error) {
	return DialectOf(db).file(ctx, db)
}

func (d Dialect) file(ctx context.Context, db *sql.DB) (string, error) {
	switch d {
	case SQLite:
		return sqliteFile(ctx, db)
	case Postgres:
		return "", nil
	default:
		panic(d.Untaught("store.File"))
	}
}

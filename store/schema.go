package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

//go:embed schema/sqlite/*.sql schema/postgres/*.sql
var schemaFiles embed.FS

// step is one numbered schema file of a dialect: schema/sqlite/NNN_name.sql
// upgrades a database at version NNN-1 to NNN.
type step struct {
	version int
	name    string
	sql     string
	// fill is what the step does that SQL cannot (fillOf), run after its
	// file in its transaction; nil for most.
	fill func(context.Context, *sql.Tx) error
}

func steps(d Dialect) ([]step, error) {
	entries, err := fs.ReadDir(schemaFiles, d.schemaDir())
	if err != nil {
		return nil, err
	}
	var out []step
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("schema file %s: name must start with its version number", e.Name())
		}
		b, err := schemaFiles.ReadFile(path.Join(d.schemaDir(), e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, step{version: v, name: e.Name(), sql: string(b), fill: fillOf(d, e.Name()[len(num)+1:])})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, s := range out {
		if s.version != i+1 {
			return nil, fmt.Errorf("schema file %s: expected version %d", s.name, i+1)
		}
	}
	return out, nil
}

// fillOf is what the step of a name (its file's name without its number,
// the same on every dialect) does that SQL cannot, or nil: a value that
// only Go computes, given to the rows the step finds.
func fillOf(d Dialect, name string) func(context.Context, *sql.Tx) error {
	switch name {
	case "failure_classes.sql":
		return classFailures
	case "users_and_owners.sql", "leads.sql":
		switch d {
		case SQLite:
			return schemaRewritten
		case Postgres:
			return nil // ALTER TABLE changed its CHECKs
		default:
			panic(d.Untaught("store.fillOf"))
		}
	}
	return nil
}

// Version is the schema version this binary writes (SQLite's steps).
func Version() int {
	s, err := steps(SQLite)
	if err != nil {
		return 0
	}
	return len(s)
}

// Upgrade brings the schema of db to Version(), one numbered file of its
// dialect per transaction, each setting the schema's version (SQLite's
// user_version) in the same transaction, so that an older file opens with a
// newer binary and an interrupted upgrade resumes.
func Upgrade(ctx context.Context, db *sql.DB) error {
	return upgrade(ctx, db, "")
}

// upgrade is Upgrade, and on PostgreSQL it makes the schema named (the
// address's, "" for the session's current one) when it is missing, in the
// transaction of the first step (issue 23 item 2): an open that fails or
// is refused half-way leaves no empty schema behind.
func upgrade(ctx context.Context, db *sql.DB, schema string) error {
	d := DialectOf(db)
	all, err := steps(d)
	if err != nil {
		return err
	}
	for {
		done, err := upgradeOne(ctx, d, db, all, schema)
		if err != nil || done {
			return err
		}
	}
}

// fkOff is the first line of a step that must run with foreign keys off
// (rebuilding a table that others refer to); the step checks every foreign
// key before it commits.
const fkOff = "-- crmimport: foreign keys off"

func upgradeOne(ctx context.Context, d Dialect, db *sql.DB, all []step, schema string) (done bool, err error) {
	// A file that is up to date is only read: opening it never waits for
	// another process's write transaction.
	current, err := d.schemaVersion(ctx, db)
	if err != nil {
		return false, fmt.Errorf("read schema version: %w", err)
	}
	if current == len(all) {
		return true, nil
	}
	if current > len(all) {
		return false, newerError(current, len(all))
	}
	// One connection for the whole step: a PRAGMA of the connection
	// (foreign keys) holds for its transaction.
	conn, err := db.Conn(ctx)
	if err != nil {
		return false, fmt.Errorf("upgrade schema: %w", err)
	}
	defer conn.Close()
	unlock, err := d.upgradeLock(ctx, conn, schema)
	if err != nil {
		return false, fmt.Errorf("upgrade schema: %w", err)
	}
	defer func() { err = errors.Join(err, unlock()) }()
	s := all[current]
	noFK := strings.HasPrefix(s.sql, fkOff)
	if noFK {
		on, ferr := d.foreignKeysOff(ctx, conn)
		if ferr != nil {
			return false, fmt.Errorf("upgrade schema to %d: %w", s.version, ferr)
		}
		defer func() {
			// A connection left without foreign keys would write without
			// them: a failure here fails the open.
			if rerr := on(); rerr != nil {
				err = errors.Join(err, fmt.Errorf("upgrade schema to %d: foreign keys back on: %w", s.version, rerr))
			}
		}()
	}
	tx, err := d.beginUpgrade(ctx, conn) // under the write lock: two processes never both upgrade
	if err != nil {
		return false, fmt.Errorf("upgrade schema: %w", err)
	}
	defer tx.Rollback()
	have, err := d.schemaVersion(ctx, tx)
	if err != nil {
		return false, fmt.Errorf("read schema version: %w", err)
	}
	switch {
	case have == len(all):
		return true, nil
	case have > len(all):
		return false, newerError(have, len(all))
	case have != current:
		return false, nil // another process upgraded meanwhile: look again
	}
	if current == 0 {
		if err := d.makeSchema(ctx, tx, schema); err != nil {
			return false, err
		}
	}
	if err := runStep(ctx, d, tx, s, noFK); err != nil {
		return false, err
	}
	return false, tx.Commit()
}

// runStep runs schema step s in tx: its SQL, its fill, the check of every
// foreign key when it ran with them off (noFK), and the new version.
func runStep(ctx context.Context, d Dialect, tx *sql.Tx, s step, noFK bool) error {
	if _, err := tx.ExecContext(ctx, s.sql); err != nil {
		return fmt.Errorf("upgrade schema to %d (%s): %w", s.version, s.name, err)
	}
	if s.fill != nil {
		if err := s.fill(ctx, tx); err != nil {
			return fmt.Errorf("upgrade schema to %d (%s): %w", s.version, s.name, err)
		}
	}
	if noFK {
		if err := d.foreignKeysHold(ctx, tx); err != nil {
			return fmt.Errorf("upgrade schema to %d (%s): %w", s.version, s.name, err)
		}
	}
	if err := d.setSchemaVersion(ctx, tx, s.version); err != nil {
		return fmt.Errorf("set schema version %d: %w", s.version, err)
	}
	return nil
}

// beginUpgrade begins a schema step's transaction: on SQLite one that
// takes the write lock at once (BEGIN IMMEDIATE); on PostgreSQL a plain
// one, since the step's session holds its schema's write lock already
// (sessionWriteLock), and the schema may not be there yet to name it.
func (d Dialect) beginUpgrade(ctx context.Context, conn *sql.Conn) (*sql.Tx, error) {
	switch d {
	case SQLite:
		return beginSQLite(ctx, conn)
	case Postgres:
		return conn.BeginTx(ctx, nil)
	default:
		panic(d.Untaught("store.Dialect.beginUpgrade"))
	}
}

// upgradeLock is what a schema step holds before its transaction begins.
// On PostgreSQL, the schema's write lock, taken by the step's session
// (sessionWriteLock): a transaction sees the catalog as it stood when it
// began, so one begun before another process's upgrade committed would
// not see the tables it made, and would make them again. On SQLite,
// nothing: the step's transaction takes the write lock as it begins
// (beginUpgrade), and sees the file as it is then.
func (d Dialect) upgradeLock(ctx context.Context, conn *sql.Conn, schema string) (unlock func() error, err error) {
	switch d {
	case SQLite:
		return func() error { return nil }, nil
	case Postgres:
		return sessionWriteLock(ctx, conn, schema)
	default:
		panic(d.Untaught("store.Dialect.upgradeLock"))
	}
}

// makeSchema makes, in the transaction of the first schema step, the
// place the tables go: on PostgreSQL the schema the address names ("" for
// the session's current one, there already) when it is missing; a SQLite
// file is that place already.
func (d Dialect) makeSchema(ctx context.Context, tx *sql.Tx, schema string) error {
	switch d {
	case SQLite:
		return nil
	case Postgres:
		if schema == "" {
			return nil
		}
		if _, err := tx.ExecContext(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{schema}.Sanitize()); err != nil {
			return fmt.Errorf("make schema %s: %w", schema, err)
		}
		return nil
	default:
		panic(d.Untaught("store.Dialect.makeSchema"))
	}
}

func newerError(have, know int) error {
	return fmt.Errorf("the file has schema version %d, newer than this crmimport knows (%d): use a newer crmimport", have, know)
}

// schemaRewritten ends a SQLite step that rewrote the text of tables in
// the schema table (writable_schema: a CHECK changed in place): it moves
// the schema's version, so that every connection — this one too — reads
// the schema again before its next statement, then reads the two tables
// through the text it wrote, which fails the step if the text does not
// parse. (The rows stand as they were: a CHECK that admits one more value
// changes none of them. PostgreSQL changes a constraint with ALTER TABLE.)
func schemaRewritten(ctx context.Context, tx *sql.Tx) error {
	var v int
	if err := tx.QueryRowContext(ctx, `PRAGMA schema_version`).Scan(&v); err != nil {
		return fmt.Errorf("read the schema's version: %w", err)
	}
	// PRAGMA takes no parameters: v is the file's own number.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA schema_version = %d`, v+1)); err != nil {
		return fmt.Errorf("move the schema's version: %w", err)
	}
	for _, q := range []string{`SELECT count(*) FROM (SELECT 1 FROM migration_tasks LIMIT 1)`,
		`SELECT count(*) FROM (SELECT 1 FROM migration_records LIMIT 1)`} {
		var n int
		if err := tx.QueryRowContext(ctx, q).Scan(&n); err != nil {
			return fmt.Errorf("read the tables whose schema was rewritten: %w", err)
		}
	}
	return nil
}

package store

import (
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// An error tells its dialect by its type (a *sqlite.Error is SQLite's, a
// *pgconn.PgError PostgreSQL's): the functions below ask each dialect,
// which answers for its own driver's errors only.

// IsConstraint reports whether err is the database refusing a row for a
// constraint (NOT NULL, CHECK, UNIQUE, FOREIGN KEY): a fault of the record,
// not of the database.
func IsConstraint(err error) bool { return SQLite.IsConstraint(err) || Postgres.IsConstraint(err) }

// IsUnique reports whether err is a UNIQUE or PRIMARY KEY constraint failure.
func IsUnique(err error) bool { return SQLite.IsUnique(err) || Postgres.IsUnique(err) }

// IsPrimaryKey reports whether err is a row refused for an id its table
// holds already: an engine error (the allocator gave an id that is taken),
// never a record's own fault.
func IsPrimaryKey(err error) bool { return SQLite.IsPrimaryKey(err) || Postgres.IsPrimaryKey(err) }

// IsBusy reports whether err is the database giving up on a lock held by
// another connection.
func IsBusy(err error) bool { return SQLite.IsBusy(err) || Postgres.IsBusy(err) }

// IsConstraint reports whether err is SQLite refusing a row for a
// constraint. Matched by the driver's result code, never by text.
func (d Dialect) IsConstraint(err error) bool {
	if d == Postgres {
		return strings.HasPrefix(pgCode(err), "23") // integrity_constraint_violation
	}
	return primaryCode(err) == sqlite3.SQLITE_CONSTRAINT
}

// IsUnique reports whether err is SQLite's UNIQUE or PRIMARY KEY
// constraint failure.
func (d Dialect) IsUnique(err error) bool {
	if d == Postgres {
		return pgCode(err) == "23505" // unique_violation, a primary key's too
	}
	c := extendedCode(err)
	return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

// IsPrimaryKey reports whether err is SQLite's PRIMARY KEY constraint
// failure.
func (d Dialect) IsPrimaryKey(err error) bool {
	if d == Postgres {
		// PostgreSQL names a primary key TABLE_pkey, and the schema keeps
		// that name.
		var e *pgconn.PgError
		return errors.As(err, &e) && e.Code == "23505" && strings.HasSuffix(e.ConstraintName, "_pkey")
	}
	return extendedCode(err) == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

// IsBusy reports whether err is SQLite giving up on a lock held by another
// connection.
func (d Dialect) IsBusy(err error) bool {
	if d == Postgres {
		switch pgCode(err) {
		case "40001", "40P01", "55P03": // serialization_failure, deadlock_detected, lock_not_available
			return true
		}
		return false
	}
	c := primaryCode(err)
	return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
}

func extendedCode(err error) int {
	var e *sqlite.Error
	if errors.As(err, &e) {
		return e.Code()
	}
	return 0
}

func primaryCode(err error) int {
	return extendedCode(err) & 0xff
}

// pgCode is the SQLSTATE of a PostgreSQL error, or "".
func pgCode(err error) string {
	var e *pgconn.PgError
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

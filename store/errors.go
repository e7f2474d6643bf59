package store

// An error tells its dialect by its type (a *sqlite.Error is SQLite's, a
// *pgconn.PgError PostgreSQL's): the functions below ask every dialect
// (Engines), each of which answers for its own driver's errors only.

// IsConstraint reports whether err is the database refusing a row for a
// constraint (NOT NULL, CHECK, UNIQUE, FOREIGN KEY): a fault of the record,
// not of the database.
func IsConstraint(err error) bool { return anyEngine(Dialect.IsConstraint, err) }

// IsUnique reports whether err is a UNIQUE or PRIMARY KEY constraint failure.
func IsUnique(err error) bool { return anyEngine(Dialect.IsUnique, err) }

// IsPrimaryKey reports whether err is a row refused for an id its table
// holds already: an engine error (the allocator gave an id that is taken),
// never a record's own fault.
func IsPrimaryKey(err error) bool { return anyEngine(Dialect.IsPrimaryKey, err) }

// IsBusy reports whether err is the database giving up on a lock held by
// another connection.
func IsBusy(err error) bool { return anyEngine(Dialect.IsBusy, err) }

// anyEngine: does one of the engines say so of err.
func anyEngine(says func(Dialect, error) bool, err error) bool {
	for _, d := range Engines() {
		if says(d, err) {
			return true
		}
	}
	return false
}

// IsConstraint reports whether err is d's driver refusing a row for a
// constraint. Matched by the driver's code, never by text.
func (d Dialect) IsConstraint(err error) bool {
	switch d {
	case SQLite:
		return sqliteIsConstraint(err)
	case Postgres:
		return pgIsConstraint(err)
	default:
		panic(d.Untaught("store.Dialect.IsConstraint"))
	}
}

// IsUnique reports whether err is d's UNIQUE or PRIMARY KEY constraint
// failure.
func (d Dialect) IsUnique(err error) bool {
	switch d {
	case SQLite:
		return sqliteIsUnique(err)
	case Postgres:
		return pgIsUnique(err)
	default:
		panic(d.Untaught("store.Dialect.IsUnique"))
	}
}

// IsPrimaryKey reports whether err is d's PRIMARY KEY constraint failure.
func (d Dialect) IsPrimaryKey(err error) bool {
	switch d {
	case SQLite:
		return sqliteIsPrimaryKey(err)
	case Postgres:
		return pgIsPrimaryKey(err)
	default:
		panic(d.Untaught("store.Dialect.IsPrimaryKey"))
	}
}

// IsBusy reports whether err is d giving up on a lock held by another
// connection.
func (d Dialect) IsBusy(err error) bool {
	switch d {
	case SQLite:
		return sqliteIsBusy(err)
	case Postgres:
		return pgIsBusy(err)
	default:
		panic(d.Untaught("store.Dialect.IsBusy"))
	}
}

package store

import (
	"net/url"

	"github.com/jackc/pgx/v5"
)

// Psql is how psql, PostgreSQL's own shell, reaches the crmimport database
// at a postgres:// address, for a repair that doctor gives as a statement
// of SQL (freeing the slots of missing rows has no command of its own).
// libpq knows no search_path in an address and refuses one, so the schema
// is set by a statement of its own first (SearchPath: the schema's trigger
// functions, too, name its tables unqualified); the password is left out,
// as CommandName leaves it out (psql reads ~/.pgpass and PGPASSWORD).
type Psql struct {
	Address    string // the address, without search_path and password
	SearchPath string // SET search_path TO the schema of crmimport's tables
}

// PsqlOf is how psql reaches the database at addr, a postgres:// address.
func PsqlOf(addr string) (Psql, error) {
	a, err := parsePostgres(addr)
	if err != nil {
		return Psql{}, err
	}
	u, err := url.Parse(CommandName(addr))
	if err != nil {
		return Psql{}, err
	}
	q, err := parsePGQuery(u.RawQuery)
	if err != nil {
		return Psql{}, err
	}
	u.RawQuery = q.without("search_path").encode()
	return Psql{Address: u.String(), SearchPath: "SET search_path TO " + pgx.Identifier{a.schema}.Sanitize()}, nil
}

package desktop

import (
	"net/url"

	"crmimport/forensics"
	"crmimport/store"
)

// The database the pages name (Config.DBPath): a SQLite file's path as it
// is; a server's address never with its password — the header and a dry
// run's summary hide it (dbWords), and doctor's repairs, commands to copy
// into a shell, leave it out (commandDB): libpq's PGPASSWORD or
// ~/.pgpass gives it there, as to psql.

// dbWords is the database as a page shows it: store.Name, with a password
// given in the address's query (?password=) hidden too.
func dbWords(addr string) string {
	if !store.IsAddress(addr) {
		return addr
	}
	u, err := url.Parse(addr)
	if err != nil {
		return store.Name(addr)
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return store.Name(u.String())
}

// commandDB is the database as a command line of a repair names it
// (--db): a server's address without its password.
func commandDB(addr string) string {
	if !store.IsAddress(addr) {
		return addr
	}
	u, err := url.Parse(addr)
	if err != nil {
		return dbWords(addr)
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	if q := u.Query(); q.Has("password") {
		q.Del("password")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// doctorOptions are doctor's options for tenant ("" for all), its repairs
// naming this database (commandDB).
func (s *Server) doctorOptions(tenant string) forensics.DoctorOptions {
	return forensics.DoctorOptions{Tenant: tenant, DBPath: commandDB(s.cfg.DBPath)}
}

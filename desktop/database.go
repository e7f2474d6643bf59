package desktop

import (
	"crmimport/forensics"
	"crmimport/store"
)

// The database the pages name (Config.DBPath): a SQLite file's path as it
// is; a server's address never with its password — the header and a dry
// run's summary hide it (dbWords), and doctor's repairs, commands to copy
// into a shell, leave it out (commandDB): libpq's PGPASSWORD or
// ~/.pgpass gives it there, as to psql.

// dbWords is the database as a page shows it (store.Name).
func dbWords(addr string) string { return store.Name(addr) }

// commandDB is the database as a command line of a repair names it
// (--db): store.CommandName.
func commandDB(addr string) string { return store.CommandName(addr) }

// doctorOptions are doctor's options for tenant ("" for all), its repairs
// naming this database (commandDB).
func (s *Server) doctorOptions(tenant string) forensics.DoctorOptions {
	return forensics.DoctorOptions{Tenant: tenant, DBPath: commandDB(s.cfg.DBPath)}
}

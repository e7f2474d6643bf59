// Package store opens the crmimport database and owns its schema and its
// dialect: the ground floor, which imports no package of crmimport.
//
// It fixes the connection settings the ledger rules depend on: WAL journal,
// foreign keys on, a busy timeout, transactions that take the write lock when
// they begin (BEGIN IMMEDIATE, through Begin, which waits its turn behind
// another process's batch), a single connection per process, and a file
// created with mode 0600 because it holds customer data (SPEC §6).
// Temporary tables, sorts and savepoint journals go to temporary files,
// deleted as they close, so that memory does not grow with them.
//
// Dialect names the engine a database is kept in (issue 17): SQLite, a
// file, and PostgreSQL, a schema of a server (Engines lists them). What
// differs between them goes through store's functions, each of which asks
// the handle's dialect (DialectOf) or the --db name's (DialectAt) and
// chooses by a switch with a case per engine and a default that panics
// naming its site (Untaught): those connection settings, beginning a
// write transaction (on PostgreSQL under its schema's advisory lock:
// writelock.go), busy, constraint and unique-key errors (told by the
// driver's code, never by the message), the schema's folder, version and
// lock, foreign keys off for a schema step, a dry run's copy (VACUUM
// INTO; a schema copied in one snapshot), the file a handle has open, the
// ids' allocators, and the "full" failpoint's ground (StopGrowth on a
// file; DiskFull on a server). What only one
// engine has stands in its own files (sqlite.go; postgres.go and the
// server's others). Outside store, a statement that one engine spells
// otherwise (JSON functions) is chosen beside its rule by the same kind of
// switch; store's tests read the whole tree for those choices, and a
// third engine fails exactly there (storetest.Taught).
//
// A handle knows its dialect (DialectOf: a PostgreSQL handle is opened
// through a connector, PostgresDB, never a driver registered by name), so
// the other packages pass *sql.DB and *sql.Tx and call Begin, IsUnique
// and the rest, which ask it.
//
// A postgres:// address opens a server's schema wherever a path opens a
// file (Open, OpenExisting, OpenReader, Throwaway; OpenLedgerOnly for a
// production engine's own ledger, read as it is). The address is read as
// pgx and the server read it (pgquery.go, searchpath.go), so that the
// schema crmimport checks is the one the server writes to (issue 23).
//
// A dry run's copy on a server is owned by its dry run (dryrun.go): one
// that a killed dry run left behind is named (LeftCopies) and removed by
// the next dry run, never a live one's.
//
// store writes nowhere itself: what it has to tell while it works (a
// write that waits for another's lock, a left copy removed) goes to the
// function that a context carries (WithNotice), which each face gives.
//
// The schema is versioned (SQLite's PRAGMA user_version, PostgreSQL's
// crmimport_schema_version) and upgraded in place from the dialect's
// numbered files in schema/sqlite/ and schema/postgres/ (never a table
// called "migrations": that name belongs to the runs table).
//
// WriteOutput writes every file a user names for output (rejects --out,
// report --out) and is the one place that knows what must never be
// written over: the database in use, its -wal, -shm and -journal files,
// and any SQLite file. It replaces a file whole, through a temporary file
// and a rename.
//
// SQLite's locks are the process's POSIX locks: closing any descriptor of
// the database file inside the process drops them all, and another
// process's connection may then delete the -wal from under this one's
// (issue 23). So nothing outside SQLite opens the file while a connection
// is open: the reads of a file's first bytes by name that identify and
// WriteOutput make go through readHead, which reads through the descriptor
// SQLite already holds on the file when there is one; make lint (lint/)
// forbids opening the database's path outside this package.
//
// Tests get real databases from store/storetest, and run the rules' tests
// on every engine of Engines through storetest.Run.
package store

// Package store opens the crmimport database file and owns its schema.
//
// It fixes the connection settings the ledger rules depend on: WAL journal,
// foreign keys on, a busy timeout, transactions that take the write lock when
// they begin (BEGIN IMMEDIATE), a single connection per process, and a file
// created with mode 0600 because it holds customer data (SPEC §6).
// Temporary tables and sorts stay in memory, but for work whose temporary
// data grows with its input (SpillTemp: a temporary file, deleted as it
// closes).
//
// The schema is versioned with PRAGMA user_version and upgraded in place from
// the numbered files in schema/sqlite/ (never a table called "migrations": that name
// belongs to the runs table).
//
// WriteOutput writes every file a user names for output (rejects --out,
// report --out) and is the one place that knows what must never be
// written over: the database in use, its -wal, -shm and -journal files,
// and any SQLite file. It replaces a file whole, through a temporary file
// and a rename.
package store

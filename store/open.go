package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver (pure Go, no cgo)
)

// BusyTimeout is how long a write waits for another process's write
// transaction before it gives up with "database is locked" (Begin). Write
// transactions are one batch long, so this is generous.
const BusyTimeout = 30 * time.Second

// lockTry is how long SQLite itself waits for a lock before it answers
// "busy", at each of Begin's tries.
const lockTry = 20 * time.Millisecond

// CacheKiB is a writing connection's page cache, in KiB: the ledger's key,
// the tables' last pages and what the foreign-key checks and the link
// indexes read at random stay in memory while an import writes. Its pages
// come from one block (sqlite_pagecache.go), where a page costs its size
// rather than the 8 KiB modernc's allocator gave each: 32 MiB now take the
// memory 16 MiB did. A first run at four times the seed's scale: 78-82 s
// -> 64-70 s at 236 MiB (233 before); 48 MiB bought nothing more, at 253
// MiB (issue 28).
const CacheKiB = 32 << 10

// readerCacheKiB is the page cache of each of a reader's connections
// (OpenReader), in KiB.
const readerCacheKiB = 4 << 10

// Open opens the database at path (a PostgreSQL server's schema when path
// is a postgres:// address: OpenPostgres), creating it with mode 0600 when
// absent, and brings its schema up to date. A file that is not a crmimport
// database (another application's SQLite file, a CSV) is refused before
// anything is written to it, its journal mode included.
func Open(ctx context.Context, path string) (*sql.DB, error) {
	return DialectAt(path).open(ctx, path, true)
}

// OpenExisting opens the database at path as Open does, but never creates
// one: the commands that only read refuse a path where no database is
// (ErrNoDatabase), rather than report on an empty file made by a typo.
func OpenExisting(ctx context.Context, path string) (*sql.DB, error) {
	return DialectAt(path).open(ctx, path, false)
}

func (d Dialect) open(ctx context.Context, path string, create bool) (*sql.DB, error) {
	if path == "" {
		return nil, errors.New("open database: no path given (use --db PATH or --db postgres://…)")
	}
	switch d {
	case SQLite:
		return openSQLite(ctx, path, create)
	case Postgres:
		return openPostgres(ctx, path, create)
	default:
		panic(d.Untaught("store.Open"))
	}
}

// openSQLite is Open of a file.
func openSQLite(ctx context.Context, path string, create bool) (*sql.DB, error) {
	if err := checkPath(path); err != nil {
		return nil, err
	}
	exists, err := identify(ctx, path)
	if err != nil {
		return nil, err
	}
	if !exists {
		if !create {
			return nil, fmt.Errorf("%s: %w (a database is made by `crmimport run` or `crmimport ledger load`; check --db or $CRMIMPORT_DB)", path, ErrNoDatabase)
		}
		if err := createFile(path); err != nil {
			return nil, err
		}
	}
	q := sqliteParams()
	// A new file is switched to WAL, which takes an exclusive lock that
	// SQLite does not wait for: several processes opening one new file at
	// once may be told "busy" at once. They try again, as long as the busy
	// timeout would have waited.
	deadline := time.Now().Add(BusyTimeout)
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		db, err := open(ctx, fileURI(path)+"?"+q.Encode())
		if err == nil || !IsBusy(err) || time.Now().After(deadline) {
			if err != nil {
				return nil, fmt.Errorf("open database %s: %w", path, err)
			}
			return db, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("open database %s: %w", path, ctx.Err())
		case <-time.After(wait):
		}
	}
}

func open(ctx context.Context, dsn string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	// One connection: a process has one writer, and a transaction never
	// waits on a second connection of its own (STYLE 9).
	db.SetMaxOpenConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if err := Upgrade(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// checkPath refuses a path whose folder is missing or that is a folder.
func checkPath(path string) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("open database %s: folder %s does not exist", path, dir)
	case err != nil:
		return fmt.Errorf("open database %s: %w", path, err)
	case !st.IsDir():
		return fmt.Errorf("open database %s: %s is not a folder", path, dir)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("open database %s: it is a folder, not a database file", path)
	}
	return nil
}

// createFile makes an empty file with mode 0600 when none exists, so that
// SQLite (which copies the database file's mode to its -wal and -shm files)
// never creates one readable by others.
func createFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case errors.Is(err, fs.ErrExist):
		return nil // another process made it meanwhile
	case err != nil:
		return fmt.Errorf("open database %s: %w", path, err)
	}
	return f.Close()
}

package store

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
)

// Readers is how many connections OpenReader keeps: pages read at the same
// time as an event stream polls.
const Readers = 4

// OpenReader opens a pool of read-only connections on the crmimport
// database at path, which Open has made (and upgraded): the desktop's
// pages read through it, so that they never wait behind the batches of a
// run that the same process writes through its one writer connection
// (SPEC §9). Under WAL a reader never waits for a writer. It writes
// nothing, and refuses a file that is not ours as Open does.
func OpenReader(ctx context.Context, path string) (*sql.DB, error) {
	return DialectAt(path).openReader(ctx, path)
}

func (d Dialect) openReader(ctx context.Context, path string) (*sql.DB, error) {
	switch d {
	case SQLite:
		return openSQLiteReader(ctx, path)
	case Postgres:
		return openPostgresReader(ctx, path)
	default:
		panic(d.Untaught("store.OpenReader"))
	}
}

// openSQLiteReader is OpenReader of a file.
func openSQLiteReader(ctx context.Context, path string) (*sql.DB, error) {
	exists, err := identify(ctx, path)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, fmt.Errorf("%s: %w", path, ErrNoDatabase)
	}
	q := url.Values{}
	q.Set("mode", "ro")
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "query_only(1)")
	q.Add("_pragma", fmt.Sprintf("cache_size(%d)", -readerCacheKiB))
	db, err := sql.Open("sqlite", fileURI(path)+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open database %s for reading: %w", path, err)
	}
	db.SetMaxOpenConns(Readers)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open database %s for reading: %w", path, err)
	}
	return db, nil
}

// Beside is a pool that reads, while db's one writer connection is in a
// transaction, what the database held at its last commit: for a file, a
// read-only pool of its own on the same file (a second connection through
// SQLite, which keeps the locks of both; under WAL it never waits for the
// writer). A file in memory has none, and a server none either: nil. On
// a server the writer's pool is all there is (a dry run's copy is reached
// through its own), and a reading that waits for a connection the writer
// holds while the writer waits for the reading never ends (the likely
// cause of a PostgreSQL dry run that once waited out its test when the
// server had a reading beside). done lets go of what Beside opened.
func Beside(ctx context.Context, db *sql.DB) (_ *sql.DB, done func(), err error) {
	return DialectOf(db).beside(ctx, db)
}

func (d Dialect) beside(ctx context.Context, db *sql.DB) (*sql.DB, func(), error) {
	switch d {
	case SQLite:
		file, err := d.file(ctx, db)
		if err != nil || file == "" {
			return nil, func() {}, err
		}
		ro, err := openSQLiteReader(ctx, file)
		if err != nil {
			return nil, func() {}, err
		}
		ro.SetMaxOpenConns(1)
		return ro, func() { ro.Close() }, nil
	case Postgres:
		return nil, func() {}, nil
	default:
		panic(d.Untaught("store.Beside"))
	}
}

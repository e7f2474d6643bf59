package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// FileID names the file that db has open as its main database, by device
// and inode ("dev:ino"): a copy of the file is another file, a renamed one
// the same. R13 records it with a run's owner, so that a run is live only in
// the file its owner has open. "" where the system tells no inode.
func FileID(ctx context.Context, db *sql.DB) (string, error) {
	file, err := File(ctx, db)
	if err != nil {
		return "", fmt.Errorf("read the database's file: %w", err)
	}
	if file == "" {
		return "", nil // in memory: no file
	}
	st, err := os.Stat(file)
	if err != nil {
		return "", fmt.Errorf("read the database's file: %w", err)
	}
	return fileIdentity(st), nil
}

// FileIDOf is FileID of the database at path, told by a stat of its name
// (nothing opens it): a dry run's throwaway copy stands for that file (R13:
// the runs the copy holds are live when their owners work on it, not on
// the copy). "" for a server's database, which is no file, and for a file
// that does not exist (yet).
func FileIDOf(path string) (string, error) { return DialectAt(path).fileIDOf(path) }

func (d Dialect) fileIDOf(path string) (string, error) {
	switch d {
	case SQLite:
		return sqliteFileIDOf(path)
	case Postgres:
		return "", nil
	default:
		panic(d.Untaught("store.FileIDOf"))
	}
}

// sqliteFileIDOf is FileIDOf of a file's path.
func sqliteFileIDOf(path string) (string, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the database's file %s: %w", path, err)
	}
	return fileIdentity(st), nil
}

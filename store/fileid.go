package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
)

// FileID names the file that db has open as its main database, by device
// and inode ("dev:ino"): a copy of the file is another file, a renamed one
// the same. R13 records it with a run's owner, so that a run is live only in
// the file its owner has open. "" where the system tells no inode.
func FileID(ctx context.Context, db *sql.DB) (string, error) {
	file, err := DialectOf(db).File(ctx, db)
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

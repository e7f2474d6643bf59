package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// AppID is crmimport's PRAGMA application_id ("crmi"), which schema 4 sets:
// a file that carries it is ours. A file of an older schema is recognised
// by its tables.
const AppID = 0x63726d69

// ourTables are the engine tables every schema of crmimport has had.
var ourTables = []string{"migration_records", "migration_tasks", "migrations", "record_failures", "run_log"}

// NotOursError refuses a file that is not a crmimport database: nothing is
// written to it, its journal mode included.
type NotOursError struct {
	Path string
	What string // what the file is, in words
}

func (e *NotOursError) Error() string {
	return fmt.Sprintf("%s %s, not a crmimport database: crmimport writes nothing to it; give --db a crmimport database or a new file name", e.Path, e.What)
}

// ErrNoDatabase is returned by OpenExisting for a path where no file is.
var ErrNoDatabase = errors.New("no such database")

// identify tells, without writing anything (no journal switch, no -wal
// file), whether the file at path may be opened as a crmimport database:
// absent or empty (a new database), or ours at any schema version. The
// header is read first, by hand; only a SQLite file without our
// application id is opened, read-only, to list its tables.
func identify(ctx context.Context, path string) (exists bool, err error) {
	head, err := readHead(path, 100)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("open database %s: %w", path, err)
	}
	n := len(head)
	if n == 0 {
		return true, nil // an empty file: ours to make
	}
	if !bytes.HasPrefix(head, []byte("SQLite format 3\x00")) {
		return true, &NotOursError{Path: path, What: "is not a SQLite database file (" + looksLike(head) + ")"}
	}
	if n < 100 {
		return true, &NotOursError{Path: path, What: "is a damaged SQLite file (its header is cut short)"}
	}
	switch app := binary.BigEndian.Uint32(head[68:72]); app {
	case AppID:
		return true, nil
	case 0:
	default:
		return true, &NotOursError{Path: path, What: fmt.Sprintf("is the SQLite database of another application (application_id %#x)", app)}
	}
	tables, version, err := listTables(ctx, path)
	if err != nil {
		return true, fmt.Errorf("open database %s: %w", path, err)
	}
	if len(tables) == 0 && version == 0 {
		return true, nil // an empty SQLite database
	}
	for _, t := range ourTables {
		if !slices.Contains(tables, t) {
			what := fmt.Sprintf("holds the tables of another application (%s)", shortList(tables))
			if len(tables) == 0 {
				what = fmt.Sprintf("is a SQLite database with no tables but a user_version of %d", version)
			}
			return true, &NotOursError{Path: path, What: what}
		}
	}
	if version == 0 {
		return true, &NotOursError{Path: path, What: "has crmimport's table names but no schema version: it was not made by crmimport"}
	}
	return true, nil
}

// listTables reads a SQLite file's tables and user_version through a
// read-only connection.

// Another process making the file at the same instant holds a lock that
// SQLite does not always wait for (the switch to WAL): a busy answer is
// tried again, for as long as a write would wait (BusyTimeout).
func listTables(ctx context.Context, path string) ([]string, int, error) {
	deadline := time.Now().Add(BusyTimeout)
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		tables, version, err := listTablesOnce(ctx, path)
		if err == nil || !IsBusy(err) || time.Now().After(deadline) {
			return tables, version, err
		}
		select {
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		case <-time.After(wait):
		}
	}
}

func listTablesOnce(ctx context.Context, path string) ([]string, int, error) {
	db, err := sql.Open("sqlite", fileURI(path)+"?"+readOnlyParams(path))
	if err != nil {
		return nil, 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	// One read transaction: the version and the tables of one moment,
	// even while another process makes the schema.
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, 0, err
	}
	defer tx.Rollback()
	version, err := sqliteSchemaVersion(ctx, tx)
	if err != nil {
		return nil, 0, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name`)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, 0, err
		}
		tables = append(tables, name)
	}
	return tables, version, rows.Err()
}

// readOnlyParams are the URI parameters of a connection that reads the
// SQLite file at path and writes nothing. A WAL file whose -wal is gone
// was closed cleanly: it is read as immutable, so that SQLite makes no
// -wal or -shm beside it.
func readOnlyParams(path string) string {
	params := "mode=ro"
	if isWAL(path) {
		if _, err := os.Stat(path + "-wal"); errors.Is(err, fs.ErrNotExist) {
			params += "&immutable=1"
		}
	}
	return params
}

// isWAL reads from the header whether a SQLite file is in WAL mode.
func isWAL(path string) bool {
	b, err := readHead(path, 20)
	return err == nil && len(b) == 20 && b[18] == 2
}

// fileURI is path as a SQLite URI filename, absolute, with the characters
// that a URI gives a meaning escaped: a path may hold '?' or '#'.
func fileURI(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	path = filepath.ToSlash(path)
	var b strings.Builder
	b.WriteString("file:")
	for i := 0; i < len(path); i++ {
		switch c := path[i]; c {
		case '%', '?', '#':
			b.WriteString(url.QueryEscape(string(c)))
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// looksLike names what a file that is no SQLite database seems to hold.
func looksLike(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		return "it is a zip archive"
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return "it is a gzip file"
	case bytes.HasPrefix(bytes.TrimLeft(head, " \t\r\n\xef\xbb\xbf"), []byte("{")),
		bytes.HasPrefix(bytes.TrimLeft(head, " \t\r\n\xef\xbb\xbf"), []byte("[")):
		return "it looks like JSON: is it an export? pass exports to `crmimport run`"
	case utf8.Valid(head) && !bytes.ContainsRune(head, 0):
		return "it holds text, such as a CSV: is it an export? pass exports to `crmimport run`"
	}
	return "its first bytes are no SQLite header"
}

func shortList(names []string) string {
	if len(names) > 5 {
		return strings.Join(names[:5], ", ") + fmt.Sprintf(" and %d more", len(names)-5)
	}
	return strings.Join(names, ", ")
}

// Copy writes a consistent copy of the crmimport database at path to dest
// (a new file) through a read-only connection and VACUUM INTO: the file
// at path is never written, not even upgraded or switched to WAL, so that
// a dry run leaves it byte for byte as it was. copied=false when there is
// no database at path (nothing to copy: a dry run starts empty).
func Copy(ctx context.Context, path, dest string) (copied bool, err error) {
	exists, err := identify(ctx, path)
	if err != nil || !exists {
		return false, err
	}
	if st, err := os.Stat(path); err == nil && st.Size() == 0 {
		return false, nil
	}
	db, err := sql.Open("sqlite", fileURI(path)+"?"+readOnlyParams(path))
	if err != nil {
		return false, fmt.Errorf("copy database %s: %w", path, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if err := sqliteCopyInto(ctx, db, dest); err != nil {
		return false, fmt.Errorf("copy database %s: %w", path, err)
	}
	if err := os.Chmod(dest, 0o600); err != nil {
		return false, fmt.Errorf("copy database %s: %w", path, err)
	}
	return true, nil
}

// Throwaway copies the database at path (when there is one) into a new
// private folder, through Copy, for a dry run: the run works on the copy,
// and cleanup removes it. path itself is never written.
//
// On PostgreSQL the copy is a schema beside the original's, dropped by
// cleanup, and copyPath its address.
//
// cleanup says when the copy could not be removed, naming it: the dry run
// itself is over, and the copy is left for the user to remove.
func Throwaway(ctx context.Context, path string) (copyPath string, cleanup func() error, err error) {
	return DialectAt(path).throwaway(ctx, path)
}

func (d Dialect) throwaway(ctx context.Context, path string) (copyPath string, cleanup func() error, err error) {
	switch d {
	case SQLite:
		return throwawaySQLite(ctx, path)
	case Postgres:
		return throwawayPostgres(ctx, path)
	default:
		panic(d.Untaught("store.Throwaway"))
	}
}

// throwawaySQLite is Throwaway of a file.
func throwawaySQLite(ctx context.Context, path string) (copyPath string, cleanup func() error, err error) {
	dir, err := os.MkdirTemp("", "crmimport-dry-run-")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() error {
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("remove the dry run's copy %s (remove it by hand): %w", dir, err)
		}
		return nil
	}
	copyPath = filepath.Join(dir, "dry-run.db")
	if _, err := Copy(ctx, path, copyPath); err != nil {
		return "", nil, errors.Join(fmt.Errorf("dry run: %w", err), cleanup())
	}
	return copyPath, cleanup, nil
}

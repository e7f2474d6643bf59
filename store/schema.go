package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

//go:embed schema/sqlite/*.sql
var schemaFiles embed.FS

// schemaDir holds SQLite's schema files.
const schemaDir = "schema/sqlite"

// step is one numbered schema file: schema/sqlite/NNN_name.sql upgrades a
// database at user_version NNN-1 to NNN.
type step struct {
	version int
	name    string
	sql     string
}

func steps() ([]step, error) {
	entries, err := fs.ReadDir(schemaFiles, schemaDir)
	if err != nil {
		return nil, err
	}
	var out []step
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("schema file %s: name must start with its version number", e.Name())
		}
		b, err := schemaFiles.ReadFile(path.Join(schemaDir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, step{version: v, name: e.Name(), sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, s := range out {
		if s.version != i+1 {
			return nil, fmt.Errorf("schema file %s: expected version %d", s.name, i+1)
		}
	}
	return out, nil
}

// Version is the schema version this binary writes.
func Version() int {
	s, err := steps()
	if err != nil {
		return 0
	}
	return len(s)
}

const userVersionSQL = `PRAGMA user_version`

// Upgrade brings the schema of db to Version(), one numbered file per
// transaction, each setting user_version in the same transaction, so that an
// older file opens with a newer binary and an interrupted upgrade resumes.
func Upgrade(ctx context.Context, db *sql.DB) error {
	all, err := steps()
	if err != nil {
		return err
	}
	for {
		done, err := upgradeOne(ctx, db, all)
		if err != nil || done {
			return err
		}
	}
}

// fkOff is the first line of a step that must run with foreign keys off
// (rebuilding a table that others refer to); the step checks every foreign
// key before it commits.
const fkOff = "-- crmimport: foreign keys off"

func upgradeOne(ctx context.Context, db *sql.DB, all []step) (done bool, err error) {
	// A file that is up to date is only read: opening it never waits for
	// another process's write transaction.
	var current int
	if err := db.QueryRowContext(ctx, userVersionSQL).Scan(&current); err != nil {
		return false, fmt.Errorf("read schema version: %w", err)
	}
	if current == len(all) {
		return true, nil
	}
	if current > len(all) {
		return false, newerError(current, len(all))
	}
	// One connection for the whole step: a PRAGMA of the connection
	// (foreign keys) holds for its transaction.
	conn, err := db.Conn(ctx)
	if err != nil {
		return false, fmt.Errorf("upgrade schema: %w", err)
	}
	defer conn.Close()
	s := all[current]
	noFK := strings.HasPrefix(s.sql, fkOff)
	if noFK {
		// PRAGMA foreign_keys is a no-op inside a transaction: it is set
		// before and restored after.
		if _, err := conn.ExecContext(ctx, `PRAGMA foreign_keys = OFF`); err != nil {
			return false, fmt.Errorf("upgrade schema to %d: %w", s.version, err)
		}
		defer func() {
			// A connection left without foreign keys would write without
			// them: a failure here fails the open.
			if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA foreign_keys = ON`); rerr != nil {
				err = errors.Join(err, fmt.Errorf("upgrade schema to %d: foreign keys back on: %w", s.version, rerr))
			}
		}()
	}
	tx, err := Begin(ctx, conn) // immediate: two processes never both upgrade
	if err != nil {
		return false, fmt.Errorf("upgrade schema: %w", err)
	}
	defer tx.Rollback()
	var have int
	if err := tx.QueryRowContext(ctx, userVersionSQL).Scan(&have); err != nil {
		return false, fmt.Errorf("read schema version: %w", err)
	}
	switch {
	case have == len(all):
		return true, nil
	case have > len(all):
		return false, newerError(have, len(all))
	case have != current:
		return false, nil // another process upgraded meanwhile: look again
	}
	if _, err := tx.ExecContext(ctx, s.sql); err != nil {
		return false, fmt.Errorf("upgrade schema to %d (%s): %w", s.version, s.name, err)
	}
	if noFK {
		if err := foreignKeysHold(ctx, tx); err != nil {
			return false, fmt.Errorf("upgrade schema to %d (%s): %w", s.version, s.name, err)
		}
	}
	// PRAGMA takes no parameters; the version is our own number.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", s.version)); err != nil {
		return false, fmt.Errorf("set schema version %d: %w", s.version, err)
	}
	return false, tx.Commit()
}

func newerError(have, know int) error {
	return fmt.Errorf("the file has schema version %d, newer than this crmimport knows (%d): use a newer crmimport", have, know)
}

// foreignKeysHold fails when a row refers to a row that is not there.
func foreignKeysHold(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `PRAGMA foreign_key_check`)
	if err != nil {
		return err
	}
	defer rows.Close()
	if rows.Next() {
		var table, parent string
		var rowid sql.NullInt64
		var fk int
		if err := rows.Scan(&table, &rowid, &parent, &fk); err != nil {
			return err
		}
		return fmt.Errorf("row %d of %s refers to a row of %s that is not there", rowid.Int64, table, parent)
	}
	return rows.Err()
}

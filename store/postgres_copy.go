package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// throwawayPostgres copies the schema at dsn into a new schema beside it,
// for a dry run: the run works on the copy, and cleanup drops it. The
// original is only read, in one read-only transaction (one snapshot), and
// an older schema is copied as it is and upgraded in the copy; where the
// address holds no crmimport database yet, the copy is a new one, as a
// dry run on a new file works on a new file.
//
// The copy is owned (dryrun.go): its lock is taken before it is made and
// held until it is dropped, and the copies of the same schema that no
// live dry run owns — a dry run killed left them — are removed first.
func throwawayPostgres(ctx context.Context, dsn string) (copyDSN string, cleanup func() error, err error) {
	a, err := parsePostgres(dsn)
	if err != nil {
		return "", nil, err
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := dryRunPrefix + hex.EncodeToString(b)
	copyDSN = a.with("search_path", name)
	there, err := a.holdsDatabase(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("dry run: %w", err)
	}
	o, err := a.ownCopy(ctx, name)
	if err != nil {
		return "", nil, fmt.Errorf("dry run: %w", err)
	}
	var dst *sql.DB
	if there {
		dst, err = CopyPostgres(ctx, dsn, copyDSN)
	} else {
		dst, err = OpenPostgres(ctx, copyDSN)
	}
	if err != nil {
		return "", nil, errors.Join(fmt.Errorf("dry run: %w", err), o.drop(ctx), o.release())
	}
	cleanup = func() error {
		return errors.Join(dropSchema(context.WithoutCancel(ctx), dst, name), dst.Close(), o.release())
	}
	return copyDSN, cleanup, nil
}

// holdsDatabase tells whether the address's schema holds a crmimport
// database; one that holds another application's tables is refused, as
// Open refuses it.
func (a pgAddress) holdsDatabase(ctx context.Context) (bool, error) {
	db, err := a.connect(ctx, a.with("default_transaction_read_only", "on"), 1)
	if err != nil {
		return false, err
	}
	defer db.Close()
	if err := a.ours(ctx, db); err != nil {
		return false, err
	}
	switch err := a.exists(ctx, db); {
	case errors.Is(err, ErrNoDatabase):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}

// dropSchema drops a copy's schema and all it holds.
func dropSchema(ctx context.Context, db *sql.DB, name string) error {
	if _, err := db.ExecContext(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE"); err != nil {
		return fmt.Errorf("drop the copy's schema %s (drop it by hand: DROP SCHEMA %s CASCADE): %w",
			name, pgx.Identifier{name}.Sanitize(), err)
	}
	return nil
}

// CopyPostgres copies the crmimport database at the address from into a
// new schema at the address to, on the same server, in one snapshot of
// the original, which is only read; it returns the copy, open. An older
// schema is copied as it is and upgraded in the copy.
func CopyPostgres(ctx context.Context, from, to string) (*sql.DB, error) {
	a, err := parsePostgres(from)
	if err != nil {
		return nil, err
	}
	b, err := parsePostgres(to)
	if err != nil {
		return nil, err
	}
	src, err := openPostgresReader(ctx, from)
	if err != nil {
		return nil, err
	}
	src.Close() // it was there
	dst, err := OpenPostgres(ctx, to)
	if err != nil {
		return nil, err
	}
	if err := copySchema(ctx, a.schema, b.schema, dst); err != nil {
		err = fmt.Errorf("copy schema %s to %s: %w", a.schema, b.schema, err)
		return nil, errors.Join(err, dropSchema(context.WithoutCancel(ctx), dst, b.schema), dst.Close())
	}
	return dst, nil
}

// createTable finds the tables of the schema files in the order they are
// made, which is an order their foreign keys allow.
var createTable = regexp.MustCompile(`(?im)^\s*CREATE TABLE (?:IF NOT EXISTS )?([a-z_]+)`)

// pgTables are crmimport's tables on PostgreSQL, in the order the schema
// files make them.
func pgTables() ([]string, error) {
	all, err := steps(Postgres)
	if err != nil {
		return nil, err
	}
	var tables []string
	seen := map[string]bool{"crmimport_schema_version": true}
	for _, s := range all {
		for _, m := range createTable.FindAllStringSubmatch(s.sql, -1) {
			if !seen[m[1]] {
				seen[m[1]] = true
				tables = append(tables, m[1])
			}
		}
	}
	return tables, nil
}

// parentsFirst orders tables so that each comes after the tables its
// foreign keys in schema name point to (a table made by an early step may
// point to one a later step made: companies.owner_id to users), keeping
// the order they are made in otherwise.
func parentsFirst(ctx context.Context, tx *sql.Tx, schema string, tables []string) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `
SELECT c.relname, r.relname FROM pg_constraint k
JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class r ON r.oid = k.confrelid JOIN pg_namespace n ON n.oid = k.connamespace
WHERE k.contype = 'f' AND n.nspname = ?`, schema)
	if err != nil {
		return nil, fmt.Errorf("read the foreign keys of %s: %w", schema, err)
	}
	defer rows.Close()
	parents := map[string][]string{}
	for rows.Next() {
		var child, parent string
		if err := rows.Scan(&child, &parent); err != nil {
			return nil, err
		}
		if child != parent {
			parents[child] = append(parents[child], parent)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(tables))
	placed := map[string]bool{}
	for len(out) < len(tables) {
		before := len(out)
		for _, t := range tables {
			if placed[t] {
				continue
			}
			ready := true
			for _, p := range parents[t] {
				ready = ready && (placed[p] || !slices.Contains(tables, p))
			}
			if ready {
				placed[t] = true
				out = append(out, t)
			}
		}
		if len(out) == before {
			return nil, fmt.Errorf("the foreign keys of %s go round in a circle", schema)
		}
	}
	return out, nil
}

// copySchema copies every table of crmimport's schema from schema from to
// schema to (made and upgraded), the columns both have, and moves the
// identities' sequences past the ids copied.
func copySchema(ctx context.Context, from, to string, db beginner) error {
	tables, err := pgTables()
	if err != nil {
		return err
	}
	// One snapshot of the original, whoever writes to it meanwhile.
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if tables, err = parentsFirst(ctx, tx, to, tables); err != nil {
		return err
	}
	for _, t := range tables {
		rows, err := tx.QueryContext(ctx, `
SELECT d.column_name FROM information_schema.columns d
JOIN information_schema.columns s ON s.table_schema = ? AND s.table_name = d.table_name AND s.column_name = d.column_name
WHERE d.table_schema = ? AND d.table_name = ? ORDER BY d.ordinal_position`, from, to, t)
		if err != nil {
			return err
		}
		var cols []string
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				rows.Close()
				return err
			}
			cols = append(cols, pgx.Identifier{c}.Sanitize())
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if len(cols) == 0 {
			continue // a table the original's older schema does not have yet
		}
		list := strings.Join(cols, ", ")
		// What the new schema was seeded with (the id allocators) is the
		// original's to say.
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+pgx.Identifier{to, t}.Sanitize()); err != nil {
			return fmt.Errorf("table %s: %w", t, err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`INSERT INTO %s (%s) OVERRIDING SYSTEM VALUE SELECT %s FROM %s`,
			pgx.Identifier{to, t}.Sanitize(), list, list, pgx.Identifier{from, t}.Sanitize())); err != nil {
			return fmt.Errorf("table %s: %w", t, err)
		}
		var seq *string
		err = tx.QueryRowContext(ctx, `SELECT pg_get_serial_sequence(?, 'id') FROM information_schema.columns
WHERE table_schema = ? AND table_name = ? AND column_name = 'id'`, pgx.Identifier{to, t}.Sanitize(), to, t).Scan(&seq)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if seq != nil {
			if _, err := tx.ExecContext(ctx, fmt.Sprintf(`SELECT setval(?, coalesce((SELECT max(id) FROM %s), 0) + 1, false)`,
				pgx.Identifier{to, t}.Sanitize()), *seq); err != nil {
				return err
			}
		}
	}
	return tx.Commit()
}

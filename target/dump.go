package target

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"crmimport/canon"
	"crmimport/ledger"
)

// What `ledger load` and doctor ask of the target tables. Their queries
// come in as constants of the caller's (a staging table of the dump's
// slots, the ledger's own columns) and are set into statements that are
// this package's; no value is ever set into SQL text.

// MaxID is the last row id of kind's table (0 for an empty table).
func MaxID(ctx context.Context, tx *sql.Tx, k ledger.Kind) (int64, error) {
	var id int64
	if err := tx.QueryRowContext(ctx, "SELECT coalesce(max(id), 0) FROM "+k.Table()).Scan(&id); err != nil {
		return 0, fmt.Errorf("last %s id: %w", k, err)
	}
	return id, nil
}

// Taken calls f, in order, with every row id of idsQuery (a query of one
// column, id) that kind's table already holds.
func Taken(ctx context.Context, tx *sql.Tx, k ledger.Kind, idsQuery string, args []any, f func(id int64) error) error {
	rows, err := tx.QueryContext(ctx, "SELECT DISTINCT s.id FROM ("+idsQuery+") s JOIN "+k.Table()+" t ON t.id = s.id ORDER BY 1", args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return err
		}
		if err := f(id); err != nil {
			return err
		}
	}
	return rows.Err()
}

// InsertPlaceholders writes a placeholder row of kind, marked from_dump
// and its label column (canon.Label: the text column that says what it is,
// and that NOT NULL needs filled) holding the label, for every row of
// rowsQuery — columns id, tenant_id, label, extra,
// imported_at and ord — in the order of ord: the first row of an id is
// written, the later ones of that id do nothing. It returns how many rows
// it wrote.
func InsertPlaceholders(ctx context.Context, tx *sql.Tx, k ledger.Kind, rowsQuery string, args []any) (int64, error) {
	q := "INSERT INTO " + k.Table() + " (id, tenant_id, " + canon.Label(k) + ", extra, imported_at, from_dump) " +
		"SELECT id, tenant_id, label, extra, imported_at, 1 FROM (" + rowsQuery + ") AS p WHERE true ORDER BY ord " +
		"ON CONFLICT (id) DO NOTHING"
	res, err := tx.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// MissingRow is an SQL condition over three column expressions of the
// caller's — a final slot's kind, row id and tenant — that holds when the
// row is not in its table, or belongs to another tenant (R1, R2: such a
// slot refuses every later claim, so its record is never written again).
func MissingRow(kind, id, tenant string) string {
	c := "CASE " + kind
	for _, k := range canon.Kinds() {
		c += " WHEN '" + string(k) + "' THEN NOT EXISTS (SELECT 1 FROM " + k.Table() + " x WHERE x.id = " + id +
			" AND x.tenant_id = " + tenant + ")"
	}
	return c + " END"
}

// RowState tells whether row id of kind is in its table for tenant, and
// whether it is a placeholder loaded from a dump.
func RowState(ctx context.Context, db *sql.DB, k ledger.Kind, id int64, tenant string) (found, placeholder bool, err error) {
	var fromDump int
	err = db.QueryRowContext(ctx, "SELECT from_dump FROM "+k.Table()+" WHERE id = ? AND tenant_id = ?", id, tenant).Scan(&fromDump)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, false, nil
	case err != nil:
		return false, false, fmt.Errorf("%s row %d: %w", k, id, err)
	}
	return true, fromDump == 1, nil
}

// Count is how many rows the six tables hold, all tenants.
func Count(ctx context.Context, db *sql.DB) (int64, error) {
	var n int64
	for _, k := range canon.Kinds() {
		var m int64
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+k.Table()).Scan(&m); err != nil {
			return 0, fmt.Errorf("count %s: %w", k.Plural(), err)
		}
		n += m
	}
	return n, nil
}

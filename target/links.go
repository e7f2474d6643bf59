package target

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"crmimport/canon"
	"crmimport/ledger"
)

// EachLink calls f for every row of tenant's kind k that links to another
// row: its id and the parents it links to, each through its foreign-key
// column <kind>_id, in the order of canon.ParentKinds(k), 0 where it links
// to none. Undo (R16) finds a run's dependents with it.
func EachLink(ctx context.Context, q Querier, k ledger.Kind, tenant string, f func(id int64, parents []int64) error) error {
	parents := canon.ParentKinds(k)
	if len(parents) == 0 {
		return nil
	}
	cols := make([]string, len(parents))
	for i, p := range parents {
		cols[i] = "coalesce(" + canon.LinkField(p) + ", 0)"
	}
	q1 := "SELECT id, " + strings.Join(cols, ", ") + " FROM " + k.Table() + " WHERE tenant_id = ? AND (" +
		strings.Join(cols, " + ") + ") > 0"
	rows, err := q.QueryContext(ctx, q1, tenant)
	if err != nil {
		return fmt.Errorf("read the links of %s: %w", k.Plural(), err)
	}
	defer rows.Close()
	ids := make([]int64, len(parents))
	dest := make([]any, 1+len(parents))
	var id int64
	dest[0] = &id
	for i := range ids {
		dest[1+i] = &ids[i]
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("read the links of %s: %w", k.Plural(), err)
		}
		if err := f(id, ids); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read the links of %s: %w", k.Plural(), err)
	}
	return nil
}

// EachPlaceholder calls f with the id of every row of tenant's kind k that
// is a placeholder loaded from a dump (from_dump).
func EachPlaceholder(ctx context.Context, q Querier, k ledger.Kind, tenant string, f func(id int64)) error {
	rows, err := q.QueryContext(ctx, "SELECT id FROM "+k.Table()+" WHERE tenant_id = ? AND from_dump = 1", tenant)
	if err != nil {
		return fmt.Errorf("read the placeholder %s: %w", k.Plural(), err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return fmt.Errorf("read the placeholder %s: %w", k.Plural(), err)
		}
		f(id)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read the placeholder %s: %w", k.Plural(), err)
	}
	return nil
}

// linkColumn is the link column field of kind k's table, checked against
// the table of kinds: a field that is not one of k's links is a bug.
func linkColumn(k ledger.Kind, field string) string {
	for _, l := range canon.Parents(k) {
		if l.Field == field {
			return field
		}
	}
	panic(fmt.Sprintf("target: %q is not a link of %s", field, k))
}

// SetLink completes a link left empty (R6a): the row id of tenant's kind k
// gets parent in its link column field, only where that column is still
// empty (a compare-and-set: a link filled since, by hand, stays). It tells
// whether the row changed; the caller counts it (R11).
func SetLink(ctx context.Context, tx Execer, k ledger.Kind, field, tenant string, id, parent int64) (bool, error) {
	col := linkColumn(k, field)
	return oneChanged(ctx, tx, fmt.Sprintf("complete the %s of %s %d", field, k, id),
		"UPDATE "+k.Table()+" SET "+col+" = ? WHERE id = ? AND tenant_id = ? AND "+col+" IS NULL", parent, id, tenant)
}

// EmptyLink takes a completed link back (the undo of the run that
// completed it, R16): the link column field of the row id is emptied only
// where it still holds parent. It tells whether the row changed.
func EmptyLink(ctx context.Context, tx Execer, k ledger.Kind, field, tenant string, id, parent int64) (bool, error) {
	col := linkColumn(k, field)
	return oneChanged(ctx, tx, fmt.Sprintf("empty the %s of %s %d", field, k, id),
		"UPDATE "+k.Table()+" SET "+col+" = NULL WHERE id = ? AND tenant_id = ? AND "+col+" = ?", id, tenant, parent)
}

// Execer is a *sql.Tx.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// oneChanged runs an UPDATE of at most one row (by its id) and tells
// whether it changed it; more than one is an error.
func oneChanged(ctx context.Context, tx Execer, name, query string, args ...any) (bool, error) {
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return false, fmt.Errorf("%s: %w", name, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("%s: %w", name, err)
	}
	if n > 1 {
		return false, fmt.Errorf("%s changed %d rows, want at most 1", name, n)
	}
	return n == 1, nil
}

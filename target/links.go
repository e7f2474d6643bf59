package target

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"crmimport/canon"
	"crmimport/ledger"
)

// EachLink calls f for every row of tenant's kind k that links to another
// row: its id and the parents it links to, each through its foreign-key
// column (its link field), in the order of canon.ParentKinds(k), 0 where it links
// to none. Undo (R16) finds a run's dependents with it.
func EachLink(ctx context.Context, q Querier, k ledger.Kind, tenant string, f func(id int64, parents []int64) error) error {
	parents := canon.Parents(k)
	if len(parents) == 0 {
		return nil
	}
	cols := make([]string, len(parents))
	for i, p := range parents {
		cols[i] = "coalesce(" + p.Field + ", 0)"
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
// empty (a compare-and-set: a link filled since, by hand, stays), and the
// value kept for the link in its extra (kept, SPEC §4 step 7) is taken out
// of it, as a run that resolved the link would not have kept it. It tells
// whether the row changed; the caller counts it (R11).
func SetLink(ctx context.Context, tx Execer, k ledger.Kind, field, tenant string, id, parent int64, kept string) (bool, error) {
	col := linkColumn(k, field)
	name := fmt.Sprintf("complete the %s of %s %d", field, k, id)
	extra, found, err := readExtra(ctx, tx, name, "SELECT coalesce(extra, '') FROM "+k.Table()+" WHERE id = ? AND tenant_id = ? AND "+col+" IS NULL", id, tenant)
	if err != nil || !found {
		return false, err
	}
	if extra, err = editExtra(extra, field, kept, false); err != nil {
		return false, fmt.Errorf("%s: %w", name, err)
	}
	return oneChanged(ctx, tx, name,
		"UPDATE "+k.Table()+" SET "+col+" = ?, extra = ? WHERE id = ? AND tenant_id = ? AND "+col+" IS NULL", parent, nullIfEmpty(extra), id, tenant)
}

// EmptyLink takes a completed link back (the undo of the run that
// completed it, R16): the link column field of the row id is emptied only
// where it still holds parent, and the value kept for it goes back into
// its extra. It tells whether the row changed.
func EmptyLink(ctx context.Context, tx Execer, k ledger.Kind, field, tenant string, id, parent int64, kept string) (bool, error) {
	col := linkColumn(k, field)
	name := fmt.Sprintf("empty the %s of %s %d", field, k, id)
	extra, found, err := readExtra(ctx, tx, name, "SELECT coalesce(extra, '') FROM "+k.Table()+" WHERE id = ? AND tenant_id = ? AND "+col+" = ?", id, tenant, parent)
	if err != nil || !found {
		return false, err
	}
	if extra, err = editExtra(extra, field, kept, true); err != nil {
		return false, fmt.Errorf("%s: %w", name, err)
	}
	return oneChanged(ctx, tx, name,
		"UPDATE "+k.Table()+" SET "+col+" = NULL, extra = ? WHERE id = ? AND tenant_id = ? AND "+col+" = ?", nullIfEmpty(extra), id, tenant, parent)
}

func readExtra(ctx context.Context, tx Execer, name, query string, args ...any) (string, bool, error) {
	var extra string
	switch err := tx.QueryRowContext(ctx, query, args...).Scan(&extra); {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("%s: %w", name, err)
	}
	return extra, true, nil
}

// editExtra takes the value kept for field out of a row's extra (JSON, ""
// for none) where it is that value, or with put puts it back; numbers and
// key order come out as the importer writes them (json.Marshal of a map).
func editExtra(extra, field, kept string, put bool) (string, error) {
	if kept == "" {
		return extra, nil
	}
	m := map[string]any{}
	if extra != "" {
		dec := json.NewDecoder(strings.NewReader(extra))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			return "", fmt.Errorf("its extra is not a JSON object: %w", err)
		}
	}
	switch {
	case put:
		m[field] = kept
	case m[field] == kept:
		delete(m, field)
	default:
		return extra, nil
	}
	if len(m) == 0 {
		return "", nil
	}
	b, err := json.Marshal(m)
	return string(b), err
}

// Execer is a *sql.Tx.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
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

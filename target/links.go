package target

import (
	"context"
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

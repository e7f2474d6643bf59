package target

import (
	"context"
	"fmt"
	"strings"

	"crmimport/ledger"
)

// ParentsOf are the kinds a row of kind k links to, each through its
// foreign-key column <kind>_id: a contact to its company, a deal to its
// company and contact, a note, activity or email to its contact, company
// and deal.
func ParentsOf(k ledger.Kind) []ledger.Kind {
	switch k {
	case ledger.Contact:
		return []ledger.Kind{ledger.Company}
	case ledger.Deal:
		return []ledger.Kind{ledger.Company, ledger.Contact}
	case ledger.Note, ledger.Activity, ledger.Email:
		return []ledger.Kind{ledger.Contact, ledger.Company, ledger.Deal}
	}
	return nil
}

// EachLink calls f for every row of tenant's kind k that links to another
// row: its id and the parents it links to, in the order of ParentsOf(k), 0
// where it links to none. Undo (R16) finds a run's dependents with it.
func EachLink(ctx context.Context, q Querier, k ledger.Kind, tenant string, f func(id int64, parents []int64) error) error {
	parents := ParentsOf(k)
	if len(parents) == 0 {
		return nil
	}
	cols := make([]string, len(parents))
	for i, p := range parents {
		cols[i] = "coalesce(" + string(p) + "_id, 0)"
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

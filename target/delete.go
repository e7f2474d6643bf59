package target

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"crmimport/ledger"
)

// Delete removes tenant's rows of kind with the ids given, in chunks, and
// returns how many it removed. A row that another row still links to is
// refused by its foreign key: the caller takes children back first (a
// caller that goes on after a refusal puts it in store.Try, as PostgreSQL
// refuses the rest of a transaction after a failed statement).
func Delete(ctx context.Context, tx *sql.Tx, k ledger.Kind, tenant string, ids []int64) (int64, error) {
	var n int64
	for start := 0; start < len(ids); start += chunk {
		part := ids[start:min(start+chunk, len(ids))]
		q := "DELETE FROM " + k.Table() + " WHERE tenant_id = ? AND id IN (" + strings.TrimSuffix(strings.Repeat("?, ", len(part)), ", ") + ")"
		args := make([]any, 0, 1+len(part))
		args = append(args, tenant)
		for _, id := range part {
			args = append(args, id)
		}
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return n, fmt.Errorf("delete %s rows: %w", k.Plural(), err)
		}
		m, err := res.RowsAffected()
		if err != nil {
			return n, fmt.Errorf("delete %s rows: %w", k.Plural(), err)
		}
		n += m
	}
	return n, nil
}

// DeleteListed removes tenant's rows of kind whose ids idsQuery (a query
// of one column, its arguments args) lists, in one statement, and returns
// them as they were, by id (their columns as ReadRows reads them): the
// caller compares them with what was written without reading them again.
// A row that another row still links to is refused by its foreign key:
// the caller takes children back first.
func DeleteListed(ctx context.Context, tx *sql.Tx, k ledger.Kind, tenant, idsQuery string, args []any) (map[int64]State, error) {
	rows, err := tx.QueryContext(ctx, "DELETE FROM "+k.Table()+" WHERE tenant_id = ? AND id IN ("+idsQuery+") RETURNING "+stateColumns(k),
		append([]any{tenant}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("delete %s rows: %w", k.Plural(), err)
	}
	defer rows.Close()
	got := map[int64]State{}
	if err := scanStates(rows, k, got); err != nil {
		return nil, fmt.Errorf("delete %s rows: %w", k.Plural(), err)
	}
	return got, nil
}

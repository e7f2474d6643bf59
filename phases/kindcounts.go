package phases

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"crmimport/ledger"
)

// A run's links completed (R6a) are counted on the child's kind, which the
// run may not read at all (`--only companies` completes deals' links), and
// an undo's links emptied again on the child's kind, which it may not take
// back: neither belongs to a task. They are kept per run and kind in
// run_kind_counts, written in the batch transaction that completes or
// empties the links (R12), and added to the tasks' counts by RollupRun.

const addKindCountsSQL = `
INSERT INTO run_kind_counts (migration_id, kind, relinked, unlinked) VALUES (?, ?, ?, ?)
ON CONFLICT (migration_id, kind) DO UPDATE SET
    relinked = run_kind_counts.relinked + excluded.relinked, unlinked = run_kind_counts.unlinked + excluded.unlinked`

// AddKindCounts adds, in tx, to run's counts per kind: the Relinked and
// Unlinked of each of counts.
func AddKindCounts(ctx context.Context, tx *sql.Tx, run int64, counts map[ledger.Kind]Counts) error {
	kinds := make([]ledger.Kind, 0, len(counts))
	for k := range counts {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds) // one order of locks whatever the map's
	for _, k := range kinds {
		c := counts[k]
		if c.Relinked == 0 && c.Unlinked == 0 {
			continue
		}
		if _, err := tx.ExecContext(ctx, addKindCountsSQL, run, string(k), c.Relinked, c.Unlinked); err != nil {
			return fmt.Errorf("count the links of run %d's %s: %w", run, k.Plural(), err)
		}
	}
	return nil
}

// KindCounts reads run's counts per kind that no task holds.
func KindCounts(ctx context.Context, q interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}, run int64) (map[ledger.Kind]Counts, error) {
	rows, err := q.QueryContext(ctx, `SELECT kind, relinked, unlinked FROM run_kind_counts WHERE migration_id = ?`, run)
	if err != nil {
		return nil, fmt.Errorf("read the link counts of run %d: %w", run, err)
	}
	defer rows.Close()
	out := map[ledger.Kind]Counts{}
	for rows.Next() {
		var k string
		var c Counts
		if err := rows.Scan(&k, &c.Relinked, &c.Unlinked); err != nil {
			return nil, fmt.Errorf("read the link counts of run %d: %w", run, err)
		}
		out[ledger.Kind(k)] = c
	}
	return out, rows.Err()
}

// RollupRun is Rollup of run's tasks with the counts per kind that no task
// holds (KindCounts) added.
func RollupRun(ctx context.Context, q interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}, run int64, tasks []Task) (map[ledger.Kind]Counts, error) {
	out := Rollup(tasks)
	extra, err := KindCounts(ctx, q, run)
	if err != nil {
		return nil, err
	}
	for k, c := range extra {
		t := out[k]
		t.Add(c)
		out[k] = t
	}
	return out, nil
}

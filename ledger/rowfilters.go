package ledger

import (
	"context"
	"fmt"
	"strings"
)

// What a consultant checks in the rows of a tenant before cutover (issue
// 27 item 2: the records browser), as the ledger holds it. Each check is a
// set of target rows of one kind — their ids, as a SELECT of record_id
// that the target package's page of rows reads as `id IN (…)` (target
// owns the target tables; these are the ledger's tables, read here):
//
//   - unlinked (R6, R6a): a link value of the row, not its owner, did not
//     resolve and still waits for its parent in pending_links;
//   - unowned (R6a, SPEC §4): its owner's value waits the same way;
//   - matched (R5): a slot found the row, not made it;
//   - updated (R17): a run updated the row in place and no undo gave it
//     its before-image back (record_updates);
//   - outdated (R17, SPEC §11): the last word of the tenant's runs on one
//     of its slots (record_changes, runs not undone) is that the record
//     changed at the source and was left as it was — outdated, or a
//     conflict, which is a part of outdated — and no later run of them
//     updated it;
//   - conflict: of those, the ones whose row was edited since crmimport
//     wrote it (left alone, R17).
//
// A change is the last word on its slot until a later one: a record found
// outdated stays so however many runs read other files since (a later
// partial export, `--only`), and is updated by the run that applies it.

// RowFilter is one of those checks.
type RowFilter string

// The checks, in the order a page offers them.
const (
	Unlinked       RowFilter = "unlinked"
	Unowned        RowFilter = "unowned"
	MatchedRows    RowFilter = "matched"
	UpdatedRows    RowFilter = "updated"
	OutdatedRows   RowFilter = "outdated"
	ConflictedRows RowFilter = "conflict"
)

// RowFilters are the checks, in the order a page offers them.
func RowFilters() []RowFilter {
	return []RowFilter{Unlinked, Unowned, MatchedRows, UpdatedRows, OutdatedRows, ConflictedRows}
}

// ParseRowFilter reads a check's name ("" is none: every row).
func ParseRowFilter(s string) (RowFilter, error) {
	if s == "" {
		return "", nil
	}
	var names []string
	for _, f := range RowFilters() {
		if string(f) == s {
			return f, nil
		}
		names = append(names, string(f))
	}
	return "", fmt.Errorf("unknown check %q (one of: %s)", s, strings.Join(names, ", "))
}

// RowSet is a SELECT of the record_id of some of a tenant's rows of one
// kind, and its arguments: never input in its text, only in Args.
type RowSet struct {
	SQL  string
	Args []any
}

// The statements of the checks. Each selects record_id; its arguments
// are the tenant and the kind, then those named beside it.
const (
	// R6a: a link value waiting for its parent, but the owner's (the
	// owner field, an argument).
	unlinkedRowsSQL = `SELECT record_id FROM pending_links WHERE tenant_id = ? AND kind = ? AND completed_by IS NULL AND field <> ?`
	// R6a: the owner's value (the owner field, an argument) waiting.
	unownedRowsSQL = `SELECT record_id FROM pending_links WHERE tenant_id = ? AND kind = ? AND completed_by IS NULL AND field = ?`
	// R5: found, not made.
	matchedRowsSQL = `SELECT record_id FROM migration_records WHERE tenant_id = ? AND kind = ? AND action = 'matched'`
	// R17: an update that no undo has reverted.
	updatedRowsSQL = `SELECT record_id FROM record_updates WHERE tenant_id = ? AND kind = ? AND reverted_by IS NULL`
	// R17: the last change of each slot that runs not undone told
	// (record_changes, by its id: the order they were written in), when it
	// is one of lastChangeIs. An undo's own changes (removed_edited) and
	// deletions since (never propagated) say nothing of the row's fields,
	// and are not a last word here.
	lastChangeSQL = `SELECT s.record_id FROM (
    SELECT m.source, c.source_id, max(c.id) AS last
    FROM record_changes c JOIN migrations m ON m.id = c.migration_id
    WHERE m.tenant_id = ? AND c.kind = ? AND m.undone_by IS NULL
      AND c.change IN ('outdated', 'conflict', 'updated', 'overwritten')
    GROUP BY m.source, c.source_id) l
JOIN record_changes c ON c.id = l.last
JOIN migration_records s ON s.tenant_id = ? AND s.source = l.source AND s.kind = ? AND s.source_id = l.source_id
WHERE s.action IN ('created', 'matched') AND `
	outdatedLast   = `c.change IN ('outdated', 'conflict')`
	conflictedLast = `c.change = 'conflict'`
	// A source id, whole: the rows its final slots name.
	rowsNamedSQL = `SELECT record_id FROM migration_records WHERE tenant_id = ? AND kind = ? AND source_id = ? AND action IN ('created', 'matched')`
)

// Rows is the set of tenant's rows of kind that f selects. ownerField is
// the link field that names a record's owner (canon's; the ledger names no
// field): unlinked leaves it out, unowned is it alone. A filter that is
// none of RowFilters is a bug: it panics naming it.
func (f RowFilter) Rows(tenant string, kind Kind, ownerField string) RowSet {
	switch f {
	case Unlinked:
		return RowSet{unlinkedRowsSQL, []any{tenant, string(kind), ownerField}}
	case Unowned:
		return RowSet{unownedRowsSQL, []any{tenant, string(kind), ownerField}}
	case MatchedRows:
		return RowSet{matchedRowsSQL, []any{tenant, string(kind)}}
	case UpdatedRows:
		return RowSet{updatedRowsSQL, []any{tenant, string(kind)}}
	case OutdatedRows:
		return RowSet{lastChangeSQL + outdatedLast, []any{tenant, string(kind), tenant, string(kind)}}
	case ConflictedRows:
		return RowSet{lastChangeSQL + conflictedLast, []any{tenant, string(kind), tenant, string(kind)}}
	}
	panic(fmt.Sprintf("ledger: %q is not a check of rows", string(f)))
}

// RowsNamed is the set of tenant's rows of kind that the final slots of
// sourceID (the whole id, as the export has it) name: one, or none (a
// row found by several records names each of them).
func RowsNamed(tenant string, kind Kind, sourceID string) RowSet {
	return RowSet{rowsNamedSQL, []any{tenant, string(kind), sourceID}}
}

// placeholders is "?, ?, …" for n values, and the ids as arguments.
func placeholders(ids []int64) (string, []any) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", "), args
}

// FlagsOf tells, of the rows ids (a page's: a few hundred at most), which
// of the checks fs each is in, in the order of fs.
func FlagsOf(ctx context.Context, q Querier, tenant string, kind Kind, ownerField string, fs []RowFilter, ids []int64) (map[int64][]RowFilter, error) {
	out := map[int64][]RowFilter{}
	if len(ids) == 0 {
		return out, nil
	}
	in, idArgs := placeholders(ids)
	for _, f := range fs {
		set := f.Rows(tenant, kind, ownerField)
		rows, err := q.QueryContext(ctx, `SELECT DISTINCT f.record_id FROM (`+set.SQL+`) f WHERE f.record_id IN (`+in+`)`,
			append(append([]any(nil), set.Args...), idArgs...)...)
		if err != nil {
			return nil, fmt.Errorf("read which %s are %s: %w", kind.Plural(), f, err)
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read which %s are %s: %w", kind.Plural(), f, err)
			}
			out[id] = append(out[id], f)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read which %s are %s: %w", kind.Plural(), f, err)
		}
	}
	return out, nil
}

// RowSlot is a final slot that names a row: the record of the export
// (source, source id) it is, what the slot says and the run that claimed
// it.
type RowSlot struct {
	Source   string `json:"source"`
	SourceID string `json:"source_id"`
	Action   Action `json:"action"`
	Run      int64  `json:"run"` // 0: the slot names no run
}

// rowSlotsSQL: the final slots of some rows of one kind (the ids follow),
// by row, source and source id.
const rowSlotsSQL = `
SELECT record_id, source, source_id, action, coalesce(migration_id, 0) FROM migration_records
WHERE tenant_id = ? AND kind = ? AND action IN ('created', 'matched') AND record_id IN (%s)
ORDER BY record_id, source, source_id`

// SlotsOfRows reads the final slots that name tenant's rows ids of kind (a
// page's), by row: a row made by one record and found by others has one
// slot of each.
func SlotsOfRows(ctx context.Context, q Querier, tenant string, kind Kind, ids []int64) (map[int64][]RowSlot, error) {
	out := map[int64][]RowSlot{}
	if len(ids) == 0 {
		return out, nil
	}
	in, idArgs := placeholders(ids)
	rows, err := q.QueryContext(ctx, fmt.Sprintf(rowSlotsSQL, in), append([]any{tenant, string(kind)}, idArgs...)...)
	if err != nil {
		return nil, fmt.Errorf("read the slots of %s: %w", kind.Plural(), err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var s RowSlot
		var action string
		if err := rows.Scan(&id, &s.Source, &s.SourceID, &action, &s.Run); err != nil {
			return nil, fmt.Errorf("read the slots of %s: %w", kind.Plural(), err)
		}
		s.Action = Action(action)
		out[id] = append(out[id], s)
	}
	return out, rows.Err()
}

// waitingLinksSQL: the links of some rows of one kind (the ids follow)
// that still wait for their parent (R6a), with the row the parent's slot
// names now, where it has one (a parent imported since whose run has not
// completed the link yet).
const waitingLinksSQL = `
SELECT ` + pendingCols + `
FROM pending_links p LEFT JOIN migration_records r
  ON r.tenant_id = p.tenant_id AND r.source = p.source AND r.kind = p.parent_kind AND r.source_id = p.parent_source_id
  AND r.action IN ('created', 'matched')
WHERE p.tenant_id = ? AND p.kind = ? AND p.completed_by IS NULL AND p.record_id IN (%s)
ORDER BY p.record_id, p.id`

// WaitingLinks reads the links of tenant's rows ids of kind (a page's)
// that wait for their parent (R6a), by row.
func WaitingLinks(ctx context.Context, q Querier, tenant string, kind Kind, ids []int64) (map[int64][]PendingLink, error) {
	out := map[int64][]PendingLink{}
	if len(ids) == 0 {
		return out, nil
	}
	in, idArgs := placeholders(ids)
	ps, err := readPending(ctx, q, tenant, fmt.Sprintf(waitingLinksSQL, in), append([]any{tenant, string(kind)}, idArgs...)...)
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		out[p.RecordID] = append(out[p.RecordID], p)
	}
	return out, nil
}

// hasSlotSQL: whether a tenant has any slot, by the slot table's key.
const hasSlotSQL = `SELECT 1 FROM migration_records WHERE tenant_id = ? LIMIT 1`

// HasSlots reports whether any run has imported, matched or skipped a
// record of tenant: a tenant the ledger knows.
func HasSlots(ctx context.Context, q Querier, tenant string) (bool, error) {
	found, err := anyRow(ctx, q, hasSlotSQL, tenant)
	if err != nil {
		return false, fmt.Errorf("read the slots of tenant %s: %w", tenant, err)
	}
	return found, nil
}

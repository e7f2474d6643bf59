package ledger

import (
	"context"
	"crmimport/store"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
)

// PendingLink is a link value that did not resolve when its record's row
// was written (R6a): remembered with the record in pending_links, by the
// child's slot and row and the link field, with the parent's key, until
// a run that gives the parent a final slot completes it.
type PendingLink struct {
	ID             int64
	Key                   // the child's slot
	RecordID       int64  // the child's row
	Field          string // the child's link column
	Kept           string // the value kept for it in the child's extra (SPEC §4 step 7), "" for none
	ParentKind     Kind
	ParentSourceID string
	ParentRecordID int64 // the parent's row, where a reading gives it
	Run            int64 // the run that wrote the child
	CompletedBy    int64 // 0: still pending
}

const (
	rememberLinksHead = `
INSERT INTO pending_links (tenant_id, source, kind, source_id, record_id, field, kept, parent_kind, parent_source_id, migration_id)
VALUES `
	rememberLinkTuple = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
)

// RememberLinks remembers the unresolved links of rows written by run in
// the Ledger's transaction, many per statement: the caller calls it inside
// Record's write, so that a link is remembered with its row or not at all
// (R1).
func (l *Ledger) RememberLinks(ctx context.Context, run int64, ps []PendingLink) error {
	for start := 0; start < len(ps); {
		part := ps[start : start+store.StatementRows(min(store.MaxStatementRows, len(ps)-start))]
		start += len(part)
		s, err := l.stmt(ctx, rememberLinksHead+strings.TrimSuffix(strings.Repeat(rememberLinkTuple+", ", len(part)), ", "))
		if err != nil {
			return err
		}
		args := make([]any, 0, 10*len(part))
		for _, p := range part {
			args = append(args, p.Tenant, p.Source, string(p.Kind), p.SourceID, p.RecordID, p.Field, nullText(p.Kept),
				string(p.ParentKind), p.ParentSourceID, run)
		}
		if _, err := s.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("remember the links of %s: %w", part[0].Key, err)
		}
	}
	return nil
}

const pendingCols = `p.id, p.source, p.kind, p.source_id, p.record_id, p.field, coalesce(p.kept, ''), p.parent_kind, p.parent_source_id, p.migration_id,
	coalesce(p.completed_by, 0), coalesce(r.record_id, 0)`

// readyLinksSQL reads the links of tenant and source still waiting for a
// parent of one kind whose slot is final now, with the parent's row, by
// pending_links_parent and the slot table's key.
const readyLinksSQL = `
SELECT ` + pendingCols + `
FROM pending_links p JOIN migration_records r
  ON r.tenant_id = p.tenant_id AND r.source = p.source AND r.kind = p.parent_kind AND r.source_id = p.parent_source_id
WHERE p.tenant_id = ? AND p.source = ? AND p.parent_kind = ? AND p.completed_by IS NULL
  AND r.action IN ('created', 'matched') AND r.record_id IS NOT NULL`

// waitingSQL finds a link of tenant and source waiting for a parent of
// one kind, by pending_links_parent.
const waitingSQL = `
SELECT 1 FROM pending_links WHERE tenant_id = ? AND source = ? AND parent_kind = ? AND completed_by IS NULL LIMIT 1`

// anyRow reports whether query gives a row.
func anyRow(ctx context.Context, q Querier, query string, args ...any) (bool, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	found := rows.Next()
	return found, rows.Err()
}

// ReadyLinks lists the links waiting for a parent of kind whose slot is
// final now (R6a), among parents (their source ids), or all of them when
// parents is nil, each with its parent's row.
func ReadyLinks(ctx context.Context, q Querier, tenant, source string, kind Kind, parents []string) ([]PendingLink, error) {
	// Most batches of parents find no link waiting for their kind (a first
	// run writes the children after them): one look by the index says so.
	waits, err := anyRow(ctx, q, waitingSQL, tenant, source, string(kind))
	if err != nil {
		return nil, fmt.Errorf("read the links waiting for %s: %w", kind.Plural(), err)
	}
	if !waits {
		return nil, nil
	}
	if parents == nil {
		return readPending(ctx, q, tenant, readyLinksSQL, tenant, source, string(kind))
	}
	var out []PendingLink
	const chunk = 500
	for len(parents) > 0 {
		n := min(chunk, len(parents))
		args := []any{tenant, source, string(kind)}
		for _, id := range parents[:n] {
			args = append(args, id)
		}
		query := readyLinksSQL + ` AND p.parent_source_id IN (?` + strings.Repeat(", ?", n-1) + `)`
		ps, err := readPending(ctx, q, tenant, query, args...)
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
		parents = parents[n:]
	}
	return out, nil
}

// completedLinksSQL reads the links a run completed, with the parent's row
// they were given (the child's row is read by the caller where it needs
// its link).
const completedLinksSQL = `
SELECT ` + pendingCols + `
FROM pending_links p LEFT JOIN migration_records r
  ON r.tenant_id = p.tenant_id AND r.source = p.source AND r.kind = p.parent_kind AND r.source_id = p.parent_source_id
WHERE p.completed_by = ? AND p.tenant_id = ?
ORDER BY p.id`

// CompletedLinks lists the links run completed in tenant (R6a), in the
// order of their ids, each with the row its parent's slot names now.
func CompletedLinks(ctx context.Context, q Querier, tenant string, run int64) ([]PendingLink, error) {
	return readPending(ctx, q, tenant, completedLinksSQL, run, tenant)
}

func readPending(ctx context.Context, q Querier, tenant, query string, args ...any) ([]PendingLink, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read the pending links of tenant %s: %w", tenant, err)
	}
	defer rows.Close()
	var out []PendingLink
	for rows.Next() {
		p := PendingLink{Key: Key{Tenant: tenant}}
		var kind, parent string
		if err := rows.Scan(&p.ID, &p.Source, &kind, &p.SourceID, &p.RecordID, &p.Field, &p.Kept, &parent, &p.ParentSourceID, &p.Run,
			&p.CompletedBy, &p.ParentRecordID); err != nil {
			return nil, fmt.Errorf("read the pending links of tenant %s: %w", tenant, err)
		}
		p.Kind, p.ParentKind = Kind(kind), Kind(parent)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the pending links of tenant %s: %w", tenant, err)
	}
	return out, nil
}

// MarkCompleted marks a pending link completed by run, once its child's
// row holds it (R6a): a compare-and-set on a link still pending, which
// must change exactly one row (R11).
func MarkCompleted(ctx context.Context, tx *sql.Tx, id, run int64) error {
	return oneRow(ctx, tx, "complete a pending link",
		`UPDATE pending_links SET completed_by = ? WHERE id = ? AND completed_by IS NULL`, run, id)
}

// MarkPending makes a link that run completed pending again (the undo of
// run, R16): a compare-and-set on its completer, which must change exactly
// one row (R11).
func MarkPending(ctx context.Context, tx *sql.Tx, id, run int64) error {
	return oneRow(ctx, tx, "reopen a completed link",
		`UPDATE pending_links SET completed_by = NULL WHERE id = ? AND completed_by = ?`, id, run)
}

// ForgetLinks deletes the links remembered with a child's slot, which goes
// with its row (the undo of the child's own run, R16), and those updates
// of it replaced.
func ForgetLinks(ctx context.Context, tx *sql.Tx, k Key) error {
	for _, table := range []string{"pending_links", "replaced_links"} {
		_, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE tenant_id = ? AND source = ? AND kind = ? AND source_id = ?`,
			k.Tenant, k.Source, string(k.Kind), k.SourceID)
		if err != nil {
			return fmt.Errorf("forget the pending links of %s: %w", k, err)
		}
	}
	return nil
}

// Links an undone update remembered and replaced (R16, R17): the links
// the update remembered of the slot are forgotten, and those it replaced
// are remembered again as they were, completed or waiting.
const (
	forgetUpdateLinksSQL = `
DELETE FROM pending_links WHERE tenant_id = ? AND source = ? AND kind = ? AND source_id = ? AND migration_id = ?`
	restoreReplacedLinksSQL = `
INSERT INTO pending_links (id, tenant_id, source, kind, source_id, record_id, field, kept, parent_kind, parent_source_id,
    migration_id, completed_by)
SELECT id, tenant_id, source, kind, source_id, record_id, field, kept, parent_kind, parent_source_id, migration_id, completed_by
FROM replaced_links WHERE tenant_id = ? AND source = ? AND kind = ? AND source_id = ? AND replaced_by = ?`
	forgetReplacedLinksSQL = `
DELETE FROM replaced_links WHERE tenant_id = ? AND source = ? AND kind = ? AND source_id = ? AND replaced_by = ?`
)

// RestoreLinks gives slot k the links it had before run updated its row:
// the undo of an update (R16), in the transaction that gives the row its
// before-image back. The slot is not run's own (an update's), so that the
// links run remembered of it are the update's.
func RestoreLinks(ctx context.Context, tx *sql.Tx, k Key, run int64) error {
	for _, q := range []string{forgetUpdateLinksSQL, restoreReplacedLinksSQL, forgetReplacedLinksSQL} {
		if _, err := tx.ExecContext(ctx, q, k.Tenant, k.Source, string(k.Kind), k.SourceID, run); err != nil {
			return fmt.Errorf("give %s its links before run %d back: %w", k, run, err)
		}
	}
	return nil
}

func oneRow(ctx context.Context, tx *sql.Tx, name, query string, args ...any) error {
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if n != 1 {
		return fmt.Errorf("%s changed %d rows, want 1", name, n)
	}
	return nil
}

func nullText(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// completedAmong reads the links of one kind's children among some ids
// that a run completed (R6a), the ids as one JSON array.
const (
	completedAmongSQL = `
SELECT source_id, field, coalesce(kept, '') FROM pending_links
WHERE completed_by = ? AND tenant_id = ? AND source = ? AND kind = ? AND source_id IN (SELECT value FROM json_each(?))`
	completedAmongPG = `
SELECT source_id, field, coalesce(kept, '') FROM pending_links
WHERE completed_by = ? AND tenant_id = ? AND source = ? AND kind = ? AND source_id IN (SELECT jsonb_array_elements_text(CAST(? AS jsonb)))`
)

// CompletedAmong are the links of kind's records among ids that run
// completed (R6a), by source id: their fields and the values kept for them
// in extra before (Kept).
func CompletedAmong(ctx context.Context, q Querier, d store.Dialect, run int64, tenant, source string, kind Kind, ids []string) (map[string][]PendingLink, error) {
	out := map[string][]PendingLink{}
	if len(ids) == 0 {
		return out, nil
	}
	b, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	var query string
	switch d {
	case store.SQLite:
		query = completedAmongSQL
	case store.Postgres:
		query = completedAmongPG
	default:
		panic(d.Untaught("ledger.CompletedAmong"))
	}
	rows, err := q.QueryContext(ctx, query, run, tenant, source, string(kind), string(b))
	if err != nil {
		return nil, fmt.Errorf("read the %s links run %d completed: %w", kind, run, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var p PendingLink
		if err := rows.Scan(&id, &p.Field, &p.Kept); err != nil {
			return nil, err
		}
		out[id] = append(out[id], p)
	}
	return out, rows.Err()
}

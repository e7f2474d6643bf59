package undo

import (
	"context"
	"database/sql"
	"fmt"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/target"
)

// Links the undone run completed (R6a) are emptied again and kept
// remembered (pending): the child whose link it completed is not a
// dependent of the run (SPEC §10), and the plan counts each link unlinked
// on the child's kind. They are in the plan's digest, in the order of
// their ids (relinks), so that a preview and its commit are the same plan.
// The undo's first batch, whatever its kind, empties them in its own
// transaction (R12), before any row of the batch goes (a parent the run
// created goes only once no completed link names it): each batch reads
// the links the undone run still has completed, by pending_links'
// index on completed_by, and after the first that commits there are
// none. Emptying is a compare-and-set on the link the run wrote
// (target.EmptyLink): a link changed since is left alone, and made
// pending all the same, not counted. The undo of the child's own run
// forgets the child's links with its slot (forgetLinksSQL).

// relinkSet is the links a run completed, by child kind, row and field.
type relinkSet map[ledger.Kind]map[int64]map[string]bool

func newRelinkSet(ls []ledger.PendingLink) relinkSet {
	s := relinkSet{}
	for _, l := range ls {
		if s[l.Kind] == nil {
			s[l.Kind] = map[int64]map[string]bool{}
		}
		if s[l.Kind][l.RecordID] == nil {
			s[l.Kind][l.RecordID] = map[string]bool{}
		}
		s[l.Kind][l.RecordID][l.Field] = true
	}
	return s
}

// has reports whether the run completed the link of row id of kind k to
// a parent of kind parent.
func (s relinkSet) has(k ledger.Kind, id int64, parent ledger.Kind) bool {
	for _, l := range canon.Parents(k) {
		if l.Kind == parent && s[k][id][l.Field] {
			return true
		}
	}
	return false
}

// relinks adds the links the run completed to the plan: each in the
// digest, and counted unlinked on its child's kind.
func (a *account) relinks(ls []ledger.PendingLink) {
	for _, l := range ls {
		c := a.p.Counts[l.Kind]
		c.Unlinked++
		a.p.Counts[l.Kind] = c
		d := a.digest
		d.str("relink")
		d.int(l.ID)
		d.str(string(l.Kind))
		d.str(l.Source)
		d.str(l.SourceID)
		d.int(l.RecordID)
		d.str(l.Field)
		d.str(string(l.ParentKind))
		d.str(l.ParentSourceID)
		d.int(l.ParentRecordID)
	}
}

// emptyLinks empties the links that run undone completed and that are
// still completed by it, in tx, counting them on the undo (run undo).
func emptyLinks(ctx context.Context, tx *sql.Tx, tenant string, undone, undo int64) error {
	ls, err := ledger.CompletedLinks(ctx, tx, tenant, undone)
	if err != nil || len(ls) == 0 {
		return err
	}
	counts := map[ledger.Kind]phases.Counts{}
	for _, l := range ls {
		emptied, err := target.EmptyLink(ctx, tx, l.Kind, l.Field, tenant, l.RecordID, l.ParentRecordID, l.Kept)
		if err != nil {
			return err
		}
		if err := ledger.MarkPending(ctx, tx, l.ID, undone); err != nil {
			return err
		}
		if emptied {
			c := counts[l.Kind]
			c.Unlinked++
			counts[l.Kind] = c
		}
	}
	return phases.AddKindCounts(ctx, tx, undo, counts)
}

// forgetLinksSQL deletes the links remembered with the created slots of a
// batch (kind, seq range): their rows go with them. It reads the batch's
// items by their key (undo_id, kind, seq) and finds each one's links by
// the child's key of pending_links, so that a batch costs its own items,
// never the tenant's every waiting link.
const forgetLinksSQL = `
DELETE FROM pending_links WHERE id IN (
    SELECT p.id FROM undo_items u
    JOIN pending_links p ON p.tenant_id = ? AND p.source = u.source AND p.kind = u.kind AND p.source_id = u.source_id
    WHERE u.undo_id = ? AND u.kind = ? AND u.seq > ? AND u.seq <= ? AND u.action = 'created')`

// forgetReplacedSQL is forgetLinksSQL of the links updates of those slots
// replaced (schema 16).
const forgetReplacedSQL = `
DELETE FROM replaced_links WHERE id IN (
    SELECT p.id FROM undo_items u
    JOIN replaced_links p ON p.tenant_id = ? AND p.source = u.source AND p.kind = u.kind AND p.source_id = u.source_id
    WHERE u.undo_id = ? AND u.kind = ? AND u.seq > ? AND u.seq <= ? AND u.action = 'created')`

func forgetLinks(ctx context.Context, tx *sql.Tx, b batch) error {
	for _, q := range []string{forgetLinksSQL, forgetReplacedSQL} {
		if _, err := tx.ExecContext(ctx, q, b.tenant, b.undo, string(b.kind), b.after, b.last); err != nil {
			return fmt.Errorf("forget the pending links of %s slots: %w", b.kind, err)
		}
	}
	return nil
}

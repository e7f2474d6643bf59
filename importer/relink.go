package importer

import (
	"context"
	"database/sql"
	"slices"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/target"
)

// Links completed when their parent arrives (R6a). A created record's link
// values that did not resolve are remembered with its row (write.go,
// ledger.RememberLinks). Each batch of a parent kind then completes, in
// its own transaction (R12), the links that wait for the records it gave a
// final slot (created or matched); the task's first batch in a process
// completes too every link waiting for a parent of its kind that was
// already there (remembered by a run of an older version, or whose parent
// arrived in a run that did not complete it), by pending_links' index on
// the parent's key, so that the cost is the links waiting, never the
// ledger. A task that R2's shortcut counts unchanged without a batch
// completes none: the next task of the kind that runs a batch does.
//
// A completion is a compare-and-set of the child's link column on an empty
// link (target.SetLink): a link filled since (by hand) is left as it is,
// not counted, and stays remembered (pending), so that a later run
// completes it if the hand empties it again. A completed link is marked
// completed by the run (ledger.MarkCompleted, R11) and counted relinked on
// the child's kind (phases.AddKindCounts). The child's slot, outcome and
// owner run do not change.

// arrive notes a decision whose record took a final slot in the batch.
func (wr *writer) arrive(d *decision) {
	if d.outcome == created || d.outcome == matched {
		wr.arrived = append(wr.arrived, d.rec.ID)
	}
}

// isParentKind reports whether some kind links to kind k.
func isParentKind(k ledger.Kind) bool {
	return slices.ContainsFunc(canon.Kinds(), func(c ledger.Kind) bool { return canon.IsParent(c, k) })
}

// relink completes the links that wait for the batch's arrived records, or
// on the task's first batch for any final parent of its kind.
func (w *openedTask) relink(ctx context.Context, tx *sql.Tx, wr *writer) error {
	k := w.task.Kind
	if !isParentKind(k) {
		return nil
	}
	var parents []string
	if w.swept {
		if len(wr.arrived) == 0 {
			return nil
		}
		parents = wr.arrived
	}
	ready, err := ledger.ReadyLinks(ctx, tx, w.run.Tenant, w.run.Source, k, parents)
	if err != nil {
		return err
	}
	counts := map[ledger.Kind]phases.Counts{}
	for _, p := range ready {
		set, err := target.SetLink(ctx, tx, p.Kind, p.Field, w.run.Tenant, p.RecordID, p.ParentRecordID, p.Kept)
		if err != nil {
			return err
		}
		if !set {
			continue // filled since: left as it is, and remembered
		}
		if err := ledger.MarkCompleted(ctx, tx, p.ID, w.run.ID); err != nil {
			return err
		}
		c := counts[p.Kind]
		c.Relinked++
		counts[p.Kind] = c
	}
	return phases.AddKindCounts(ctx, tx, w.run.ID, counts)
}

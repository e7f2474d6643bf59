package undo

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store"
	"crmimport/target"
)

// Rows the undone run updated (R17) get their before-image back (SPEC §11
// "Undo of updates"): values and the slot's digest and hashes, counted
// reverted on the kind, and the before-image is marked reverted_by the
// undo. Only a row still as the run left it is given back — its slot's
// digest is the one the update wrote, and the row now hashes (target.
// RowHashes) to the hashes the update wrote — else it is left alone with
// its before-image, named as a failure of the undo's task (R4: data, not a
// log line), and the undo ends partial. Each kind's updates are taken back
// by the first batch of the kind's task, in its transaction (R12), before
// any of its slots: after it commits there are none left that the undo
// would give back, and a batch killed before its commit leaves them all.
// Those rows stay in the plan's digest and its counts (reverted).
//
// A later run's update of a row the run created (or that goes with it) or
// updated depends on the run (SPEC §10, How "updates"): it refuses the undo
// unless --cascade, which gives that update's before-image back first (the
// latest first), so that the row is again as the run left it.

// planUpdatesSQL lists the updates the run wrote that no undo took back,
// in the order of their ids (the plan's digest).
const planUpdatesSQL = `
SELECT id, kind, source, source_id, record_id, after_digest FROM record_updates
WHERE tenant_id = ? AND migration_id = ? AND reverted_by IS NULL ORDER BY id`

// updates adds the run's updates to the plan: each in the digest, and
// counted reverted on its kind.
func (a *account) updates(ctx context.Context, q Querier, run phases.Run) error {
	rows, err := q.QueryContext(ctx, planUpdatesSQL, run.Tenant, run.ID)
	if err != nil {
		return fmt.Errorf("read the updates of run %d: %w", run.ID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, record, after int64
		var kind, source, sourceID string
		if err := rows.Scan(&id, &kind, &source, &sourceID, &record, &after); err != nil {
			return fmt.Errorf("read the updates of run %d: %w", run.ID, err)
		}
		a.revert(run.ID, id, ledger.Kind(kind), source, sourceID, record, after)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read the updates of run %d: %w", run.ID, err)
	}
	return nil
}

// revert counts one update of run by that the undo gives back (reverted on
// its kind, in the plan's parts) and adds it to the plan's digest.
func (a *account) revert(by, id int64, k ledger.Kind, source, sourceID string, record, after int64) {
	c := a.p.Counts[k]
	c.Reverted++
	a.p.Counts[k] = c
	a.p.total++
	a.parts[partKey{by, k, fateReverted}]++
	d := a.digest
	d.str("update")
	d.int(id)
	d.str(string(k))
	d.str(source)
	d.str(sourceID)
	d.int(record)
	d.int(after)
}

// laterUpdatesSQL lists the updates of later runs that no undo took back,
// in the order of their ids, each with whether the run (?2) updated the
// same slot (a row the run created goes, which the walk knows).
const laterUpdatesSQL = `
SELECT u.id, u.migration_id, u.kind, u.source, u.source_id, u.record_id, u.after_digest,
    EXISTS (SELECT 1 FROM record_updates o WHERE o.tenant_id = u.tenant_id AND o.source = u.source AND o.kind = u.kind
        AND o.source_id = u.source_id AND o.migration_id = ?2 AND o.reverted_by IS NULL)
FROM record_updates u WHERE u.tenant_id = ?1 AND u.migration_id > ?2 AND u.reverted_by IS NULL ORDER BY u.id`

// laterUpdates adds the later runs' updates that depend on the run to the
// plan: dependents (How "updates"), and under cascade in the digest and
// counted reverted on their kind.
func (a *account) laterUpdates(ctx context.Context, q Querier, run phases.Run, w *walk) error {
	rows, err := q.QueryContext(ctx, laterUpdatesSQL, run.Tenant, run.ID)
	if err != nil {
		return fmt.Errorf("read the updates after run %d: %w", run.ID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, by, record, after int64
		var kind, source, sourceID string
		var same bool
		if err := rows.Scan(&id, &by, &kind, &source, &sourceID, &record, &after, &same); err != nil {
			return fmt.Errorf("read the updates after run %d: %w", run.ID, err)
		}
		k := ledger.Kind(kind)
		if !same && !w.gone[k].has(record) {
			continue
		}
		a.depend(depKey{by, k, "updates"}, source, sourceID)
		a.revert(by, id, k, source, sourceID, record, after)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read the updates after run %d: %w", run.ID, err)
	}
	return nil
}

// update is one before-image an undo gives back.
type update struct {
	id                        int64
	key                       ledger.Key
	record, run               int64
	values                    string
	beforeDigest, afterDigest int64
	beforeHashes, afterHashes string
}

// batchUpdatesSQL lists the updates of one kind that the undone run (?3)
// wrote and no undo took back, and under cascade (?5 = 1) those of later
// runs that depend on it (laterUpdatesSQL's: of a slot the run updated,
// or of a row that goes with the undo ?4), the latest first.
const batchUpdatesSQL = `
SELECT u.id, u.source, u.source_id, u.record_id, u.migration_id, u.before_values, coalesce(u.before_digest, 0),
    coalesce(u.before_hashes, ''), u.after_digest, u.after_hashes
FROM record_updates u WHERE u.tenant_id = ?1 AND u.kind = ?2 AND u.reverted_by IS NULL AND (u.migration_id = ?3 OR (?5 = 1 AND u.migration_id > ?3 AND (
    EXISTS (SELECT 1 FROM record_updates o WHERE o.tenant_id = u.tenant_id AND o.source = u.source AND o.kind = u.kind
        AND o.source_id = u.source_id AND o.migration_id = ?3 AND o.reverted_by IS NULL)
    OR EXISTS (SELECT 1 FROM undo_items i WHERE i.undo_id = ?4 AND i.kind = u.kind AND i.record_id = u.record_id AND i.delete_row = 1))))
ORDER BY u.id DESC`

func readUpdates(ctx context.Context, tx *sql.Tx, tenant string, k ledger.Kind, run, undo int64, cascade bool) ([]update, error) {
	c := 0
	if cascade {
		c = 1
	}
	rows, err := tx.QueryContext(ctx, batchUpdatesSQL, tenant, string(k), run, undo, c)
	if err != nil {
		return nil, fmt.Errorf("read the updates of run %d's %s: %w", run, k.Plural(), err)
	}
	defer rows.Close()
	var out []update
	for rows.Next() {
		u := update{key: ledger.Key{Tenant: tenant, Kind: k}}
		if err := rows.Scan(&u.id, &u.key.Source, &u.key.SourceID, &u.record, &u.run, &u.values, &u.beforeDigest, &u.beforeHashes,
			&u.afterDigest, &u.afterHashes); err != nil {
			return nil, fmt.Errorf("read the updates of run %d's %s: %w", run, k.Plural(), err)
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// revertUpdates gives the rows of kind k that run undone updated their
// before-images back, in tx, counting them on c (reverted); a row changed
// since is left alone and written as a failure of the undo's task (c.Failed).
func revertUpdates(ctx context.Context, tx *sql.Tx, d store.Dialect, run phases.Run, cascade bool, t phases.Task, c *phases.Counts) error {
	ups, err := readUpdates(ctx, tx, run.Tenant, t.Kind, run.Undoes, run.ID, cascade)
	if err != nil || len(ups) == 0 {
		return err
	}
	// A slot's hashes written back move the epoch once for all of them
	// (schema 15: the slots' trigger leaves their writers to it).
	if err := ledger.HoldEpoch(ctx, tx); err != nil {
		return err
	}
	var left []ledger.Failure
	var sources []string
	for _, u := range ups {
		why, err := changedSince(ctx, tx, u)
		if err != nil {
			return err
		}
		if why != "" {
			left = append(left, ledger.Failure{Run: run.ID, Task: t.ID, Kind: t.Kind, SourceID: u.key.SourceID, File: source(run.Undoes),
				Reason: fmt.Sprintf("%s %s (row %d) changed since run %d updated it (%s): left as it is, with its before-image",
					t.Kind, u.key.SourceID, u.record, u.run, why)})
			continue
		}
		if err := revert(ctx, tx, run.ID, u); err != nil {
			return err
		}
		if !slices.Contains(sources, u.key.Source) {
			sources = append(sources, u.key.Source)
		}
		c.Reverted++
	}
	if err := ledger.ReleaseEpoch(ctx, tx, run.Tenant, sources...); err != nil {
		return err
	}
	if len(left) == 0 {
		return nil
	}
	c.Failed += int64(len(left))
	l := ledger.New(tx, d)
	defer l.Close()
	return l.RecordFailures(ctx, t.Kind.Plural(), left)
}

// changedSince says why the row of update u is no longer as its run left
// it ("" when it is): its slot's digest moved (a later update), its row is
// gone, or fields of the row differ from what the update wrote.
func changedSince(ctx context.Context, tx *sql.Tx, u update) (string, error) {
	slot, found, err := ledger.FinalSlot(ctx, tx, u.key)
	if err != nil {
		return "", err
	}
	if !found || slot.RecordID != u.record || slot.Digest != u.afterDigest {
		return "its slot changed", nil
	}
	s, found, err := target.ReadRow(ctx, tx, u.key.Kind, u.key.Tenant, u.record)
	if err != nil {
		return "", err
	}
	if !found {
		return "the row is gone", nil
	}
	after, ok := canon.DecodeHashes(u.key.Kind, u.afterHashes)
	if !ok {
		return "", fmt.Errorf("undo the update of %s by run %d: its hashes cannot be read", u.key, u.run)
	}
	now, err := target.RowHashes(ctx, tx, u.key.Tenant, u.key.Source, u.key.Kind, s, after, nil)
	if err != nil {
		return "", err
	}
	if fields := canon.Differ(after, now); len(fields) > 0 {
		return fmt.Sprintf("fields %v differ", fields), nil
	}
	return "", nil
}

const (
	// revertHashesSQL gives a slot the digest and hashes it had before an
	// update (NULL for none), if it still has those the update wrote (R11).
	revertHashesSQL = `
UPDATE migration_records SET digest = ?, hashes = ?
WHERE tenant_id = ? AND source = ? AND kind = ? AND source_id = ? AND action IN ('created', 'matched') AND digest = ?`
	// markRevertedSQL marks a before-image given back by the undo.
	markRevertedSQL = `UPDATE record_updates SET reverted_by = ? WHERE id = ? AND reverted_by IS NULL`
)

// revert gives u's row and slot their before-image back and marks it
// reverted by undo, in tx; each statement must change exactly one row
// (R11).
func revert(ctx context.Context, tx *sql.Tx, undo int64, u update) error {
	values, err := target.DecodeState(u.values)
	if err != nil {
		return fmt.Errorf("undo the update of %s by run %d: %w", u.key, u.run, err)
	}
	if err := target.Restore(ctx, tx, u.key.Kind, u.key.Tenant, u.record, values); err != nil {
		return err
	}
	k := u.key
	if err := ledger.RestoreLinks(ctx, tx, k, u.run); err != nil {
		return err
	}
	if err := execOne(ctx, tx, "give back the hashes of "+k.String(), revertHashesSQL,
		nullID(u.beforeDigest), nullText(u.beforeHashes), k.Tenant, k.Source, string(k.Kind), k.SourceID, u.afterDigest); err != nil {
		return err
	}
	return execOne(ctx, tx, "mark the update of "+k.String()+" reverted", markRevertedSQL, undo, u.id)
}

func execOne(ctx context.Context, tx *sql.Tx, what, query string, args ...any) error {
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n != 1 {
		return fmt.Errorf("%s: %d rows changed, expected 1 (R11)", what, n)
	}
	return nil
}

func nullText(s string) any {
	if s == "" {
		return nil
	}
	return s
}

package importer

import (
	"context"
	"database/sql"
	"encoding/json"
	"slices"
	"strings"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/target"
)

// writeChanges writes what step 3 decided of a chunk's records with a
// final slot (R17, changes.go), in the batch's transaction (R12) and the
// chunk's savepoint (flush): the updates — each slot's hashes as a
// compare-and-set, the before-images, then the rows and the links they
// changed — the hashes a slot adopts or moves to, and the changes listed
// for the run.
func (w *writer) writeChanges(ds []decision) error {
	if !slices.ContainsFunc(ds, func(d decision) bool { return d.change != nil && (d.outcome == updated || d.change.hashes.Digest != 0) }) {
		return w.listChanges(ds)
	}
	// The slots' triggers would move the epoch once per slot whose hashes
	// change: the chunk moves it once (R2's shortcut vouches no more).
	// Each chunk holds and releases it: through the writer's statements,
	// prepared once, not once a chunk.
	if err := ledger.HoldEpoch(w.ctx, prepared{w}); err != nil {
		return err
	}
	if err := w.writeSlotChanges(ds); err != nil {
		return err
	}
	return ledger.ReleaseEpoch(w.ctx, prepared{w}, w.run.Tenant, w.run.Source)
}

// listChanges lists the chunk's changes that write nothing else.
func (w *writer) listChanges(ds []decision) error {
	var listed []ledger.Change
	for i := range ds {
		if c := ds[i].change; c != nil && c.kind != "" {
			l, err := w.listed(&ds[i])
			if err != nil {
				return err
			}
			listed = append(listed, l)
		}
	}
	return w.ledger.RecordChanges(w.ctx, listed)
}

// writeSlotChanges is writeChanges's work, under the hold on the epoch.
func (w *writer) writeSlotChanges(ds []decision) error {
	var listed []ledger.Change
	var images []ledger.BeforeImage
	var sets []ledger.HashSet
	var rows []int
	relinked, err := w.relinkedHere(ds)
	if err != nil {
		return err
	}
	for i := range ds {
		d := &ds[i]
		c := d.change
		if c == nil {
			continue
		}
		key := ledger.Key{Tenant: w.run.Tenant, Source: w.run.Source, Kind: d.rec.Kind, SourceID: d.rec.ID}
		switch {
		case d.outcome == updated:
			b, err := w.beforeImage(d, key, relinked[d.rec.ID])
			if err != nil {
				return err
			}
			images = append(images, b)
			rows = append(rows, i)
			sets = append(sets, ledger.HashSet{SourceID: d.rec.ID, Was: b.BeforeDigest, Digest: b.AfterDigest, Hashes: b.AfterHashes})
		case c.hashes.Digest != 0:
			sets = append(sets, ledger.HashSet{SourceID: d.rec.ID, Was: c.was, Digest: c.hashes.Digest, Hashes: slotText(d)})
		}
		if c.kind != "" {
			l, err := w.listed(d)
			if err != nil {
				return err
			}
			listed = append(listed, l)
		}
	}
	if err := w.ledger.SetHashesMany(w.ctx, w.run.Tenant, w.run.Source, w.task.Kind, sets); err != nil {
		return err
	}
	if err := w.ledger.Updated(w.ctx, images); err != nil {
		return err
	}
	for n, i := range rows {
		if err := w.update(&ds[i], images[n].Key); err != nil {
			return err
		}
	}
	return w.ledger.RecordChanges(w.ctx, listed)
}

// relinkedHere are the links of the chunk's updated records that this run
// completed (R6a) before it updates them (a parent of an earlier phase),
// by source id.
func (w *writer) relinkedHere(ds []decision) (map[string][]ledger.PendingLink, error) {
	var ids []string
	for i := range ds {
		if ds[i].outcome == updated {
			ids = append(ids, ds[i].rec.ID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	return ledger.CompletedAmong(w.ctx, preparedQueries{w}, w.dialect, w.run.ID, w.run.Tenant, w.run.Source, w.task.Kind, ids)
}

// beforeImage is what an update of d's row keeps to be taken back (R16):
// the row as it was before this run — a link this run completed before it
// updates the row (relinked) is empty in it, its value kept in extra, as
// the row was when the run began.
func (w *writer) beforeImage(d *decision, key ledger.Key, relinked []ledger.PendingLink) (ledger.BeforeImage, error) {
	c := d.change
	t, err := c.text(d.outcome)
	if err != nil {
		return ledger.BeforeImage{}, err
	}
	values := t.state
	if len(relinked) > 0 || values == "" {
		state, err := target.Unlinked(d.rec.Kind, c.state, relinked)
		if err != nil {
			return ledger.BeforeImage{}, err
		}
		if values, err = target.EncodeState(state); err != nil {
			return ledger.BeforeImage{}, err
		}
	}
	fields := t.fields
	if fields == "" {
		fields = "[]"
	}
	return ledger.BeforeImage{Key: key, RecordID: d.rowID, Run: w.run.ID, Values: values,
		BeforeDigest: c.was, BeforeHashes: c.wasText, AfterDigest: c.hashes.Digest, AfterHashes: slotText(d), Fields: fields}, nil
}

// update writes d's row over the one its slot names, and the links it
// changed.
func (w *writer) update(d *decision, key ledger.Key) error {
	c := d.change
	extra := ""
	if len(d.extra) > 0 {
		e, err := json.Marshal(d.extra)
		if err != nil {
			return err
		}
		extra = string(e)
	}
	row := target.Row{Kind: d.rec.Kind, ID: d.rowID, Values: d.values, Links: d.links, Extra: extra}
	// The links the update changed are remembered anew (R6a): a value
	// that does not resolve waits for its parent, and the one it replaces
	// waits no more.
	var changed []string
	var pending []ledger.PendingLink
	for _, f := range c.fields {
		if _, isLink := canon.KindOfLinkField(strings.TrimSuffix(f, "~")); isLink {
			changed = append(changed, strings.TrimSuffix(f, "~"))
		}
	}
	for _, p := range d.pending {
		if slices.Contains(changed, p.Field) {
			p.Key, p.RecordID = key, d.rowID
			pending = append(pending, p)
		}
	}
	if err := target.Update(w.ctx, prepared{w}, w.run.Tenant, &row, c.state); err != nil {
		return err
	}
	return w.ledger.RelinkFields(w.ctx, key, w.run.ID, changed, pending)
}

// slotText is the text of the hashes d's change writes to its slot: the
// record's, made with its validation, or (a row's, adopted) made now.
func slotText(d *decision) string {
	if digest, text := d.rec.Digest(); digest == d.change.hashes.Digest {
		return text
	}
	return d.change.hashes.Encode(d.rec.Kind)
}

// listed is d's change as the run keeps it (record_changes).
func (w *writer) listed(d *decision) (ledger.Change, error) {
	c := d.change
	t, err := c.text(d.outcome)
	if err != nil {
		return ledger.Change{}, err
	}
	return ledger.Change{Run: w.run.ID, Task: w.task.ID, Kind: d.rec.Kind, SourceID: d.rec.ID, File: d.rec.File, Line: d.rec.Line,
		Change: c.kind, Applicable: c.applicable, Fields: t.fields, Edited: t.edited, Before: t.before, After: t.after}, nil
}

// prepared runs a writer's statements prepared once per batch (the same
// update of a kind's row, thousands of times in a delta rerun).
type prepared struct{ w *writer }

func (p prepared) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := p.w.stmt(query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (p prepared) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return p.w.tx.QueryRowContext(ctx, query, args...)
}

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
// final slot (R17, changes.go), in the batch's transaction (R12): each
// update in its own savepoint with its before-image (ledger.Update), the
// hashes a slot adopts or moves to, and the changes listed for the run.
func (w *writer) writeChanges(ds []decision) error {
	var listed []ledger.Change
	for i := range ds {
		d := &ds[i]
		c := d.change
		if c == nil {
			continue
		}
		key := ledger.Key{Tenant: w.run.Tenant, Source: w.run.Source, Kind: d.rec.Kind, SourceID: d.rec.ID}
		switch {
		case d.outcome == updated:
			if err := w.update(d, key); err != nil {
				return err
			}
		case c.hashes.Digest != 0:
			if err := w.ledger.SetHashes(w.ctx, key, c.was, c.hashes.Digest, c.hashes.Encode()); err != nil {
				return err
			}
		}
		if c.kind != "" {
			listed = append(listed, w.listed(d))
		}
	}
	return w.ledger.RecordChanges(w.ctx, listed)
}

// update writes d's row over the one its slot names, with the before-image.
func (w *writer) update(d *decision, key ledger.Key) error {
	c := d.change
	values, err := target.EncodeState(c.state)
	if err != nil {
		return err
	}
	fields, _ := json.Marshal(c.fields)
	b := ledger.BeforeImage{Key: key, RecordID: d.rowID, Run: w.run.ID, Values: values,
		BeforeDigest: c.was, BeforeHashes: c.wasText, AfterDigest: c.hashes.Digest, AfterHashes: c.hashes.Encode(), Fields: string(fields)}
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
	return w.ledger.Update(w.ctx, b, func(ctx context.Context, tx *sql.Tx) error {
		if err := target.Update(ctx, tx, w.run.Tenant, &row); err != nil {
			return err
		}
		return w.ledger.RelinkFields(ctx, key, w.run.ID, changed, pending)
	})
}

// listed is d's change as the run keeps it (record_changes).
func (w *writer) listed(d *decision) ledger.Change {
	c := d.change
	text := func(v any) string {
		if v == nil {
			return ""
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	out := ledger.Change{Run: w.run.ID, Task: w.task.ID, Kind: d.rec.Kind, SourceID: d.rec.ID, File: d.rec.File, Line: d.rec.Line,
		Change: c.kind, Applicable: c.applicable}
	if len(c.fields) > 0 {
		out.Fields = text(c.fields)
	}
	if len(c.edited) > 0 {
		out.Edited = text(c.edited)
	}
	if len(c.before) > 0 {
		out.Before = text(c.before)
	}
	if len(c.after) > 0 {
		out.After = text(c.after)
	}
	return out
}

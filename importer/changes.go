package importer

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"crmimport/canon"
	"crmimport/importer/profile"
	"crmimport/importer/runopts"
	"crmimport/ledger"
	"crmimport/target"
)

// Changes at the source (R17, SPEC §4 step 3, §11). A record whose slot
// is final is compared with what the slot says was last written for it:
// the same digest, unchanged; deleted in the source since, unchanged and
// counted deleted_since; else its fields that differ are outdated. Without
// --update nothing is written but the change, kept for the run's page and
// report (and a matched slot's hashes, moved to what was read: its row was
// found, not made, and is never written, so the change is told once). With
// --update, the row of a created slot is updated in place when no one
// edited it since crmimport wrote it (field by field, rowHashes): an edit
// makes it a conflict, left as it is unless --update=overwrite.
//
// A slot without hashes (written before them) is compared with its row as
// it is, and gets its hashes then; a dump's placeholder row, which holds
// no export's values, adopts the record's.

// change is what step 3 decided of a record with a final slot, beyond its
// outcome.
type change struct {
	kind       string   // a ledger.Change… value; "" when there is nothing to list
	fields     []string // the fields whose source value changed
	edited     []string // the fields of the row edited since crmimport wrote it
	before     map[string]any
	after      map[string]any
	applicable bool // `run --update` would write it
	// hashes are to be written to the slot (adopted, re-based, moved, or
	// an update's), over was; Digest 0: none.
	hashes  canon.Hashes
	was     int64
	wasText string
	adopted bool
	state   target.State // the row before an update
	texts   changeTexts
}

// changeTexts are a change's JSON as the run keeps it: its fields, edits,
// before and after (record_changes), and for an update the row before it
// (its before-image's values).
type changeTexts struct {
	fields, edited, before, after, state string
	made                                 bool
}

// text is c's JSON, made once: where the chunk is decided (decideChunk),
// beside the writing of the chunk ahead and off its goroutine.
func (c *change) text(outcome outcome) (*changeTexts, error) {
	if c.texts.made {
		return &c.texts, nil
	}
	t := &c.texts
	var err error
	encode := func(v any) string {
		b, jerr := json.Marshal(v)
		err = errors.Join(err, jerr)
		return string(b)
	}
	if len(c.fields) > 0 {
		t.fields = encode(c.fields)
	}
	if len(c.edited) > 0 {
		t.edited = encode(c.edited)
	}
	if len(c.before) > 0 {
		t.before = encode(c.before)
	}
	if len(c.after) > 0 {
		t.after = encode(c.after)
	}
	if outcome == updated {
		t.state = encode(c.state.Values)
	}
	t.made = err == nil
	return t, err
}

// decideFinal decides r, whose slot is final (e), as SPEC §4 step 3 and
// R17 say.
func decideFinal(ctx context.Context, q ledger.Querier, st *stage, r profile.Record, e finalEntry, d *decision) error {
	d.outcome = unchanged
	if del, ok := canon.ParseBool(r.Get("deleted")); ok && del {
		d.change = &change{kind: ledger.ChangeDeletedSince}
		return nil
	}
	if !r.Validated() {
		r.Validate()
	}
	d.rec = r
	if digest, _ := r.Digest(); e.digest == digest {
		return nil
	}
	h := recordHashes(&r)
	key := ledger.Key{Tenant: st.x.tenant, Source: st.x.source, Kind: r.Kind, SourceID: r.ID}
	slot, found, err := st.finalSlot(ctx, q, key)
	if err != nil || !found {
		return err
	}
	c := &change{was: slot.Digest, wasText: slot.Hashes}
	stored, ok := canon.DecodeHashes(r.Kind, slot.Hashes)
	switch {
	case slot.Digest == 0 || slot.Hashes == "":
		done, err := c.adopt(ctx, q, st, slot, &r, h, &stored)
		if err != nil || done {
			d.change = c
			return err
		}
	case !ok || canon.DigestVersion(slot.Digest) != canon.HashVersion:
		c.hashes, c.adopted = h, true // another version's: re-based, never outdated
		d.change = c
		return nil
	}
	d.change = c
	c.fields = canon.Differ(stored, h)
	c.after = recordValues(&r, c.fields)
	if slot.Action == ledger.Matched {
		c.kind, c.hashes = ledger.ChangeOutdated, h // found, not made: never written (R5)
		return nil
	}
	if c.state.Values == nil {
		s, found, err := st.row(ctx, q, r.Kind, slot.RecordID)
		if err != nil || !found {
			d.change = nil // a slot whose row is gone: doctor's finding, not a change
			return err
		}
		c.state = s
	}
	rowH, err := rowHashes(ctx, q, st, r.Kind, c.state, stored, &r)
	if err != nil {
		return err
	}
	c.edited = canon.Differ(stored, rowH)
	c.before = rowValues(c.state, c.fields)
	return c.decideUpdate(ctx, q, st, r, h, slot, d)
}

// adopt gives a slot without hashes its hashes (SPEC §11): a matched
// slot's or a placeholder's are the record's; a created slot's are its
// row's, and the record is then compared with them (done false, stored
// set to them).
func (c *change) adopt(ctx context.Context, q ledger.Querier, st *stage, slot ledger.SlotState, r *profile.Record, h canon.Hashes, stored *canon.Hashes) (done bool, err error) {
	c.adopted = true
	if slot.Action == ledger.Matched {
		c.hashes = h
		return true, nil
	}
	s, found, err := st.row(ctx, q, r.Kind, slot.RecordID)
	if err != nil || !found || s.Placeholder {
		c.hashes = h
		return true, err
	}
	rowH, err := rowHashes(ctx, q, st, r.Kind, s, canon.Hashes{}, r)
	if err != nil {
		return true, err
	}
	c.state, c.hashes = s, rowH
	if rowH.Digest == h.Digest {
		return true, nil
	}
	*stored = rowH
	c.was = slot.Digest
	return false, nil
}

// decideUpdate ends the decision of a created slot's outdated record:
// listed (outdated, or a conflict when its row was edited since), or with
// --update written as an update when it is valid and its links hold.
func (c *change) decideUpdate(ctx context.Context, q ledger.Querier, st *stage, r profile.Record, h canon.Hashes, slot ledger.SlotState, d *decision) error {
	values, bad := r.Values()
	c.kind, c.applicable = ledger.ChangeOutdated, len(c.edited) == 0 && bad == ""
	if len(c.edited) > 0 {
		c.kind = ledger.ChangeConflict
	}
	mode := st.x.update
	switch {
	case mode == "":
		return nil
	case bad != "":
		d.outcome, d.reason, d.change = failed, bad+" (an update of the record imported before: its row stays as it was)", nil
		return nil
	case r.Kind == ledger.Note && strings.TrimSpace(r.Get("body")) == "":
		d.outcome, d.reason, d.change = failed, "the body is empty now: an update would empty the note's body (its row stays as it was)", nil
		return nil
	case len(c.edited) > 0 && mode != runopts.UpdateOverwrite:
		return nil // a conflict: left as it is
	}
	unresolved, err := linkParents(ctx, q, st, &r, d)
	if err != nil {
		return err
	}
	if canon.NeedsParent(r.Kind) && !anchored(d.links) {
		d.outcome, d.reason, d.change, d.links = failed, "an update would leave it linked to no record (its row stays as it was)", nil, nil
		return nil
	}
	d.values, d.rowID = values, slot.RecordID
	d.pending = pendingOf(&r, d.links, unresolved)
	d.keepUnresolved(r.Extra, unresolved)
	d.outcome = updated
	c.kind, c.hashes = ledger.ChangeUpdated, h
	if len(c.edited) > 0 {
		c.kind = ledger.ChangeOverwritten
		c.before = rowValues(c.state, append(append([]string(nil), c.fields...), c.edited...))
	}
	return nil
}

// recordValues are r's values of fields, as text, for a before/after.
func recordValues(r *profile.Record, fields []string) map[string]any {
	out := map[string]any{}
	values, bad := r.Values()
	for _, f := range fields {
		switch {
		case strings.HasPrefix(f, "extra."):
			out[f] = extraText(r.Extra[strings.TrimPrefix(f, "extra.")])
		case strings.HasSuffix(f, "~"):
			out[f] = fieldShown(r, strings.TrimSuffix(f, "~"))
		case canon.Hashed(f) && bad == "" && values.Valid():
			out[f] = canon.HashText(f, values.Get(f))
		default:
			out[f] = strings.TrimSpace(r.Get(f))
		}
	}
	return out
}

// fieldShown is the value a record's link by name shows for field.
func fieldShown(r *profile.Record, field string) string {
	for _, l := range r.Links() {
		if l.Field == field {
			return l.Shown
		}
	}
	return ""
}

// rowValues are row s's values of fields, as text, for a before/after.
func rowValues(s target.State, fields []string) map[string]any {
	out := map[string]any{}
	var extra map[string]any
	_ = json.Unmarshal([]byte(s.Extra()), &extra)
	for _, f := range fields {
		switch {
		case strings.HasPrefix(f, "extra."):
			out[f] = extraText(extra[strings.TrimPrefix(f, "extra.")])
		default:
			out[f] = canon.HashText(f, s.Values[strings.TrimSuffix(f, "~")])
		}
	}
	return out
}

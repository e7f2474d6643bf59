package profile

import (
	"slices"
	"strings"

	"crmimport/canon"
)

// hashesOf are the hashes of r, validated (R17, SPEC §11): its validated
// values (as read, trimmed, when it is invalid: it differs, and an update
// of it fails), its link values as read — a plain link field's id, a link
// beyond them by its field, an id or, by name, under the field and "~" —
// and its extra columns.
func (r *Record) hashesOf() canon.Hashes {
	h := canon.HashFields{}
	values, bad := r.Values()
	if bad == "" && values.Valid() {
		h.ValueFields(r.Kind, values)
	} else {
		for _, f := range canon.FieldsOf(r.Kind).Names {
			if canon.Hashed(f) {
				h.Set(f, strings.TrimSpace(r.Get(f)))
			}
		}
	}
	for _, l := range canon.Parents(r.Kind) {
		h.Set(l.Field, strings.TrimSpace(r.Get(l.Field)))
	}
	beyond := map[string][]string{}
	var order []string
	for _, l := range r.Links() {
		f, v := l.Field, l.ID
		if l.ByName || v == "" {
			f, v = f+"~", l.Shown
		}
		if _, plain := h[l.Field]; plain {
			continue
		}
		if _, ok := beyond[f]; !ok {
			order = append(order, f)
		}
		if !slices.Contains(beyond[f], v) {
			beyond[f] = append(beyond[f], v)
		}
	}
	for _, f := range order {
		h.Set(f, strings.Join(beyond[f], ", "))
	}
	for col, v := range r.Extra {
		h.Set(canon.ExtraField(col), canon.ExtraText(v))
	}
	return h.Hash()
}

// Hashes are the record's hashes for R17 and their text as a slot keeps
// it (canon.Hashes.Encode), from its validated values: made on first
// asking and kept with the record — the importer's feed asks on its own
// goroutine, off the writing one; a revisit, whose records are mostly
// failed or skipped ones that need none, only for those that do.
func (r *Record) Hashes() (canon.Hashes, string) {
	if !r.hashed {
		r.hashes = r.hashesOf()
		r.hashText = r.hashes.Encode(r.Kind)
		r.hashed = true
	}
	return r.hashes, r.hashText
}

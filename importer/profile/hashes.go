package profile

import (
	"fmt"
	"slices"
	"strings"

	"crmimport/canon"
)

// hashesOf are the hashes of r, validated (R17, SPEC §11): its validated
// values (as read, trimmed, when it is invalid: it differs, and an update
// of it fails), its link values as read — a plain link field's id, a link
// beyond them by its field, an id or, by name, under the field and "~" —
// and its extra columns.
func (r *Record) hashesOf() (int64, string) {
	h := canon.NewHasher(r.Kind)
	values, bad := r.Values()
	if bad == "" && values.Valid() {
		h.ValueFields(r.Kind, values)
	} else {
		for _, f := range canon.FieldsOf(r.Kind).Names {
			if canon.Hashed(f) {
				h.SetText(f, strings.TrimSpace(r.Get(f)))
			}
		}
	}
	for _, l := range canon.Parents(r.Kind) {
		h.SetText(l.Field, strings.TrimSpace(r.Get(l.Field)))
	}
	var beyond map[string][]string
	var order []string
	for _, l := range r.Links() {
		f, v := l.Field, l.ID
		if l.ByName || v == "" {
			f, v = f+"~", l.Shown
		}
		if h.Has(l.Field) {
			continue
		}
		if beyond == nil {
			beyond = map[string][]string{}
		}
		if _, ok := beyond[f]; !ok {
			order = append(order, f)
		}
		if !slices.Contains(beyond[f], v) {
			beyond[f] = append(beyond[f], v)
		}
	}
	for _, f := range order {
		h.SetText(f, strings.Join(beyond[f], ", "))
	}
	for col, v := range r.Extra {
		h.SetText(canon.ExtraField(col), canon.ExtraText(v))
	}
	return h.Sum()
}

// Digest is the record's digest for R17 and the text of its hashes as a
// slot keeps it (canon.Hashes.Encode), from its validated values: made on
// first asking and kept with the record — the importer's feed asks on its
// own goroutine, off the writing one; a revisit, whose records are mostly
// failed or skipped ones that need none, only for those that do.
func (r *Record) Digest() (int64, string) {
	if !r.hashed {
		r.digest, r.hashText = r.hashesOf()
		r.hashes = canon.Hashes{}
		r.hashed = true
	}
	return r.digest, r.hashText
}

// Hashes are the record's hashes by field, and their text: what Digest
// makes, read back by field (a record whose digest differs from its
// slot's is compared field by field).
func (r *Record) Hashes() (canon.Hashes, string) {
	digest, text := r.Digest()
	if r.hashes.Fields == nil {
		h, ok := canon.DecodeHashes(r.Kind, text)
		if !ok || h.Digest != digest {
			panic(fmt.Sprintf("the hashes of %s %s do not read back from their text %q", r.Kind, r.ID, text))
		}
		r.hashes = h
	}
	return r.hashes, text
}

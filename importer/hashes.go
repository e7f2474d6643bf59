package importer

import (
	"context"
	"slices"
	"strings"

	"crmimport/canon"
	"crmimport/importer/profile"
	"crmimport/ledger"
	"crmimport/target"
)

// What a record and its row are compared by (R17, canon.Hashes). A
// record's hashes are made of its validated values (as read, trimmed, when
// it is invalid: it differs, and an update of it fails), its link values
// as read — a plain link field's id, a link beyond them by its field, an
// id or, by name, under the field and "~" — and its extra columns.
//
// A row's are made of the same fields as the row holds them now: a link
// column as the source id of the parent's final slot (the value kept in
// extra while it is empty), the extra without the values kept for links.
// A field the row cannot give back (a link by name, a link value no column
// holds) is taken as written: its hash is the slot's.

// recordHashes are the hashes of r, validated.
func recordHashes(r *profile.Record) canon.Hashes {
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
		h.Set(canon.ExtraField(col), extraText(v))
	}
	return h.Hash()
}

// rowHashes are the hashes of row s of kind k as it is now, against
// stored, the hashes its slot keeps (target.RowHashes). r is the record
// read now (nil: none), whose link values are tried first as the parents'
// source ids.
func rowHashes(ctx context.Context, q ledger.Querier, st *stage, k ledger.Kind, s target.State, stored canon.Hashes, r *profile.Record) (canon.Hashes, error) {
	var fromRecord target.RecordLink
	if r != nil {
		fromRecord = func(ctx context.Context, l canon.Link, id int64) (string, bool, error) {
			v := strings.TrimSpace(r.Get(l.Field))
			if v == "" {
				return "", false, nil
			}
			rid, found, err := st.final(ctx, q, l.Kind, v)
			if err != nil || !found || rid != id {
				return "", false, err
			}
			return v, true, nil
		}
	}
	return target.RowHashes(ctx, q, st.x.tenant, st.x.source, k, s, stored, fromRecord)
}

// extraText is an extra value as it is hashed (target.ExtraText).
func extraText(v any) string { return target.ExtraText(v) }

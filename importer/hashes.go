package importer

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
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

// extraText is an extra value as it is hashed: text as it is, anything
// else as JSON.
func extraText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// rowHashes are the hashes of row s of kind k as it is now, against
// stored, the hashes its slot keeps (the fields the row cannot give back
// are taken from them). r is the record read now (nil: none), whose link
// values are tried first as the parents' source ids.
func rowHashes(ctx context.Context, q ledger.Querier, st *stage, k ledger.Kind, s target.State, stored canon.Hashes, r *profile.Record) (canon.Hashes, error) {
	h := canon.HashFields{}
	for _, f := range canon.FieldsOf(k).Names {
		if canon.Hashed(f) {
			h.Set(f, s.Values[f])
		}
	}
	var extra map[string]any
	if e := s.Extra(); e != "" {
		if err := json.Unmarshal([]byte(e), &extra); err != nil {
			extra = map[string]any{"": e} // not an object: a change of its own
		}
	}
	links := map[string]bool{}
	for _, l := range canon.Parents(k) {
		links[l.Field] = true
		v, err := linkSourceID(ctx, q, st, l, s, stored, r, extra)
		if err != nil {
			return canon.Hashes{}, err
		}
		h.Set(l.Field, v)
	}
	for col, v := range extra {
		if _, isLink := canon.KindOfLinkField(col); isLink || links[col] {
			continue // a link's value kept while it is empty
		}
		h.Set(canon.ExtraField(col), extraText(v))
	}
	out := h.Hash()
	kept := false
	for f, v := range stored.Fields {
		if !readable(k, f) {
			out.Fields[f] = v
			kept = true
		}
	}
	if kept {
		out.Seal()
	}
	return out, nil
}

// readable reports whether a row of kind k gives field f back.
func readable(k ledger.Kind, f string) bool {
	if strings.HasPrefix(f, "extra.") {
		return true
	}
	if canon.Hashed(f) && canon.HasField(k, f) {
		return true
	}
	return slices.ContainsFunc(canon.Parents(k), func(l canon.Link) bool { return l.Field == f })
}

// linkSourceID is the parent's source id that row s's link l holds: the
// record's value when it names the row's parent, else one of the slots of
// the parent's row (the one whose hash the slot keeps, when there are
// several), or the value kept in extra while the link is empty.
func linkSourceID(ctx context.Context, q ledger.Querier, st *stage, l canon.Link, s target.State, stored canon.Hashes,
	r *profile.Record, extra map[string]any) (string, error) {
	id := s.Link(l.Field)
	if id == 0 {
		v, _ := extra[l.Field].(string)
		return v, nil
	}
	if r != nil {
		if v := strings.TrimSpace(r.Get(l.Field)); v != "" {
			rid, found, err := st.final(ctx, q, l.Kind, v)
			if err != nil {
				return "", err
			}
			if found && rid == id {
				return v, nil
			}
		}
	}
	ids, err := target.ParentSourceIDs(ctx, q, st.x.tenant, st.x.source, l.Kind, id)
	if err != nil {
		return "", err
	}
	for _, v := range ids {
		if canon.FieldHash(l.Field, v) == stored.Fields[l.Field] {
			return v, nil
		}
	}
	if len(ids) > 0 {
		return ids[0], nil
	}
	return "#" + strconv.FormatInt(id, 10), nil // a row no slot of this source names
}

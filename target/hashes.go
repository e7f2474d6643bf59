package target

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"

	"crmimport/canon"
	"crmimport/ledger"
)

// A row's hashes (R17, canon.Hashes): the fields of a record as the row
// holds them now — a link column as the source id of the parent's final
// slot (the value kept in extra while it is empty), the extra without the
// values kept for links. A field the row cannot give back (a link by
// name, a link value no column holds) is taken as written: its hash is the
// slot's. The importer compares a record's row with them before an update,
// and an undo a row that a run updated with what the run wrote.

// RecordLink gives the parent's source id that a record read now names
// for link l, when that parent's row is id; ok is false when it names
// none or another.
type RecordLink func(ctx context.Context, l canon.Link, id int64) (v string, ok bool, err error)

// RowHashes are the hashes of row s of kind k (tenant's, read for source's
// slots) as it is now, against stored, the hashes its slot keeps (the
// fields the row cannot give back are taken from them). fromRecord (nil:
// no record) is tried first for each link's source id.
func RowHashes(ctx context.Context, q Querier, tenant, source string, k ledger.Kind, s State, stored canon.Hashes, fromRecord RecordLink) (canon.Hashes, error) {
	h, extra := valueFields(k, s)
	for _, l := range canon.Parents(k) {
		v, err := linkSourceID(ctx, q, tenant, source, l, s, stored, fromRecord, extra)
		if err != nil {
			return canon.Hashes{}, err
		}
		h.Set(l.Field, v)
	}
	return keepUnreadable(k, h.Hash(), stored, readable), nil
}

// valueFields are what row s of kind k holds of a record's hashed fields
// but its links: its values, and its extra columns (without the values
// kept for links while they are empty), with the extra as it reads.
func valueFields(k ledger.Kind, s State) (canon.HashFields, map[string]any) {
	h := canon.HashFields{}
	return h, setValueFields(k, s, h.Set)
}

// setValueFields sets, through set, what valueFields gathers of row s of
// kind k, and returns the row's extra as it reads.
func setValueFields(k ledger.Kind, s State, set func(f string, v any)) map[string]any {
	for _, f := range canon.FieldsOf(k).Names {
		if canon.Hashed(f) {
			set(f, s.Values[f])
		}
	}
	var extra map[string]any
	if e := s.Extra(); e != "" {
		if err := json.Unmarshal([]byte(e), &extra); err != nil {
			extra = map[string]any{"": e} // not an object: a change of its own
		}
	}
	for col, v := range extra {
		if _, isLink := canon.KindOfLinkField(col); isLink {
			continue // a link's value kept while it is empty
		}
		set(canon.ExtraField(col), canon.ExtraText(v))
	}
	return extra
}

// keepUnreadable gives out the hashes stored keeps of the fields that a
// row cannot give back (can: the fields it can), as written.
func keepUnreadable(k ledger.Kind, out, stored canon.Hashes, can func(ledger.Kind, string) bool) canon.Hashes {
	kept := false
	for f, v := range stored.Fields {
		if !can(k, f) {
			out.Fields[f] = v
			kept = true
		}
	}
	if kept {
		out.Seal()
	}
	return out
}

// ValueEdits are the fields of row s of kind k, but its links, whose values
// differ from what stored (its slot's hashes) says was written: a hand
// edit since. Links are left out, which would need a lookup of each
// parent's slot (an undo asks it of every row it removes).
func ValueEdits(k ledger.Kind, s State, stored canon.Hashes) []string {
	h, _ := valueFields(k, s)
	now := keepUnreadable(k, h.Hash(), stored, readableValue)
	return canon.Differ(stored, now)
}

// ValueEditsOf is ValueEdits of stored as its slot keeps it (the text of
// hashes), made with h (of kind k; reset first) without a map: an undo
// asks it of every row it removes. ok is false for text of another
// version, or none: written before hashes, nothing tells an edit.
func ValueEditsOf(h *canon.Hasher, k ledger.Kind, s State, stored string) (edits []string, ok bool) {
	h.Reset()
	setValueFields(k, s, h.Set)
	return h.Differs(stored, func(f string) bool { return !readableValue(k, f) })
}

// readableValue reports whether a row of kind k gives field f back and f
// is not a link (ValueEdits), each answer kept once made: an undo asks it
// of every field of every row it removes (a quarter of ValueEdits' time
// when it was made each time).
func readableValue(k ledger.Kind, f string) bool {
	if strings.HasPrefix(f, "extra.") {
		return true // readable, and never a link: not kept, so that the map holds the kinds' own fields only
	}
	key := kindField{k, f}
	if v, ok := readableValues.Load(key); ok {
		return v.(bool)
	}
	v := readable(k, f) && !slices.ContainsFunc(canon.Parents(k), func(l canon.Link) bool { return l.Field == f })
	readableValues.Store(key, v)
	return v
}

type kindField struct {
	k ledger.Kind
	f string
}

// readableValues are readableValue's answers, for the kinds' own fields.
var readableValues sync.Map

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
func linkSourceID(ctx context.Context, q Querier, tenant, source string, l canon.Link, s State, stored canon.Hashes,
	fromRecord RecordLink, extra map[string]any) (string, error) {
	id := s.Link(l.Field)
	if id == 0 {
		v, _ := extra[l.Field].(string)
		return v, nil
	}
	if fromRecord != nil {
		v, ok, err := fromRecord(ctx, l, id)
		if err != nil {
			return "", err
		}
		if ok {
			return v, nil
		}
	}
	ids, err := ParentSourceIDs(ctx, q, tenant, source, l.Kind, id)
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

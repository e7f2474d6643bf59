package importer

import (
	"context"
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

// recordHashes are the hashes of r (profile.Record.Hashes), validated.
func recordHashes(r *profile.Record) canon.Hashes {
	if !r.Validated() {
		r.Validate()
	}
	h, _ := r.Hashes()
	return h
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

// extraText is an extra value as it is hashed (canon.ExtraText).
func extraText(v any) string { return canon.ExtraText(v) }

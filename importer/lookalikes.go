package importer

// Records no longer in the export that look like new ones (SPEC §4, ids
// made of columns): a record whose id is made of columns gets a new id
// when one of them is edited in the CRM. The run then imports it as a new
// record, and the old one, still imported, is simply no longer in the
// export — a run never counts records missing from an export (R17's
// deleted_since counts records the export marks deleted). So, when a task
// of such a kind has read its whole file, it pairs the final slots of
// earlier runs whose ids it did not read with the records this run
// imported that look like them, and says so in the run log, where the
// run's summary reads it back (report: Lookalikes).

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"crmimport/canon"
	"crmimport/importer/profile"
	"crmimport/ledger"
	"crmimport/store"
	"crmimport/target"
)

// maxLookalikeExamples is how many pairs the warning names.
const maxLookalikeExamples = 3

// lookalikeIDsPerRead bounds the ids of one read of the slots.
const lookalikeIDsPerRead = 10000

// lookalike is a final slot as the pairing compares it: its hashes by
// field (R17) and its row.
type lookalike struct {
	id     string
	rid    int64
	hashes map[string]string
}

// lookalikePair is a record no longer in the export and the new one that
// looks like it, with the columns of the id that differ ("" when they
// share only the name).
type lookalikePair struct {
	gone, made lookalike
	differ     []string
}

// logLookalikes writes, at the end of a task that read its whole file,
// the pairs of records no longer in the export and new ones that look
// like them, for a kind whose id is made of columns, as one warning of
// the run log in the batch's transaction (R12). A revisit, which reads
// only some records again, a task after which another of its kind reads
// more of the export, and a fix folder's, pair nothing.
func (w *openedTask) logLookalikes(ctx context.Context, tx *sql.Tx, st *stage) error {
	k := w.task.Kind
	from := w.profile.IDFrom(k)
	if from == nil || st.look != nil || w.revisit != nil || !w.wholeKind {
		return nil
	}
	f := w.idx.finals[k]
	if f == nil {
		return nil
	}
	// The slots the run found, not read in it; and the ids read, some of
	// them new.
	var gone, read []string
	f.loaded.each(func(id string, _ finalEntry) {
		if _, ok := st.seenAt(id); !ok {
			gone = append(gone, id)
		}
	})
	if len(gone) == 0 {
		return nil
	}
	w.idx.seen[k].each(func(id string, _ int64) { read = append(read, id) })
	for id := range st.seen {
		read = append(read, id)
	}
	slots, err := lookalikeSlots(ctx, tx, store.DialectOf(w.imp.Engine.DB), w.run.Tenant, w.run.Source, k, append(gone, read...))
	if err != nil {
		return err
	}
	var old, made []lookalike
	for _, id := range gone {
		if s, ok := slots[id]; ok && s.Run != w.run.ID {
			old = append(old, lookalikeOf(k, id, s))
		}
	}
	for _, id := range read {
		if s, ok := slots[id]; ok && s.Run == w.run.ID {
			made = append(made, lookalikeOf(k, id, s))
		}
	}
	pairs := pairLookalikes(old, made, w.profile.IDFromFields(k), from, canonNameFields(k))
	if len(pairs) == 0 {
		return nil
	}
	msg, err := lookalikeWarning(ctx, tx, w.run.Tenant, k, from, pairs)
	if err != nil {
		return err
	}
	return w.imp.Engine.Log(ctx, tx, w.run.ID, "warning", msg)
}

// lookalikeSlots reads the final slots of kind k among ids, a bounded
// number per statement.
func lookalikeSlots(ctx context.Context, tx *sql.Tx, d store.Dialect, tenant, source string, k ledger.Kind, ids []string) (map[string]ledger.SlotState, error) {
	out := map[string]ledger.SlotState{}
	for start := 0; start < len(ids); start += lookalikeIDsPerRead {
		part, err := ledger.FinalSlots(ctx, tx, d, tenant, source, k, ids[start:min(start+lookalikeIDsPerRead, len(ids))])
		if err != nil {
			return nil, err
		}
		for id, s := range part {
			out[id] = s
		}
	}
	return out, nil
}

func lookalikeOf(k ledger.Kind, id string, s ledger.SlotState) lookalike {
	h, _ := canon.DecodeHashes(k, s.Hashes) // a slot without hashes looks like nothing
	return lookalike{id: id, rid: s.RecordID, hashes: h.Fields}
}

// canonNameFields are the fields that name a record of kind k, as a link
// by name reads them.
func canonNameFields(k ledger.Kind) []string {
	switch k {
	case ledger.Contact, ledger.Lead:
		return []string{"first_name", "last_name"}
	case ledger.Note, ledger.Email:
		return nil
	case ledger.Activity:
		return []string{"subject"}
	}
	return []string{"name"}
}

// pairLookalikes pairs each record no longer in the export (old, in order)
// with the first new one (made, in order) not paired yet that looks like
// it: of the same kind, it shares the values of all but one of the id's
// columns (idFields: where the slots' hashes keep them; two at least), or
// the same name. Each record is in one pair at most.
func pairLookalikes(old, made []lookalike, idFields, from, nameFields []string) []lookalikePair {
	slices.SortFunc(old, func(a, b lookalike) int { return strings.Compare(a.id, b.id) })
	slices.SortFunc(made, func(a, b lookalike) int { return strings.Compare(a.id, b.id) })
	// Keys: per column of the id, the values of the others; and the name.
	byKey := map[string][]int{}
	keys := func(l lookalike) []string {
		var out []string
		if len(idFields) >= 2 {
			for skip := range idFields {
				var b strings.Builder
				shared := 0
				fmt.Fprintf(&b, "id%d", skip)
				for i, f := range idFields {
					if i != skip {
						v := l.hashes[f]
						shared += len(v)
						b.WriteString("\x00" + v)
					}
				}
				if shared > 0 {
					out = append(out, b.String())
				}
			}
		}
		var b strings.Builder
		named := false
		b.WriteString("name")
		for _, f := range nameFields {
			named = named || l.hashes[f] != ""
			b.WriteString("\x00" + l.hashes[f])
		}
		if named {
			out = append(out, b.String())
		}
		return out
	}
	for i, m := range made {
		for _, key := range keys(m) {
			byKey[key] = append(byKey[key], i)
		}
	}
	taken := make([]bool, len(made))
	var pairs []lookalikePair
	for _, o := range old {
	look:
		for _, key := range keys(o) {
			for _, i := range byKey[key] {
				if taken[i] {
					continue
				}
				taken[i] = true
				p := lookalikePair{gone: o, made: made[i]}
				for j, f := range idFields {
					if o.hashes[f] != made[i].hashes[f] {
						p.differ = append(p.differ, from[j])
					}
				}
				pairs = append(pairs, p)
				break look
			}
		}
	}
	return pairs
}

// lookalikeWarning says how many records no longer in the export look
// like new ones, naming the first pairs by the new record's name and the
// columns of the id that differ.
func lookalikeWarning(ctx context.Context, tx *sql.Tx, tenant string, k ledger.Kind, from []string, pairs []lookalikePair) (string, error) {
	n := len(pairs)
	var examples []string
	for _, p := range pairs[:min(n, maxLookalikeExamples)] {
		name := p.made.id
		if s, ok, err := target.ReadRow(ctx, tx, k, tenant, p.made.rid); err != nil {
			return "", err
		} else if ok {
			if shown := rowName(k, s); shown != "" {
				name = shown
			}
		}
		what := "its name is the same"
		if len(p.differ) > 0 {
			what = "its " + strings.Join(p.differ, " and ") + " differ"
			if len(p.differ) == 1 {
				what = "its " + p.differ[0] + " differs"
			}
		}
		if p.made.rid == p.gone.rid {
			what += ", and it was matched to the old one's row (R5)"
		}
		examples = append(examples, fmt.Sprintf("%s %q (was %s, now %s): %s", k, name, p.gone.id, p.made.id, what))
	}
	more := ""
	if n > len(examples) {
		more = fmt.Sprintf("; and %d more", n-len(examples))
	}
	head := fmt.Sprintf("%d %s no longer in the export look like new ones in it", n, k.Plural())
	if n == 1 {
		head = fmt.Sprintf("1 %s no longer in the export looks like a new one in it", k)
	}
	return fmt.Sprintf("%s%s (id from %s): %s%s — if it is the same %s, its id columns were edited in the CRM, which made it a new record here: "+
		"the old one stays imported as it was (a record missing from an export is never deleted, nor counted deleted_since); "+
		"`crmimport ledger why --tenant %s --kind %s --source-id ID` tells each one's story",
		profile.LookalikesNote, head, strings.Join(from, ", "), strings.Join(examples, "; "), more, k, tenant, k), nil
}

// rowName is a row's name as a link by name reads it, or "".
func rowName(k ledger.Kind, s target.State) string {
	var parts []string
	for _, f := range canonNameFields(k) {
		if v, ok := s.Values[f].(string); ok && strings.TrimSpace(v) != "" {
			parts = append(parts, strings.TrimSpace(v))
		}
	}
	return strings.Join(parts, " ")
}

package importer

import (
	"context"
	"strings"

	"crmimport/canon"
	"crmimport/importer/profile"
	"crmimport/ledger"
	"crmimport/store"
)

// lookups are the final slots a revisit (revisit.go) asked the ledger
// for, by id. A revisit decides again the few records an earlier task
// failed or skipped; where a full reading loads every final slot of its
// kind and of its parents' kinds (runIndex.finals), a revisit asks, for
// each chunk, for the slots of the ids its records name — their own (R2)
// and their links' (R6) — in one statement per kind, through the ledger's
// key. What it learns stays for the task: the ledger's final slots cannot
// change under it (the epoch, checked in every batch), and its own new
// ones are added as their batch commits (stage.commit).
type lookups struct {
	tenant, source string
	dialect        store.Dialect                        // the ledger's, whose JSON functions LoadFinalAmong speaks
	finals         map[ledger.Kind]*idTable[finalEntry] // id -> final slot, or one whose rid is noSlot
}

// noSlot marks an id looked up that has no final slot.
const noSlot = -1

func newLookups(tenant, source string, d store.Dialect) *lookups {
	return &lookups{tenant: tenant, source: source, dialect: d, finals: map[ledger.Kind]*idTable[finalEntry]{}}
}

func (l *lookups) table(k ledger.Kind) *idTable[finalEntry] {
	if l.finals[k] == nil {
		l.finals[k] = newIDTable[finalEntry](0)
	}
	return l.finals[k]
}

// fetch asks the ledger, through q, for the final slots of kind k among
// the ids not looked up yet.
func (l *lookups) fetch(ctx context.Context, q ledger.Querier, k ledger.Kind, ids []string) error {
	t := l.table(k)
	var ask []string
	asked := map[string]bool{}
	for _, id := range ids {
		if _, ok := t.get(id); ok || asked[id] {
			continue
		}
		asked[id] = true
		ask = append(ask, id)
	}
	if len(ask) == 0 {
		return nil
	}
	found := map[string]finalEntry{}
	add := func(id string, rid, digest int64) { found[id] = finalEntry{rid, digest} }
	if err := ledger.LoadFinalAmong(ctx, q, l.dialect, l.tenant, l.source, k, ask, add); err != nil {
		return err
	}
	for _, id := range ask {
		e, ok := found[id]
		if !ok {
			e = finalEntry{rid: noSlot}
		}
		t.put(id, e)
	}
	return nil
}

// final is the final slot of id, asked for through q if it was not yet.
func (l *lookups) final(ctx context.Context, q ledger.Querier, k ledger.Kind, id string) (finalEntry, bool, error) {
	t := l.table(k)
	e, ok := t.get(id)
	if !ok {
		if err := l.fetch(ctx, q, k, []string{id}); err != nil {
			return finalEntry{}, false, err
		}
		e, _ = t.get(id)
	}
	if e.rid == noSlot {
		return finalEntry{}, false, nil
	}
	return e, true, nil
}

// prefetch looks up, one statement per kind, the ids that deciding the
// records of a chunk will ask for: their own (SPEC §4 step 3), then, of
// those with no final slot that their own values leave to the ledger
// (judge), their links' (step 7). A record that is a duplicate asks for
// nothing (step 2). What it leaves out and decide asks for all the same is
// looked up then (final).
func (l *lookups) prefetch(ctx context.Context, q ledger.Querier, st *stage, recs []profile.Record) error {
	var own []string
	for i := range recs {
		if id, ok := seenID(recs[i]); ok {
			if _, dup := st.seenAt(id); !dup {
				own = append(own, id)
			}
		}
	}
	if err := l.fetch(ctx, q, st.kind, own); err != nil {
		return err
	}
	byKind := map[ledger.Kind][]string{}
	for i := range recs {
		r := recs[i] // judge may validate its record: a copy
		id, ok := seenID(r)
		if !ok {
			continue
		}
		if _, dup := st.seenAt(id); dup {
			continue
		}
		if e, _ := l.table(st.kind).get(id); e.rid != noSlot {
			continue // a final slot: compared (R17), no links to look up
		}
		if _, _, _, done := judge(&r); done {
			continue
		}
		for _, p := range canon.Parents(r.Kind) {
			if v := strings.TrimSpace(r.Get(p.Field)); v != "" {
				byKind[p.Kind] = append(byKind[p.Kind], v)
			}
		}
		for _, v := range r.Links() {
			if k, ok := canon.KindOfLinkField(v.Field); ok && v.ID != "" {
				byKind[k] = append(byKind[k], v.ID)
			}
		}
	}
	for _, k := range canon.Kinds() {
		if err := l.fetch(ctx, q, k, byKind[k]); err != nil {
			return err
		}
	}
	return nil
}

package importer

import (
	"context"
	"database/sql"

	"crmimport/importer/profile"
	"crmimport/ledger"
	"crmimport/store"
	"crmimport/target"
)

// What deciding a chunk's changed records reads (R17, changes.go): for
// each record whose digest differs from its final slot's, the slot's
// hashes and, for a created slot, its row as it is now. A chunk reads them
// in two statements before it is decided (prefetchChanges), not two per
// record; a decision that finds its record's slot or row not read asks for
// it alone (finalSlot, row).

// changeReads are a chunk's.
type changeReads struct {
	slots map[string]ledger.SlotState // by source id
	rows  map[int64]target.State      // by row id
}

// prefetchChanges reads, through q (statements prepared once by wr, when
// q is the batch's transaction), the slots and rows of the records of recs
// that differ from what their final slots say was last written. A chunk
// reads them before it is decided, before the chunk ahead of it writes
// (decideBehind): those writes touch no slot or row of its records (their
// ids are others; a created slot's row is its own), so that its deciding
// needs the database no more and goes on beside the writing.
func (w *openedTask) prefetchChanges(ctx context.Context, q ledger.Querier, wr *writer, st *stage, recs []profile.Record) (changeReads, error) {
	if f := st.x.finals[st.kind]; st.look == nil && f != nil && f.loaded.len() == 0 {
		return changeReads{}, nil // a first run: no record had a final slot when the kind was loaded
	}
	var ids []string
	for i := range recs {
		r := &recs[i]
		if _, ok := seenID(*r); !ok || !r.Validated() {
			continue
		}
		if _, dup := st.seenAt(r.ID); dup {
			continue // a duplicate is decided before its slot is asked for (SPEC §4 step 2)
		}
		e, found, err := st.slot(ctx, q, r.Kind, r.ID)
		if err != nil {
			return changeReads{}, err
		}
		if !found {
			continue
		}
		if digest, _ := r.Digest(); e.digest != digest {
			ids = append(ids, r.ID)
		}
	}
	if len(ids) == 0 {
		return changeReads{}, nil
	}
	if _, speculative := q.(noQueries); !speculative {
		q = preparedQueries{wr}
	}
	d := store.DialectOf(w.imp.Engine.DB)
	slots, err := ledger.FinalSlots(ctx, q, d, w.run.Tenant, w.run.Source, w.task.Kind, ids)
	if err != nil {
		return changeReads{}, err
	}
	var rids []int64
	for _, s := range slots {
		if s.Action == ledger.Created {
			rids = append(rids, s.RecordID)
		}
	}
	rows, err := target.ReadRows(ctx, q, d, w.task.Kind, w.run.Tenant, rids)
	if err != nil {
		return changeReads{}, err
	}
	return changeReads{slots: slots, rows: rows}, nil
}

// preparedQueries runs a writer's queries prepared once per batch.
type preparedQueries struct{ w *writer }

func (p preparedQueries) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := p.w.stmt(query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// finalSlot is the final slot of key, as the chunk read it or read now.
func (s *stage) finalSlot(ctx context.Context, q ledger.Querier, key ledger.Key) (ledger.SlotState, bool, error) {
	if slot, ok := s.reads.slots[key.SourceID]; ok && key.Kind == s.kind {
		return slot, true, nil
	}
	return ledger.FinalSlot(ctx, q, key)
}

// row is row id of kind k as it is now, as the chunk read it or read now.
func (s *stage) row(ctx context.Context, q ledger.Querier, k ledger.Kind, id int64) (target.State, bool, error) {
	if r, ok := s.reads.rows[id]; ok && k == s.kind {
		return r, true, nil
	}
	return target.ReadRow(ctx, q, k, s.x.tenant, id)
}

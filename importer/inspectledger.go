package importer

import (
	"context"

	"crmimport/importer/profile"
	"crmimport/ledger"
)

// What an inspection's rows are to the ledger (R2, R17, SPEC §11:
// "`inspect` … say how many records would be updated, are outdated and in
// conflict"). Given a tenant and a read-only handle on its database, each
// row inspected that is a record is looked up in the tenant's final slots
// of the source and decided as a run's step 3 decides it (decideFinal,
// without --update, which writes nothing): new to the ledger, unchanged,
// outdated with the fields that differ, in conflict with the fields edited
// by hand since import, or deleted in the source since. Only SELECTs run:
// an inspection never writes.

// The ledger's word on an inspected row (RowInspection.Ledger).
const (
	RowNew          = "new"           // no final slot: a run would judge it (created, matched, skipped or failed)
	RowUnchanged    = "unchanged"     // a final slot, and the same values as last written
	RowOutdated     = "outdated"      // changed at the source since import (RowInspection.Applicable: `run --update` would update it)
	RowConflict     = "conflict"      // changed at the source, and its row edited by hand since
	RowDeletedSince = "deleted_since" // deleted in the source since import: left in place
)

// ledgerLook compares inspected rows with the ledger of one tenant and
// source, through q (read-only).
type ledgerLook struct {
	q ledger.Querier
	x *runIndex
}

func newLedgerLook(spec InspectSpec) *ledgerLook {
	if spec.Ledger == nil || spec.Tenant == "" {
		return nil
	}
	return &ledgerLook{q: spec.Ledger, x: newRunIndex(spec.Tenant, spec.Source)}
}

// look says what record r, inspected as ri, is to the ledger.
func (l *ledgerLook) look(ctx context.Context, r profile.Record, ri *RowInspection) error {
	key := ledger.Key{Tenant: l.x.tenant, Source: l.x.source, Kind: r.Kind, SourceID: r.ID}
	slot, found, err := ledger.FinalSlot(ctx, l.q, key)
	if err != nil {
		return err
	}
	if !found {
		ri.Ledger = RowNew
		return nil
	}
	st := newStage(l.x, r.Kind)
	st.reads.slots = map[string]ledger.SlotState{r.ID: slot}
	var d decision
	if err := decideFinal(ctx, l.q, st, r, finalEntry{rid: slot.RecordID, digest: slot.Digest}, &d); err != nil {
		return err
	}
	ri.Ledger = RowUnchanged
	if c := d.change; c != nil {
		switch c.kind {
		case ledger.ChangeOutdated:
			ri.Ledger, ri.Changed, ri.Applicable = RowOutdated, c.fields, c.applicable
		case ledger.ChangeConflict:
			ri.Ledger, ri.Changed, ri.Edited = RowConflict, c.fields, c.edited
		case ledger.ChangeDeletedSince:
			ri.Ledger = RowDeletedSince
		}
	}
	return nil
}

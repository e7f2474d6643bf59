package undo

import (
	"context"
	"database/sql"
	"encoding/json"
	"runtime"
	"sync"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/target"
)

// A row the undone run created and someone edited by hand since (a person
// in a database browser, the production engine) goes with its slot all the
// same (R16: the run made it), and the undo says that an edit went with
// it (SPEC §11): each such row is kept in record_changes of the undo, as
// removed_edited with the fields edited — its values and extra columns
// against the hashes its slot keeps (target.ValueEditsOf; a link edited by
// hand is not looked for, which would ask the ledger for every parent),
// in the batch that removes it (R12). The rows and hashes compared are
// those the batch's own statements return as they remove them (DELETE …
// RETURNING): each row and slot is read once, by the statement that
// removes it.

// slotKey names a slot of the batch's kind: its source and source id.
type slotKey struct{ source, sourceID string }

// noteEdits keeps those of the batch's removed rows (rows, as the
// statement that removed them returned them) that were edited since they
// were written, against the hashes their slots kept (hashes, likewise).
func noteEdits(ctx context.Context, tx *sql.Tx, b batch, rows map[int64]target.State, hashes map[slotKey]string) error {
	var items []Item
	for _, it := range b.items {
		if it.DeleteRow && it.Action == ledger.Created {
			items = append(items, it)
		}
	}
	edits, err := editsOf(b, items, rows, hashes)
	if err != nil || len(edits) == 0 {
		return err
	}
	l := ledger.New(tx, b.dialect)
	defer l.Close()
	return l.RecordChanges(ctx, edits)
}

// editsOf are the rows among items edited since written.
func editsOf(b batch, items []Item, rows map[int64]target.State, hashes map[slotKey]string) ([]ledger.Change, error) {
	// Comparing each row with its hashes reads nothing more: the items
	// are shared out among the CPUs (a third of an undo's time went to
	// it, one row after another), each part in its own slice of edited.
	edited := make([][]string, len(items))
	parts := min(runtime.GOMAXPROCS(0), max(1, len(items)/editsPart))
	var wg sync.WaitGroup
	for p := range parts {
		wg.Go(func() {
			h := canon.NewHasher(b.kind)
			for i := p; i < len(items); i += parts {
				it := items[i]
				stored, ok := hashes[slotKey{it.Source, it.SourceID}]
				row, here := rows[it.RecordID]
				if !ok || !here || row.Placeholder {
					continue
				}
				// Text of another version, or none (written before
				// hashes), tells no edit.
				edited[i], _ = target.ValueEditsOf(h, b.kind, row, stored)
			}
		})
	}
	wg.Wait()
	var out []ledger.Change
	for i, it := range items {
		if len(edited[i]) == 0 {
			continue
		}
		f, err := json.Marshal(edited[i])
		if err != nil {
			return nil, err
		}
		out = append(out, ledger.Change{Run: b.undo, Task: b.task, Kind: b.kind, SourceID: it.SourceID,
			Change: ledger.ChangeRemovedEdited, Edited: string(f)})
	}
	return out, nil
}

// restoredHashes reads the hashes of the slots among restore that will be
// given their before-image back, whose rows go: their slots are not
// deleted, so the statement that deletes the others does not return them.
func restoredHashes(ctx context.Context, tx *sql.Tx, b batch, restore []Item, into map[slotKey]string) error {
	bySource := map[string][]string{}
	var sources []string
	for _, it := range restore {
		if !it.DeleteRow || it.Action != ledger.Created {
			continue
		}
		if _, ok := bySource[it.Source]; !ok {
			sources = append(sources, it.Source)
		}
		bySource[it.Source] = append(bySource[it.Source], it.SourceID)
	}
	for _, source := range sources {
		slots, err := ledger.FinalSlots(ctx, tx, b.dialect, b.tenant, source, b.kind, bySource[source])
		if err != nil {
			return err
		}
		for id, s := range slots {
			into[slotKey{source, id}] = s.Hashes
		}
	}
	return nil
}

// editsPart is the fewest rows a goroutine of editsOf compares: below it,
// one goroutine does them all.
const editsPart = 256

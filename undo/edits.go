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
// against the hashes its slot keeps (target.ValueEdits; a link edited by
// hand is not looked for, which would ask the ledger for every parent),
// in the batch that removes it (R12).

// noteEdits keeps, before the batch removes its rows, those edited since.
func noteEdits(ctx context.Context, tx *sql.Tx, b batch) error {
	bySource := map[string][]Item{}
	for _, it := range b.items {
		if it.DeleteRow && it.Action == ledger.Created {
			bySource[it.Source] = append(bySource[it.Source], it)
		}
	}
	var edits []ledger.Change
	for source, items := range bySource {
		found, err := editsOf(ctx, tx, b, source, items)
		if err != nil {
			return err
		}
		edits = append(edits, found...)
	}
	if len(edits) == 0 {
		return nil
	}
	l := ledger.New(tx, b.dialect)
	defer l.Close()
	return l.RecordChanges(ctx, edits)
}

// editsOf are the rows among items (of source) edited since written.
func editsOf(ctx context.Context, tx *sql.Tx, b batch, source string, items []Item) ([]ledger.Change, error) {
	ids := make([]string, len(items))
	rids := make([]int64, len(items))
	for i, it := range items {
		ids[i], rids[i] = it.SourceID, it.RecordID
	}
	slots, err := ledger.FinalSlots(ctx, tx, b.dialect, b.tenant, source, b.kind, ids)
	if err != nil {
		return nil, err
	}
	rows, err := target.ReadRows(ctx, tx, b.dialect, b.kind, b.tenant, rids)
	if err != nil {
		return nil, err
	}
	// Comparing each row with its hashes reads nothing more: the items
	// are shared out among the CPUs (a third of an undo's time went to
	// it, one row after another), each part in its own slice of edited.
	edited := make([][]string, len(items))
	parts := min(runtime.GOMAXPROCS(0), max(1, len(items)/editsPart))
	var wg sync.WaitGroup
	for p := range parts {
		wg.Go(func() {
			for i := p; i < len(items); i += parts {
				it := items[i]
				slot, ok := slots[it.SourceID]
				row, here := rows[it.RecordID]
				if !ok || !here || row.Placeholder {
					continue
				}
				stored, ok := canon.DecodeHashes(b.kind, slot.Hashes)
				if !ok {
					continue // written before hashes: nothing to tell an edit by
				}
				edited[i] = target.ValueEdits(b.kind, row, stored)
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

// editsPart is the fewest rows a goroutine of editsOf compares: below it,
// one goroutine does them all.
const editsPart = 256

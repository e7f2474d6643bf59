package importer

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store"
	"crmimport/target"
)

// A batch's decisions are written in its transaction: the created rows by
// target.Writer, only from inside ledger.Record after their slots' claims
// have won (R1), with the ids the slots name; the failures to
// record_failures by ledger.RecordFailures (R4).

// writer writes one batch's decisions inside its transaction.
type writer struct {
	ctx      context.Context
	tx       *sql.Tx
	ledger   *ledger.Ledger
	dialect  store.Dialect
	run      phases.Run
	task     phases.Task
	now      time.Time
	imported string     // now, as written to imported_at
	ids      *store.IDs // the row ids of the task's table
	rows     *target.Writer
	stmts    map[string]*sql.Stmt
	kept     *store.Kept // the run's statements, kept across its batches
	// arrived are the source ids of the batch's records that took a final
	// slot: parents whose waiting links the batch completes (R6a).
	arrived []string
}

func (w *writer) stmt(query string) (*sql.Stmt, error) {
	if s, ok := w.stmts[query]; ok {
		return s, nil
	}
	s, err := w.kept.Prepare(w.ctx, w.tx, query)
	if err != nil {
		return nil, err
	}
	w.stmts[query] = s
	return s, nil
}

func (w *writer) close() {
	w.rows.Close()
	for q, s := range w.stmts {
		s.Close()
		delete(w.stmts, q)
	}
}

// flush writes a chunk of decisions: failures to record_failures (R4), then
// the slots of the others and the rows of the created ones, through
// ledger.Record (R1). It fails whole, leaving nothing of the chunk, when a
// row breaks a constraint or a claim is refused (impossible with one live
// run per tenant and an index coherent with the ledger, but the claim is
// the authority): the caller then redoes the chunk record by record.
func (w *writer) flush(ds []decision) error {
	var slots []ledger.Slot
	var failures []*decision
	for i := range ds {
		d := &ds[i]
		switch d.outcome {
		case failed:
			failures = append(failures, d)
		case skipped:
			slots = append(slots, w.slot(d, ledger.Skipped))
		case created:
			slots = append(slots, w.slot(d, ledger.Created))
		case matched:
			slots = append(slots, w.slot(d, ledger.Matched))
		}
	}
	write := func() error {
		if len(slots) > 0 {
			err := w.ledger.Record(w.ctx, slots, func(context.Context, *sql.Tx) error { return w.insertRows(ds) })
			if err != nil {
				return err
			}
		}
		if err := w.writeChanges(ds); err != nil {
			return err
		}
		return w.insertFailures(failures)
	}
	if !slices.ContainsFunc(ds, func(d decision) bool { return d.change != nil }) {
		return write() // Record's savepoint holds the chunk's claims and rows
	}
	// The chunk's changes (R17) and its claims are taken back together
	// when one fails, and the chunk redone record by record.
	return w.ledger.Savepoint(w.ctx, "crmimport_chunk", write)
}

func (w *writer) slot(d *decision, a ledger.Action) ledger.Slot {
	s := ledger.Slot{
		Key:   ledger.Key{Tenant: w.run.Tenant, Source: w.run.Source, Kind: d.rec.Kind, SourceID: d.rec.ID},
		RunID: w.run.ID, Action: a, At: w.now,
	}
	switch a {
	case ledger.Skipped:
		s.Reason, s.Detail = d.reason, d.detail
	default:
		s.RecordType, s.RecordID = d.rec.Kind.Table(), d.rowID
		if !d.rec.Validated() {
			d.rec.Validate()
		}
		s.Digest, s.Hashes = d.rec.Digest() // made on the feed's goroutine, for a full reading
	}
	return s
}

// rowChunk is how many revisits one insert statement holds.
const rowChunk = 256

// insertRows writes the rows of the created decisions.
func (w *writer) insertRows(ds []decision) error {
	var rows []target.Row
	var pending []ledger.PendingLink
	for i := range ds {
		d := &ds[i]
		if d.outcome != created {
			continue
		}
		for _, p := range d.pending {
			p.Key = ledger.Key{Tenant: w.run.Tenant, Source: w.run.Source, Kind: d.rec.Kind, SourceID: d.rec.ID}
			p.RecordID = d.rowID
			pending = append(pending, p)
		}
		extra := d.rec.ExtraJSON() // made ahead by Validate
		if d.unlinked || d.unowned || extra == "" {
			if len(d.extra) == 0 {
				extra = ""
			} else {
				b, err := json.Marshal(d.extra)
				if err != nil {
					return err
				}
				extra = string(b)
			}
		}
		rows = append(rows, target.Row{Kind: d.rec.Kind, ID: d.rowID, Values: d.values, Links: d.links, Extra: extra})
	}
	if len(rows) == 0 {
		return nil
	}
	if err := w.rows.Insert(w.ctx, rows); err != nil {
		return err
	}
	return w.ledger.RememberLinks(w.ctx, w.run.ID, pending) // with their rows (R1, R6a)
}

func (w *writer) insertFailures(failures []*decision) error {
	fs := make([]ledger.Failure, len(failures))
	for i, d := range failures {
		r := d.rec
		fs[i] = ledger.Failure{Run: w.run.ID, Task: w.task.ID, Kind: r.Kind, SourceID: r.ID, File: r.File, Line: r.Line,
			Reason: d.reason, Raw: r.RawJSON()}
	}
	return w.ledger.RecordFailures(w.ctx, w.task.Kind.Plural(), fs)
}

// isRecordFault tells an error that is one record's (a constraint, or a
// claim refused) from one of the engine's. A row refused for its id is the
// engine's: the allocator gave out an id that is taken (a table changed
// behind its back); filing it as the record's failure would hide it, and
// every later record would meet it too. It fails the batch.
func isRecordFault(err error) bool {
	return errors.Is(err, ledger.ErrRefused) || store.IsConstraint(err) && !store.IsPrimaryKey(err)
}

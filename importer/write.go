package importer

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store"
)

// The target rows, written many per statement. They are written only from
// inside ledger.Record, after their slots' claims have won (R1), with the
// ids the slots name.

// columns are each target table's columns as this package writes them.
var columns = map[ledger.Kind][]string{
	ledger.Company:  {"id", "tenant_id", "name", "domain", "domain_key", "phone", "industry", "created_at", "extra", "imported_at"},
	ledger.Contact:  {"id", "tenant_id", "first_name", "last_name", "email", "email_key", "phone", "title", "company_id", "created_at", "extra", "imported_at"},
	ledger.Deal:     {"id", "tenant_id", "name", "amount", "currency", "stage", "close_date", "company_id", "contact_id", "created_at", "extra", "imported_at"},
	ledger.Note:     {"id", "tenant_id", "body", "contact_id", "company_id", "deal_id", "created_at", "extra", "imported_at"},
	ledger.Activity: {"id", "tenant_id", "type", "subject", "body", "due_at", "done", "contact_id", "company_id", "deal_id", "created_at", "extra", "imported_at"},
	ledger.Email:    {"id", "tenant_id", "subject", "body", `"from"`, `"to"`, "sent_at", "contact_id", "company_id", "deal_id", "extra", "imported_at"},
}

// insertSQL inserts n rows of kind. What every row of a batch shares —
// the tenant (?1) and the time of the import (?2) — is bound once; each row
// binds the rest:
//
//	INSERT INTO table (columns) SELECT column1, ?1, column2, …, ?2 FROM (VALUES (?, …), …) WHERE true
//
// The text is built from the constants above only.
func insertSQL(k ledger.Kind, n int) string {
	cols := columns[k]
	var sel []string
	per := 0
	for _, c := range cols {
		switch c {
		case "tenant_id":
			sel = append(sel, "?1")
		case "imported_at":
			sel = append(sel, "?2")
		default:
			per++
			sel = append(sel, fmt.Sprintf("column%d", per))
		}
	}
	tuple := "(" + strings.TrimSuffix(strings.Repeat("?, ", per), ", ") + ")"
	return "INSERT INTO " + k.Table() + " (" + strings.Join(cols, ", ") + ") SELECT " + strings.Join(sel, ", ") +
		" FROM (VALUES " + strings.TrimSuffix(strings.Repeat(tuple+", ", n), ", ") + ") WHERE true"
}

// rowArgs appends the values of a created record's row, in column order,
// but for the tenant and the time of the import (bound once: insertSQL).
func rowArgs(args []any, d *decision) ([]any, error) {
	v := d.values
	link := func(f string) any {
		if id, ok := d.links[f]; ok {
			return id
		}
		return nil
	}
	var extra any
	switch {
	case !d.unlinked && d.rec.extraJSON != "":
		extra = d.rec.extraJSON // made ahead by prepare
	case len(d.extra) > 0:
		b, err := json.Marshal(d.extra)
		if err != nil {
			return nil, err
		}
		extra = string(b)
	}
	args = append(args, d.rowID)
	switch d.rec.Kind {
	case ledger.Company:
		args = append(args, v.get("name"), v.get("domain"), nullIfEmpty(ledger.DomainKey(asText(v.get("domain")))), v.get("phone"), v.get("industry"), v.get("created_at"))
	case ledger.Contact:
		args = append(args, v.get("first_name"), v.get("last_name"), v.get("email"), nullIfEmpty(ledger.EmailKey(asText(v.get("email")))), v.get("phone"),
			v.get("title"), link("company_id"), v.get("created_at"))
	case ledger.Deal:
		args = append(args, v.get("name"), v.get("amount"), v.get("currency"), v.get("stage"), v.get("close_date"),
			link("company_id"), link("contact_id"), v.get("created_at"))
	case ledger.Note:
		args = append(args, v.get("body"), link("contact_id"), link("company_id"), link("deal_id"), v.get("created_at"))
	case ledger.Activity:
		done := 0
		if b, _ := v.get("done").(bool); b {
			done = 1
		}
		args = append(args, v.get("type"), v.get("subject"), v.get("body"), v.get("due_at"), done,
			link("contact_id"), link("company_id"), link("deal_id"), v.get("created_at"))
	case ledger.Email:
		args = append(args, v.get("subject"), v.get("body"), v.get("from"), v.get("to"), v.get("sent_at"),
			link("contact_id"), link("company_id"), link("deal_id"))
	}
	return append(args, extra), nil
}

const insertFailuresHead = `INSERT INTO record_failures (migration_id, task_id, kind, source_id, file, line, reason, raw) VALUES `
const failureTuple = `(?, ?, ?, ?, ?, ?, ?, ?)`

// maxIDSQL gives the next free row id of each target table, read inside the
// batch's transaction (which holds the write lock), so that ids given out
// in memory never meet another process's rows.
func nextIDSQL(k ledger.Kind) string { return "SELECT coalesce(max(id), 0) + 1 FROM " + k.Table() }

// writer writes one batch's decisions inside its transaction.
type writer struct {
	ctx      context.Context
	tx       *sql.Tx
	ledger   *ledger.Ledger
	run      phases.Run
	task     phases.Task
	now      time.Time
	imported string // now, as written to imported_at
	next     int64  // the next row id of the task's table
	stmts    map[string]*sql.Stmt
}

func (w *writer) stmt(query string) (*sql.Stmt, error) {
	if s, ok := w.stmts[query]; ok {
		return s, nil
	}
	s, err := w.tx.PrepareContext(w.ctx, query)
	if err != nil {
		return nil, err
	}
	w.stmts[query] = s
	return s, nil
}

func (w *writer) close() {
	for q, s := range w.stmts {
		s.Close()
		delete(w.stmts, q)
	}
}

// nextID gives out the next row id of the task's table.
func (w *writer) nextID() int64 {
	id := w.next
	w.next++
	return id
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
	if len(slots) > 0 {
		err := w.ledger.Record(w.ctx, slots, func(context.Context, *sql.Tx) error { return w.insertRows(ds) })
		if err != nil {
			return err
		}
	}
	return w.insertFailures(failures)
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
	}
	return s
}

// rowChunk is how many rows one insert statement holds.
const rowChunk = 256

func (w *writer) insertRows(ds []decision) error {
	var todo []*decision
	for i := range ds {
		if ds[i].outcome == created {
			todo = append(todo, &ds[i])
		}
	}
	for start := 0; start < len(todo); start += rowChunk {
		chunk := todo[start:min(start+rowChunk, len(todo))]
		st, err := w.stmt(insertSQL(chunk[0].rec.Kind, len(chunk)))
		if err != nil {
			return fmt.Errorf("prepare insert %s: %w", chunk[0].rec.Kind.Plural(), err)
		}
		args := make([]any, 0, 2+len(chunk)*len(columns[chunk[0].rec.Kind]))
		args = append(args, w.run.Tenant, w.imported)
		for _, d := range chunk {
			if args, err = rowArgs(args, d); err != nil {
				return err
			}
		}
		if _, err := st.ExecContext(w.ctx, args...); err != nil {
			return err
		}
	}
	return nil
}

// insertFailures writes failed records (R4), in the batch's transaction.
func (w *writer) insertFailures(fs []*decision) error {
	for start := 0; start < len(fs); start += rowChunk {
		chunk := fs[start:min(start+rowChunk, len(fs))]
		st, err := w.stmt(insertFailuresHead + strings.TrimSuffix(strings.Repeat(failureTuple+", ", len(chunk)), ", "))
		if err != nil {
			return fmt.Errorf("prepare record failures: %w", err)
		}
		args := make([]any, 0, 8*len(chunk))
		for _, d := range chunk {
			r := d.rec
			args = append(args, w.run.ID, w.task.ID, string(r.Kind), nullIfEmpty(r.ID), r.File, r.Line, d.reason, r.RawJSON())
		}
		if _, err := st.ExecContext(w.ctx, args...); err != nil {
			return fmt.Errorf("record failures of %s: %w", w.task.Kind.Plural(), err)
		}
	}
	return nil
}

// isRecordFault tells an error that is one record's (a constraint, or a
// claim refused) from one of the database's.
func isRecordFault(err error) bool {
	return errors.Is(err, ledger.ErrRefused) || store.IsConstraint(err)
}

package main

// The schema floor: a measured lower bound for any import that keeps SPEC
// §6, R1 and R5 with modernc.org/sqlite. It writes the export's rows into
// crmimport's own schema (store.Open: WAL, foreign keys on, the
// natural-key indexes) and claims one ledger slot per record through
// ledger.Claim, many rows per statement, in batches of 10,000 records per
// transaction, with links resolved from Go maps, and nothing else: no
// validation, no savepoint, no checkpoint, no index of final slots, no
// decisions. Parsing runs on its own goroutine, as in crmimport. It is a
// measure, not an importer: it trusts the export (fixtures/gen's) whole.
//
// Parts can be left out (-floor.without ledger,fk,keys) to price each one
// inside the same round.

import (
	"context"
	"database/sql"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/store"
)

// floorKinds are the export's files in the order their links need.
var floorKinds = []ledger.Kind{ledger.Company, ledger.Contact, ledger.Deal, ledger.Note, ledger.Activity, ledger.Email}

// floorLinks names the kind each link column points at.
var floorLinks = map[string]ledger.Kind{"company_id": ledger.Company, "contact_id": ledger.Contact, "deal_id": ledger.Deal}

// floorColumns are the target columns the floor writes, per kind: the
// canonical fields as the export names them, the natural key beside the
// field it comes from.
var floorColumns = map[ledger.Kind][]string{
	ledger.Company:  {"name", "domain", "domain_key", "phone", "industry", "created_at"},
	ledger.Contact:  {"first_name", "last_name", "email", "email_key", "phone", "title", "company_id", "created_at"},
	ledger.Deal:     {"name", "amount", "currency", "stage", "close_date", "company_id", "contact_id", "created_at"},
	ledger.Note:     {"body", "contact_id", "company_id", "deal_id", "created_at"},
	ledger.Activity: {"type", "subject", "body", "due_at", "done", "contact_id", "company_id", "deal_id", "created_at"},
	ledger.Email:    {"subject", "body", "from", "to", "sent_at", "contact_id", "company_id", "deal_id"},
}

const (
	floorBatch = 10000
	floorChunk = 256
)

type floorOptions struct {
	ledger bool // write a slot per record
	fk     bool // foreign keys on (SPEC §6)
	keys   bool // the natural-key indexes (R5)
}

func parseWithout(s string) (floorOptions, error) {
	o := floorOptions{ledger: true, fk: true, keys: true}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' }) {
		switch w {
		case "ledger":
			o.ledger = false
		case "fk":
			o.fk = false
		case "keys":
			o.keys = false
		default:
			return o, fmt.Errorf("-floor.without: %q is none of ledger, fk, keys", w)
		}
	}
	return o, nil
}

// schemaFloor loads export into a new database at db.
func schemaFloor(export, db string, o floorOptions) error {
	ctx := context.Background()
	removeDB(db)
	conn, err := store.Open(ctx, db)
	if err != nil {
		return err
	}
	defer conn.Close()
	if !o.fk {
		if _, err := conn.ExecContext(ctx, `PRAGMA foreign_keys = OFF`); err != nil {
			return err
		}
	}
	if !o.keys {
		for _, ix := range []string{"contacts_email_key", "companies_domain_key"} {
			if _, err := conn.ExecContext(ctx, `DROP INDEX `+ix); err != nil {
				return err
			}
		}
	}
	ids := map[ledger.Kind]map[string]int64{}
	now := time.Now()
	records, rows := 0, 0
	for _, k := range floorKinds {
		path := filepath.Join(export, k.Table()+".csv")
		if _, err := os.Stat(path); err != nil {
			continue
		}
		ids[k] = map[string]int64{}
		n, err := floorLoad(ctx, conn, path, k, ids, now, o)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		records, rows = records+n, rows+len(ids[k])
	}
	// A measure that did nothing measures nothing: every record read has
	// its slot, every created one its row.
	var slots, written int
	q := `SELECT (SELECT count(*) FROM migration_records), (SELECT count(*) FROM companies) + (SELECT count(*) FROM contacts) +
	(SELECT count(*) FROM deals) + (SELECT count(*) FROM notes) + (SELECT count(*) FROM activities) + (SELECT count(*) FROM emails)`
	if err := conn.QueryRowContext(ctx, q).Scan(&slots, &written); err != nil {
		return err
	}
	if !o.ledger {
		slots = records
	}
	if records == 0 || slots != records || written != rows {
		return fmt.Errorf("wrote %d slots and %d rows for %d records (%d to create)", slots, written, records, rows)
	}
	return nil
}

type floorRow struct {
	id     string
	args   []any // the target row's columns, in floorColumns order
	create bool  // false: deleted in the source, a skipped slot and no row
}

// floorLoad writes one file's records and tells how many it read.
func floorLoad(ctx context.Context, db *sql.DB, path string, k ledger.Kind, ids map[ledger.Kind]map[string]int64, now time.Time, o floorOptions) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // a write that fails stops the reading
	batches := make(chan []floorRow, 4)
	errc := make(chan error, 1)
	go func() { errc <- floorRead(ctx, path, k, ids, batches) }()
	imported := ledger.FormatTime(now)

	var next int64 = 1
	records := 0
	cols := append([]string{"id", "tenant_id"}, floorColumns[k]...)
	cols = append(cols, "imported_at")
	for i, c := range cols {
		if c == "from" || c == "to" {
			cols[i] = `"` + c + `"`
		}
	}
	// What every row shares (the tenant, the time; for slots also the
	// source, kind, run and table) is bound once per statement, as
	// crmimport does: each row binds only its own values.
	per := len(cols) - 2 // the id and the fields
	sel := []string{"column1", "?1"}
	for i := 2; i <= per; i++ {
		sel = append(sel, fmt.Sprintf("column%d", i))
	}
	sel = append(sel, "?2")
	tuple := "(" + strings.TrimSuffix(strings.Repeat("?, ", per), ", ") + ")"
	rowSQL := func(n int) string {
		return "INSERT INTO " + k.Table() + " (" + strings.Join(cols, ", ") + ") SELECT " + strings.Join(sel, ", ") +
			" FROM (VALUES " + strings.TrimSuffix(strings.Repeat(tuple+", ", n), ", ") + ") WHERE true"
	}
	mine := ids[k]
	for rows := range batches {
		records += len(rows)
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return 0, err
		}
		stmts := map[string]*sql.Stmt{}
		exec := func(query string, args []any) error {
			st, ok := stmts[query]
			if !ok {
				var err error
				if st, err = tx.PrepareContext(ctx, query); err != nil {
					return err
				}
				stmts[query] = st
			}
			_, err := st.ExecContext(ctx, args...)
			return err
		}
		var created []floorRow
		for i := range rows {
			if rows[i].create {
				created = append(created, rows[i])
			}
		}
		first := next
		for start := 0; start < len(created); start += floorChunk {
			chunk := created[start:min(start+floorChunk, len(created))]
			args := make([]any, 0, 2+len(chunk)*per)
			args = append(args, "bench", imported)
			for _, r := range chunk {
				args = append(args, next)
				args = append(args, r.args...)
				next++
			}
			if err := exec(rowSQL(len(chunk)), args); err != nil {
				tx.Rollback()
				return 0, err
			}
		}
		if o.ledger {
			// The slots go through crmimport's own claim (R1), as many per
			// statement as it puts there.
			slots := make([]ledger.Slot, len(rows))
			row := first
			for i, r := range rows {
				slots[i] = ledger.Slot{Key: ledger.Key{Tenant: "bench", Source: "canonical", Kind: k, SourceID: r.id},
					RunID: 1, Action: ledger.Skipped, Reason: "deleted in source", At: now}
				if r.create {
					slots[i].Action, slots[i].Reason, slots[i].RecordType, slots[i].RecordID = ledger.Created, "", k.Table(), row
					row++
				}
			}
			l := ledger.New(tx, store.SQLite)
			won, err := l.Claim(ctx, slots)
			l.Close()
			if err == nil && !won {
				err = errors.New("a claim was refused")
			}
			if err != nil {
				tx.Rollback()
				return 0, err
			}
		}
		if err := tx.Commit(); err != nil {
			return 0, err
		}
		// The batch committed: its rows are parents from now on.
		row := first
		for _, r := range created {
			mine[r.id] = row
			row++
		}
	}
	return records, <-errc
}

// floorRead parses path and sends its records in batches, their links
// resolved against the parents' ids: those of earlier kinds, complete
// before this one starts (no kind links to itself).
func floorRead(ctx context.Context, path string, k ledger.Kind, ids map[ledger.Kind]map[string]int64, out chan<- []floorRow) error {
	defer close(out)
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err != nil {
		return err
	}
	at := map[string]int{}
	for i, h := range header {
		at[h] = i
	}
	get := func(rec []string, name string) string {
		if i, ok := at[name]; ok && i < len(rec) {
			return rec[i]
		}
		return ""
	}
	seen := map[string]bool{}
	batch := make([]floorRow, 0, floorBatch)
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		id := get(rec, "id")
		if id == "" || seen[id] {
			continue // a broken or repeated record: crmimport writes no slot for it here either
		}
		seen[id] = true
		row := floorRow{id: id, create: !truthy(get(rec, "deleted"))}
		if row.create {
			for _, c := range floorColumns[k] {
				var v any
				switch {
				case c == "email_key":
					v = nullText(canon.EmailKey(get(rec, "email")))
				case c == "domain_key":
					v = nullText(canon.DomainKey(get(rec, "domain")))
				case c == "done":
					v = 0
					if truthy(get(rec, "done")) {
						v = 1
					}
				case floorLinks[c] != "":
					if id, ok := ids[floorLinks[c]][get(rec, c)]; ok {
						v = id
					}
				default:
					v = nullText(get(rec, c))
				}
				row.args = append(row.args, v)
			}
		}
		batch = append(batch, row)
		if len(batch) == floorBatch {
			select {
			case out <- batch:
			case <-ctx.Done():
				return ctx.Err()
			}
			batch = make([]floorRow, 0, floorBatch)
		}
	}
	if len(batch) > 0 {
		select {
		case out <- batch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func truthy(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "y", "t":
		return true
	}
	return false
}

func nullText(s string) any {
	if s == "" {
		return nil
	}
	return s
}

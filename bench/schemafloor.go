package main

// The schema floor: a measured lower bound for any import that keeps SPEC
// §6, R1 and R5 with modernc.org/sqlite. It writes the export's rows into
// crmimport's own schema (store.Open: WAL, foreign keys on, the
// natural-key indexes) and claims one ledger slot per record through
// ledger.Claim, its rows through target.Writer (crmimport's own row
// writer, many rows per statement), in batches of 10,000 records per
// transaction, with links resolved from Go maps, and nothing else: no
// savepoint, no checkpoint, no index of final slots, no decisions.
// Parsing, and the values canon.Validate gives each record, run on their
// own goroutine, as in crmimport. It is a measure, not an importer: it
// trusts the export (fixtures/gen's) whole, and fails on a record that
// does not validate.
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
	"crmimport/target"
)

// floorKinds are the export's files in the order their links need.
var floorKinds = []ledger.Kind{ledger.Company, ledger.Contact, ledger.Deal, ledger.Note, ledger.Activity, ledger.Email}

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
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM migration_records`).Scan(&slots); err != nil {
		return err
	}
	all, err := target.Count(ctx, conn)
	if err != nil {
		return err
	}
	written = int(all)
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
	row    target.Row // its id given when it is written
	create bool       // false: deleted in the source, a skipped slot and no row
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
	mine := ids[k]
	for rows := range batches {
		records += len(rows)
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return 0, err
		}
		var created []target.Row
		first := next
		for i := range rows {
			if rows[i].create {
				r := rows[i].row
				r.ID = next
				next++
				created = append(created, r)
			}
		}
		if len(created) > 0 {
			w := target.NewWriter(tx, "bench", imported)
			err := w.Insert(ctx, created)
			w.Close()
			if err != nil {
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
		for _, r := range rows {
			if r.create {
				mine[r.id] = row
				row++
			}
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
			fs := canon.FieldsOf(k)
			vals := make([]string, len(fs.Names))
			for i, f := range fs.Names {
				vals[i] = get(rec, f)
			}
			values, bad := canon.Validate(k, vals)
			if bad != "" {
				return fmt.Errorf("%s %s: %s (the schema floor takes clean exports only)", k, id, bad)
			}
			row.row = target.Row{Kind: k, Values: values}
			for _, l := range canon.Parents(k) {
				if pid, ok := ids[l.Kind][get(rec, l.Field)]; ok {
					if row.row.Links == nil {
						row.row.Links = map[string]int64{}
					}
					row.row.Links[l.Field] = pid
				}
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

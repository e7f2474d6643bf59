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
// own goroutine, as in crmimport. It is a measure, not an importer.
//
// It prices an export with bad rows in it (fixtures/gen's realistic shape)
// by leaving out what a first run would fail or skip, with the same
// decisions in the same order (SPEC §4), made from the same validation
// (canon.Validate, canon.EmailKey, canon.DomainKey) and links resolved from
// the Go maps of the rows already written: a record without an id or with
// an id seen earlier in its file gets nothing (R4: a failure claims
// nothing); deleted in source, a note with an empty body, or a note,
// activity or email none of whose links resolves gets a skipped slot with
// that reason (and, for the last, the unresolved link values as the slot's
// detail) and no row; a record that does not validate gets nothing; a
// contact or company whose natural key a row already written holds gets a
// matched slot naming that row (R5) and no row; any other record gets its
// row and a created slot. So it writes the rows and slots a first run
// writes and nothing else: not the record_failures rows (R4) of the failed
// records, nor the extra column (unmapped columns, unresolved links) —
// both left to crmimport's side of the ratio.
//
// Parts can be left out (-floor.without ledger,fk,keys) to price each one
// inside the same round, and other designs of the slots and of the
// natural-key indexes measured beside the schema's (-floor.design,
// floordesign.go).

import (
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
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
var floorKinds = []ledger.Kind{ledger.User, ledger.Company, ledger.Contact, ledger.Lead, ledger.Deal, ledger.Note, ledger.Activity, ledger.Email}

const (
	floorBatch = 10000
	floorChunk = 256
)

type floorOptions struct {
	ledger bool // write a slot per record
	fk     bool // foreign keys on (SPEC §6)
	keys   bool // the natural-key indexes (R5)
	design floorDesign
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
	if !o.keys && o.design.keysAfter {
		return errors.New("-floor.without keys leaves no natural-key index to build after the load (-floor.design keys-after)")
	}
	if !o.keys {
		for _, ix := range []string{"contacts_email_key", "companies_domain_key"} {
			if _, err := conn.ExecContext(ctx, `DROP INDEX `+ix); err != nil {
				return err
			}
		}
	}
	if err := o.design.setup(ctx, conn, "bench", "canonical"); err != nil {
		return err
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
		n, made, err := floorLoad(ctx, conn, path, k, ids, now, o)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		records, rows = records+n, rows+made
	}
	if err := o.design.finish(ctx, conn); err != nil {
		return err
	}
	// A measure that did nothing measures nothing: every record given a
	// slot has it, every created one its row.
	var slots, written int
	counts, err := floorSlotCounts(ctx, conn, o.design)
	if err != nil {
		return err
	}
	for _, n := range counts {
		slots += n
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

// floorSlotCounts counts the slots the design wrote, per kind and action
// ("contact created").
func floorSlotCounts(ctx context.Context, db *sql.DB, d floorDesign) (map[string]int, error) {
	rows, err := db.QueryContext(ctx, d.slotCount())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var kind, action string
		var n int
		if err := rows.Scan(&kind, &action, &n); err != nil {
			return nil, err
		}
		out[kind+" "+action] = n
	}
	return out, rows.Err()
}

type floorRow struct {
	id     string
	row    target.Row // its row, its id given as it is read
	create bool       // a row and a created slot
	match  int64      // else, a matched slot naming this row (R5)
	reason string     // else, a skipped slot for this reason
	detail string     // and the link values it could not resolve
}

// floorLoad writes one file's records and tells how many slots and rows
// it wrote.
func floorLoad(ctx context.Context, db *sql.DB, path string, k ledger.Kind, ids map[ledger.Kind]map[string]int64, now time.Time, o floorOptions) (slotted, made int, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // a write that fails stops the reading
	batches := make(chan []floorRow, 4)
	errc := make(chan error, 1)
	go func() { errc <- floorRead(ctx, path, k, ids, batches) }()
	imported := ledger.FormatTime(now)

	records := 0
	mine := ids[k]
	for rows := range batches {
		records += len(rows)
		n, err := floorWrite(ctx, db, k, rows, imported, now, o)
		if err != nil {
			return 0, 0, err
		}
		made += n
		// The batch committed: its final slots are parents from now on.
		for _, r := range rows {
			switch {
			case r.create:
				mine[r.id] = r.row.ID
			case r.match != 0:
				mine[r.id] = r.match
			}
		}
	}
	return records, made, <-errc
}

// floorWrite writes a batch of records of kind k in one transaction: the
// rows it creates, through crmimport's row writer, and unless o leaves the
// ledger out, a slot per record. It tells how many rows it created.
func floorWrite(ctx context.Context, db *sql.DB, k ledger.Kind, rows []floorRow, imported string, now time.Time, o floorOptions) (made int, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	var created []target.Row
	for i := range rows {
		if rows[i].create {
			made++
			created = append(created, rows[i].row)
		}
	}
	if len(created) > 0 {
		w := target.NewWriter(tx, store.SQLite, "bench", imported)
		err := w.Insert(ctx, created)
		w.Close()
		if err != nil {
			return 0, err
		}
	}
	if o.ledger {
		if err := floorClaim(ctx, tx, k, rows, now, o.design); err != nil {
			return 0, err
		}
	}
	return made, tx.Commit()
}

// floorClaim claims a slot per record through crmimport's own claim (R1),
// as many per statement as it puts there, or through the design's.
func floorClaim(ctx context.Context, tx *sql.Tx, k ledger.Kind, rows []floorRow, now time.Time, d floorDesign) error {
	slots := make([]ledger.Slot, len(rows))
	for i, r := range rows {
		slots[i] = ledger.Slot{Key: ledger.Key{Tenant: "bench", Source: "canonical", Kind: k, SourceID: r.id},
			RunID: 1, Action: ledger.Skipped, Reason: r.reason, Detail: r.detail, At: now}
		switch {
		case r.create:
			slots[i].Action, slots[i].RecordType, slots[i].RecordID = ledger.Created, k.Table(), r.row.ID
		case r.match != 0:
			slots[i].Action, slots[i].RecordType, slots[i].RecordID = ledger.Matched, k.Table(), r.match
		}
	}
	var won bool
	var err error
	if d.slots != nil {
		stmts := map[int]*sql.Stmt{} // the design's claims, prepared once per transaction as ledger's are
		won, err = d.slots.claim(ctx, tx, stmts, slots)
		for _, st := range stmts {
			st.Close()
		}
	} else {
		l := ledger.New(tx, store.SQLite)
		won, err = l.Claim(ctx, slots)
		l.Close()
	}
	if err == nil && !won {
		err = errors.New("a claim was refused")
	}
	return err
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
	keys := map[string]int64{} // natural key → the row that holds it (R5), earlier rows of this file
	var next int64 = 1
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
			continue // 1, 2: no id, or a duplicate: failed, no slot
		}
		seen[id] = true
		row, ok := floorDecide(k, rec, get, ids, keys)
		if !ok {
			continue // 5: invalid: failed, no slot
		}
		row.id = id
		if row.create {
			row.row.ID = next
			next++
			if key := floorKey(k, get2(rec, get)); key != "" {
				keys[key] = row.row.ID
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

// floorDecide is steps 4–8 of the order of decisions for one record with
// an id of its own; ok false: it fails (5).
func floorDecide(k ledger.Kind, rec []string, get func([]string, string) string, ids map[ledger.Kind]map[string]int64, keys map[string]int64) (floorRow, bool) {
	if truthy(get(rec, "deleted")) { // 4
		return floorRow{reason: "deleted in source"}, true
	}
	fs := canon.FieldsOf(k)
	vals := make([]string, len(fs.Names))
	for i, f := range fs.Names {
		vals[i] = get(rec, f)
	}
	values, bad := canon.Validate(k, vals)
	if bad != "" { // 5
		return floorRow{}, false
	}
	if k == ledger.Note && strings.TrimSpace(get(rec, "body")) == "" { // 6
		return floorRow{reason: "empty body"}, true
	}
	row := floorRow{create: true, row: target.Row{Kind: k, Values: values}}
	var unresolved map[string]string
	for _, l := range canon.Parents(k) { // 7
		v := strings.TrimSpace(get(rec, l.Field))
		if v == "" {
			continue
		}
		if pid, ok := ids[l.Kind][v]; ok {
			if row.row.Links == nil {
				row.row.Links = map[string]int64{}
			}
			row.row.Links[l.Field] = pid
			continue
		}
		if unresolved == nil {
			unresolved = map[string]string{}
		}
		unresolved[l.Field] = v
	}
	anchored := false
	for f := range row.row.Links {
		anchored = anchored || !canon.IsOwner(f) // an owner never anchors a record (R6a)
	}
	if canon.NeedsParent(k) && !anchored {
		out := floorRow{reason: ledger.ReasonNotLinked}
		valued, owned := false, false
		for _, l := range canon.Parents(k) {
			if v := strings.TrimSpace(get(rec, l.Field)); v != "" {
				owned = owned || !canon.Anchors(l.Kind)
				valued = valued || canon.Anchors(l.Kind)
			}
		}
		if owned && !valued {
			out.reason = ledger.ReasonOwnerOnly // R6b: no run of the export takes it
		}
		for f := range unresolved {
			if canon.IsOwner(f) {
				delete(unresolved, f) // what it waits for: its parents, never its owner
			}
		}
		if len(unresolved) > 0 {
			b, _ := json.Marshal(unresolved)
			out.detail = string(b)
		}
		return out, true
	}
	if key := floorKey(k, get2(rec, get)); key != "" { // 8
		if rid, ok := keys[key]; ok {
			return floorRow{match: rid}, true
		}
	}
	return row, true
}

func get2(rec []string, get func([]string, string) string) func(string) string {
	return func(f string) string { return get(rec, f) }
}

// floorKey is a record's natural key (R5), "" for none.
func floorKey(k ledger.Kind, get func(string) string) string {
	switch k {
	case ledger.Contact, ledger.User:
		return canon.EmailKey(get("email"))
	case ledger.Company:
		return canon.DomainKey(get("domain"))
	}
	return ""
}

func truthy(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "y", "t":
		return true
	}
	return false
}

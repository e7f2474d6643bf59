package forensics

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/store"
	"crmimport/target"
)

// Every created or matched slot gets a placeholder target row: one per
// (table, record_id) that such slots name (two sources may match one row),
// and a new id, past the table's and the dump's, for a slot that names
// none. The statements per kind differ only in the table and its one
// visible text column, which says what the row is; NOT NULL columns are
// filled by it.

// rows: the created and matched slots of a kind, which name its rows.
type rows struct {
	final   int   // slots
	last    int64 // the largest record_id they name
	without int   // slots that name none: numbered here
}

// placeholderRowsSQL: the placeholder rows of a kind's final slots, one
// per record_id, with the tenant, source and source_id of the first slot
// that names it (target.InsertPlaceholders writes the first of an id):
// ?1 the kind, ?2 the dump, ?3 the time. json_object is SQLite's
// spelling (store.Dialect); placeholderRowsPG is PostgreSQL's, whose JSON
// text has a space after each colon and comma.
const placeholderRowsSQL = `
SELECT record_id AS id, tenant_id, '(loaded from a dump: ' || ?1 || ' ' || source_id || ')' AS label,
       json_object('loaded_from_dump', ?2, 'source', source, 'source_id', source_id) AS extra, ?3 AS imported_at, line AS ord
FROM dump_slots WHERE kind = ?1 AND record_id IS NOT NULL`

const placeholderRowsPG = `
SELECT record_id AS id, tenant_id, '(loaded from a dump: ' || ?1 || ' ' || source_id || ')' AS label,
       jsonb_build_object('loaded_from_dump', ?2::text, 'source', source, 'source_id', source_id)::text AS extra,
       ?3::text AS imported_at, line AS ord
FROM dump_slots WHERE kind = ?1 AND record_id IS NOT NULL`

// dumpRowIDsSQL: the record ids the dump's final slots of a kind name.
const dumpRowIDsSQL = `SELECT record_id AS id FROM dump_slots WHERE kind = ?`

// numberRowsSQL gives the final slots of a kind that name no row the next
// ids after ?2, in the order of the dump.
const numberRowsSQL = `
UPDATE dump_slots SET record_id = ?2 + n.i
FROM (SELECT line, row_number() OVER (ORDER BY line) AS i FROM dump_slots
      WHERE kind = ?1 AND record_type IS NOT NULL AND record_id IS NULL) AS n
WHERE dump_slots.line = n.line`

// rowOfTwoTenantsSQL: a row belongs to one tenant; the first final slot
// that names a row which an earlier one gives to another tenant.
const rowOfTwoTenantsSQL = `
SELECT line, kind, source_id, tenant_id, record_id, first, first_tenant FROM (
    SELECT line, kind, source_id, tenant_id, record_id,
           first_value(line) OVER w AS first, first_value(tenant_id) OVER w AS first_tenant
    FROM dump_slots WHERE record_id IS NOT NULL
    WINDOW w AS (PARTITION BY kind, record_id ORDER BY line)) AS s
WHERE tenant_id <> first_tenant ORDER BY line LIMIT 1`

// numberRows numbers the placeholder rows that the dump's final slots
// leave without one, past the table's and the dump's; finds a row that two
// tenants' slots name (when the dump has several); and the record ids
// whose rows this database already holds (when the table has any).
func (l *loader) numberRows(ctx context.Context) error {
	taken := map[ledger.Kind]bool{}
	for _, k := range canon.Kinds() {
		r := l.rows[k]
		if r == nil {
			continue
		}
		inTable, err := target.MaxID(ctx, l.tx, k)
		if err != nil {
			return fmt.Errorf("load: %w", err)
		}
		taken[k] = inTable > 0
		// New rows are numbered past the table's allocator (which is past
		// every id the table ever held) and the dump's own ids; then the
		// allocator moves past them all.
		next, err := target.NextID(ctx, l.d, l.tx, k)
		if err != nil {
			return fmt.Errorf("load: %w", err)
		}
		last := r.last
		if r.without > 0 {
			base := max(next-1, r.last)
			if _, err := l.tx.ExecContext(ctx, numberRowsSQL, string(k), base); err != nil {
				return fmt.Errorf("load: number %s rows: %w", k, err)
			}
			last = base + int64(r.without)
		}
		if err := target.AdvanceIDs(ctx, l.d, l.tx, k, last); err != nil {
			return fmt.Errorf("load: %w", err)
		}
	}
	if l.tenantsN > 1 && len(l.rows) > 0 {
		var line, first int
		var kind ledger.Kind
		var sourceID, tenant, firstTenant string
		var recordID int64
		err := l.tx.QueryRowContext(ctx, rowOfTwoTenantsSQL).Scan(&line, &kind, &sourceID, &tenant, &recordID, &first, &firstTenant)
		switch {
		case err == nil:
			l.problems.add(l.files[tableSlots], line, fmt.Errorf(
				"%s %s of tenant %s names %s row %d, which line %d gives to tenant %s: a row belongs to one tenant",
				kind, sourceID, tenant, kind.Table(), recordID, first, firstTenant))
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("load: rows of two tenants: %w", err)
		}
	}
	for _, k := range canon.Kinds() {
		if !taken[k] {
			continue
		}
		ids := &IDs{}
		err := target.Taken(ctx, l.tx, k, dumpRowIDsSQL, []any{string(k)}, func(id int64) error {
			ids.add(id)
			return nil
		})
		if err != nil {
			return fmt.Errorf("load: %s rows: %w", k.Table(), err)
		}
		if ids.N > 0 {
			l.conflict.Rows[k.Table()] = ids
		}
	}
	return nil
}

// writePlaceholders writes the placeholder rows of the final slots.
func (l *loader) writePlaceholders(ctx context.Context) error {
	for _, k := range canon.Kinds() {
		if l.rows[k] == nil {
			continue
		}
		var q string
		switch l.d {
		case store.SQLite:
			q = placeholderRowsSQL
		case store.Postgres:
			q = placeholderRowsPG
		default:
			panic(l.d.Untaught("forensics.loader.writePlaceholders"))
		}
		n, err := target.InsertPlaceholders(ctx, l.tx, k, q, []any{string(k), l.dir, l.now})
		if err != nil {
			return fmt.Errorf("load placeholders of %s: %w", k.Table(), err)
		}
		l.sum.Placeholders[k.Table()] = int(n)
	}
	return nil
}

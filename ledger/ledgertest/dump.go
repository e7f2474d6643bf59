// Package ledgertest holds test helpers shared by the packages' tests: a
// canonical dump of a tenant's ledger and target rows, to compare the
// database a run leaves with the one another run (uninterrupted, resumed,
// killed) leaves. Non-test code never imports it.
package ledgertest

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"

	"crmimport/canon"
	"crmimport/ledger"
)

// Dump writes every slot of the tenant (kind, source_id, action, reason,
// detail) and every target row by its content, with its links written as
// the parents' source ids, never as local row ids. Run ids, row ids and
// times are left out: they differ between two databases that hold the same
// import.
func Dump(ctx context.Context, db *sql.DB, tenant string) (string, error) {
	return dump(ctx, db, tenant, false)
}

// DumpExact is Dump with what one database's history adds: each slot's
// source, owner run id and time, and each row's imported_at. Two states of
// one database compare equal by it only if nothing was left behind or
// touched: an undo (R16) is exact when the dump before a run equals the
// dump after the run and its undo.
func DumpExact(ctx context.Context, db *sql.DB, tenant string) (string, error) {
	return dump(ctx, db, tenant, true)
}

func dump(ctx context.Context, db *sql.DB, tenant string, exact bool) (string, error) {
	var b strings.Builder
	names, err := dumpSlots(ctx, db, tenant, exact, &b)
	if err != nil {
		return "", err
	}
	for _, k := range canon.Kinds() {
		table := k.Table()
		fmt.Fprintf(&b, "%s:\n", table)
		lines, err := dumpRows(ctx, db, tenant, table, exact, names)
		if err != nil {
			return "", err
		}
		sort.Strings(lines)
		for _, l := range lines {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	if err := dumpPendingLinks(ctx, db, tenant, exact, &b); err != nil {
		return "", err
	}
	if exact { // an update's before-image is that database's history: a clean run of the same export has none
		if err := dumpBeforeImages(ctx, db, tenant, &b); err != nil {
			return "", err
		}
		if err := dumpReplacedLinks(ctx, db, tenant, &b); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// dumpBeforeImages writes the before-images of updates no undo gave back
// (R17), for DumpExact: what an undo of their runs would restore. One an
// undo gave back is history, as the undone run's own row is.
func dumpBeforeImages(ctx context.Context, db *sql.DB, tenant string, b *strings.Builder) error {
	rows, err := db.QueryContext(ctx, `SELECT source, kind, source_id, migration_id, before_values, coalesce(before_hashes, ''), after_hashes, fields
		FROM record_updates WHERE tenant_id = ? AND reverted_by IS NULL ORDER BY source, kind, source_id, migration_id`, tenant)
	if err != nil {
		return err
	}
	defer rows.Close()
	b.WriteString("before-images:\n")
	for rows.Next() {
		var source, kind, id, values, before, after, fields string
		var run int64
		if err := rows.Scan(&source, &kind, &id, &run, &values, &before, &after, &fields); err != nil {
			return err
		}
		fmt.Fprintf(b, "%s %s %s %s before=%q after=%q run=%d values=%s\n", source, kind, id, fields, before, after, run, values)
	}
	return rows.Err()
}

// dumpPendingLinks writes the links remembered with the tenant's rows
// (R6a) by their child's and parent's keys: those still waiting, and with
// exact every one with the run that wrote its child and the run that
// completed it. Which run completed a link is history: two databases that
// hold the same rows and links compare equal without it.
func dumpPendingLinks(ctx context.Context, db *sql.DB, tenant string, exact bool, b *strings.Builder) error {
	rows, err := db.QueryContext(ctx, `SELECT source, kind, source_id, field, parent_kind, parent_source_id, migration_id,
		coalesce(completed_by, 0) FROM pending_links WHERE tenant_id = ? ORDER BY source, kind, source_id, field`, tenant)
	if err != nil {
		return err
	}
	defer rows.Close()
	b.WriteString("pending_links:\n")
	for rows.Next() {
		var source, kind, id, field, pkind, pid string
		var run, completed int64
		if err := rows.Scan(&source, &kind, &id, &field, &pkind, &pid, &run, &completed); err != nil {
			return err
		}
		switch {
		case exact:
			fmt.Fprintf(b, "%s %s %s %s -> %s %s run=%d completed_by=%d\n", source, kind, id, field, pkind, pid, run, completed)
		case completed == 0:
			fmt.Fprintf(b, "%s %s %s %s -> %s %s\n", source, kind, id, field, pkind, pid)
		}
	}
	return rows.Err()
}

// dumpReplacedLinks writes the links updates replaced (schema 16), for
// DumpExact: what an undo of their runs would remember again.
func dumpReplacedLinks(ctx context.Context, db *sql.DB, tenant string, b *strings.Builder) error {
	rows, err := db.QueryContext(ctx, `SELECT source, kind, source_id, field, parent_kind, parent_source_id, migration_id,
		coalesce(completed_by, 0), replaced_by FROM replaced_links WHERE tenant_id = ? ORDER BY source, kind, source_id, field, replaced_by`, tenant)
	if err != nil {
		return err
	}
	defer rows.Close()
	b.WriteString("replaced_links:\n")
	for rows.Next() {
		var source, kind, id, field, pkind, pid string
		var run, completed, replaced int64
		if err := rows.Scan(&source, &kind, &id, &field, &pkind, &pid, &run, &completed, &replaced); err != nil {
			return err
		}
		fmt.Fprintf(b, "%s %s %s %s -> %s %s run=%d completed_by=%d replaced_by=%d\n", source, kind, id, field, pkind, pid, run, completed, replaced)
	}
	return rows.Err()
}

// rowNames are the source ids that name each target row (created or
// matched slots): table -> row id -> source ids.
type rowNames map[string]map[int64][]string

// name is a row by the source ids that name it, never by its id.
func (names rowNames) name(table string, id int64) string {
	ids := names[table][id]
	if len(ids) == 0 {
		return fmt.Sprintf("<row %d without a slot>", id)
	}
	sort.Strings(ids)
	return strings.Join(ids, "|")
}

// dumpSlots writes the tenant's slots to b, in the ledger's key order, and
// returns which source ids name each target row.
func dumpSlots(ctx context.Context, db *sql.DB, tenant string, exact bool, b *strings.Builder) (rowNames, error) {
	names := rowNames{}
	rows, err := db.QueryContext(ctx, `SELECT kind, source_id, action, coalesce(reason, ''), coalesce(detail, ''),
		coalesce(record_type, ''), coalesce(record_id, 0), source, coalesce(migration_id, 0), created_at, coalesce(hashes, '')
		FROM migration_records WHERE tenant_id = ? ORDER BY kind, source, source_id`, tenant)
	if err != nil {
		return nil, err
	}
	b.WriteString("slots:\n")
	for rows.Next() {
		var kind, sid, action, reason, detail, table, source, at, hashes string
		var rid, owner int64
		if err := rows.Scan(&kind, &sid, &action, &reason, &detail, &table, &rid, &source, &owner, &at, &hashes); err != nil {
			rows.Close()
			return nil, err
		}
		fmt.Fprintf(b, "  %s %s %s", kind, sid, action)
		if exact {
			fmt.Fprintf(b, " source=%s run=%d at=%s", source, owner, at)
		}
		if reason != "" {
			fmt.Fprintf(b, " %q", reason)
		}
		if detail != "" {
			fmt.Fprintf(b, " %s", detail)
		}
		if hashes != "" {
			fmt.Fprintf(b, " hashes=%q", hashes) // what was last written for it (R17)
		}
		b.WriteByte('\n')
		if action != string(ledger.Skipped) {
			if names[table] == nil {
				names[table] = map[int64][]string{}
			}
			names[table][rid] = append(names[table][rid], sid)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return names, nil
}

// dumpRows returns a line per target row of the tenant in table: the row
// by its names, then each column but its id and tenant (and imported_at
// unless exact) that holds a value, a link by its parent's names.
func dumpRows(ctx context.Context, db *sql.DB, tenant, table string, exact bool, names rowNames) ([]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT * FROM `+table+` WHERE tenant_id = ?`, tenant)
	if err != nil {
		return nil, err
	}
	cols, err := rows.Columns()
	if err != nil {
		rows.Close()
		return nil, err
	}
	var lines []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			rows.Close()
			return nil, err
		}
		var id int64
		var parts []string
		for i, c := range cols {
			switch c {
			case "id":
				id = vals[i].(int64)
				continue
			case "tenant_id":
				continue
			case "imported_at":
				if !exact {
					continue
				}
			}
			v := vals[i]
			if parent, ok := canon.KindOfLinkField(c); ok && v != nil {
				parts = append(parts, fmt.Sprintf("%s=%s", c, names.name(parent.Table(), v.(int64))))
				continue
			}
			if v == nil {
				continue
			}
			if bs, ok := v.([]byte); ok {
				v = string(bs)
			}
			parts = append(parts, fmt.Sprintf("%s=%q", c, fmt.Sprint(v)))
		}
		lines = append(lines, fmt.Sprintf("  [%s] %s", names.name(table, id), strings.Join(parts, " ")))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return lines, nil
}

package forensics

import (
	"fmt"
	"strings"

	"crmimport/canon"
	"crmimport/importer/reader"
	"crmimport/ledger"
	"crmimport/report"
	"crmimport/store"
	"crmimport/target"
)

// staleSkipsSQL: R3, a skip is a placeholder, not a verdict. For each
// tenant, source and kind, the latest run of another engine that processed
// the kind (a task of it that a dump brought, file-less, succeeded); a
// skipped slot owned by an older run was not taken over by it — the
// poisoned ledger of the write-up, where the claim read a skip as a
// verdict.
//
// A task crmimport ran (it has a file: a planned task, or one that resume
// --from gave a loaded run) is no evidence: its claim takes over every
// skip it reads, in the statement itself (R3), so a skip older than it is
// one it did not read — a fix folder holds only failed rows, a kind's
// export may hold fewer records — or one whose record failed (R4). Counting
// it called the skips of the run a fix folder fixes stale, and with their
// parents imported by the fix, the ledger poisoned (issue 23 item 13).
var staleSkipsSQL = `
WITH latest AS (
    SELECT m.tenant_id, m.source, t.kind, max(m.id) AS run
    FROM migration_tasks t JOIN migrations m ON m.id = t.migration_id
    WHERE t.status = 'succeeded' AND (?1 = '' OR m.tenant_id = ?1)
      AND m.dump IS NOT NULL AND t.file IS NULL -- another engine's work, loaded from its dump
      AND m.undoes IS NULL AND m.undone_by IS NULL -- an undo and what it took back processed nothing (R16)
    GROUP BY m.tenant_id, m.source, t.kind)
SELECT r.tenant_id, r.source, r.kind, coalesce(r.migration_id, 0), l.run, r.source_id
FROM migration_records r
JOIN latest l ON l.tenant_id = r.tenant_id AND l.source = r.source AND l.kind = r.kind
WHERE r.action = 'skipped' AND coalesce(r.migration_id, 0) < l.run
ORDER BY r.tenant_id, r.source, ` + kindOrder + `, r.migration_id, r.source_id`

func (d *doctor) staleSkips() error {
	type group struct {
		tenant, source string
		kind           ledger.Kind
		run, latest, n int64
	}
	var groups []*group
	index := map[group]*group{}
	err := d.each(staleSkipsSQL, []any{d.opts.Tenant}, func(s store.Scanner) error {
		var g group
		var id string
		if err := s.Scan(&g.tenant, &g.source, &g.kind, &g.run, &g.latest, &id); err != nil {
			return err
		}
		p := index[g]
		if p == nil {
			p = &g
			index[g] = p
			groups = append(groups, p)
		}
		p.n++
		f := d.finding(StaleSkips, g.tenant)
		f.Count++
		f.example(string(g.kind) + " " + id)
		return nil
	})
	if err != nil {
		return fmt.Errorf("doctor: stale skips: %w", err)
	}
	kinds := map[[2]string][]ledger.Kind{}
	var order [][2]string
	for _, g := range groups {
		f := d.finding(StaleSkips, g.tenant)
		f.runs[g.run], f.runs[g.latest] = true, true
		owner := fmt.Sprintf("run %d's", g.run)
		if g.run == 0 {
			owner = "a run's"
		}
		f.Details = append(f.Details, fmt.Sprintf("%d %s (source %s) still carry %s skip, though run %d processed %s after it",
			g.n, g.kind.Plural(), g.source, owner, g.latest, g.kind.Plural()))
		k := [2]string{g.tenant, g.source}
		if kinds[k] == nil {
			order = append(order, k)
		}
		kinds[k] = append(kinds[k], g.kind)
	}
	for _, k := range order {
		d.finding(StaleSkips, k[0]).repair(d.runCommand(k[0], k[1], kinds[k]))
	}
	return nil
}

// readySQL: R3 and R6, a skipped slot whose detail (what the skip could not
// resolve: {"contact_id": "c-1"}) names a parent that now has a final slot
// of the same tenant and source: a run of its kind takes it over. CROSS
// JOIN keeps SQLite's planner to that order — each link of the detail,
// then its parent's slot by the ledger's key — rather than the tenant's
// every slot for each skip.
// json_each and json_valid are SQLite's spelling (store.Dialect); readyPG
// is PostgreSQL's.
var readySQL = `
SELECT r.tenant_id, r.source, r.kind, r.source_id, ` + report.ParentsFoundSQL + `
FROM migration_records r
WHERE r.action = 'skipped' AND (?1 = '' OR r.tenant_id = ?1) AND r.detail IS NOT NULL AND json_valid(r.detail)
ORDER BY r.tenant_id, r.source, ` + kindOrder + `, r.source_id`

var readyPG = `
SELECT r.tenant_id, r.source, r.kind, r.source_id, CASE WHEN ` + report.FlatDetailPG + ` THEN ` + report.ParentsFoundPG + ` END
FROM migration_records r
WHERE r.action = 'skipped' AND (?1 = '' OR r.tenant_id = ?1) AND r.detail IS NOT NULL
ORDER BY r.tenant_id, r.source, ` + kindOrder + `, r.source_id`

func (d *doctor) readyToTakeOver() error {
	type group struct {
		tenant, source string
		kind           ledger.Kind
	}
	counts := map[group]int64{}
	parents := map[group]map[string]bool{}
	var order []group
	var q string
	switch e := store.DialectOf(d.db); e {
	case store.SQLite:
		q = readySQL
	case store.Postgres:
		q = readyPG
	default:
		panic(e.Untaught("forensics.doctor.readyToTakeOver"))
	}
	err := d.each(q, []any{d.opts.Tenant}, func(s store.Scanner) error {
		var g group
		var id string
		var found *string
		if err := s.Scan(&g.tenant, &g.source, &g.kind, &id, &found); err != nil {
			return err
		}
		if found == nil || *found == "" {
			return nil
		}
		if _, ok := counts[g]; !ok {
			order = append(order, g)
			parents[g] = map[string]bool{}
		}
		counts[g]++
		for _, p := range strings.Split(*found, ",") {
			parents[g][p] = true
		}
		f := d.finding(ReadyToTakeOver, g.tenant)
		f.Count++
		f.example(string(g.kind) + " " + id)
		return nil
	})
	if err != nil {
		return fmt.Errorf("doctor: skips ready to take over: %w", err)
	}
	kinds := map[[2]string][]ledger.Kind{}
	var sources [][2]string
	for _, g := range order {
		var names []string
		for _, k := range canon.Kinds() {
			if parents[g][string(k)] {
				names = append(names, string(k))
			}
		}
		f := d.finding(ReadyToTakeOver, g.tenant)
		f.Details = append(f.Details, fmt.Sprintf("%d skipped %s (source %s) name a %s that is imported now",
			counts[g], g.kind.Plural(), g.source, strings.Join(names, " or ")))
		k := [2]string{g.tenant, g.source}
		if kinds[k] == nil {
			sources = append(sources, k)
		}
		kinds[k] = append(kinds[k], g.kind)
	}
	for _, k := range sources {
		d.finding(ReadyToTakeOver, k[0]).repair(d.runCommand(k[0], k[1], kinds[k]))
	}
	return nil
}

// orphanSlotsSQL: R1 and R2, a created or matched slot names the target
// row it wrote or found; a slot whose row is gone (or belongs to another
// tenant) refuses every later claim, so the record is never written again.
var orphanSlotsSQL = `
SELECT r.tenant_id, r.source, r.kind, r.source_id, coalesce(r.record_id, 0)
FROM migration_records r
WHERE r.action IN ('created', 'matched') AND (?1 = '' OR r.tenant_id = ?1)
  AND (r.record_id IS NULL OR ` + target.MissingRow("r.kind", "r.record_id", "r.tenant_id") + `)
ORDER BY r.tenant_id, r.source, ` + kindOrder + `, r.source_id`

func (d *doctor) orphanSlots() error {
	type group struct {
		tenant, source string
		kind           ledger.Kind
	}
	ids := map[group][]string{}
	rows := map[group][]string{}
	var order []group
	err := d.each(orphanSlotsSQL, []any{d.opts.Tenant}, func(s store.Scanner) error {
		var g group
		var id string
		var rid int64
		if err := s.Scan(&g.tenant, &g.source, &g.kind, &id, &rid); err != nil {
			return err
		}
		if _, ok := ids[g]; !ok {
			order = append(order, g)
		}
		ids[g] = append(ids[g], id)
		if rid > 0 && len(rows[g]) < maxExamples {
			rows[g] = append(rows[g], fmt.Sprint(rid))
		}
		f := d.finding(OrphanSlots, g.tenant)
		f.Count++
		f.example(string(g.kind) + " " + id)
		return nil
	})
	if err != nil {
		return fmt.Errorf("doctor: orphan slots: %w", err)
	}
	for _, g := range order {
		f := d.finding(OrphanSlots, g.tenant)
		where := "no row"
		if len(rows[g]) > 0 {
			where = fmt.Sprintf("%s row %s", g.kind.Table(), strings.Join(rows[g], ", "))
		}
		f.Details = append(f.Details, fmt.Sprintf("%d %s %s (source %s) %s final, but %s target %s missing (%s)",
			len(ids[g]), string(g.kind), reader.Plural(len(ids[g]), "slot", "slots"), g.source, reader.Plural(len(ids[g]), "is", "are"),
			reader.Plural(len(ids[g]), "its", "their"), reader.Plural(len(ids[g]), "row is", "rows are"), where))
		// Step one frees the slots (R2 refuses every claim while they are
		// there), step two imports the records again. The statement is
		// SQL with each value a quoted literal, and the whole of it one
		// argument quoted for the shell, like the database's path.
		var quoted []string
		for _, id := range ids[g] {
			quoted = append(quoted, sqlString(id))
		}
		slots := fmt.Sprintf("WHERE tenant_id = %s AND source = %s AND kind = %s AND source_id IN (%s)",
			sqlString(g.tenant), sqlString(g.source), sqlString(string(g.kind)), strings.Join(quoted, ", "))
		free, err := d.freeSlots(slots)
		if err != nil {
			return fmt.Errorf("doctor: orphan slots: %w", err)
		}
		f.repair(free, "1. frees the slots")
		cmd, note := d.runCommand(g.tenant, g.source, []ledger.Kind{g.kind})
		f.repair(cmd, "2. imports them again; "+note)
	}
	return nil
}

// freeSlots is the shell command that deletes the slots of the ledger
// doctor read that where (a WHERE clause of quoted literals) selects: the
// statement given to sqlite3 with the file, or to psql with the server's
// address, after the statement that sets its schema (store.PsqlOf).
func (d *doctor) freeSlots(where string) (string, error) {
	switch e := store.DialectOf(d.db); e {
	case store.SQLite:
		db := d.opts.DBPath
		if strings.HasPrefix(db, "-") {
			db = "./" + db // not an option of sqlite3's
		}
		return report.ShellCommand("sqlite3", db, "DELETE FROM migration_records "+where), nil
	case store.Postgres:
		return d.psql("DELETE FROM migration_records " + where)
	default:
		panic(e.Untaught("forensics.doctor.freeSlots"))
	}
}

// psql is the shell command that runs stmt with psql on the server of the
// ledger doctor read, after the statement that sets its schema
// (store.PsqlOf).
func (d *doctor) psql(stmt string) (string, error) {
	if !store.IsAddress(d.opts.DBPath) {
		// The address is not known here: psql's own defaults (PGHOST
		// and the other PG… variables) name the server.
		return report.ShellCommand("psql", "-c", stmt), nil
	}
	p, err := store.PsqlOf(d.opts.DBPath)
	if err != nil {
		return "", err
	}
	return report.ShellCommand("psql", p.Address, "-c", p.SearchPath, "-c", stmt), nil
}

// kindOrder orders rows by kind in plan order (companies first), from
// the table of kinds (canon.Table.OrderCase).
var kindOrder = canon.KindTable().OrderCase("r.kind")

// sqlString is s as an SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

package ledger

import (
	"context"
	"fmt"

	"crmimport/store"
)

// What is still open for a tenant, across its runs, as the tenant stands
// now (issue 27 item 3: a customer's page): not what each run saw, which
// the run's own report keeps, but what the ledger says today. A record
// that failed in run 1 and was imported in run 3 is not open; one that
// failed in run 1 and was skipped in run 3 is open as skipped (R3: its
// slot tells the latest attempt, and a failure claims nothing, R4).
//
// A run that was undone, and an undo itself, are no verdict: the undo gave
// the ledger back what it was before the run (R16), so what that run found
// (its failures, the changes it saw or applied) is not counted.

// The things that can be open, in the order the pages tell them: broken,
// needs a fresh run, changed at the source, a link still empty.
const (
	OpenFailed   = "failed"   // the record's latest attempt failed and it has no slot since (R4)
	OpenSkipped  = "skipped"  // its slot is a skip (R3): a placeholder waiting for a fresh run
	OpenOutdated = "outdated" // imported, changed at the source since, not applied (R17)
	OpenConflict = "conflict" // changed at the source and edited by hand in its row since (R17)
	OpenUnlinked = "unlinked" // imported with a link to a parent that is not there yet (R6, R6a)
	OpenUnowned  = "unowned"  // imported with an owner that no user resolves yet (R6a)
)

// OpenGroup is how many records of one source and kind are open for one
// reason, by the run whose verdict stands for them.
type OpenGroup struct {
	What   string `json:"what"` // OpenFailed, OpenSkipped, …
	Source string `json:"source"`
	Kind   Kind   `json:"kind"`
	// Run is the run whose verdict stands: the latest failure, the skip's
	// owner, the latest change seen, the run that wrote the record whose
	// link is empty. 0 for a skip a dump brought without its run.
	Run   int64 `json:"run"`
	Count int64 `json:"count"`
	// Applicable is how many of the outdated records `run --update` would
	// write (R17: a matched row was found, not made, and is never written).
	Applicable int64 `json:"applicable,omitempty"`
	// Example is one source id of them (the least); "" for failures of
	// rows that had no id.
	Example string `json:"example"`
}

// openFailedSQL: per record, its latest failure in a run of the tenant
// that stands (row_number over the record's key), open unless the record
// has a final slot, or a skip of a later run, now: a duplicate whose first
// row was imported is not open (the record is there), nor is a failed
// update of an imported record (R17: its row stays as it was, and its
// change stays open as outdated). A record failed twice in one run counts
// once.
const openFailedSQL = `
SELECT source, kind, migration_id, count(*), min(source_id) FROM (
    SELECT m.source, f.kind, f.migration_id, f.source_id,
           row_number() OVER (PARTITION BY m.source, f.kind, f.source_id ORDER BY f.migration_id DESC, f.id DESC) AS i
    FROM record_failures f JOIN migrations m ON m.id = f.migration_id
    WHERE m.tenant_id = ? AND m.undone_by IS NULL AND m.undoes IS NULL AND coalesce(f.source_id, '') <> '') AS l
WHERE i = 1 AND NOT EXISTS (
    SELECT 1 FROM migration_records r
    WHERE r.tenant_id = ? AND r.source = l.source AND r.kind = l.kind AND r.source_id = l.source_id
      AND (r.action IN ('created', 'matched') OR coalesce(r.migration_id, 0) > l.migration_id))
GROUP BY source, kind, migration_id
ORDER BY source, kind, migration_id`

// openNoIDSQL: failures of rows that had no id (SPEC §4 step 1), which no
// later record can be told to be: open until a later run of the tenant
// and source that stands reads their kind again (a rerun decides the
// file's rows anew; a fix folder holds the row with the id it was given).
const openNoIDSQL = `
SELECT m.source, f.kind, f.migration_id, count(*)
FROM record_failures f JOIN migrations m ON m.id = f.migration_id
WHERE m.tenant_id = ? AND m.undone_by IS NULL AND m.undoes IS NULL AND coalesce(f.source_id, '') = ''
  AND NOT EXISTS (
    SELECT 1 FROM migrations n JOIN migration_tasks t ON t.migration_id = n.id
    WHERE n.tenant_id = m.tenant_id AND n.source = m.source AND n.id > m.id AND t.kind = f.kind
      AND n.undone_by IS NULL AND n.undoes IS NULL)
GROUP BY m.source, f.kind, f.migration_id
ORDER BY m.source, f.kind, f.migration_id`

// openSkippedSQL: the tenant's skipped slots (R3: each tells its latest
// attempt), but those whose record failed in a later run that stands,
// which openFailedSQL counts.
const openSkippedSQL = `
SELECT r.source, r.kind, coalesce(r.migration_id, 0), count(*), min(r.source_id)
FROM migration_records r
WHERE r.tenant_id = ? AND r.action = 'skipped'
  AND NOT EXISTS (
    SELECT 1 FROM record_failures f JOIN migrations m ON m.id = f.migration_id
    WHERE m.tenant_id = r.tenant_id AND m.source = r.source AND f.migration_id > coalesce(r.migration_id, 0)
      AND f.kind = r.kind AND f.source_id = r.source_id AND m.undone_by IS NULL AND m.undoes IS NULL)
GROUP BY r.source, r.kind, coalesce(r.migration_id, 0)
ORDER BY r.source, r.kind, coalesce(r.migration_id, 0)`

// openChangesSQL: per record still in a final slot, the latest change at
// the source that a run that stands recorded (R17), when it is outdated
// or a conflict: an update since (updated, overwritten) closes it, and the
// undo of that update opens it again.
const openChangesSQL = `
SELECT source, kind, migration_id, change, count(*), coalesce(sum(applicable), 0), min(source_id) FROM (
    SELECT m.source, c.kind, c.source_id, c.migration_id, c.change, c.applicable,
           row_number() OVER (PARTITION BY m.source, c.kind, c.source_id ORDER BY c.migration_id DESC, c.id DESC) AS i
    FROM record_changes c JOIN migrations m ON m.id = c.migration_id
    WHERE m.tenant_id = ? AND m.undone_by IS NULL AND m.undoes IS NULL) AS l
WHERE i = 1 AND change IN ('` + ChangeOutdated + `', '` + ChangeConflict + `') AND EXISTS (
    SELECT 1 FROM migration_records r
    WHERE r.tenant_id = ? AND r.source = l.source AND r.kind = l.kind AND r.source_id = l.source_id
      AND r.action IN ('created', 'matched'))
GROUP BY source, kind, migration_id, change
ORDER BY source, kind, migration_id, change`

// openLinksSQL: the links still waiting for their parent (R6a), per
// child: an owner's make the record unowned, any other link's unlinked
// (R6a: unlinked never counts owners). A record with two empty links
// counts once for each word.
const openLinksSQL = `
SELECT p.source, p.kind, p.migration_id, CASE WHEN p.parent_kind = '` + string(User) + `' THEN '` + OpenUnowned + `' ELSE '` + OpenUnlinked + `' END AS what,
       count(DISTINCT p.source_id), min(p.source_id)
FROM pending_links p
WHERE p.tenant_id = ? AND p.completed_by IS NULL
GROUP BY p.source, p.kind, p.migration_id, what
ORDER BY p.source, p.kind, p.migration_id, what`

// Open reads what is open for tenant now, in the order of the consts
// above, each by source, kind and run.
func Open(ctx context.Context, q store.Querier, tenant string) ([]OpenGroup, error) {
	read := func(what, query string, args []any, scan func(s store.Scanner, g *OpenGroup) error) ([]OpenGroup, error) {
		var gs []OpenGroup
		err := store.EachRow(ctx, q, query, args, func(s store.Scanner) error {
			g := OpenGroup{What: what}
			if err := scan(s, &g); err != nil {
				return err
			}
			gs = append(gs, g)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read what is open for tenant %s (%s): %w", tenant, what, err)
		}
		return gs, nil
	}
	plain := func(s store.Scanner, g *OpenGroup) error {
		return s.Scan(&g.Source, &g.Kind, &g.Run, &g.Count, &g.Example)
	}
	failed, err := read(OpenFailed, openFailedSQL, []any{tenant, tenant}, plain)
	if err != nil {
		return nil, err
	}
	noID, err := read(OpenFailed, openNoIDSQL, []any{tenant}, func(s store.Scanner, g *OpenGroup) error {
		return s.Scan(&g.Source, &g.Kind, &g.Run, &g.Count)
	})
	if err != nil {
		return nil, err
	}
	skipped, err := read(OpenSkipped, openSkippedSQL, []any{tenant}, plain)
	if err != nil {
		return nil, err
	}
	changes, err := read("changes", openChangesSQL, []any{tenant, tenant}, func(s store.Scanner, g *OpenGroup) error {
		return s.Scan(&g.Source, &g.Kind, &g.Run, &g.What, &g.Count, &g.Applicable, &g.Example)
	})
	if err != nil {
		return nil, err
	}
	links, err := read("links", openLinksSQL, []any{tenant}, func(s store.Scanner, g *OpenGroup) error {
		return s.Scan(&g.Source, &g.Kind, &g.Run, &g.What, &g.Count, &g.Example)
	})
	if err != nil {
		return nil, err
	}
	out := append(append(append([]OpenGroup{}, failed...), noID...), skipped...)
	// In the order of the words: outdated before conflict, unlinked
	// before unowned.
	for _, what := range []string{OpenOutdated, OpenConflict, OpenUnlinked, OpenUnowned} {
		for _, g := range append(changes, links...) {
			if g.What == what {
				out = append(out, g)
			}
		}
	}
	return out, nil
}

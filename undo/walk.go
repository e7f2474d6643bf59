package undo

import (
	"context"
	"fmt"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/target"
)

// walk finds the items of an undo in two passes over the tenant, holding
// no more than a bit per row id and one page of slots. rows finds the rows
// that go: the run's created rows (for a loaded run, only the placeholders
// that no other slot names), and, parents before children, every row that
// links to a row that goes (R16's dependents, transitively). slots then
// reads the tenant's slots in the order of their key, a page at a time,
// and yields the run's own, the created slots of the rows that go by
// their links, and the matched slots that point at a row that goes.
type walk struct {
	run    phases.Run
	loaded bool
	page   int // slots read at a time
	// placeholders and named (loaded runs only): rows that are a dump's
	// placeholders, and rows that a final slot of another run names.
	placeholders, named rowSets
	gone                rowSets // rows that go
	linked              rowSets // rows that go because they link to a row that goes
	claimed             rowSets // rows of linked whose created slot the walk found
	// updated are the rows the run updated (R17): their links are the
	// run's own, given back with their before-image, not dependents.
	updated rowSets
	kept    int // created slots of a loaded run whose row stays
	// relinked are the links the run completed (R6a): emptied again, not
	// dependents (SPEC §10).
	relinked relinkSet
}

func newWalk(run phases.Run, loaded bool, page int) *walk {
	return &walk{run: run, loaded: loaded, page: page, placeholders: rowSets{}, named: rowSets{}, gone: rowSets{}, linked: rowSets{}, claimed: rowSets{}, updated: rowSets{}}
}

const (
	// ownRowsSQL lists the rows the run created (R16: they go).
	ownRowsSQL = `
SELECT kind, record_id FROM migration_records
WHERE tenant_id = ? AND migration_id = ? AND action = 'created' AND record_id IS NOT NULL`

	// updatedRowsSQL lists the rows the run updated (R17) that no undo
	// gave their before-image back.
	updatedRowsSQL = `
SELECT kind, record_id FROM record_updates WHERE tenant_id = ? AND migration_id = ? AND reverted_by IS NULL`

	// namedRowsSQL lists the rows that final slots of other runs name: a
	// loaded run's placeholder that one of them names stays.
	namedRowsSQL = `
SELECT kind, record_id FROM migration_records
WHERE tenant_id = ? AND coalesce(migration_id, 0) <> ? AND action IN ('created', 'matched') AND record_id IS NOT NULL`
)

// rows finds the rows that go.
func (w *walk) rows(ctx context.Context, q Querier) error {
	tenant := w.run.Tenant
	if w.loaded {
		for _, k := range canon.Kinds() {
			set := w.placeholders.of(k)
			if err := target.EachPlaceholder(ctx, q, k, tenant, set.add); err != nil {
				return err
			}
		}
		if err := eachRow(ctx, q, namedRowsSQL, tenant, w.run.ID, func(k ledger.Kind, id int64) { w.named.of(k).add(id) }); err != nil {
			return err
		}
	}
	err := eachRow(ctx, q, ownRowsSQL, tenant, w.run.ID, func(k ledger.Kind, id int64) {
		if w.deletes(k, id) {
			w.gone.of(k).add(id)
		} else {
			w.kept++
		}
	})
	if err != nil {
		return err
	}
	if err := eachRow(ctx, q, updatedRowsSQL, tenant, w.run.ID, func(k ledger.Kind, id int64) { w.updated.of(k).add(id) }); err != nil {
		return err
	}
	for _, k := range canon.Kinds() {
		parents := canon.ParentKinds(k)
		gone, linked, updated := w.gone.of(k), w.linked.of(k), w.updated.of(k)
		err := target.EachLink(ctx, q, k, tenant, func(id int64, links []int64) error {
			if gone.has(id) || updated.has(id) {
				return nil
			}
			for i, parent := range links {
				if w.gone[parents[i]].has(parent) && !w.relinked.has(k, id, parents[i]) {
					gone.add(id)
					linked.add(id)
					return nil
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// deletes reports whether the row of one of the run's created slots goes
// with it: always, but for a run loaded from a dump, whose row goes only
// if it is a placeholder that no other run's slot names (SPEC §10).
func (w *walk) deletes(k ledger.Kind, id int64) bool {
	return !w.loaded || (w.placeholders[k].has(id) && !w.named[k].has(id))
}

func eachRow(ctx context.Context, q Querier, query, tenant string, run int64, f func(ledger.Kind, int64)) error {
	rows, err := q.QueryContext(ctx, query, tenant, run)
	if err != nil {
		return fmt.Errorf("read the ledger of tenant %s: %w", tenant, err)
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var id int64
		if err := rows.Scan(&k, &id); err != nil {
			return fmt.Errorf("read the ledger of tenant %s: %w", tenant, err)
		}
		f(ledger.Kind(k), id)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read the ledger of tenant %s: %w", tenant, err)
	}
	return nil
}

// slotsPage is how many slots one page of the walk reads: the page is read
// whole before its items are yielded, so that a caller may write between
// two pages in the same transaction (PostgreSQL runs one statement at a
// time on a connection).
const slotsPage = 10000

// slotsPageSQL reads the next page of the tenant's slots that an undo may
// take back (the run's own, and other runs' final slots), in the order of
// the ledger's key from after the last one read (keyset: each page is a
// range of the key, whatever the tenant's size).
const slotsPageSQL = `
SELECT source, kind, source_id, coalesce(migration_id, 0), action, coalesce(record_id, 0)
FROM migration_records
WHERE tenant_id = ?1 AND (source, kind, source_id) > (?2, ?3, ?4)
  AND (migration_id = ?5 OR (action IN ('created', 'matched') AND record_id IS NOT NULL))
ORDER BY source, kind, source_id
LIMIT ?6`

// pageImagesSQL reads the before-images of the slots in a page's range of
// the key (after ?2…?4, up to ?5…?7): who took each over, its owner, and
// whether that owner was undone. One range read where a join probed the
// images once per slot, most of which have none.
const pageImagesSQL = `
SELECT b.source, b.kind, b.source_id, b.taken_by, coalesce(b.migration_id, 0), coalesce(m.undone_by, 0) <> 0
FROM slot_before b LEFT JOIN migrations m ON m.id = b.migration_id
WHERE b.tenant_id = ?1 AND (b.source, b.kind, b.source_id) > (?2, ?3, ?4) AND (b.source, b.kind, b.source_id) <= (?5, ?6, ?7)`

// walked is one item as the walk finds it, with its slot's before-image.
type walked struct {
	Item
	image     image
	imageRun  int64 // the before-image's owner
	dependent string
}

// pageImage is a before-image as a page reads it.
type pageImage struct {
	image
	run int64
}

// slots yields the items, page by page.
func (w *walk) slots(ctx context.Context, q Querier, yield func(walked) error) error {
	var last [3]string // the key of the last slot read; '' is below every kind
	page := make([]walked, 0, min(w.page, slotsPage))
	for {
		page = page[:0]
		first := last
		rows, err := q.QueryContext(ctx, slotsPageSQL, w.run.Tenant, last[0], last[1], last[2], w.run.ID, w.page)
		if err != nil {
			return fmt.Errorf("read the ledger of tenant %s: %w", w.run.Tenant, err)
		}
		n := 0
		for rows.Next() {
			var it walked
			var kind, action string
			if err := rows.Scan(&it.Source, &kind, &it.SourceID, &it.Owner, &action, &it.RecordID); err != nil {
				rows.Close()
				return fmt.Errorf("read the ledger of tenant %s: %w", w.run.Tenant, err)
			}
			n++
			last = [3]string{it.Source, kind, it.SourceID}
			it.Kind, it.Action = ledger.Kind(kind), ledger.Action(action)
			if w.item(&it) {
				page = append(page, it)
			}
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("read the ledger of tenant %s: %w", w.run.Tenant, err)
		}
		if len(page) > 0 {
			images, err := w.images(ctx, q, first, last)
			if err != nil {
				return err
			}
			for i := range page {
				it := &page[i]
				if im, ok := images[imageKey{it.Source, it.Kind, it.SourceID}]; ok {
					it.image, it.imageRun = im.image, im.run
					// SPEC §10: the run's own skips are never given back,
					// whoever holds their slot now (a dependent under
					// --cascade).
					it.image.ownerGone = it.image.ownerGone || im.run == w.run.ID
				}
			}
		}
		for _, it := range page {
			if err := yield(it); err != nil {
				return err
			}
		}
		if n < w.page {
			return nil
		}
	}
}

// images reads the before-images of the slots in (after, upTo].
func (w *walk) images(ctx context.Context, q Querier, after, upTo [3]string) (map[imageKey]pageImage, error) {
	rows, err := q.QueryContext(ctx, pageImagesSQL, w.run.Tenant, after[0], after[1], after[2], upTo[0], upTo[1], upTo[2])
	if err != nil {
		return nil, fmt.Errorf("read the before-images of tenant %s: %w", w.run.Tenant, err)
	}
	defer rows.Close()
	out := map[imageKey]pageImage{}
	for rows.Next() {
		var k imageKey
		var kind string
		var im pageImage
		if err := rows.Scan(&k.source, &kind, &k.sourceID, &im.takenBy, &im.run, &im.ownerGone); err != nil {
			return nil, fmt.Errorf("read the before-images of tenant %s: %w", w.run.Tenant, err)
		}
		k.kind = ledger.Kind(kind)
		out[k] = im
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the before-images of tenant %s: %w", w.run.Tenant, err)
	}
	return out, nil
}

// item tells whether a slot is an item of the undo, and completes it.
func (w *walk) item(it *walked) bool {
	k := it.Kind
	switch {
	case it.Owner == w.run.ID:
		it.DeleteRow = it.Action == ledger.Created && it.RecordID != 0 && w.deletes(k, it.RecordID)
		return true
	case it.Action == ledger.Created && w.linked[k].has(it.RecordID):
		w.claimed.of(k).add(it.RecordID)
		it.DeleteRow, it.dependent = true, "links"
		return true
	case it.Action == ledger.Matched && w.gone[k].has(it.RecordID):
		it.dependent = "matched"
		return true
	}
	return false
}

// image is what the plan needs of a slot's before-image: who took the slot
// over, and whether the image's own owner is undone — since, or by this
// very undo.
type image struct {
	takenBy   int64
	ownerGone bool
}

type imageKey struct {
	source   string
	kind     ledger.Kind
	sourceID string
}

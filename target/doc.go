// Package target owns the six target tables — companies, contacts,
// deals, notes, activities, emails — and is the only package whose SQL
// names them (SPEC §6):
//
//   - Writer inserts a batch's created rows, many per statement, inside
//     the batch's transaction; the importer calls it only from inside
//     ledger.Record, after the rows' claims have won (R1).
//   - R5 Matched means found, not made: LoadEmailKeys and LoadDomainKeys
//     read the natural keys of a tenant's rows, the oldest row per key.
//   - NextID gives the next row id of a table (inside the batch's write
//     transaction).
//   - For `ledger load`: MaxID, Taken and InsertPlaceholders (the rows that
//     back a dump's final slots); for doctor: MissingRow (a final slot
//     whose row is gone, R1 and R2).
//   - R6a: SetLink completes a link left empty and EmptyLink takes it back,
//     each a compare-and-set on the link column that tells whether the row
//     changed, moving the value kept for the link in extra out and back.
//   - For undo (R16): Delete takes rows back, children first
//     (ChildrenFirst); EachLink and EachPlaceholder find what links to a
//     run's rows and which rows only back a dump's slots.
//
// What each table holds comes from canon (the canonical fields); the
// columns beyond them — tenant_id, the natural keys, extra, imported_at,
// from_dump — are this package's.
package target

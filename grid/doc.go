// Package grid is the review grid of a run's failed records (SPEC §9,
// *Failed records*; issue 27 item 1): the rows of one file of the run, each
// with its file's columns and the cell its reason points at, filtered,
// searched, sorted and paged in the database, never all in memory; the
// cells a person changed, kept in the database (record_edits, schema 20)
// until they are re-imported; and the bulk operations a consultant does in
// a spreadsheet, each previewed on the rows it changes by the very pass
// that saves it. It owns:
//
//   - Paging (Page): a page is a LIMIT/OFFSET of the failure ids that the
//     filters choose, read from the indexes (record_failures_file: a run's
//     failures per file, kind and class; record_failures_source: a source
//     id), then those rows only. Sorting by a column reads the column of
//     every row chosen (json_extract, ->>) and may take longer: the page
//     says so while it waits.
//   - The failing cell (FailingColumn): the column a reason names — the
//     field it starts with, as the row names its columns, or the column
//     whose value it quotes.
//   - Pending edits (SaveEdits, Edits, Pending, MarkSent): one value per
//     failure and column, the latest; fix_run names the run that
//     re-imported it, NULL while it waits. The row as read is never
//     rewritten (R4 wrote it).
//   - Bulk operations (Bulk): find and replace in a column, a date format
//     applied to a column (the formats profiles accept, read by
//     importer/profile), a value filled down, and the encoding of a file
//     (which the ledger cannot re-decode: it keeps rows as decoded text,
//     not their bytes — the answer says what to do instead). Preview and
//     save are one function: the preview's count and examples are what the
//     save writes.
//
// Re-importing goes through package fixfile (WriteEdited, Outcomes) as
// the page's single-row fixes did: the edited rows of one file, a fix
// folder, a normal run over it (R2-R4).
//
// Imports point one way: grid uses report (failures, counts), fixfile,
// importer/profile (date formats) and store; desktop uses it.
package grid

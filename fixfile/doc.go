// Package fixfile writes a run's failed records (R4) as a fix folder: an
// export in the layout of the files they came from, for a person to
// correct — in a spreadsheet (`rejects RUN --out DIR --as-export`) or in
// the desktop's *Failed records* page — and import again with a normal run
// (`crmimport run --tenant T --source S [--profile P] DIR`). R2-R4 make
// that safe: a row fixed imports, one not fixed fails again with its
// reason, nothing already imported is touched. It owns:
//
//   - The folder's layout. Per input file that had failed rows, a file of
//     the same name (a gzip's without .gz; a zip entry's base name; files
//     of one name from several inputs share it) holding that file's header
//     — the columns as the file has them, in its order, re-read from the
//     file when it is still there, else the columns of the raw rows — and
//     its failed rows as they were read (record_failures.raw: the values
//     as the task decoded them, in the file's own column order, lined up
//     by name; a ragged row keeps its length, so that it fails again as it
//     did). CSV is UTF-8 with a BOM, so that a spreadsheet opens accents
//     right, comma-separated, LF line ends (a value's own line breaks
//     stay as read); a .json input gives a JSON array and a .jsonl one
//     JSON Lines, of the raw objects (numbers and booleans as text, which
//     the mapper reads the same). A row that could not be read as a row at
//     all (a broken quote: it has only its text) is not in the file — it
//     would not line up under the header — but in reasons.csv, text
//     included. Data cells are written as they are, never prefixed:
//     they are what will be imported.
//   - reasons.csv (fixmanifest.ReasonsName): file, line (the row's line in
//     the fix file, 0 when not written there), id, reason, from (the
//     input file and line the run read it at) and text (of a row not
//     written), every cell formula-safe (report.SafeCell).
//   - The manifest (fixmanifest.Manifest, fixmanifest.Name): the
//     run, its tenant, source and profile (a custom profile's file and
//     text), its inputs, the folder's files with their rows' failure ids
//     and source ids, and the side files the run read (joined files,
//     parents looked up by name, body folders) with the fingerprints it
//     planned them with. A run over the folder finds those side files
//     through it (importer's planning, R10: one that is gone, changed,
//     or under a name the profile would not read it by is refused, never
//     used or dropped silently), warns when it is read as another tenant,
//     source, profile or kind than its run's, and leaves the manifest and
//     reasons.csv out, saying why.
//   - Memory: a fix folder is written from the database in passes over
//     each file's failed rows (its header, the file with reasons.csv, each
//     list of the manifest), a row at a time, so that a run of 400,000
//     failed rows costs what one does; WriteEdited reads only the rows it
//     is given.
//   - Where it may write: a new or empty folder, never one of the run's
//     input folders (the folder it read, or that holds the file or zip it
//     read), inside one or holding one — the next run of that export
//     would read the fixes too. The folder is 0700, its files 0600
//     (customer data); a write that fails takes back what it wrote.
//
// The desktop's API (SPEC §9, *Failed records*):
//
//   - WriteEdited(ctx, db, runID, file, rows, parent) writes the edited
//     rows of one file of the run (each a failure id and the cells it
//     changes, named as Failure.Raw names them; a cell not named keeps
//     its value as read) as a one-file fix folder, manifest included, in
//     a new private folder under parent, and returns the folder's path:
//     the page then starts a run over it with --only the file's kind.
//   - Outcomes(ctx, db, runID) tells, after run runID over such a folder
//     (or any fix folder), what became of each of its rows, by source id
//     through the ledger and record_failures: imported (created or
//     matched by that run), unchanged (already final: another run's),
//     skipped (with the reason) or failed (with the reason), or not read.
//
// Imports point one way: fixfile uses report (the failures, the
// formula-safe cell, a command line's quoting), importer/fixmanifest (the
// manifest, written there), importer/runopts (the run's options), importer
// (the run's profile, a file's header), phases and store; cmd/crmimport
// and desktop use it.
package fixfile

// Package importer plans runs over exports and decides what becomes of
// each record. It stands on rooms of its own, each importing only those
// listed before it (suggest and importer itself import neither the other):
//
//   - importer/reader reads the rows of one file (CSV, JSON, JSON Lines,
//     XLSX workbooks) and tells what a file is and how it is encoded: a
//     bad row fails alone (SPEC §4 step 0, R4), a file that cannot be read
//     says why.
//   - importer/input owns the containers of an export (folders, zips read
//     in place, gzip, the bomb guards), refs, fingerprints and the
//     inspection of a file (R10).
//   - importer/profile owns the profiles as data and their validation, the
//     mapper from a row to a record, and the side files (SPEC §4: nothing
//     dropped silently, no link guessed).
//   - importer/runopts holds the options a run keeps (R10): what it was
//     asked, the warnings planning found and its plan's digest and files,
//     read back on resume and by the report.
//   - importer/fixmanifest reads and writes a fix folder's manifest (the
//     run it came from, its side files, each row's failure).
//   - importer/suggest drafts a profile for an export that no profile fits
//     (SPEC §9 "Profiles"): a kind per file, a field per column, the id
//     column, links, date formats and spellings, each guess with why and
//     how sure, as data the desktop's mapping editor changes and as YAML
//     that profile.Load reads (`crmimport profiles suggest`).
//   - importer itself plans a run (plan.go; from.go for a run loaded from a
//     dump: R10), tells what a run of an export would plan and find with
//     no database at all (inspect.go: planning's and a task's own code —
//     plan.go's discover, open.go's openTaskInput, decide.go's unreadable
//     and judge — called without a run), decides each record in the order of SPEC §4 from the
//     run's index in memory (decide.go; index.go and idtable.go: R2, R5,
//     R6, the duplicates of step 2), feeds a task's records to its batches
//     (feed.go) and writes them in the batch's transaction, which phases
//     owns (batch.go, speculate.go, write.go: target rows only through
//     ledger.Record, R1; failures to record_failures by
//     ledger.RecordFailures, R4; R12; batchsize.go bounds a batch), remembers the
//     links a created row leaves empty with it and completes, in each batch of
//     a parent kind, the links that wait for the batch's parents, and on a
//     task's first batch those whose parents were already there (relink.go,
//     R6a: counted relinked on the child's kind); a task whose input an earlier
//     task read whole is counted unchanged without reading it (sameinput.go,
//     R2). A run's plan has a digest over its options and every task with
//     its fingerprint (plandigest.go; runopts.PlanOf reads it back): a dry run shows it, and a run given
//     it is that plan or none (SPEC §11: a preview and its commit are the
//     same plan; R10).
package importer

// Package forensics is for the engineer holding a dump of a production
// ledger (SPEC §1, user 2): it reproduces the incident offline and says
// what a fix would do. It owns:
//
//   - Loading dumps (Load, `ledger load DUMP`): the production tables
//     migrations, migration_tasks and migration_records, from a folder of
//     `<table>.csv` as `psql \copy (…) TO … CSV HEADER` writes them (t/f
//     booleans, empty as NULL, timestamps with or without a zone) or
//     `<table>.jsonl`. Ids are kept, plural kinds become singular, unknown
//     columns are ignored and missing optional ones default. Every created
//     or matched slot gets a placeholder target row marked from_dump, so
//     that links resolve through the ledger (R6) and foreign keys hold.
//     Tasks in another phase than their kind's load as they are, with a
//     warning (resume --from re-arms them in their kind's phase, R7). A
//     file that already holds one of the dump's ids refuses the whole load
//     and names the ids. A load is one transaction, all or nothing, and
//     streams the dump: runs and tasks are written as they are read, slots
//     are staged in a temporary table in a file and checked there by SQL,
//     so that memory does not grow with the dump. A loaded run names its
//     dump (migrations.dump): it has no input files here, so only `resume
//     RUN --from PATH` continues it (R10; importer.ResumeFrom).
//   - The ledger's story (Why, Story; `ledger why`): the slots grouped by
//     kind, action, reason and run — the query of the write-up
//     000_724f8abccd17c4ae, as a command — and one slot's story: which run
//     claimed it, when, why, that run's status, and what came after.
//   - Doctor's findings (Doctor; `doctor`): named patterns, each with a
//     count, examples, the rule of SPEC it breaks and the command that
//     repairs it — uniform skips (R9), stale skips (R3), skips whose parent
//     has arrived (R3, R6), stranded work behind the barrier (R7), tasks in
//     another phase than their kind's in crmimport's plan (R7), terminal
//     runs with queued work or a success over failures (R9), unfinalized
//     runs (R15), slots whose target row is missing (R1, R2) and, on a
//     server, the copies of the data that killed dry runs left behind
//     (store.LeftCopies) — and the two incidents of the write-up they add
//     up to. A repair is a line to paste into a POSIX shell, every
//     argument quoted (report.ShellCommand), so that what a tenant, a
//     source, an id or a path holds is only text.
//   - A production engine's own ledger, as it is (ReadLedger, Production;
//     doctor, `ledger why` and report with --ledger-only, or on a
//     PostgreSQL schema that holds the three ledger tables and no
//     crmimport database): opened read-only on the server's word
//     (store.OpenLedgerOnly), its three tables are read in one read-only
//     snapshot, as text and only the columns a load reads, into a private
//     temporary dump, and loaded from there into a local copy that the
//     commands read as a loaded dump — so that they find there what they
//     find after `ledger load` of its dump. What the three tables cannot
//     tell (target rows: orphan-slots is not checked; failed records; the
//     run log; whether production still runs a running run) each command
//     says (AsIs), and doctor's repairs name a database loaded from a dump.
//     On PostgreSQL, a skip's detail is read only where it is a flat JSON
//     object (flatDetailPG: PostgreSQL 15 has no json_valid).
//
// Loading writes migration_records directly: it restores a ledger as
// production left it, which is not a claim (R1-R3 are the importer's, in
// package ledger); no target row is written without its slot. Everything
// else here only reads (ReadLedger writes only its own temporary copy).
// A run's failed and skipped records and its rejects tell what a run did:
// they are package report's. Imports point one way: forensics uses ledger,
// phases, importer, report and store; none of them imports it.
package forensics

// Package importer reads exports and decides what becomes of each record.
//
// It discovers an export's files and plans them as tasks (profile.go,
// plan.go), reads them as streams (read*.go), maps each row onto the
// canonical fields of its kind (record.go), validates it (validate.go), and
// decides its outcome in the order of SPEC §4 (decide.go): no id, duplicate
// in this run, already there (R2), deleted, invalid, empty note, links
// (R6), matched (R5) or created — writing target rows only through
// ledger.Record (R1) and failures to record_failures (R4), inside the batch
// transaction that phases owns (R12). A run loaded from a dump has no
// files here: ResumeFrom plans its unfinished tasks over a local export
// (from.go, R10), and Resume refuses it until then.
package importer

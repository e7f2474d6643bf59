// Package importer reads exports and decides what becomes of each record.
//
// A source profile (profile.go, read and validated by profile_load.go from
// the embedded profiles/*.yaml or a user's file) says which files hold
// which kind and which column gives which field. Planning (plan.go) finds
// an export's files in folders, zips read in place and gzip files
// (package input, bounded against bombs), plans them as tasks with their
// fingerprints (R10), and the files tasks read beside their own (joined
// files, parents looked up by name, body folders: aux.go). The pass that
// fingerprints a file also gathers the evidence of its encoding
// (input.InspectRef), on which planning decides how it is read
// (reader.ChooseEncoding: a guess is a warning the summary repeats), and
// the task keeps that decision. A task reads its file as a stream (package
// reader: what a file holds is sniffed first; a bad row fails alone, R4; a
// CSV's footer is told from its records), maps each row onto the
// canonical fields of its kind (record.go: what the profile says is
// resolved once per file and header; values.go, links.go, columns.go),
// validates it (validate.go),
// and decides its outcome in the order of SPEC §4 (decide.go): no id,
// duplicate in this run, already there (R2), deleted, invalid, empty note,
// links (R6), matched (R5) or created — writing target rows only through
// ledger.Record (R1) and failures to record_failures (R4), inside the batch
// transaction that phases owns (R12). A run loaded from a dump has no
// files here: ResumeFrom plans its unfinished tasks over a local export
// (from.go, R10), and Resume refuses it until then. A task whose input an
// earlier task read whole, the same bytes read the same way, with every
// record left in a final slot that is still there, is counted unchanged
// without reading the file (sameinput.go, R2). Column names from a
// profile are only compared with headers; they never reach SQL text.
package importer

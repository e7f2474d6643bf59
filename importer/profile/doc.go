// Package profile owns the source profiles (SPEC §4) and the mapping of a
// row onto a record:
//
//   - profiles as data: the built-in ones are the YAML files of profiles/,
//     embedded in the binary (BuiltinNames, Builtin, Canonical); a user's
//     own is a file of the same shape. Load reads one and validates it
//     strictly (load.go): an unknown key, kind or field, a bad pattern or
//     date format, a link to a kind that cannot be a parent… each is an
//     *Error naming the file, the line and the key, all of them at once;
//   - which kinds a file holds (FileKinds, by its name: one file may feed
//     several, a task each; a pattern's where says which rows each takes,
//     where.go), and what the tasks of a kind read beside their files
//     (sidefiles.go: FindSideFiles
//     as a run is planned, ReadSideFiles as a task opens — joined files,
//     parents looked up by name, folders of body files);
//   - the Mapper (record.go), from a row onto its kind's canonical fields,
//     what the profile says resolved once per file and per header, not per
//     row: columns found by name, case- and space-insensitively
//     (columns.go), values a profile rewrites (values.go: spellings of
//     empty, value maps, ids, flags, date formats — a field's own before
//     the profile's — the days of date_only columns; DateProblem says
//     whether a value is a date the profile reads), links beyond the plain link fields (links.go: lists, ids
//     by prefix, names, joined rows); and
//     the record's validation, by canon (Record.Validate);
//   - what a mapper does, told before any row is imported (describe.go:
//     Columns, Links, SideFilesRead), from the layout it maps rows with.
//
// The rules it keeps: nothing in the export is dropped silently (SPEC §4)
// — a column no field takes is kept in Extra (unless another kind of the
// file that takes the row maps it), and extra columns that cannot be kept
// fail their record; a row no kind of its file takes is said so (Untaken),
// and a flag a where cannot read fails its row once; a NUL byte in a
// column the profile reads fails its row (R4), one in a column kept in
// Extra is kept, and said (Record.NULKept); a name that names several parents is
// no link, never a guess (R6: the link's note says so); ids are compared
// exactly. Column names from a profile are only compared with headers;
// they never reach SQL text. It imports canon, ledger (for its kinds),
// input and reader.
package profile

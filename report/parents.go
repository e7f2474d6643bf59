package report

import "crmimport/canon"

// What a skip waits for (R3, R6): the parents its detail names that have
// arrived since, read by the Skipped page (PageSkips) and by doctor's
// skips ready to be taken over (package forensics).

// linkKind is the kind a link field of a detail (j.key) points to, from
// the table of kinds (canon).
var linkKind = canon.KindTable().LinkKindCase("j.key")

// ParentsFoundSQL: the kinds (comma-separated, or NULL) of the parents
// named in a skipped slot r's detail that now have a final slot of the
// same tenant and source. json_each and group_concat are SQLite's spelling
// (store.Dialect); ParentsFoundPG is PostgreSQL's.
var ParentsFoundSQL = `(SELECT group_concat(DISTINCT p.kind) FROM json_each(r.detail) j
     CROSS JOIN migration_records p ON p.tenant_id = r.tenant_id AND p.source = r.source AND p.source_id = j.value
      AND p.kind = ` + linkKind + `
      AND p.action IN ('created', 'matched'))`

// ParentsFoundPG is ParentsFoundSQL on PostgreSQL, for a detail that
// FlatDetailPG admits: the parent's slot by the ledger's key for each
// link of the detail.
var ParentsFoundPG = `(SELECT string_agg(DISTINCT p.kind, ',') FROM json_each_text(r.detail::json) j
     JOIN migration_records p ON p.tenant_id = r.tenant_id AND p.source = r.source AND p.source_id = j.value
      AND p.kind = ` + linkKind + `
      AND p.action IN ('created', 'matched'))`

// FlatDetailPG holds for a detail that is a JSON object of strings,
// numbers, booleans and nulls — every detail the importer writes (R6: the
// link values a skip could not resolve) — and for no text that PostgreSQL
// would refuse to read as JSON: PostgreSQL 15 has no json_valid, and one
// refused cast fails the whole query. A detail that SQLite's json_valid
// admits and this does not (a nested value, an escaped surrogate pair) is
// read as naming no parent there.
const FlatDetailPG = `r.detail ~ '^[ \t\n\r]*\{[ \t\n\r]*(` + jsonMemberRE + `(,[ \t\n\r]*` + jsonMemberRE + `)*)?\}[ \t\n\r]*$'`

// jsonMemberRE is a member of a flat JSON object with the white space
// after it: a string, a colon, a scalar (in PostgreSQL's regular
// expressions). A string holds no control character, no escape that JSON
// does not know, and no \u0000 or lone surrogate, which PostgreSQL
// refuses to turn into text.
const (
	jsonStringRE = `"([^"\\\x01-\x1f]|\\["\\/bfnrt]|\\u(?!0000|[dD][89a-fA-F])[0-9a-fA-F]{4})*"`
	jsonNumberRE = `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
	jsonMemberRE = jsonStringRE + `[ \t\n\r]*:[ \t\n\r]*(` + jsonStringRE + `|` + jsonNumberRE + `|true|false|null)[ \t\n\r]*`
)

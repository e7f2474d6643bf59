// Package canon is the canonical model (SPEC §4): the table of kinds, the
// kinds' canonical fields in order, which of them are links and to which
// parent kind (R6), which hold values (ids, links, dates, numbers, flags,
// addresses) rather than free text, the natural keys that match (R5), and
// the validation of a record's values ("Fails" in SPEC §4) with their
// normalisation (SPEC §11: a date as a date — close_date a day — and a
// domain as a host, the one R5 matches on). Every other package asks canon;
// none lists fields or kinds of its own. It imports ledger (for the Kind
// type) and no other package of the project.
//
// The table of kinds (kinds.go, KindTable) is the one list of kinds, as
// river's rivertype.JobStates() is of job states: a row per kind with its
// phase in the default plan, its fields, its parents by link field,
// whether it needs a parent, the label column of a placeholder row and its
// natural key. Everything else derives from it: the plan order (Kinds) and
// ParseKind, the phases of an import (phases.Phase) and of an undo, and an
// undo's children-first order (undo, cmd/crmimport's undo), the parents a
// target row links to (target), the SQL CASEs that order by kind or give a
// kind's phase (PhaseCase, OrderCase: forensics) or the kind a link field
// points to (LinkKindCase: report's skips, which doctor shares), the run
// page's undo dialog (desktop hands ChildrenFirst to app.js as
// data-kinds). A kind
// that has no row is a bug, never placed by a default: the table's
// functions panic naming it. canontest adds a kind to a copy of the table
// in a test alone.
//
// Adding a kind is its row here and the places that truly differ — 9
// files in 5 packages for a kind without a natural key:
//   - canon/kinds.go: its row;
//   - store/schema/sqlite and store/schema/postgres: a new schema version
//     each (2 files): its target table, the kind CHECKs of migration_tasks
//     and migration_records, its id allocator;
//   - target/rows.go: its target columns and the arguments of its row;
//   - importer/profile/profiles: its files and columns in each built-in
//     profile (canonical, salesforce, hubspot, pipedrive: 4 files);
//   - importer/suggest/words.go: the words that recognise its files and
//     columns in an export.
//
// And where it has them: a rule of its own in validate.go (a field it
// cannot do without); a named constant in ledger/kind.go, if code names
// it; a plural that English's rule does not give (ledger.Kind.Plural); a
// natural key that matches (R5), whose index and lookup importer holds
// per kind (decide.go, index.go) with the key's column in the schema.
// The demo export (fixtures/demo), the generator (fixtures/gen, which
// imports no package of the project and so names the kinds itself) and
// the bench's floors (which copy the schema) get it to be tested and
// measured.
package canon

// Package ledger owns the slot table, migration_records, and the rules that
// make an import safe to repeat (SPEC §2):
//
//   - R1 One claim per write, same transaction: Ledger.Record claims the
//     slots of a chunk of records and writes the rows of the claims that won
//     inside one savepoint: a refused claim writes nothing, and a failed
//     write takes the whole chunk back (the caller redoes it record by
//     record).
//   - R2 Final slots are exclusive: a created or matched slot refuses every
//     later claim (Claim returns won=false, an expected outcome, not an error).
//   - R3 A skip is a placeholder, not a verdict: the claim statement takes a
//     skipped slot over, whatever comes next, refreshing reason, owner and time.
//   - R4 Failures claim nothing (callers write record_failures instead).
//   - R5 Matched means found, not made: a matched slot names the row that
//     was found (the natural keys are canon's, the rows target's).
//   - R6 Links resolve through the ledger: LoadFinal reads final slots only,
//     which the importer keeps in memory for links and for "already there".
//
// All the SQL of these rules lives in this package and nowhere else. It
// imports store (the ground floor: slot ids come from the slot table's
// allocator, never max(id) + 1) and no other package of the project.
package ledger

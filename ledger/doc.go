// Package ledger owns the slot table, migration_records, and the rules that
// make an import safe to repeat (SPEC §2):
//
//   - R1 One claim per write, same transaction: Ledger.Record writes a target
//     row and claims its slot inside one savepoint; a refused claim or a
//     failed write undoes exactly that record.
//   - R2 Final slots are exclusive: a created or matched slot refuses every
//     later claim (Claim returns won=false, an expected outcome, not an error).
//   - R3 A skip is a placeholder, not a verdict: the claim statement takes a
//     skipped slot over, whatever comes next, refreshing reason, owner and time.
//   - R4 Failures claim nothing (callers write record_failures instead).
//   - R5 Matched means found, not made: MatchContact and MatchCompany look a
//     record up by its natural key among the tenant's rows.
//   - R6 Links resolve through the ledger: Final finds a parent only among
//     final slots.
//
// All the SQL of these rules lives in this package and nowhere else. It
// imports no other package of the project.
package ledger

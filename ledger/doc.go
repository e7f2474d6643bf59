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
//   - R4 Failures claim nothing: a failed record's row goes to
//     record_failures (Ledger.RecordFailures), in the batch's transaction.
//   - R5 Matched means found, not made: a matched slot names the row that
//     was found (the natural keys are canon's, the rows target's).
//   - R6 Links resolve through the ledger: LoadFinal reads final slots only,
//     which the importer keeps in memory for links and for "already there".
//   - R6a A link left empty is completed when its parent arrives: a created
//     row's link values that did not resolve are remembered in pending_links
//     (Ledger.RememberLinks, inside Record's write: R1), by the child's slot,
//     row and field, with the parent's key and the value kept in extra;
//     ReadyLinks finds those whose parent is final now, MarkCompleted and
//     MarkPending move them (compare-and-sets, R11), CompletedLinks lists a
//     run's for its undo, ForgetLinks drops a child's (links.go; undo drops
//     a batch's at once, saying so).
//
// It also owns the skip reasons a slot holds (ReasonNotLinked, …, and R6b's
// LinkedOnlyTo, told by WaitsForNothing), which the report, the Skipped
// page and doctor read back.
//
// The statements of these rules live in this package and nowhere else,
// with two exceptions that the schema holds, in both engines' trees
// (store/schema): a trigger (slot_taken_over) writes a skip's before-image
// to slot_before when another run takes the slot over, for undo (R16), and
// triggers on final slots move the same-input epoch (ledger_epochs, R2's
// shortcut). Other packages read the slot table (report, forensics, undo)
// and undo and forensics' load write it directly, each saying so. It
// imports store (the ground floor: slot ids come from the slot table's
// allocator, never max(id) + 1) and no other package of the project.
package ledger

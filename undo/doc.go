// Package undo takes back exactly what one run wrote (R16, SPEC §10).
//
// An undo is a run of its own: Start plans it — every slot it will take
// back, per kind, written with the run's row and tasks in one transaction
// (R10) as undo_items — and the engine works on it like on an import
// (admission R13, stop R14, resume R8, R11's row counts), its tasks children
// first (activities and emails, notes, deals, contacts, companies) so that
// every foreign key holds at every commit. Open is its OpenFunc: each batch
// takes the next items after the task's checkpoint and, in the batch's
// transaction (R12), deletes the target rows of created slots, deletes or
// gives back the slots (a matched slot is released; a slot that the run took
// over gets its before-image back, unless that image's owner was itself
// undone; a fresh slot is deleted), and the engine commits the counts and the
// checkpoint with them. Each statement names what the plan expects to find,
// and a slot that is not so fails the task rather than be touched.
//
// Links the run completed when their parents arrived (R6a) are emptied
// again by the undo's first batch, whatever its kind, and kept remembered,
// counted unlinked on the child's kind; they are in the plan's digest, and a
// child whose link the run completed is not its dependent. A batch that
// takes a created slot back forgets the links remembered with it
// (relinks.go).
//
// Rows the run updated (R17) get their before-image back — values, and
// the slot's digest and hashes — in the first batch of their kind's task,
// counted reverted, when they are still as the run left it; a row changed
// since is left with its before-image, named among the undo's failed
// records, and the undo ends partial. A later run's update of a row the
// run created or updated is a dependent; under cascade it is given back
// first (updates.go). A row the run updated is not a dependent by the
// links the update wrote.
//
// Build is the plan without writing anything: what --dry-run prints, and what
// refuses an undo — a run that is itself an undo, already undone, being
// undone, or has nothing to take back (RefusedError), a live run (the
// engine's AdmissionError, exit 6), and dependents: rows of other runs that
// link to a row the run created, and other runs' matched slots that point at
// one, transitively (DependentsError). With cascade those are taken back too,
// record by record, and listed; the runs they belong to are marked with
// what was taken back of them (TakenBack).
//
// A plan is never held whole: it is walked — a bit per row id for the rows
// that go, then the tenant's slots a page at a time in the order of their
// key — and summed up (counts per kind and per run, dependents) and
// digested: a SHA-256 over every item. Start walks it again inside the
// transaction that writes its items, and commits it only if the digest is
// the one its preview showed (Options.Plan, PlanChangedError, exit 8): a
// preview and its commit are the same plan.
//
// A run loaded from a dump has no before-images: its created slots go with
// the placeholder rows that back only them (a placeholder that another slot
// names stays, as does a row that is not a placeholder), its matched slots
// are released and its skips deleted; the plan says so.
//
// This package reads and writes the ledger's tables directly and deletes
// target rows through target.DeleteListed; it imports nothing of the importer.
package undo

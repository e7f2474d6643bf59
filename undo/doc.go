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
// Build is the plan without writing anything: what --dry-run prints, and what
// refuses an undo — a run that is itself an undo, already undone, being
// undone, or has nothing to take back (RefusedError), a live run (the
// engine's AdmissionError, exit 6), and dependents: rows of other runs that
// link to a row the run created, and other runs' matched slots that point at
// one, transitively (DependentsError). With cascade those are taken back too,
// record by record, and listed.
//
// A run loaded from a dump has no before-images: its created slots go with
// the placeholder rows that back only them (a placeholder that another slot
// names stays, as does a row that is not a placeholder), its matched slots
// are released and its skips deleted; the plan says so.
//
// This package reads and writes the ledger's tables directly and deletes
// target rows through target.DeleteListed; it imports nothing of the importer.
package undo

// Package report tells what a run did: its status, phases and tasks, per
// kind the four outcomes in their order (imported, unchanged, skipped,
// failed: good, nothing to do, needs a fresh run, broken), the top skip and
// failure reasons, the warnings of R9 (a kind whose every record took the
// same skip), and what to do next, in words a consultant understands.
// It renders the run summary, `runs` and `report RUN`, as text or JSON.
//
// It also reads a run's records as they failed or were skipped:
//
//   - Rejects (Rejects; `rejects RUN`): a run's failed records (R4) as CSV,
//     safe to open in a spreadsheet, streamed (EachFailure; FailureSources
//     and EachFailureOf for a fix folder, package fixfile).
//   - The desktop's pages of a run's records (PageFailures, PageSkips;
//     FailuresByID for a fix of rows): a page read by keyset, never by
//     offset, filtered by kind, reason class (record_failures.reason_class,
//     store.ReasonClass) and source id and searched in the reason in the
//     database, with counts per kind and class and of the skips ready to be
//     taken over (ParentsFoundSQL, which doctor shares) from GROUP BY over
//     every record of the run — so that memory holds a page however many
//     there are (issue 23 item 15).
//
// What to do next is sometimes a command to paste: ShellCommand quotes
// every word of it for a POSIX shell (doctor's repairs and a fix folder's
// run use it too).
//
// It reads the run's options only for what planning kept there (its
// warnings, its profile, its plan: package runopts) and what undos under
// --cascade took back of it (undo.TakenBack).
package report

// Package report tells what a run did: its status, phases and tasks, per
// kind the four outcomes in their order (imported, unchanged, skipped,
// failed: good, nothing to do, needs a fresh run, broken), the top skip and
// failure reasons, the warnings of R9 (a kind whose every record took the
// same skip), and what to do next, in words a consultant understands.
// It renders the run summary, `runs` and `report RUN`, as text or JSON.
package report

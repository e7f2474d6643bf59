// Package runs starts, dry-runs, resumes, stops and undoes runs for both
// faces, builds their summaries and classifies their errors into SPEC §5's
// exit codes.
//
// The command line (cmd/crmimport) and the desktop (desktop) are two faces
// over this one package (STYLE 18, SPEC §9: each page is backed by the same
// library functions as its command, so that the two never disagree): they
// parse a request, call one function here and print or answer what it
// returns. What a run is — its request checked (Check), planned (Start, R10,
// with the plan digest a dry run showed: exit 8 when it changed), tried on
// a throwaway copy of the database (DryRun), worked on (Execute: an import
// by importer, an undo by undo, R16), re-armed (Resume, R8), stopped (Stop,
// R14) or taken back (Undo, UndoPreview) — and what it says afterwards
// (Report, Outcome: the summary, with the --strict advice from the run's own
// options, and the `next` lines), lives here once. ExitCode is the one
// classification of an error into an exit code, which the desktop answers
// beside its HTTP status.
package runs

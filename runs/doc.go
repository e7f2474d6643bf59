// Package runs starts, dry-runs, resumes, stops and undoes runs for both
// faces, builds their summaries and classifies their errors into SPEC §5's
// exit codes.
//
// The command line (cmd/crmimport) and the desktop (desktop) are two faces
// over this one package (STYLE 18; SPEC §9: each page is backed by the same
// library functions as its command, so that the two never disagree): they
// parse a request, call a function here and print or answer what it
// returns, and they reach importer, undo and phases only through it. What
// a run is lives here once:
//
//   - a request checked, as either face spells its fields (Check, ParseOnly);
//   - a run planned and committed before its first record (Start, R10), only
//     as the plan a dry run showed when it names one (exit 8); tried on a
//     throwaway copy of the database (DryRun); worked on (Execute, which
//     gives an import to importer and an undo to undo, R16); to its end
//     (Import, Resume, Undo: the command line's way, with a Watch for its
//     progress and notes);
//   - re-armed (StartResume, R8), stopped (Stop, R14), and an undo previewed,
//     judged and committed (PreviewUndo, CanUndo, StartUndo);
//   - what it says afterwards: its report with the --strict advice from the
//     run's own options (Report, List, PageOf), its summary, `next` lines and
//     exit code (Outcome);
//   - the one classification of an error into an exit code (ExitCode), its
//     JSON document (ErrorOf), and the kind of refusal the desktop answers an
//     HTTP status for (RefusalOf);
//   - the fix folder's re-import (FixSpec, FixFolderOf), the preview of a run
//     (Inspect), and the run and task data the faces show (model.go).
package runs

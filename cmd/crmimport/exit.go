package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/urfave/cli/v2"

	"crmimport/importer"
	"crmimport/phases"
	"crmimport/undo"
)

// Exit codes (SPEC §5).
const (
	exitOK        = 0
	exitError     = 1
	exitUsage     = 2
	exitPartial   = 3
	exitFailed    = 4
	exitCancelled = 5
	exitRefused   = 6
	exitStrict    = 7
	// exitPlanChanged: a confirmed plan (undo --plan, run --plan) is not
	// the plan any more — another run changed it since its preview, or
	// its input changed; nothing was written. Not 1, an error to read
	// about, nor 6, a live run to wait for: a script looks again and
	// confirms what it sees (R16, SPEC §11).
	exitPlanChanged = 8

	// exitFindings: doctor found something (SPEC §5: 0 clean, 3 not).
	exitFindings = 3
)

// usageError is a command line that cannot be right as written.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{msg: fmt.Sprintf(format, args...)} }

// runArg reads a command's one argument, a run id; usage says what the
// command takes when it is not given exactly one.
func runArg(c *cli.Context, usage string) (int64, error) {
	if c.NArg() != 1 {
		return 0, usagef("%s", usage)
	}
	id, err := strconv.ParseInt(c.Args().First(), 10, 64)
	if err != nil || id < 1 {
		return 0, usagef("%s: %q is not a run id (see `crmimport runs`)", c.Command.Name, c.Args().First())
	}
	return id, nil
}

// stoppedError is a stop (Ctrl-C, SIGTERM) that came before a run was
// planned or taken over: nothing was written (exit 5).
type stoppedError struct{ what string }

func (e *stoppedError) Error() string { return "stopped while " + e.what + ": nothing was written" }

// statusExit ends a command whose output is already written with the exit
// code its outcome calls for (a partial run: 3).
type statusExit struct{ code int }

func (e *statusExit) Error() string { return fmt.Sprintf("exit %d", e.code) }

// exitCode decides every exit code, in one place.
func exitCode(err error) int {
	var (
		st  *statusExit
		use *usageError
		iu  *importer.UsageError
		adm *phases.AdmissionError
		stp *stoppedError
		chg *undo.PlanChangedError
		rch *importer.PlanChangedError
	)
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &st):
		return st.code
	case errors.As(err, &use), errors.As(err, &iu):
		return exitUsage
	case errors.As(err, &adm):
		return exitRefused
	case errors.As(err, &stp):
		return exitCancelled
	case errors.As(err, &chg), errors.As(err, &rch):
		return exitPlanChanged
	default:
		return exitError
	}
}

// statusCode is the exit code of a run that ended with status s.
func statusCode(s phases.RunStatus, interrupted, strictSkips bool) int {
	switch {
	case interrupted:
		return exitError
	case s == phases.RunPartial:
		return exitPartial
	case s == phases.RunFailed:
		return exitFailed
	case s == phases.RunCancelled:
		return exitCancelled
	case s == phases.RunSucceeded && strictSkips:
		return exitStrict
	case s == phases.RunSucceeded:
		return exitOK
	}
	return exitError
}

// errorJSON is the one JSON document of a command that failed (--json).
func errorJSON(err error) []byte {
	doc := map[string]any{"error": err.Error(), "exit_code": exitCode(err)}
	var adm *phases.AdmissionError
	if errors.As(err, &adm) {
		doc["live_run"] = adm.LiveRun
		doc["interrupted"] = adm.Interrupted
	}
	if deps, ok := dependentsJSON(err); ok {
		doc["dependents"] = deps
	}
	b, _ := json.Marshal(doc)
	return b
}

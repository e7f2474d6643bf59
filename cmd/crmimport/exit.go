package main

import (
	"encoding/json"
	"strconv"

	"github.com/urfave/cli/v2"

	"crmimport/runs"
)

// Exit codes (SPEC §5): runs decides them for both faces.
const (
	exitOK          = runs.ExitOK
	exitError       = runs.ExitError
	exitUsage       = runs.ExitUsage
	exitPartial     = runs.ExitPartial
	exitFailed      = runs.ExitFailed
	exitCancelled   = runs.ExitCancelled
	exitRefused     = runs.ExitRefused
	exitStrict      = runs.ExitStrict
	exitPlanChanged = runs.ExitPlanChanged

	// exitFindings: doctor found something (SPEC §5: 0 clean, 3 not).
	exitFindings = 3
)

// usagef is a command line that cannot be right as written (exit 2).
func usagef(format string, args ...any) error { return runs.Usagef(format, args...) }

// exitWith ends a command whose output is already written with code.
func exitWith(code int) error { return &runs.StatusExit{Code: code} }

// stopped is a stop (Ctrl-C, SIGTERM) that came before anything was
// written (exit 5).
func stopped(what string) error { return &runs.StoppedError{What: what} }

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

// exitCode decides every exit code, in one place: runs.ExitCode.
func exitCode(err error) int { return runs.ExitCode(err) }

// statusCode is the exit code of a run that ended with status s.
var statusCode = runs.StatusCode

// errorJSON is the one JSON document of a command that failed (--json).
func errorJSON(err error) []byte {
	b, _ := json.Marshal(runs.ErrorOf(err))
	return b
}

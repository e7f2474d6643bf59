package runs

import (
	"errors"
	"fmt"

	"crmimport/importer"
	"crmimport/importer/input"
	"crmimport/phases"
	"crmimport/undo"
)

// Exit codes (SPEC §5), the command line's and, beside its HTTP status,
// every error the desktop answers.
const (
	ExitOK        = 0
	ExitError     = 1
	ExitUsage     = 2
	ExitPartial   = 3
	ExitFailed    = 4
	ExitCancelled = 5
	ExitRefused   = 6
	ExitStrict    = 7
	// ExitPlanChanged: a confirmed plan (undo --plan, run --plan) is not
	// the plan any more — another run changed it since its preview, or
	// its input changed; nothing was written. Not 1, an error to read
	// about, nor 6, a live run to wait for: a script looks again and
	// confirms what it sees (R16, SPEC §11).
	ExitPlanChanged = 8
)

// UsageError is a request that cannot be right as written (exit 2): a
// command line, or a request to the desktop's API. It is importer's, which
// refuses a batch size out of bounds with it: one type on every face.
type UsageError = importer.UsageError

// Usagef is a usage error (exit 2).
func Usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// StoppedError is a stop (Ctrl-C, SIGTERM) that came before a run was
// planned or taken over: nothing was written (exit 5).
type StoppedError struct{ What string }

func (e *StoppedError) Error() string { return "stopped while " + e.What + ": nothing was written" }

// StatusExit ends a request whose answer is already given with the exit
// code its outcome calls for (a partial run: 3).
type StatusExit struct{ Code int }

func (e *StatusExit) Error() string { return fmt.Sprintf("exit %d", e.Code) }

// ExitCode decides every exit code, in one place.
func ExitCode(err error) int {
	var (
		st  *StatusExit
		use *UsageError
		adm *phases.AdmissionError
		stp *StoppedError
		chg *undo.PlanChangedError
		rch *importer.PlanChangedError
		lke *LookalikeError
	)
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &st):
		return st.Code
	case errors.As(err, &use), errors.As(err, &lke):
		return ExitUsage
	case errors.As(err, &adm):
		return ExitRefused
	case errors.As(err, &stp):
		return ExitCancelled
	case errors.As(err, &chg), errors.As(err, &rch):
		return ExitPlanChanged
	default:
		return ExitError
	}
}

// StatusCode is the exit code of a run that ended with status s; strict:
// --strict found what it refuses (skips, changes at the source: R17).
func StatusCode(s phases.RunStatus, interrupted, strict bool) int {
	switch {
	case interrupted:
		return ExitError
	case s == phases.RunPartial:
		return ExitPartial
	case s == phases.RunFailed:
		return ExitFailed
	case s == phases.RunCancelled:
		return ExitCancelled
	case s == phases.RunSucceeded && strict:
		return ExitStrict
	case s == phases.RunSucceeded:
		return ExitOK
	}
	return ExitError
}

// ErrorDoc is the one JSON document of a request that failed (SPEC §5:
// `{"error": "…", "live_run": 5}`): its message and exit code, the live run
// that refused it (R13) and whether that run's process is gone, and the
// dependents that refuse an undo alone (R16).
type ErrorDoc struct {
	Error       string           `json:"error"`
	ExitCode    int              `json:"exit_code"`
	LiveRun     int64            `json:"live_run,omitempty"`
	Interrupted *bool            `json:"interrupted,omitempty"`
	Dependents  []undo.Dependent `json:"dependents,omitempty"`
	// ExistingTenant is the tenant a new tenant's name folds to, which
	// the request must confirm it does not mean (*LookalikeError).
	ExistingTenant string `json:"existing_tenant,omitempty"`
}

// ErrorOf is err's document.
func ErrorOf(err error) ErrorDoc {
	doc := ErrorDoc{Error: err.Error(), ExitCode: ExitCode(err)}
	var (
		adm *phases.AdmissionError
		dep *undo.DependentsError
	)
	if errors.As(err, &adm) {
		doc.LiveRun, doc.Interrupted = adm.LiveRun, &adm.Interrupted
	}
	if errors.As(err, &dep) {
		doc.Dependents = dep.Dependents
	}
	var lke *LookalikeError
	if errors.As(err, &lke) {
		doc.ExistingTenant = lke.Existing
	}
	return doc
}

// Refusal is what kind of refusal an error is, for a face that answers with
// more than its exit code (the desktop's HTTP status).
type Refusal int

const (
	// Failed is an error to read about (exit 1).
	Failed Refusal = iota
	// Usage is a request that cannot be right as written (exit 2).
	Usage
	// Live is a run of the tenant at work, or waiting for resume (R13, exit 6).
	Live
	// PlanChanged is a confirmed plan that is not the plan any more (exit 8).
	PlanChanged
	// NoRun is a run id the database does not hold.
	NoRun
	// NotNow is what the state of a run refuses: a resume of a succeeded
	// run, an undo of an undone one, an undo with dependents (exit 1).
	NotNow
	// Unplannable is an export that cannot be planned (exit 1, no run).
	Unplannable
)

// RefusalOf classifies err.
func RefusalOf(err error) Refusal {
	var (
		state *phases.StateError
		in    *input.Error
		dep   *undo.DependentsError
		ref   *undo.RefusedError
	)
	switch code := ExitCode(err); {
	case code == ExitUsage:
		return Usage
	case code == ExitRefused:
		return Live
	case code == ExitPlanChanged:
		return PlanChanged
	case errors.As(err, &in):
		return Unplannable
	case errors.Is(err, phases.ErrNoRun):
		return NoRun
	case errors.As(err, &state), errors.As(err, &ref), errors.As(err, &dep):
		return NotNow
	}
	return Failed
}

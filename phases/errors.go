package phases

import "fmt"

// AdmissionError refuses a run or a resume because the tenant already has a
// run that is live or interrupted (R13). A refused attempt leaves no row.
type AdmissionError struct {
	Tenant      string
	LiveRun     int64
	Owner       Owner
	Interrupted bool // the live run's process is gone: it waits for resume
	TakenOver   bool // a resume of this very run lost the race to another
}

func (e *AdmissionError) Error() string {
	switch {
	case e.TakenOver:
		return fmt.Sprintf("run %d was taken over by another process (%s) a moment ago; only one resume can proceed",
			e.LiveRun, e.Owner)
	case e.Interrupted:
		return fmt.Sprintf("tenant %s has an interrupted run: run %d stopped without finishing (its process, %s, is gone); "+
			"continue it with `crmimport resume %d`, or cancel it with `crmimport stop %d`",
			e.Tenant, e.LiveRun, e.Owner, e.LiveRun, e.LiveRun)
	default:
		return fmt.Sprintf("tenant %s already has a live run: run %d (%s); wait for it, or stop it with `crmimport stop %d`",
			e.Tenant, e.LiveRun, e.Owner, e.LiveRun)
	}
}

// StateError refuses an operation that the run's status does not allow
// (resume of a succeeded run, stop of a finished one).
type StateError struct {
	Run    int64
	Status RunStatus
	Op     string
}

func (e *StateError) Error() string {
	switch {
	case e.Op == "resume" && e.Status == RunSucceeded:
		return fmt.Sprintf("run %d succeeded: there is nothing to resume (to import again, start a new run: the ledger keeps it safe)", e.Run)
	case e.Op == "stop":
		return fmt.Sprintf("run %d is not running (it ended %s): there is nothing to stop", e.Run, e.Status)
	}
	return fmt.Sprintf("run %d is %s: cannot %s it", e.Run, e.Status, e.Op)
}

// ChangedInputError refuses a resume whose input no longer matches the
// fingerprint taken when the run was planned (R10).
type ChangedInputError struct {
	Run    int64
	File   string
	Reason string
}

func (e *ChangedInputError) Error() string {
	return fmt.Sprintf("run %d cannot resume: %s %s since the run was planned; continuing at a checkpoint into a changed file "+
		"would skip or repeat records — start a new run instead (the ledger makes that safe)", e.Run, e.File, e.Reason)
}

// Package failpoint injects faults at named points so that tests (the
// project's own and anyone else's) can drive the run lifecycle from outside
// (SPEC §8). Points are read from CRMIMPORT_FAILPOINTS, a comma-separated
// list of POINT=ACTION:
//
//	batch:KIND:N   the Nth batch of KIND in this process, after its records
//	               are processed and before it commits
//	commit:KIND:N  the commit of that batch: "error" makes the commit fail
//	               as a full disk would (the batch rolls back)
//	plan           after the run and its plan are committed, before any record
//	phase:N        when the barrier is about to move into phase N
//	finalize       just before the terminal status is written
//	resume         after resume has re-armed the run, before any record
//
// ACTION is "error" (an injected error where the point is), "exit" (the
// process kills itself with SIGKILL, as a crash would), "full" (at a
// commit point: the database refuses to grow, so the batch's last write
// fails with SQLite's own "database or disk is full") or "sleep:DURATION"
// (for example sleep:200ms, to widen a window for a test). At a batch point
// "sleep" waits before the batch's transaction begins, so that other
// processes (stop, runs, a second run) can act while the run waits between
// batches; "error" and "exit" act in the middle of the batch. Batches are
// counted per kind within one process, from 1, so a point left set fires
// again in a resume. An unknown point or action is a usage error. A nil *Set
// is valid and does nothing, so unset failpoints cost one nil check.
package failpoint

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"crmimport/ledger"
)

// Env is the environment variable the command line reads.
const Env = "CRMIMPORT_FAILPOINTS"

// Set is a parsed list of failpoints.
type Set struct {
	points map[string]action
}

type action struct {
	verb  string // error, exit, sleep
	sleep time.Duration
}

// Error is the error an "error" failpoint injects.
type Error struct{ Point string }

func (e *Error) Error() string { return fmt.Sprintf("injected failure at failpoint %s", e.Point) }

// Parse reads a failpoint list. A point's kind is read by kind
// (canon.ParseKind, given by the caller, so that the kinds are canon's
// table's and failpoint stands below it): singular or plural, stored
// singular; an unknown kind is an error. The empty string gives a nil Set.
func Parse(spec string, kind func(string) (ledger.Kind, error)) (*Set, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, nil
	}
	s := &Set{points: map[string]action{}}
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		point, act, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("%s: %q is not POINT=ACTION", Env, item)
		}
		name, err := normalisePoint(strings.TrimSpace(point), kind)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", Env, err)
		}
		a, err := parseAction(strings.TrimSpace(act))
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", Env, name, err)
		}
		s.points[name] = a
	}
	return s, nil
}

func normalisePoint(p string, parseKind func(string) (ledger.Kind, error)) (string, error) {
	parts := strings.Split(p, ":")
	switch {
	case len(parts) == 1 && (p == "plan" || p == "finalize" || p == "resume"):
		return p, nil
	case len(parts) == 2 && parts[0] == "phase":
		if n, err := strconv.Atoi(parts[1]); err != nil || n < 1 {
			return "", fmt.Errorf("point %q: phase must be a number from 1", p)
		}
		return p, nil
	case len(parts) == 3 && (parts[0] == "batch" || parts[0] == "commit"):
		kind, err := parseKind(parts[1])
		if err != nil {
			return "", fmt.Errorf("point %q: %w", p, err)
		}
		if n, err := strconv.Atoi(parts[2]); err != nil || n < 1 {
			return "", fmt.Errorf("point %q: the batch number must be a number from 1", p)
		}
		return parts[0] + ":" + string(kind) + ":" + parts[2], nil
	}
	return "", fmt.Errorf("unknown point %q (known: batch:KIND:N, commit:KIND:N, plan, phase:N, finalize, resume)", p)
}

func parseAction(a string) (action, error) {
	switch {
	case a == "error" || a == "exit" || a == "full":
		return action{verb: a}, nil
	case strings.HasPrefix(a, "sleep:"):
		d, err := time.ParseDuration(strings.TrimPrefix(a, "sleep:"))
		if err != nil || d < 0 {
			return action{}, fmt.Errorf("bad sleep duration in %q", a)
		}
		return action{verb: "sleep", sleep: d}, nil
	}
	return action{}, fmt.Errorf("unknown action %q (known: error, exit, full, sleep:DURATION)", a)
}

// Hit runs the failpoint called name if it is set: it returns an *Error,
// kills the process, or sleeps and returns nil.
func (s *Set) Hit(name string) error {
	if s == nil {
		return nil
	}
	a, ok := s.points[name]
	if !ok {
		return nil
	}
	switch a.verb {
	case "error":
		return &Error{Point: name}
	case "exit":
		// As SIGKILL would: no deferred function, no flush, no rollback.
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal is on its way
	case "sleep":
		time.Sleep(a.sleep)
	}
	return nil
}

// Full reports whether the point's action is "full".
func (s *Set) Full(name string) bool {
	if s == nil {
		return false
	}
	a, ok := s.points[name]
	return ok && a.verb == "full"
}

// Pause runs only a "sleep" action of the point (batch points: before the
// transaction begins).
func (s *Set) Pause(name string) {
	if s == nil {
		return
	}
	if a, ok := s.points[name]; ok && a.verb == "sleep" {
		time.Sleep(a.sleep)
	}
}

// Fault runs only an "error" or "exit" action of the point.
func (s *Set) Fault(name string) error {
	if s == nil {
		return nil
	}
	if a, ok := s.points[name]; ok && (a.verb == "error" || a.verb == "exit") {
		return s.Hit(name)
	}
	return nil
}

// Batch names the failpoint of the nth batch of kind.
func Batch(kind ledger.Kind, n int) string { return fmt.Sprintf("batch:%s:%d", kind, n) }

// Commit names the failpoint of the commit of the nth batch of kind.
func Commit(kind ledger.Kind, n int) string { return fmt.Sprintf("commit:%s:%d", kind, n) }

// Phase names the failpoint of the barrier's move into phase n.
func Phase(n int) string { return fmt.Sprintf("phase:%d", n) }

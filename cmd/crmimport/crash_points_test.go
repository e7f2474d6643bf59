package main

// Kill points: where the crash suite kills, and what a killed run must look
// like before it is resumed (R12, R13, R15).

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"crmimport/canon"
	"crmimport/fixtures/gen"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store"
)

// caseRand is the random stream of one case: it depends on the seed, the
// group and the case number only, so that -crash.only=N replays case N
// whatever the group's size.
func caseRand(group string, n int) *rand.Rand {
	var g uint64
	for _, c := range group {
		g = g*31 + uint64(c)
	}
	return rand.New(rand.NewPCG(*crashSeed, g<<32|uint64(n)))
}

// phaseOf is the default plan's phase of a kind.
func phaseOf(kind string) int { return canon.Phase(ledger.Kind(kind)) }

// killPoints lists every failpoint at which a first run can be killed:
// after planning, at each move of the barrier, inside finalize, and at every
// batch of every kind (before it commits).
func (ref *crashRef) killPoints() []string {
	pts := []string{"plan", "phase:2", "phase:3", "phase:4", "phase:5", "finalize"}
	return append(pts, ref.batchPoints()...)
}

// batchPoints lists batch:KIND:N for every batch of an uninterrupted run.
func (ref *crashRef) batchPoints() []string {
	var pts []string
	for _, k := range gen.Kinds() {
		for n := 1; n <= ref.batches[k]; n++ {
			pts = append(pts, fmt.Sprintf("batch:%s:%d", k, n))
		}
	}
	return pts
}

// parsePoint splits batch:KIND:N (ok false for another point).
func parsePoint(p string) (kind string, n int, ok bool) {
	parts := strings.Split(p, ":")
	if len(parts) != 3 {
		return "", 0, false
	}
	n, err := strconv.Atoi(parts[2])
	return parts[1], n, err == nil
}

// reachable lists the failpoints that a resume of the run will pass, from
// the state the database is in: the batches left in every task that is not
// done (counted from 1 in the resuming process), the barrier's moves after
// the earliest such phase, finalize and resume itself.
func reachable(c *crashCase, path string, runID int64, ref *crashRef) []string {
	rows := query(c.t, path, `SELECT kind, phase, status, checkpoint FROM migration_tasks
		WHERE migration_id = ? ORDER BY phase, id`, runID)
	var pts []string
	earliest := 6
	for _, row := range rows {
		f := strings.SplitN(row, "|", 4)
		if f[2] == string(phases.TaskSucceeded) {
			continue
		}
		var cp phases.Checkpoint
		if err := json.Unmarshal([]byte(f[3]), &cp); err != nil {
			c.fatalf("checkpoint %q: %v", f[3], err)
		}
		ph, _ := strconv.Atoi(f[1])
		earliest = min(earliest, ph)
		left := (ref.exp.Records[f[0]]-int(cp.Rows)) / *crashBatch + 1
		for n := 1; n <= left; n++ {
			pts = append(pts, fmt.Sprintf("batch:%s:%d", f[0], n))
		}
	}
	for q := earliest + 1; q <= 5; q++ {
		pts = append(pts, "phase:"+strconv.Itoa(q))
	}
	return append(pts, "finalize", "resume")
}

// errorPointBefore picks a batch at which an injected error leaves a
// partial run whose resume still passes point p.
func errorPointBefore(r *rand.Rand, ref *crashRef, p string) (string, bool) {
	var cands []string
	for _, b := range ref.batchPoints() {
		k, m, _ := parsePoint(b)
		ok := false
		switch pk, pn, isBatch := parsePoint(p); {
		case p == "finalize":
			ok = true
		case k == gen.KindUser:
			// A failed users task stops nothing (R7): the run goes on,
			// and its resume runs the users task alone.
			ok = isBatch && pk == k && pn <= ref.batches[k]-(m-1)
		case strings.HasPrefix(p, "phase:"):
			q, _ := strconv.Atoi(strings.TrimPrefix(p, "phase:"))
			ok = q > phaseOf(k)
		case isBatch:
			ok = phaseOf(pk) > phaseOf(k) || (pk == k && pn <= ref.batches[k]-(m-1))
		}
		if ok {
			cands = append(cands, b)
		}
	}
	if len(cands) == 0 {
		return "", false
	}
	return cands[r.IntN(len(cands))], true
}

// wallStep is a step killed at a random instant within the reference run's
// duration.
func wallStep(r *rand.Rand, cmd string, ref *crashRef) crashStep {
	frac := r.Float64()
	return crashStep{cmd: cmd, frac: frac, wall: max(time.Duration(frac*float64(ref.took)), time.Microsecond)}
}

// runState is where a case stands after a step.
type runState struct {
	id       int64  // 0: no run row
	status   string // the run's status
	finished bool   // terminal with every task done: nothing left to resume
}

// afterStep checks what a step left, by how it ended, and returns the run's
// state. A process killed (by its failpoint or by the test) must leave its
// run visibly interrupted — running, interrupted, no duration (R13, R15) —
// and a new run of the tenant refused, naming it (exit 6); or, when the kill
// came before the plan committed, nothing at all; or, when it came after
// the run was finalized, a finished run.
func afterStep(c *crashCase, path string, ref *crashRef, s crashStep, res stepResult) runState {
	t := c.t
	t.Helper()
	killed := res.signal == syscall.SIGKILL
	switch {
	case s.expect == "kill" && !killed:
		c.fatalf("%s: the failpoint did not fire: exit %d, stderr:\n%s", s, res.code, res.stderr)
	case res.signal != 0 && !killed:
		c.fatalf("%s: ended by %s, stderr:\n%s", s, res.signal, res.stderr)
	case s.wall > 0 && killed:
		stats.wall(res.killedAt)
	case s.wall > 0:
		stats.add(func(s *crashStats) { s.wallAfter++ })
	}
	runs := runsOf(t, path, crashTenant)
	checkCheckpoints(c, path)
	switch {
	case len(runs) == 0 && killed:
		// Killed before its run was planned: nothing may be left.
		if q := query(t, path, `SELECT count(*) FROM migration_records`); q[0] != "0" {
			c.fatalf("%s: killed before its run existed, yet %s slots were written", s, q[0])
		}
		return runState{}
	case len(runs) != 1:
		c.fatalf("%s (exit %d): want one run, got %d; stderr:\n%s", s, res.code, len(runs), res.stderr)
	}
	run := runs[0]
	st := runState{id: run.Run, status: run.Status}
	if run.Status == string(phases.RunRunning) {
		if !killed {
			c.fatalf("%s: exit %d left the run running; stderr:\n%s", s, res.code, res.stderr)
		}
		if !run.Interrupted || run.DurationMS != nil {
			c.fatalf("%s: a killed run must show as running, interrupted, without a duration (R13, R15): interrupted %v, duration_ms %v",
				s, run.Interrupted, run.DurationMS)
		}
		checkRefused(c, path, ref, run.Run, 1)
		return st
	}
	if run.DurationMS == nil || run.Interrupted {
		c.fatalf("%s: a %s run must have a duration and not be interrupted (R15)", s, run.Status)
	}
	// Finished: nothing left for a resume to do. A cancelled run is
	// never finished, even with every task done: resume finishes it.
	open := query(t, path, `SELECT count(*) FROM migration_tasks WHERE migration_id = ? AND status <> 'succeeded'`, run.Run)
	st.finished = open[0] == "0" && run.Status != string(phases.RunCancelled)
	if !killed {
		want := statusCode(phases.RunStatus(run.Status), false, false)
		if res.code != want {
			c.fatalf("%s: exit %d for a %s run (want %d); stderr:\n%s", s, res.code, run.Status, want, res.stderr)
		}
	}
	return st
}

// checkRefused: R13, a new run of the tenant whose run was killed exits 6,
// naming the interrupted run and the command that continues it, and leaves
// no row: the tenant keeps its runs runs.
func checkRefused(c *crashCase, path string, ref *crashRef, id int64, runs int) {
	t := c.t
	t.Helper()
	r := crm(t, nil, runArgs(path, crashTenant, ref)...)
	var doc struct {
		Error       string `json:"error"`
		LiveRun     int64  `json:"live_run"`
		Interrupted bool   `json:"interrupted"`
	}
	_ = json.Unmarshal([]byte(r.stdout), &doc)
	if r.code != exitRefused || doc.LiveRun != id || !doc.Interrupted || !strings.Contains(doc.Error, fmt.Sprintf("crmimport resume %d", id)) {
		c.fatalf("a new run beside interrupted run %d: want exit 6 naming it, got exit %d: %s", id, r.code, r.stdout)
	}
	if n := len(runsOf(t, path, crashTenant)); n != runs {
		c.fatalf("a refused run left a row: %d runs, want %d", n, runs)
	}
}

// finish brings the case to its end — resume the run (or run again when
// the kill came before any run existed), unless it already finished — and
// compares with the reference.
func finish(c *crashCase, path string, ref *crashRef, st runState) {
	c.t.Helper()
	if st.finished {
		checkEqualToReference(c, path, crashTenant, ref, nil)
		return
	}
	s := crashStep{cmd: "resume"}
	if st.id == 0 {
		s.cmd = "run"
	}
	res := runStep(c.t, path, s, ref, st.id)
	if res.code != ref.code {
		c.fatalf("the final %s: exit %d, want %d; stderr:\n%s", s.cmd, res.code, ref.code, res.stderr)
	}
	sum, err := decodeSummary(res.stdout)
	if err != nil {
		c.fatalf("the final %s: %v\n%s", s.cmd, err, res.stdout)
	}
	if st.id != 0 && sum.Run != st.id {
		c.fatalf("R10: resume finished run %d, not run %d", sum.Run, st.id)
	}
	checkEqualToReference(c, path, crashTenant, ref, &sum)
}

// crashKillsGroup: SIGKILL at kill points chosen by the seed among every
// failpoint of a run (two cases in three) and at wall-clock instants (one
// in three); then resume, compare. Some cases are killed again while
// resuming, some while resuming a partial run (R8, R12, R13).
func crashKillsGroup(t *testing.T, ref *crashRef) {
	points := ref.killPoints()
	perm := rand.New(rand.NewPCG(*crashSeed, 0x6b696c6c)).Perm(len(points))
	cases(t, *crashKills, func(t *testing.T, n int) {
		c := newCase(t, "Kills", n)
		r := caseRand("Kills", n)
		i := n - 1
		wall := i%3 == 2
		var point string
		if !wall {
			point = points[perm[(i/3*2+i%3)%len(points)]]
		}
		shape := r.IntN(10) // 0–5: kill, resume · 6–7: kill, kill the resume, resume · 8–9: partial, kill the resume, resume
		path := dbPath(t)
		var first crashStep
		var faultAt string
		switch {
		case shape >= 8 && wall:
			faultAt = ref.batchPoints()[r.IntN(len(ref.batchPoints()))]
		case shape >= 8:
			var ok bool
			if faultAt, ok = errorPointBefore(r, ref, point); !ok {
				shape = 0 // plan: there is no partial run whose resume passes it
			}
		}
		switch {
		case faultAt != "":
			first = crashStep{cmd: "run", fp: faultAt + "=error", expect: "fault"}
		case wall:
			first = wallStep(r, "run", ref)
		default:
			first = crashStep{cmd: "run", fp: point + "=exit", expect: "kill"}
		}
		desc := []string{first.String()}
		c.point = strings.Join(desc, " → ")

		res := runStep(t, path, first, ref)
		var st runState
		if faultAt != "" {
			st = checkFault(c, path, ref, first, res)
		} else {
			st = afterStep(c, path, ref, first, res)
		}
		if shape >= 6 && st.id != 0 && !st.finished {
			// Kill the resume too: at a failpoint it will pass (or, for a
			// wall-clock case, at a random instant).
			var second crashStep
			if wall {
				second = wallStep(r, "resume", ref)
			} else {
				pts := reachable(c, path, st.id, ref)
				p := point
				if faultAt == "" {
					p = pts[r.IntN(len(pts))]
					if r.IntN(5) == 0 {
						p = "resume"
					}
				} else if !slices.Contains(pts, p) {
					c.fatalf("suite: %s is not passed by a resume after %s (reachable: %v)", p, faultAt, pts)
				}
				second = crashStep{cmd: "resume", fp: p + "=exit", expect: "kill"}
			}
			desc = append(desc, second.String())
			c.point = strings.Join(desc, " → ")
			res := runStep(t, path, second, ref, st.id)
			st = afterStep(c, path, ref, second, res)
			stats.add(func(s *crashStats) {
				if faultAt != "" {
					s.partialKill++
				} else {
					s.resumeKills++
				}
				if second.wall > 0 {
					s.killsWall++
				} else {
					s.killsFP++
				}
			})
		}
		if faultAt == "" {
			stats.add(func(s *crashStats) {
				if wall {
					s.killsWall++
				} else {
					s.killsFP++
				}
			})
		}
		c.point = strings.Join(append(desc, "resume"), " → ")
		finish(c, path, ref, st)
		stats.add(func(s *crashStats) { s.kills++ })
		t.Logf("%s", c.point)
	})
}

// checkFault checks a step that failed a batch (an injected error or a
// full disk): its task failed with the reason, the later phases were
// cancelled and hold no row (R7), the run ended partial or failed with its
// duration (R9, R15) and the matching exit code; it returns the state.
func checkFault(c *crashCase, path string, ref *crashRef, s crashStep, res stepResult) runState {
	t := c.t
	t.Helper()
	point, _, _ := strings.Cut(s.fp, "=")
	kind, _, _ := parsePoint(point)
	sum, err := decodeSummary(res.stdout)
	if err != nil {
		c.fatalf("%s: exit %d, %v; stderr:\n%s", s, res.code, err, res.stderr)
	}
	// R9: partial when some records are accounted for (imported or
	// unchanged, in the batches that committed), else failed.
	accounted := query(t, path, `SELECT CASE WHEN sum(imported + unchanged) > 0 THEN 1 ELSE 0 END FROM migration_tasks WHERE migration_id = ?`, sum.Run)
	wantStatus, want := string(phases.RunFailed), exitFailed
	if accounted[0] == "1" {
		wantStatus, want = string(phases.RunPartial), exitPartial
	}
	if sum.Status != wantStatus || res.code != want || sum.DurationMS == nil {
		c.fatalf("%s: want a %s run (exit %d) with a duration, got %s, exit %d; stderr:\n%s", s, wantStatus, want, sum.Status, res.code, res.stderr)
	}
	reason := "injected failure at failpoint " + point
	if strings.HasSuffix(s.fp, "=full") {
		reason = "database or disk is full" // SQLite's own
		if store.IsAddress(path) {
			reason = "No space left on device (SQLSTATE 53100)" // PostgreSQL's disk_full
		}
	}
	task := query(t, path, `SELECT status, coalesce(last_error, '') FROM migration_tasks WHERE migration_id = ? AND kind = ?`, sum.Run, kind)
	if len(task) != 1 || !strings.HasPrefix(task[0], "failed|") || !strings.Contains(task[0], reason) {
		c.fatalf("%s: the %s task should have failed with %q: %v", s, kind, reason, task)
	}
	for _, k := range gen.Kinds() {
		if phaseOf(k) <= phaseOf(kind) {
			continue
		}
		q := query(t, path, `SELECT status, coalesce(last_error, '') FROM migration_tasks WHERE migration_id = ? AND kind = ?`, sum.Run, k)
		if kind == gen.KindUser {
			// R7: a failed users task stops nothing (owners are optional
			// links, completed once the users import).
			if len(q) != 1 || q[0] != "succeeded|" {
				c.fatalf("%s: R7, a failed users task stops nothing: the %s task should have run: %v", s, k, q)
			}
			continue
		}
		if len(q) != 1 || q[0] != fmt.Sprintf("cancelled|not started: phase %d failed", phaseOf(kind)) {
			c.fatalf("%s: R7, the %s task should be cancelled behind phase %d: %v", s, k, phaseOf(kind), q)
		}
		if rows := query(t, path, `SELECT count(*) FROM `+kindTable(k)+` WHERE tenant_id = ?`, crashTenant); rows[0] != "0" {
			c.fatalf("%s: R7, %s rows imported behind a failed phase %d", s, rows[0], phaseOf(kind))
		}
	}
	return runState{id: sum.Run, status: sum.Status}
}

func kindTable(k string) string { return gen.FileBase(k) }

// checkCheckpoints: R12, a task's counters and its checkpoint commit
// together, so every task has counted exactly the records its checkpoint
// says it consumed (an undo's task: the slots it took back, R16).
func checkCheckpoints(c *crashCase, path string) {
	c.t.Helper()
	rows := query(c.t, path, `SELECT kind, status, imported + unchanged + skipped + failed + removed + released + restored + cleared,
		checkpoint FROM migration_tasks ORDER BY id`)
	for _, row := range rows {
		f := strings.SplitN(row, "|", 4)
		var cp struct{ Rows int64 }
		if err := json.Unmarshal([]byte(f[3]), &cp); err != nil {
			c.fatalf("task %s (%s): its checkpoint %s: %v", f[0], f[1], f[3], err)
		}
		if strconv.FormatInt(cp.Rows, 10) != f[2] {
			c.fatalf("R12: task %s (%s) has consumed %d records by its checkpoint but counted %s", f[0], f[1], cp.Rows, f[2])
		}
	}
}

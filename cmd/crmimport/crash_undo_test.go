package main

// Undos killed and stopped (R16 with R8, R12–R14): an undo is a run, so
// killed at any instant and resumed — `crmimport resume U` — it must end in
// the database an uninterrupted undo leaves: the same slots (restored skips
// with their reason, owner and time), the same rows, the same before-images
// left, the same final status and per-kind removed, released, restored and
// cleared, one undo row, and the undone run naming it.
//
// The database to undo is made once per test process from the suite's
// export: a first run of the children alone (--only deals,notes,activities,
// emails), which skips the records whose parents are not there yet, then
// the whole export, which takes many of those skips over (restored by the
// undo), creates rows (removed), matches some (released) and skips some
// itself (cleared). Run 2 is undone in batches of crashBatch slots; each
// case starts from a copy of that database, and the reference is one
// uninterrupted undo of another copy.
//
//	go test ./cmd/crmimport -run 'TestCrash/Undos/Kills' -crash.seed=S -crash.only=N -v   # replay one point

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"crmimport/fixtures/gen"
	"crmimport/phases"
	"crmimport/report"
	"crmimport/store"
)

var (
	crashUndos     = flag.Int("crash.undos", 6, "crash suite: undo kill points (SIGKILL an undo at a failpoint or a wall-clock instant, then resume)")
	crashUndoStops = flag.Int("crash.undostops", 2, "crash suite: undos stopped (SIGTERM, `crmimport stop`) at random instants, then resumed")
)

// undoOnly is the first run's kinds: the children, without their parents.
const undoOnly = "deals,notes,activities,emails"

// undoRef is the database to undo and what one uninterrupted undo of it
// gives.
type undoRef struct {
	base    string // the database after runs 1 and 2, never opened by the test
	target  int64  // the run undone: 2
	before  string // crashDump of base
	dump    string // undoDump after the reference undo
	status  string
	code    int
	kinds   map[string]phases.Counts
	took    time.Duration // the undo's process, start to exit: the range of wall-clock kills
	ran     time.Duration // the undo's own duration_ms: the range of stops
	items   map[string]int
	phases  map[string]int
	batches map[string]int
	exact   string // where the reference undo differs from the ledger before run 2 ("" when it does not)
	// The group its cases count in (newCase, caseRand, the summary line's
	// figures) and the stream of its kill points.
	group  string
	stream uint64
	figs   func(s *crashStats) *undoFigures
	// changes: the undo's dump has deltaDump's sections too (the undo of
	// a delta rerun gives hashes and before-images back, R17).
	changes bool
}

// crashUndoReference makes the database to undo and undoes it once,
// uninterrupted, in a copy.
func crashUndoReference(t *testing.T, ref *crashRef) *undoRef {
	t.Helper()
	run1 := dbPath(t) // the database as run 1 left it
	u := newUndoRef(t, "Undos/Kills", 0x756e646f, func(s *crashStats) *undoFigures { return &s.undo })
	args := runArgs(u.base, crashTenant, ref)
	first := append(append([]string{}, args[:len(args)-1]...), "--only", undoOnly, ref.export)
	for i, a := range [][]string{first, args} {
		r := startProc(t, nil, a...).result(t, 0)
		s, err := decodeSummary(r.stdout)
		if err != nil || s.Run != int64(i+1) || r.code != statusCode(phases.RunStatus(s.Status), false, false) {
			t.Fatalf("undo setup, run %d (exit %d): %v\n%s\n%s", i+1, r.code, err, r.stdout, r.stderr)
		}
		if i == 0 {
			copyDB(t, u.base, run1)
		}
	}
	u.reference(t, ref, run1)
	// The undo must remove rows and give skips back their images, or the
	// suite proves less than it says: the setup makes both (run 1's
	// children wait for parents that run 2 brings). Released and cleared
	// slots come from the export's matches and deleted rows, which a small
	// export of some seeds lacks: the summary line counts all four.
	var all phases.Counts
	for _, c := range u.kinds {
		all.Add(c)
	}
	if all.Removed == 0 || all.Restored == 0 {
		t.Fatalf("undo setup: the reference undo should remove rows and restore skips: %+v", u.kinds)
	}
	return u
}

// newUndoRef is an undo reference of group, its database not made yet.
func newUndoRef(t *testing.T, group string, stream uint64, figs func(s *crashStats) *undoFigures) *undoRef {
	return &undoRef{base: dbPath(t), target: 2, items: map[string]int{}, phases: map[string]int{}, batches: map[string]int{},
		group: group, stream: stream, figs: figs}
}

// reference undoes run 2 of u.base once, uninterrupted, in a copy, and
// notes what it gives; run1 is the database before run 2.
func (u *undoRef) reference(t *testing.T, ref *crashRef, run1 string) {
	t.Helper()
	u.before = crashDump(t, copyDB(t, u.base, dbPath(t)), crashTenant)

	path := copyDB(t, u.base, dbPath(t))
	st := runStep(t, path, crashStep{cmd: "undo"}, ref, u.target)
	s, err := decodeSummary(st.stdout)
	if err != nil || st.signal != 0 {
		t.Fatalf("reference undo (exit %d): %v\n%s\n%s", st.code, err, st.stdout, st.stderr)
	}
	if s.Status != string(phases.RunSucceeded) || s.Undoes != u.target {
		t.Fatalf("reference undo: %s, undoes %d (want succeeded, %d); stderr:\n%s", s.Status, s.Undoes, u.target, st.stderr)
	}
	u.code, u.status, u.kinds, u.took = st.code, s.Status, s.Kinds, st.took
	if s.DurationMS != nil {
		u.ran = time.Duration(*s.DurationMS) * time.Millisecond
	}
	u.dump = u.undoDump(t, path)
	for _, row := range query(t, path, `SELECT t.kind, t.phase, count(i.seq) FROM migration_tasks t
		JOIN undo_items i ON i.undo_id = t.migration_id AND i.kind = t.kind
		WHERE t.migration_id = ? GROUP BY t.kind, t.phase`, s.Run) {
		f := strings.Split(row, "|")
		u.phases[f[0]], _ = strconv.Atoi(f[1])
		u.items[f[0]], _ = strconv.Atoi(f[2])
		u.batches[f[0]] = (u.items[f[0]] + *crashBatch - 1) / *crashBatch
	}
	// R16 itself (the exactness tests own it): the reference against the
	// ledger before run 2. Logged and named in the summary line, not a
	// crash: the reference is what the engine does uninterrupted.
	if want, got := ledgerDump(t, run1), ledgerDump(t, path); want != got {
		u.exact = shortDiff(want, got)
		t.Logf("the reference undo does not give back the ledger before run %d: %s", u.target, u.exact)
	}
}

// copyDB copies a database that no process has open (with its WAL, if
// one is left) to dst and returns dst.
func copyDB(t *testing.T, src, dst string) string {
	t.Helper()
	if store.IsAddress(src) { // a schema of its own, copied on the server
		db, err := store.CopyPostgres(context.Background(), src, dst)
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
		return dst
	}
	for _, suffix := range []string{"", "-wal"} {
		in, err := os.Open(src + suffix)
		if suffix != "" && os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(dst + suffix)
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.Copy(out, in)
		in.Close()
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// ledgerDump is the tenant's canonical dump alone (slots and rows).
func ledgerDump(t *testing.T, path string) string {
	t.Helper()
	d := crashDump(t, path, crashTenant)
	d, _, _ = strings.Cut(d, "record_failures:\n")
	return d
}

// undoDump is crashDump (deltaDump when u.changes) followed by the
// before-images left: an undo deletes the images of the slots it takes
// back, and no other.
func (u *undoRef) undoDump(t *testing.T, path string) string {
	t.Helper()
	var b strings.Builder
	if u.changes {
		b.WriteString(deltaDump(t, path))
	} else {
		b.WriteString(crashDump(t, path, crashTenant))
	}
	b.WriteString("slot_before:\n")
	for _, r := range query(t, path, `SELECT source, kind, source_id, taken_by, coalesce(CAST(migration_id AS TEXT), ''),
		coalesce(reason, ''), coalesce(detail, ''), created_at FROM slot_before WHERE tenant_id = ?
		ORDER BY source, kind, source_id`, crashTenant) {
		b.WriteString("  " + r + "\n")
	}
	return b.String()
}

// killPoints lists every failpoint at which an undo can be killed: after
// planning, at each move of its barrier, inside finalize, and at every
// batch of every kind.
func (u *undoRef) killPoints() []string {
	pts := []string{"plan"}
	pts = append(pts, u.phasePoints(0)...)
	pts = append(pts, "finalize")
	return append(pts, u.batchPoints()...)
}

// phasePoints are phase:N for the undo's phases after phase after, but its
// first.
func (u *undoRef) phasePoints(after int) []string {
	var ps []int
	for _, p := range u.phases {
		if !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	sort.Ints(ps)
	var pts []string
	for i, p := range ps {
		if i > 0 && p > after {
			pts = append(pts, "phase:"+strconv.Itoa(p))
		}
	}
	return pts
}

func (u *undoRef) batchPoints() []string {
	var pts []string
	for _, k := range gen.Kinds() {
		for n := 1; n <= u.batches[k]; n++ {
			pts = append(pts, fmt.Sprintf("batch:%s:%d", k, n))
		}
	}
	return pts
}

// undoReachable lists the failpoints a resume of undo id will pass: the
// batches left in each task not done (counted from 1 in the resuming
// process), the barrier's moves after the earliest such phase, finalize
// and resume.
func undoReachable(c *crashCase, path string, id int64, u *undoRef) []string {
	var pts []string
	earliest := 6
	for _, row := range query(c.t, path, `SELECT kind, phase, checkpoint FROM migration_tasks
		WHERE migration_id = ? AND status <> 'succeeded' ORDER BY phase, id`, id) {
		f := strings.SplitN(row, "|", 3)
		ph, _ := strconv.Atoi(f[1])
		var cp struct{ Rows int }
		if err := json.Unmarshal([]byte(f[2]), &cp); err != nil {
			c.fatalf("task %s: its checkpoint %s: %v", f[0], f[2], err)
		}
		done := cp.Rows
		earliest = min(earliest, ph)
		for n := 1; n <= (u.items[f[0]]-done+*crashBatch-1) / *crashBatch; n++ {
			pts = append(pts, fmt.Sprintf("batch:%s:%d", f[0], n))
		}
	}
	pts = append(pts, u.phasePoints(earliest)...)
	return append(pts, "finalize", "resume")
}

// undoOf finds the undo of u.target among the tenant's runs; n is how
// many there are.
func undoOf(runs []report.Summary, u *undoRef) (undo, target report.Summary, n int) {
	for _, r := range runs {
		switch {
		case r.Undoes == u.target:
			undo = r
			n++
		case r.Run == u.target:
			target = r
		}
	}
	return undo, target, n
}

// afterUndoStep checks what a step of an undo left, by how it ended, and
// returns the undo's state. Killed before its plan committed, the undo
// left nothing: the database is the one to undo. Killed later, the undo is
// running, interrupted, without a duration (R13, R15), the undone run does
// not name it yet, and a new run of the tenant is refused naming it
// (exit 6), as is a second undo of the run (exit 1, naming the resume).
func afterUndoStep(c *crashCase, path string, u *undoRef, ref *crashRef, s crashStep, res stepResult) runState {
	t := c.t
	t.Helper()
	killed := res.signal == syscall.SIGKILL
	switch {
	case s.expect == "kill" && !killed:
		c.fatalf("%s: the failpoint did not fire: exit %d, stderr:\n%s", s, res.code, res.stderr)
	case res.signal != 0 && !killed:
		c.fatalf("%s: ended by %s, stderr:\n%s", s, res.signal, res.stderr)
	case s.wall > 0 && killed:
		stats.add(func(s *crashStats) { f := u.figs(s); f.wall = append(f.wall, res.killedAt) })
	case s.wall > 0:
		stats.add(func(s *crashStats) { u.figs(s).wallAfter++ })
	}
	checkCheckpoints(c, path)
	runs := runsOf(t, path, crashTenant)
	undo, target, n := undoOf(runs, u)
	switch {
	case n == 0 && killed:
		if got := crashDump(t, path, crashTenant); got != u.before {
			c.fatalf("%s: killed before the undo was planned, yet the database changed: %s", s, shortDiff(u.before, got))
		}
		if q := query(t, path, `SELECT count(*) FROM undo_items`); q[0] != "0" {
			c.fatalf("%s: killed before the undo was planned, yet %s undo items were written", s, q[0])
		}
		return runState{}
	case n != 1 || len(runs) != 3:
		c.fatalf("%s (exit %d): want runs 1, 2 and one undo, got %d runs, %d undos; stderr:\n%s", s, res.code, len(runs), n, res.stderr)
	}
	st := runState{id: undo.Run, status: undo.Status}
	if undo.Status == string(phases.RunRunning) {
		if !killed {
			c.fatalf("%s: exit %d left the undo running; stderr:\n%s", s, res.code, res.stderr)
		}
		if !undo.Interrupted || undo.DurationMS != nil {
			c.fatalf("%s: a killed undo must show as running, interrupted, without a duration (R13, R15): interrupted %v, duration_ms %v",
				s, undo.Interrupted, undo.DurationMS)
		}
		if target.UndoneBy != 0 {
			c.fatalf("%s: run %d names undo %d as its undo before it ended", s, u.target, target.UndoneBy)
		}
		checkUndoRefused(c, path, u, ref, undo.Run)
		return st
	}
	if undo.DurationMS == nil || undo.Interrupted {
		c.fatalf("%s: a %s undo must have a duration and not be interrupted (R15)", s, undo.Status)
	}
	open := query(t, path, `SELECT count(*) FROM migration_tasks WHERE migration_id = ? AND status <> 'succeeded'`, undo.Run)
	st.finished = open[0] == "0" && undo.Status != string(phases.RunCancelled)
	if !killed {
		if want := statusCode(phases.RunStatus(undo.Status), false, false); res.code != want {
			c.fatalf("%s: exit %d for a %s undo (want %d); stderr:\n%s", s, res.code, undo.Status, want, res.stderr)
		}
	}
	return st
}

// checkUndoRefused: beside an interrupted undo, a new run of the tenant
// exits 6 naming it (R13), a second undo of the same run exits 1 naming the
// resume, and neither leaves a row.
func checkUndoRefused(c *crashCase, path string, u *undoRef, ref *crashRef, id int64) {
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
		c.fatalf("a new run beside interrupted undo %d: want exit 6 naming it, got exit %d: %s", id, r.code, r.stdout)
	}
	r = crm(t, nil, "--db", path, "--json", "undo", strconv.FormatInt(u.target, 10))
	doc.Error = ""
	_ = json.Unmarshal([]byte(r.stdout), &doc)
	if r.code != exitError || !strings.Contains(doc.Error, fmt.Sprintf("crmimport resume %d", id)) {
		c.fatalf("a second undo of run %d beside interrupted undo %d: want exit 1 naming its resume, got exit %d: %s", u.target, id, r.code, r.stdout)
	}
	if n := len(runsOf(t, path, crashTenant)); n != 3 {
		c.fatalf("a refused run or undo left a row: %d runs", n)
	}
}

// finishUndo brings an undo case to its end — resume the undo (or undo
// again when the kill came before its plan), unless it finished — and
// compares with the reference.
func finishUndo(c *crashCase, path string, u *undoRef, ref *crashRef, st runState) {
	c.t.Helper()
	if st.finished {
		checkUndoEqual(c, path, u, nil)
		return
	}
	s, id := crashStep{cmd: "resume"}, st.id
	if st.id == 0 {
		s.cmd, id = "undo", u.target
	}
	res := runStep(c.t, path, s, ref, id)
	if res.code != u.code {
		c.fatalf("the final %s: exit %d, want %d; stderr:\n%s", s.cmd, res.code, u.code, res.stderr)
	}
	sum, err := decodeSummary(res.stdout)
	if err != nil {
		c.fatalf("the final %s: %v\n%s", s.cmd, err, res.stdout)
	}
	if st.id != 0 && sum.Run != st.id {
		c.fatalf("R10: resume finished run %d, not undo %d", sum.Run, st.id)
	}
	checkUndoEqual(c, path, u, &sum)
}

// undoOutcomeDiff says how an undo's status and per-kind counts differ
// from the reference's ("" when they do not).
func undoOutcomeDiff(u *undoRef, status string, kinds map[string]phases.Counts) string {
	var out []string
	if status != u.status {
		out = append(out, fmt.Sprintf("status %s, want %s", status, u.status))
	}
	for _, k := range gen.Kinds() {
		if w, g := u.kinds[k], kinds[k]; w != g {
			out = append(out, fmt.Sprintf("%s %+v, want %+v", k, g, w))
		}
	}
	return strings.Join(out, "; ")
}

// checkUndoEqual is the end of every undo case: runs 1 and 2 and one undo,
// finalized, with the reference's status and counts (also in last, the
// summary the last command printed, when there is one), run 2 naming it as
// its undo, no task queued, no slot twice, every task's counts its
// checkpoint's (R12), and the reference's dump.
func checkUndoEqual(c *crashCase, path string, u *undoRef, last *report.Summary) {
	t := c.t
	t.Helper()
	runs := runsOf(t, path, crashTenant)
	undo, target, n := undoOf(runs, u)
	if n != 1 || len(runs) != 3 {
		c.fatalf("want runs 1, 2 and one undo, got %d runs, %d undos: %+v", len(runs), n, runs)
	}
	var diffs []string
	if got := u.undoDump(t, path); got != u.dump {
		diffs = append(diffs, "the database differs from the reference undo's: "+shortDiff(u.dump, got))
	}
	if d := undoOutcomeDiff(u, undo.Status, undo.Kinds); d != "" {
		diffs = append(diffs, "runs --json: "+d)
	}
	if target.UndoneBy != undo.Run {
		diffs = append(diffs, fmt.Sprintf("R16: run %d is undone by %d, want %d", u.target, target.UndoneBy, undo.Run))
	}
	if undo.Interrupted || undo.DurationMS == nil {
		diffs = append(diffs, fmt.Sprintf("R15: the undo is %s, interrupted %v, without a duration %v", undo.Status, undo.Interrupted, undo.DurationMS == nil))
	}
	if last != nil {
		if d := undoOutcomeDiff(u, last.Status, last.Kinds); d != "" {
			diffs = append(diffs, "the summary of the last command: "+d)
		}
		if last.Undoes != u.target {
			diffs = append(diffs, fmt.Sprintf("the summary of the last command undoes %d, want %d", last.Undoes, u.target))
		}
	}
	if q := query(t, path, `SELECT kind || ':' || status FROM migration_tasks WHERE migration_id = ? AND status IN ('pending', 'running')`, undo.Run); len(q) > 0 {
		diffs = append(diffs, fmt.Sprintf("R9: tasks still queued in a finalized undo: %v", q))
	}
	if q := query(t, path, `SELECT kind, source_id, count(*) FROM migration_records WHERE tenant_id = ?
		GROUP BY source, kind, source_id HAVING count(*) > 1`, crashTenant); len(q) > 0 {
		diffs = append(diffs, fmt.Sprintf("duplicate slots: %v", q))
	}
	if len(diffs) > 0 {
		c.fatalf("%s", strings.Join(diffs, "\n"))
	}
	checkCheckpoints(c, path)
	stats.add(func(s *crashStats) { u.figs(s).equal++ })
}

// crashUndosGroup: SIGKILL an undo at kill points chosen by the seed among
// every failpoint of an undo (two cases in three) and at wall-clock instants
// within the reference undo (one in three); some cases are killed again
// while resuming; then resume, compare. The group (u.group) is the undos
// of the suite's first runs, or of its delta reruns (crash_deltas_test.go).
func crashUndosGroup(t *testing.T, ref *crashRef, u *undoRef, count int) {
	points := u.killPoints()
	perm := rand.New(rand.NewPCG(*crashSeed, u.stream)).Perm(len(points))
	cases(t, count, func(t *testing.T, n int) {
		c := newCase(t, u.group, n)
		r := caseRand(u.group, n)
		i := n - 1
		wall := i%3 == 2
		first := crashStep{cmd: "undo"}
		if wall {
			frac := r.Float64()
			first.frac, first.wall = frac, max(time.Duration(frac*float64(u.took)), time.Microsecond)
		} else {
			first.fp, first.expect = points[perm[(i/3*2+i%3)%len(points)]]+"=exit", "kill"
		}
		again := r.IntN(3) == 0 // kill the resume too
		desc := []string{first.String()}
		c.point = desc[0]
		stats.add(func(s *crashStats) { u.figs(s).undos++ })

		path := copyDB(t, u.base, dbPath(t))
		st := afterUndoStep(c, path, u, ref, first, runStep(t, path, first, ref, u.target))
		if !wall {
			stats.add(func(s *crashStats) { u.figs(s).fp++ })
		}
		if again && st.id != 0 && !st.finished {
			second := crashStep{cmd: "resume"}
			if wall {
				frac := r.Float64()
				second.frac, second.wall = frac, max(time.Duration(frac*float64(u.took)), time.Microsecond)
			} else {
				pts := undoReachable(c, path, st.id, u)
				second.fp, second.expect = pts[r.IntN(len(pts))]+"=exit", "kill"
			}
			desc = append(desc, second.String())
			c.point = strings.Join(desc, " → ")
			st = afterUndoStep(c, path, u, ref, second, runStep(t, path, second, ref, st.id))
			stats.add(func(s *crashStats) {
				u.figs(s).resumeKills++
				if !wall {
					u.figs(s).fp++
				}
			})
		}
		if !st.finished {
			desc = append(desc, map[bool]string{true: "undo", false: "resume"}[st.id == 0])
		}
		c.point = strings.Join(desc, " → ")
		finishUndo(c, path, u, ref, st)
		t.Logf("%s", c.point)
	})
}

// crashUndoStopsGroup: an undo stopped by SIGTERM or `crmimport stop` at a
// random instant of its work ends cancelled (exit 5) with its batch in
// flight committed whole (R14); resume finishes it as an uninterrupted undo.
func crashUndoStopsGroup(t *testing.T, ref *crashRef, u *undoRef) {
	cases(t, *crashUndoStops, func(t *testing.T, n int) {
		c := newCase(t, "Undos/Stops", n)
		r := caseRand("Undos/Stops", n)
		how := []string{"SIGTERM", "stop"}[(n-1)%2]
		var fp string
		var pause time.Duration
		if r.IntN(2) == 0 {
			pts := u.batchPoints()
			pause = time.Duration(50+r.IntN(150)) * time.Millisecond
			fp = pts[r.IntN(len(pts))] + "=sleep:" + pause.String()
		}
		frac := 0.9 * r.Float64()
		delay := time.Duration(frac * float64(u.ran+pause))
		c.point = fmt.Sprintf("undo[%s] + %s after %s (%.0f%% of the reference undo) once it is planned", fp, how,
			delay.Round(time.Millisecond), 100*frac)
		stats.add(func(s *crashStats) { u.figs(s).undos++ })

		path := copyDB(t, u.base, dbPath(t))
		env := map[string]string{}
		if fp != "" {
			env["CRMIMPORT_FAILPOINTS"] = fp
		}
		p := startProc(t, env, undoArgs(path, u.target)...)
		id, planned := waitPlanned(c, path, p)
		if !planned {
			c.fatalf("the undo ended before the test saw it planned; stderr:\n%s", p.c.stderr.String())
		}
		time.Sleep(delay)
		var stopper *proc
		if how == "SIGTERM" {
			_ = p.c.cmd.Process.Signal(syscall.SIGTERM) // an error: it has ended already
		} else {
			stopper = startProc(t, nil, "--db", path, "--json", "stop", strconv.FormatInt(id, 10))
		}
		res := p.result(t, 0)
		if res.signal == syscall.SIGTERM {
			// The signal came as the process exited, its handler gone.
			if sum, err := decodeSummary(res.stdout); err != nil || sum.Status != u.status {
				c.fatalf("SIGTERM killed the process before its undo finished (exit %d); stdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
			}
			res.signal, res.code = 0, u.code
		}
		cancelled := res.code == exitCancelled
		if !cancelled && res.code != u.code {
			c.fatalf("want exit 5 (cancelled) or, if the undo ended first, %d: got %d; stderr:\n%s", u.code, res.code, res.stderr)
		}
		if stopper != nil {
			sr := stopper.result(t, 0)
			ok := sr.code == exitOK && strings.Contains(sr.stdout, fmt.Sprintf(`"stopped": %v`, cancelled))
			if !cancelled && sr.code == exitError && strings.Contains(sr.stderr, "is not running") {
				ok = true // the undo ended before `stop` read it
			}
			if !ok {
				c.fatalf("crmimport stop %d (undo exit %d): exit %d\nstdout: %s\nstderr: %s", id, res.code, sr.code, sr.stdout, sr.stderr)
			}
		}
		st := afterUndoStep(c, path, u, ref, crashStep{cmd: "undo", fp: fp}, res)
		if cancelled {
			if how == "SIGTERM" && !strings.Contains(res.stderr, "stopping after the current batch") {
				c.fatalf("SIGTERM: the undo did not say it was stopping; stderr:\n%s", res.stderr)
			}
			if st.status != string(phases.RunCancelled) {
				c.fatalf("exit 5, but the undo is %s", st.status)
			}
			if q := query(t, path, `SELECT kind || ':' || status FROM migration_tasks WHERE status IN ('pending', 'running')`); len(q) > 0 {
				c.fatalf("R14: a cancelled undo still has queued tasks: %v", q)
			}
			if q := query(t, path, `SELECT coalesce(undone_by, 0) FROM migrations WHERE id = ?`, u.target); q[0] != "0" {
				c.fatalf("R16: run %d names undo %s as its undo, which was cancelled", u.target, q[0])
			}
		}
		stats.add(func(s *crashStats) {
			s.undoStops[how]++
			if cancelled {
				s.undoStopsCancel++
			}
		})
		if !st.finished {
			c.point += " → resume"
		}
		finishUndo(c, path, u, ref, st)
		t.Logf("%s: exit %d after %s", c.point, res.code, res.took.Round(time.Millisecond))
	})
}

// undoArgs is the undo of run id, in the suite's batches.
func undoArgs(path string, id int64) []string {
	return []string{"--db", path, "--json", "undo", strconv.FormatInt(id, 10), "--batch-size", strconv.Itoa(*crashBatch)}
}

// undoFigures counts the cases of one group of undo kills and stops.
type undoFigures struct {
	undos       int // cases started
	equal       int // cases that ended equal to the reference undo
	fp          int // SIGKILLs at failpoints
	wall        []time.Duration
	wallAfter   int // wall-clock kills that found the undo ended
	resumeKills int
}

// kills is the figures' SIGKILLs: "N SIGKILLs at failpoints, M wall-clock
// lo–hi[ and K after the undo ended]; R killed again while resuming".
func (f undoFigures) kills() string {
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	var lo, hi time.Duration
	for _, d := range f.wall {
		if lo == 0 || d < lo {
			lo = d
		}
		hi = max(hi, d)
	}
	line := fmt.Sprintf("%d SIGKILLs at failpoints, %d wall-clock %s–%s", f.fp, len(f.wall), ms(lo), ms(hi))
	if f.wallAfter > 0 {
		line += fmt.Sprintf(" and %d after the undo ended", f.wallAfter)
	}
	return line + fmt.Sprintf("; %d killed again while resuming", f.resumeKills)
}

// undoLine is the undo figures of the summary line.
func (s *crashStats) undoLine() string {
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	c := s.undoCounts
	line := fmt.Sprintf(" undos %d/%d equal (reference undo %s, %s in its process, %d removed/%d released/%d restored/%d cleared; %s",
		s.undo.equal, s.undo.undos, ms(s.undoRan), ms(s.undoTook), c.Removed, c.Released, c.Restored, c.Cleared, s.undo.kills())
	line += fmt.Sprintf("; %d stopped: %d SIGTERM, %d stop, %d cancelled)",
		s.undoStops["SIGTERM"]+s.undoStops["stop"], s.undoStops["SIGTERM"], s.undoStops["stop"], s.undoStopsCancel)
	if s.undoInexact {
		line += "; the reference undo does not give back the ledger before its run (see -v)"
	}
	return line
}

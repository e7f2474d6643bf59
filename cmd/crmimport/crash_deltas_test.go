package main

// Delta reruns killed (R12 with R6a and R17, SPEC §11): the run that
// completes links when their parents arrive and updates the records changed
// at the source is a run like any other, so killed at any instant and
// resumed — `crmimport resume`, which keeps its --update (R17: a run
// option, kept with the run) — it must leave the database one
// uninterrupted rerun leaves: the same slots and hashes, the same rows and
// links, the same links still pending, the same before-images and changes
// recorded, the same failures, and the same per-kind outcomes, relinked
// and updated included.
//
// Two exports are written once per test process from the suite's
// configuration: a BROKEN one, without its companies file, whose first run
// imports the contacts and deals unlinked and remembers their links (R6a);
// and the FINAL one, the whole export with a tenth of its created records
// edited at the source (gen.WriteDelta). Run 1 is the broken export,
// uninterrupted; run 2 is `run --update` of the final one, which relinks
// in the company batches and updates in the others. The reference is one
// uninterrupted run 2; each case starts from a copy of run 1's database
// and kills run 2 at a company batch, at a contact, deal or note batch, or
// at a wall-clock instant within the reference rerun, some again while
// resuming. The undo of run 2 (it reverts the updates and empties the
// links it completed) is killed the same way (crashUndosGroup) and
// compared with an uninterrupted undo of it.
//
//	go test ./cmd/crmimport -run 'TestCrash/Deltas/Kills' -crash.seed=S -crash.only=N -v   # replay one point
//	go test ./cmd/crmimport -run 'TestCrash/Deltas/Undos' -crash.seed=S -crash.only=N -v

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"crmimport/fixtures/gen"
	"crmimport/phases"
	"crmimport/report"
)

var (
	crashDeltas = flag.Int("crash.deltas", 6, "crash suite: kill points of a delta rerun (`run --update` of the edited export after a "+
		"first run without companies: it relinks and updates; SIGKILL at a failpoint or a wall-clock instant, then resume)")
	crashDeltaUndos = flag.Int("crash.deltaundos", 3, "crash suite: kill points of the undo of a delta rerun (it reverts "+
		"updates and empties the links the rerun completed), then resume")
)

// deltaFraction is the share of each kind's created records edited at the
// source between the two exports.
const deltaFraction = 0.1

// deltaRef is the delta rerun's setup and what one uninterrupted rerun gives.
type deltaRef struct {
	broken, final string         // the exports of runs 1 and 2
	edited        map[string]int // records edited per kind (gen.WriteDelta)
	run1          string         // the database as run 1 left it, never opened by the test
	before        string         // crashDump of run1
	base          string         // the database after the reference run 2, never opened by the test
	first         report.Summary // run 1 as `runs` tells it after run 2
	dump          string         // deltaDump after run 2
	status        string
	code          int
	kinds         map[string]phases.Counts
	took          time.Duration // run 2's process, start to exit: the range of wall-clock kills
	ran           time.Duration
}

// deltaExports writes the broken and the final export of the suite's
// configuration.
func deltaExports(t *testing.T, d *deltaRef) {
	t.Helper()
	for _, dir := range []*string{&d.broken, &d.final} {
		var err error
		if *dir, err = os.MkdirTemp("", "crmimport-crash-delta-"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(*dir) })
		if _, err := gen.Write(*dir, crashConfig()); err != nil {
			t.Fatal(err)
		}
	}
	// The broken export lacks its companies and its users: run 1 imports
	// contacts and deals unlinked and every owned record unowned, which
	// the rerun completes in the users' and the companies' batches (R6a).
	for _, k := range []string{gen.KindUser, gen.KindCompany} {
		files, err := filepath.Glob(filepath.Join(d.broken, gen.FileBase(k)+".*"))
		if err != nil || len(files) != 1 {
			t.Fatalf("the broken export's %s file: %v %v", k, files, err)
		}
		if err := os.Remove(files[0]); err != nil {
			t.Fatal(err)
		}
	}
	exp, err := gen.WriteDelta(d.final, crashConfig(), deltaFraction)
	if err != nil {
		t.Fatal(err)
	}
	d.edited = exp.Edited
}

// deltaArgs is a run of export in the suite's batches, with --update when
// update.
func deltaArgs(path, export string, update bool) []string {
	args := []string{"--db", path, "--json", "run", "--tenant", crashTenant, "--source", "canonical",
		"--batch-size", strconv.Itoa(*crashBatch)}
	if update {
		args = append(args, "--update")
	}
	return append(args, export)
}

// deltaReference writes the exports, runs run 1 and, on a copy of its
// database, the reference run 2, both uninterrupted, in child processes.
func deltaReference(t *testing.T) *deltaRef {
	t.Helper()
	ok := false
	defer func() { // a failed reference is a failure of the group, counted on the summary line
		if !ok {
			stats.failed("Deltas (its reference rerun)")
		}
	}()
	d := &deltaRef{run1: dbPath(t)}
	deltaExports(t, d)
	r := startProc(t, nil, deltaArgs(d.run1, d.broken, false)...).result(t, 0)
	s, err := decodeSummary(r.stdout)
	if err != nil || s.Run != 1 || r.code != statusCode(phases.RunStatus(s.Status), false, false) {
		t.Fatalf("delta setup, run 1 (exit %d): %v\n%s\n%s", r.code, err, r.stdout, r.stderr)
	}
	d.before = crashDump(t, copyDB(t, d.run1, dbPath(t)), crashTenant)

	d.base = copyDB(t, d.run1, dbPath(t))
	st := deltaStep(t, d.base, crashStep{cmd: "run"}, d, 0)
	if s, err = decodeSummary(st.stdout); err != nil || st.signal != 0 || s.Run != 2 {
		t.Fatalf("reference rerun (exit %d): %v\n%s\n%s", st.code, err, st.stdout, st.stderr)
	}
	d.code, d.status, d.kinds, d.took = st.code, s.Status, s.Kinds, st.took
	if s.DurationMS != nil {
		d.ran = time.Duration(*s.DurationMS) * time.Millisecond
	}
	path := copyDB(t, d.base, dbPath(t))
	d.dump = deltaDump(t, path)
	for _, run := range runsOf(t, path, crashTenant) {
		if run.Run == 1 {
			d.first = run
		}
	}
	// The rerun must relink and update, or the group proves less than it
	// says: the companies arrive in it (R6a) and a tenth of the records
	// changed (R17). Where it updates other than the generator's edits is
	// logged: the reference is what the engine does uninterrupted.
	var all phases.Counts
	for _, k := range gen.Kinds() {
		c := d.kinds[k]
		all.Add(c)
		// The companies are new in run 2: created with their edits.
		if k != gen.KindCompany && int(c.Updated) != d.edited[k] {
			t.Logf("the reference rerun updated %d %s, fixtures/gen edited %d", c.Updated, k, d.edited[k])
		}
	}
	if all.Relinked == 0 || all.Updated == 0 || d.kinds[gen.KindCompany].Imported == 0 {
		t.Fatalf("delta setup: the reference rerun should import companies, relink and update: %+v", d.kinds)
	}
	ok = true
	return d
}

// deltaStep runs one step of a delta case as a child process: run 2
// (`run --update` of the final export) or its resume.
func deltaStep(t *testing.T, path string, s crashStep, d *deltaRef, id int64) stepResult {
	t.Helper()
	args := deltaArgs(path, d.final, true)
	if s.cmd == "resume" {
		args = []string{"--db", path, "--json", "resume", strconv.FormatInt(id, 10)}
	}
	env := map[string]string{}
	if s.fp != "" {
		env["CRMIMPORT_FAILPOINTS"] = s.fp
	}
	return startProc(t, env, args...).result(t, s.wall)
}

// deltaDump is crashDump followed by what R17 keeps: every slot's digest
// and hashes, the before-images of updates (their row values with links as
// parents' source ids) and the changes each run recorded.
func deltaDump(t *testing.T, path string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(crashDump(t, path, crashTenant))
	b.WriteString("hashes:\n")
	for _, r := range query(t, path, `SELECT kind, source, source_id, coalesce(CAST(digest AS TEXT), ''), coalesce(hashes, '')
		FROM migration_records WHERE tenant_id = ? ORDER BY kind, source, source_id`, crashTenant) {
		b.WriteString("  " + r + "\n")
	}
	names := rowNames(t, path)
	b.WriteString("record_updates:\n")
	for _, r := range query(t, path, `SELECT kind, source, source_id, migration_id, before_values, coalesce(CAST(before_digest AS TEXT), ''),
		coalesce(before_hashes, ''), after_digest, after_hashes, fields,
		CASE WHEN reverted_by IS NULL THEN 'live' ELSE 'reverted' END -- by an undo whose id a kill may have burnt before it was planned
		FROM record_updates WHERE tenant_id = ? ORDER BY kind, source, source_id, migration_id`, crashTenant) {
		f := strings.Split(r, "|")
		f[4] = linksByName(f[4], names)
		b.WriteString("  " + strings.Join(f, "|") + "\n")
	}
	b.WriteString("record_changes:\n")
	var changes []string
	for _, r := range query(t, path, `SELECT CASE WHEN m.undoes IS NULL THEN CAST(c.migration_id AS TEXT) ELSE 'the undo of ' || CAST(m.undoes AS TEXT) END, c.kind, c.source_id, coalesce(c.file, ''), coalesce(c.line, 0), c.change,
		c.applicable, coalesce(c.fields, ''), coalesce(c.edited, ''), coalesce(c.before, ''), coalesce(c.after, '')
		FROM record_changes c JOIN migrations m ON m.id = c.migration_id WHERE m.tenant_id = ?`, crashTenant) {
		changes = append(changes, "  "+r+"\n")
	}
	sort.Strings(changes)
	b.WriteString(strings.Join(changes, ""))
	return b.String()
}

// rowNames maps each row of the tenant (its table and id) to its slot's
// kind and source id: row ids differ between two databases that hold the
// same import. A row that several slots name (R5: a match) is named by the
// first of their source ids in byte order, not by whichever a scan meets
// last: PostgreSQL's heap order differs between a run and a killed and
// resumed one.
func rowNames(t *testing.T, path string) map[string]string {
	t.Helper()
	names := map[string]string{}
	for _, r := range query(t, path, `SELECT record_type, record_id, kind, source_id FROM migration_records
		WHERE tenant_id = ? AND record_id IS NOT NULL`, crashTenant) {
		f := strings.SplitN(r, "|", 4)
		key, name := f[0]+":"+f[1], f[2]+":"+f[3]
		if was, ok := names[key]; !ok || name < was {
			names[key] = name
		}
	}
	return names
}

// linksByName rewrites a before-image's values (a JSON object) with its
// links (company_id, contact_id, deal_id) as their parents' names.
func linksByName(values string, names map[string]string) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(values), &m); err != nil {
		return values // compared as it is
	}
	for field, table := range map[string]string{"company_id": "companies", "contact_id": "contacts", "deal_id": "deals", "owner_id": "users"} {
		if id, ok := m[field].(float64); ok {
			m[field] = names[table+":"+strconv.FormatInt(int64(id), 10)]
		}
	}
	out, _ := json.Marshal(m) // sorted keys
	return string(out)
}

// deltaKillPoints are the rerun's batch failpoints of the kinds whose
// batches relink (users and companies: companies) or of the kinds it
// updates first (contact, deal, note).
func deltaKillPoints(ref *crashRef, companies bool) []string {
	var pts []string
	for _, p := range ref.batchPoints() {
		k, _, _ := parsePoint(p)
		relinks := k == gen.KindCompany || k == gen.KindUser
		if relinks == companies && (companies || k == gen.KindContact || k == gen.KindDeal || k == gen.KindNote) {
			pts = append(pts, p)
		}
	}
	return pts
}

// crashDeltasGroup: SIGKILL run 2 at a company batch (one case in three),
// at a contact, deal or note batch (one in three), each chosen by the seed,
// or at a wall-clock instant within the reference rerun (one in three);
// a case in four is killed again while resuming; then resume, compare.
func crashDeltasGroup(t *testing.T, ref *crashRef, d *deltaRef) {
	companies, others := deltaKillPoints(ref, true), deltaKillPoints(ref, false)
	pc := rand.New(rand.NewPCG(*crashSeed, 0x64656c7461)).Perm(len(companies))
	po := rand.New(rand.NewPCG(*crashSeed, 0x64656c7462)).Perm(len(others))
	cases(t, *crashDeltas, func(t *testing.T, n int) {
		c := newCase(t, "Deltas/Kills", n)
		r := caseRand("Deltas/Kills", n)
		i := n - 1
		first := crashStep{cmd: "run", expect: "kill"}
		switch i % 3 {
		case 0:
			first.fp = companies[pc[i/3%len(pc)]] + "=exit"
		case 1:
			first.fp = others[po[i/3%len(po)]] + "=exit"
		default:
			frac := r.Float64()
			first = crashStep{cmd: "run", frac: frac, wall: max(time.Duration(frac*float64(d.took)), time.Microsecond)}
		}
		desc := []string{"run 1", first.String() + " --update"}
		c.point = strings.Join(desc, " → ")
		stats.add(func(s *crashStats) { s.deltas++ })

		path := copyDB(t, d.run1, dbPath(t))
		st := afterDeltaStep(c, path, d, ref, first, deltaStep(t, path, first, d, 0))
		if r.IntN(4) == 0 && st.id != 0 && !st.finished {
			second := crashStep{cmd: "resume"}
			if first.wall > 0 {
				second.frac = r.Float64()
				second.wall = max(time.Duration(second.frac*float64(d.took)), time.Microsecond)
			} else {
				pts := reachable(c, path, st.id, ref)
				second.fp, second.expect = pts[r.IntN(len(pts))]+"=exit", "kill"
			}
			desc = append(desc, second.String())
			c.point = strings.Join(desc, " → ")
			st = afterDeltaStep(c, path, d, ref, second, deltaStep(t, path, second, d, st.id))
			stats.add(func(s *crashStats) { s.deltaResumeKills++ })
		}
		if !st.finished {
			desc = append(desc, map[bool]string{true: "run --update", false: "resume"}[st.id == 0])
		}
		c.point = strings.Join(desc, " → ")
		finishDelta(c, path, d, ref, st)
		t.Logf("%s", c.point)
	})
}

// afterDeltaStep checks what a step of run 2 left, by how it ended, and
// returns run 2's state: killed before its plan committed, the database
// is run 1's; killed later, run 2 is running, interrupted, without a
// duration, and a new run is refused naming it (R13, R15).
func afterDeltaStep(c *crashCase, path string, d *deltaRef, ref *crashRef, s crashStep, res stepResult) runState {
	t := c.t
	t.Helper()
	killed := res.signal == syscall.SIGKILL
	switch {
	case s.expect == "kill" && !killed:
		c.fatalf("%s: the failpoint did not fire: exit %d, stderr:\n%s", s, res.code, res.stderr)
	case res.signal != 0 && !killed:
		c.fatalf("%s: ended by %s, stderr:\n%s", s, res.signal, res.stderr)
	}
	stats.add(func(st *crashStats) { st.deltaKill(s, res, killed) })
	checkCheckpoints(c, path)
	runs := runsOf(t, path, crashTenant)
	switch {
	case len(runs) == 1 && killed:
		if got := crashDump(t, path, crashTenant); got != d.before {
			c.fatalf("%s: killed before run 2 was planned, yet the database changed: %s", s, shortDiff(d.before, got))
		}
		return runState{}
	case len(runs) != 2:
		c.fatalf("%s (exit %d): want runs 1 and 2, got %d; stderr:\n%s", s, res.code, len(runs), res.stderr)
	}
	run := runOf(runs, 2)
	st := runState{id: run.Run, status: run.Status}
	if run.Status == string(phases.RunRunning) {
		if !killed {
			c.fatalf("%s: exit %d left run 2 running; stderr:\n%s", s, res.code, res.stderr)
		}
		if !run.Interrupted || run.DurationMS != nil {
			c.fatalf("%s: a killed run must show as running, interrupted, without a duration (R13, R15): interrupted %v, duration_ms %v",
				s, run.Interrupted, run.DurationMS)
		}
		checkRefused(c, path, ref, run.Run, 2)
		return st
	}
	if run.DurationMS == nil || run.Interrupted {
		c.fatalf("%s: a %s run must have a duration and not be interrupted (R15)", s, run.Status)
	}
	open := query(t, path, `SELECT count(*) FROM migration_tasks WHERE migration_id = ? AND status <> 'succeeded'`, run.Run)
	st.finished = open[0] == "0" && run.Status != string(phases.RunCancelled)
	if want := statusCode(phases.RunStatus(run.Status), false, false); !killed && res.code != want {
		c.fatalf("%s: exit %d for a %s run (want %d); stderr:\n%s", s, res.code, run.Status, want, res.stderr)
	}
	return st
}

// runOf is run id among runs (a zero Summary when it is not there).
func runOf(runs []report.Summary, id int64) report.Summary {
	for _, r := range runs {
		if r.Run == id {
			return r
		}
	}
	return report.Summary{}
}

// finishDelta brings a delta case to its end — resume run 2 (or run it
// again when the kill came before its plan), unless it finished — and
// compares with the reference rerun.
func finishDelta(c *crashCase, path string, d *deltaRef, ref *crashRef, st runState) {
	c.t.Helper()
	if st.finished {
		checkDeltaEqual(c, path, d, nil)
		return
	}
	s := crashStep{cmd: "resume"}
	if st.id == 0 {
		s.cmd = "run"
	}
	res := deltaStep(c.t, path, s, d, st.id)
	if res.code != d.code {
		c.fatalf("the final %s: exit %d, want %d; stderr:\n%s", s.cmd, res.code, d.code, res.stderr)
	}
	sum, err := decodeSummary(res.stdout)
	if err != nil {
		c.fatalf("the final %s: %v\n%s", s.cmd, err, res.stdout)
	}
	if sum.Run != 2 {
		c.fatalf("R10: the final %s finished run %d, not run 2", s.cmd, sum.Run)
	}
	checkDeltaEqual(c, path, d, &sum)
}

// countsDiff says how per-kind counts differ, every field compared ("" when
// they do not).
func countsDiff(want, got map[string]phases.Counts) string {
	var out []string
	for _, k := range gen.Kinds() {
		if w, g := want[k], got[k]; w != g {
			out = append(out, fmt.Sprintf("%s %+v, want %+v", k, g, w))
		}
	}
	return strings.Join(out, "; ")
}

// checkDeltaEqual is the end of every delta case: runs 1 and 2, run 2
// finalized with the reference's status and every count (also in last,
// the summary the last command printed), run 1 as the reference tells it,
// no task queued, no slot twice, every task's counts its checkpoint's
// (R12), and the reference's deltaDump.
func checkDeltaEqual(c *crashCase, path string, d *deltaRef, last *report.Summary) {
	t := c.t
	t.Helper()
	runs := runsOf(t, path, crashTenant)
	if len(runs) != 2 {
		c.fatalf("want runs 1 and 2, got %d: %+v", len(runs), runs)
	}
	run, first := runOf(runs, 2), runOf(runs, 1)
	var diffs []string
	if got := deltaDump(t, path); got != d.dump {
		diffs = append(diffs, "the database differs from the reference rerun's: "+shortDiff(d.dump, got))
	}
	if run.Status != d.status {
		diffs = append(diffs, fmt.Sprintf("run 2 is %s, want %s", run.Status, d.status))
	}
	if diff := countsDiff(d.kinds, run.Kinds); diff != "" {
		diffs = append(diffs, "runs --json, run 2: "+diff)
	}
	if diff := countsDiff(d.first.Kinds, first.Kinds); diff != "" || first.Status != d.first.Status {
		diffs = append(diffs, fmt.Sprintf("runs --json, run 1 (%s, want %s): %s", first.Status, d.first.Status, diff))
	}
	if run.Interrupted || run.DurationMS == nil {
		diffs = append(diffs, fmt.Sprintf("R15: run 2 is %s, interrupted %v, without a duration %v", run.Status, run.Interrupted, run.DurationMS == nil))
	}
	if last != nil {
		if diff := countsDiff(d.kinds, last.Kinds); diff != "" || last.Status != d.status {
			diffs = append(diffs, fmt.Sprintf("the summary of the last command (%s, want %s): %s", last.Status, d.status, diff))
		}
	}
	if q := query(t, path, `SELECT kind || ':' || status FROM migration_tasks WHERE migration_id = 2 AND status IN ('pending', 'running')`); len(q) > 0 {
		diffs = append(diffs, fmt.Sprintf("R9: tasks still queued in a finalized run: %v", q))
	}
	if q := query(t, path, `SELECT kind, source_id, count(*) FROM migration_records WHERE tenant_id = ?
		GROUP BY source, kind, source_id HAVING count(*) > 1`, crashTenant); len(q) > 0 {
		diffs = append(diffs, fmt.Sprintf("duplicate slots: %v", q))
	}
	if len(diffs) > 0 {
		c.fatalf("%s", strings.Join(diffs, "\n"))
	}
	checkCheckpoints(c, path)
	stats.add(func(s *crashStats) { s.deltasEqual++ })
}

// deltaUndoReference makes the database to undo — run 2 of the delta
// setup, as the reference left it — and undoes it once, uninterrupted.
func deltaUndoReference(t *testing.T, ref *crashRef, d *deltaRef) *undoRef {
	t.Helper()
	ok := false
	defer func() {
		if !ok {
			stats.failed("Deltas/Undos (its reference undo)")
		}
	}()
	u := newUndoRef(t, "Deltas/Undos", 0x64756e646f, func(s *crashStats) *undoFigures { return &s.deltaUndo })
	u.changes = true
	copyDB(t, d.base, u.base)
	u.reference(t, ref, d.run1)
	var all phases.Counts
	for _, c := range u.kinds {
		all.Add(c)
	}
	// R17, R6a: the undo gives the updates back and empties the links run
	// 2 completed, or the group proves less than it says.
	if all.Reverted == 0 || all.Unlinked == 0 {
		t.Fatalf("delta undo setup: the reference undo should revert updates and empty links: %+v", u.kinds)
	}
	ok = true
	return u
}

// deltaKill counts a step of a delta case in the summary line's figures.
func (s *crashStats) deltaKill(step crashStep, res stepResult, killed bool) {
	switch {
	case step.wall > 0 && killed:
		s.deltaWall = append(s.deltaWall, res.killedAt)
	case step.wall > 0:
		s.deltaWallAfter++
	case strings.HasPrefix(step.fp, "batch:"+gen.KindCompany+":"), strings.HasPrefix(step.fp, "batch:"+gen.KindUser+":"):
		s.deltaFPCompany++
	default:
		s.deltaFP++
	}
}

// deltaLine is the delta figures of the summary line.
func (s *crashStats) deltaLine() string {
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	var lo, hi time.Duration
	for _, d := range s.deltaWall {
		if lo == 0 || d < lo {
			lo = d
		}
		hi = max(hi, d)
	}
	c := s.deltaCounts
	line := fmt.Sprintf(" deltas %d/%d equal (reference rerun %s, %s in its process, %d relinked/%d updated; %d SIGKILLs at user and company batches, "+
		"%d at other failpoints, %d wall-clock %s–%s", s.deltasEqual, s.deltas, ms(s.deltaRan), ms(s.deltaTook), c.Relinked, c.Updated,
		s.deltaFPCompany, s.deltaFP, len(s.deltaWall), ms(lo), ms(hi))
	if s.deltaWallAfter > 0 {
		line += fmt.Sprintf(" and %d after the run ended", s.deltaWallAfter)
	}
	line += fmt.Sprintf("; %d killed again while resuming)", s.deltaResumeKills)
	u := s.deltaUndoCounts
	return line + fmt.Sprintf(" delta undos %d/%d equal (%d reverted/%d unlinked/%d removed; %s)", s.deltaUndo.equal, s.deltaUndo.undos,
		u.Reverted, u.Unlinked, u.Removed, s.deltaUndo.kills())
}

func (s *crashStats) setDeltaReference(d *deltaRef) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deltaRan, s.deltaTook = d.ran, d.took
	for _, c := range d.kinds {
		s.deltaCounts.Add(c)
	}
}

func (s *crashStats) setDeltaUndoReference(u *undoRef) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range u.kinds {
		s.deltaUndoCounts.Add(c)
	}
}

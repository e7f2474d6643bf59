package main

// The crash suite (R12–R14, STYLE 13): real processes — the test binary
// re-running itself as crmimport (TestMain) — are killed with SIGKILL at
// seeded failpoints and at wall-clock instants, stopped by SIGTERM, SIGINT
// and `crmimport stop`, started several at the same instant on one tenant,
// and made to fail their commits as a full disk would. After each, `resume`
// must leave the database exactly as one uninterrupted run leaves it: the
// same slots, the same rows (links as parent source ids), the same failures,
// the same final status and per-kind outcomes, one run row. Undos (R16)
// are killed, stopped and resumed the same way, and compared with an
// uninterrupted undo (crash_undo_test.go); so are delta reruns, which
// complete links (R6a) and update changed records (R17), and their undos
// (crash_deltas_test.go).
//
// The export is written once per test process by fixtures/gen (dirty, a few
// hundred contacts, seeded by -crash.seed) and imported in small batches so
// that there are many batch boundaries. The reference is one uninterrupted
// run of it, in a child process, which also gives the wall-clock range of
// the random kills.
//
//	go test ./cmd/crmimport -run TestCrash                       # small sizes (make test)
//	make crashtest                                               # full sizes, one summary line
//	go test ./cmd/crmimport -run 'TestCrash/Kills' -crash.seed=S -crash.only=N -v   # replay one point
//	go test ./cmd/crmimport -run 'TestCrash/Undos/Kills' -crash.seed=S -crash.only=N -v
//	go test ./cmd/crmimport -run 'TestCrash/Deltas/Kills' -crash.seed=S -crash.only=N -v
//	go test ./cmd/crmimport -run TestCrash -crash.dialect=postgres   # the same on PostgreSQL (issue 17)
//
// On PostgreSQL each case has a schema of its own in the tests' throwaway
// cluster (an undo case's, a copy of one schema: store.CopyPostgres).
// Every failure names its seed, its point and that replay command.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"crmimport/fixtures/gen"
	"crmimport/ledger/ledgertest"
	"crmimport/phases"
	"crmimport/report"
	"crmimport/store"
	"crmimport/store/storetest"
)

// Suite sizes: small by default (make test), full in make crashtest.
var (
	crashKills   = flag.Int("crash.kills", 12, "crash suite: kill points (SIGKILL at a failpoint or a wall-clock instant, then resume)")
	crashStops   = flag.Int("crash.stops", 3, "crash suite: stops (SIGTERM, SIGINT, `crmimport stop`) at random instants")
	crashRaces   = flag.Int("crash.races", 3, "crash suite: admission races (several processes start `run` on one tenant at one instant)")
	crashRacers  = flag.Int("crash.racers", 4, "crash suite: processes per admission race")
	crashTenants = flag.Int("crash.tenants", 1, "crash suite: two tenants started at the same instant on one database")
	crashFaults  = flag.Int("crash.faults", 2, "crash suite: write faults (a batch commit fails as on a full disk)")
	crashSeed    = flag.Uint64("crash.seed", 1, "crash suite: seed of the export and of every kill, stop and fault point")
	crashOnly    = flag.Int("crash.only", 0, "crash suite: run only case N (from 1) of the selected groups, to replay it")
	crashSummary = flag.Bool("crash.summary", false, "crash suite: print one line of figures after the tests (make crashtest)")
	crashDialect = flag.String("crash.dialect", "sqlite", "crash suite: the database it runs on: sqlite (a file per case) or "+
		"postgres (a schema per case in the tests' throwaway cluster)")
)

// The export and its batches. With batches of more than a chunk (256
// records), the suite also kills runs while a chunk is decided on the
// speculation of the one before it (issue 16): make crashtest runs both.
var (
	crashContacts = flag.Int("crash.contacts", 400, "crash suite: contacts in the generated export (other kinds in proportion)")
	crashBatch    = flag.Int("crash.batch", 20, "crash suite: records per batch (and slots per undo batch)")
)

const crashTenant = "acme"

// The suite found two engine bugs, both fixed and kept as reproductions in
// TestFixedEngineBugs (crash_known_test.go): stop-starves (`crmimport stop`
// waited for a busy run's write lock; it now signals the owner on this
// host) and open-races-wal (processes opening one new file at once were
// told "busy"; store.Open tries again). A failure is never skipped.

// crashRef is what one uninterrupted run of the export gives.
type crashRef struct {
	export  string
	exp     gen.Expected
	dump    string // crashDump of the tenant
	status  string
	code    int
	kinds   map[string]phases.Counts
	took    time.Duration // the child's wall time, start to exit: the range of wall-clock kills
	ran     time.Duration // the run's own duration_ms, planned to finalized: the range of stops
	batches map[string]int
	drift   []string // where the reference differs from fixtures/gen's expectations
}

// TestCrash is the crash suite: one export, one reference, then the groups
// in parallel (each case with its own database file).
func TestCrash(t *testing.T) {
	t.Parallel()
	if *crashDialect != "sqlite" && *crashDialect != "postgres" {
		t.Fatalf("-crash.dialect=%s: want sqlite or postgres", *crashDialect)
	}
	stats.begin()
	ref := crashReference(t)
	stats.setReference(ref)
	t.Run("Kills", func(t *testing.T) { t.Parallel(); crashKillsGroup(t, ref) })
	t.Run("Stops", func(t *testing.T) { t.Parallel(); crashStopsGroup(t, ref) })
	t.Run("Races", func(t *testing.T) { t.Parallel(); crashRacesGroup(t, ref) })
	t.Run("Tenants", func(t *testing.T) { t.Parallel(); crashTenantsGroup(t, ref) })
	t.Run("WriteFaults", func(t *testing.T) { t.Parallel(); crashFaultsGroup(t, ref) })
	if *crashDialect == "sqlite" { // a server's database is no file whose folder may be missing
		t.Run("DatabasePathCannotBeCreated", func(t *testing.T) { t.Parallel(); crashBadPath(t, ref) })
	}
	t.Run("Undos", func(t *testing.T) {
		t.Parallel()
		u := crashUndoReference(t, ref)
		stats.setUndoReference(u)
		t.Run("Kills", func(t *testing.T) { t.Parallel(); crashUndosGroup(t, ref, u, *crashUndos) })
		t.Run("Stops", func(t *testing.T) { t.Parallel(); crashUndoStopsGroup(t, ref, u) })
	})
	t.Run("Deltas", func(t *testing.T) {
		t.Parallel()
		d := deltaReference(t)
		stats.setDeltaReference(d)
		t.Run("Kills", func(t *testing.T) { t.Parallel(); crashDeltasGroup(t, ref, d) })
		if *crashDeltaUndos == 0 && *crashOnly == 0 {
			return // no undo case asked for: no reference undo to make
		}
		t.Run("Undos", func(t *testing.T) {
			t.Parallel()
			u := deltaUndoReference(t, ref, d)
			stats.setDeltaUndoReference(u)
			crashUndosGroup(t, ref, u, *crashDeltaUndos)
		})
	})
}

// crashReference writes the export and runs it once, uninterrupted, in a
// child process, and notes where it differs from the generator's model.
func crashReference(t *testing.T) *crashRef {
	t.Helper()
	dir, err := os.MkdirTemp("", "crmimport-crash-export-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) }) // after every subtest
	exp, err := gen.Write(dir, crashConfig())
	if err != nil {
		t.Fatal(err)
	}
	ref := &crashRef{export: dir, exp: exp, batches: map[string]int{}}
	for _, k := range gen.Kinds() {
		// A task reads batches of crashBatch records until one meets the
		// end of its file: rows/batch + 1 batches (the last one may be
		// empty), which is where batch:KIND:N points exist.
		ref.batches[k] = exp.Records[k] / *crashBatch + 1
	}
	path := dbPath(t)
	st := runStep(t, path, crashStep{cmd: "run"}, ref)
	if st.code < 0 {
		t.Fatalf("reference run killed: %s", st.stderr)
	}
	s, err := decodeSummary(st.stdout)
	if err != nil {
		t.Fatalf("reference run (exit %d): %v\n%s", st.code, err, st.stderr)
	}
	ref.code, ref.status, ref.kinds, ref.took = st.code, s.Status, s.Kinds, st.took
	if s.DurationMS != nil {
		ref.ran = time.Duration(*s.DurationMS) * time.Millisecond
	}
	ref.dump = crashDump(t, path, crashTenant)

	// The engine against the generator's model of the same export. A
	// difference is not a crash: the reference is what the engine does
	// uninterrupted. It is logged and named in the summary line.
	if ref.status != exp.Status.First {
		ref.drift = append(ref.drift, fmt.Sprintf("status %s, model %s", ref.status, exp.Status.First))
	}
	for _, k := range gen.Kinds() {
		o, c := exp.First[k], ref.kinds[k]
		want := phases.Counts{Imported: int64(o.Imported), Unchanged: int64(o.Unchanged), Skipped: int64(o.Skipped),
			Failed: int64(o.Failed), Matched: int64(o.Matched), Unlinked: int64(o.Unlinked), Duplicate: int64(o.Duplicate)}
		if c != want {
			ref.drift = append(ref.drift, fmt.Sprintf("%s %+v, model %+v", k, c, want))
		}
	}
	for _, d := range ref.drift {
		t.Logf("the reference run differs from fixtures/gen's model: %s", d)
	}
	if n := len(strings.Split(ref.dump, "\n")); n < *crashContacts {
		t.Fatalf("reference dump has only %d lines", n)
	}
	return ref
}

// crashConfig is the generator's configuration of the suite's export.
func crashConfig() gen.Config {
	return gen.Config{Contacts: *crashContacts, Seed: int64(*crashSeed), Dirty: true, NoteMax: 400}
}

// crashStep is one command line of a case: `run`, `resume` or `undo`, with its
// failpoints and, when wall > 0, a SIGKILL after that long.
type crashStep struct {
	cmd    string // run, resume or undo
	fp     string // CRMIMPORT_FAILPOINTS
	wall   time.Duration
	frac   float64 // wall as a fraction of the reference run, for the report
	expect string  // "kill" (must die at its failpoint), "fault" (must end partial or failed), "" (anything)
}

func (s crashStep) String() string {
	var parts []string
	if s.fp != "" {
		parts = append(parts, s.fp)
	}
	if s.wall > 0 {
		parts = append(parts, fmt.Sprintf("SIGKILL after %s = %.0f%% of the reference run", s.wall.Round(time.Millisecond), 100*s.frac))
	}
	if len(parts) == 0 {
		return s.cmd
	}
	return s.cmd + "[" + strings.Join(parts, "; ") + "]"
}

// stepResult is what one child gave.
type stepResult struct {
	code           int // -1: killed by a signal
	signal         syscall.Signal
	stdout, stderr string
	took           time.Duration
	killedAt       time.Duration // > 0 when the test's own SIGKILL ended it
}

// childTimeout bounds any child: a run that hangs is a failure, not a
// stuck suite.
const childTimeout = 2 * time.Minute

// runStep runs one step as a child process and waits for it; a wall-clock
// step is killed after its delay unless it ended first.
func runStep(t *testing.T, path string, s crashStep, ref *crashRef, runID ...int64) stepResult {
	t.Helper()
	var args []string
	switch s.cmd {
	case "run":
		args = runArgs(path, crashTenant, ref)
	case "resume":
		args = []string{"--db", path, "--json", "resume", strconv.FormatInt(runID[0], 10)}
	case "undo":
		args = undoArgs(path, runID[0])
	default:
		t.Fatalf("unknown step %q", s.cmd)
	}
	env := map[string]string{}
	if s.fp != "" {
		env["CRMIMPORT_FAILPOINTS"] = s.fp
	}
	return startProc(t, env, args...).result(t, s.wall)
}

// proc is a child process that is being waited for from the start, so that
// the test can watch it end while it polls the database.
type proc struct {
	c     *childProc
	start time.Time
	done  chan struct{}
	err   error
}

func startProc(t *testing.T, env map[string]string, args ...string) *proc {
	t.Helper()
	c := startChild(t, env, args...)
	p := &proc{c: c, start: time.Now(), done: make(chan struct{})}
	go func() {
		p.err = c.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { // before startChild's own: never leave a child behind
		_ = c.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
	})
	return p
}

// ended reports whether the process has ended.
func (p *proc) ended() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// result waits for the process, sending it SIGKILL once wall has passed
// since it started when wall > 0 and it is still running.
func (p *proc) result(t *testing.T, wall time.Duration) stepResult {
	t.Helper()
	var kill <-chan time.Time
	if wall > 0 {
		kill = time.After(time.Until(p.start.Add(wall)))
	}
	var r stepResult
	select {
	case <-p.done:
	case <-kill:
		_ = p.c.cmd.Process.Signal(syscall.SIGKILL)
		r.killedAt = time.Since(p.start)
		<-p.done
	case <-time.After(childTimeout):
		_ = p.c.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
		t.Fatalf("child %v hung for %s; stderr:\n%s", p.c.cmd.Args, childTimeout, p.c.stderr.String())
	}
	r.took = time.Since(p.start)
	if p.c.cmd.ProcessState == nil {
		t.Fatalf("child %v: %v", p.c.cmd.Args, p.err)
	}
	ws := p.c.cmd.ProcessState.Sys().(syscall.WaitStatus)
	r.code = p.c.cmd.ProcessState.ExitCode()
	if ws.Signaled() {
		r.signal = ws.Signal()
	} else {
		r.killedAt = 0 // it ended on its own just before the kill
	}
	r.stdout, r.stderr = p.c.stdout.String(), p.c.stderr.String()
	return r
}

func runArgs(path, tenant string, ref *crashRef) []string {
	return []string{"--db", path, "--json", "run", "--tenant", tenant, "--source", "canonical",
		"--batch-size", strconv.Itoa(*crashBatch), ref.export}
}

// dbPath is a new case's database: a file in the case's folder, or on
// PostgreSQL a schema of its own that nothing has made yet.
func dbPath(t *testing.T) string {
	if *crashDialect == "postgres" {
		return storetest.PostgresDSN(t)
	}
	return t.TempDir() + "/crm.db"
}

func decodeSummary(stdout string) (report.Summary, error) {
	var s report.Summary
	err := json.Unmarshal([]byte(stdout), &s)
	return s, err
}

// crashDump is the canonical dump (ledgertest.Dump: slots, and rows with
// their links as parent source ids) followed by the failed records, which
// must neither be lost nor written twice either.
func crashDump(t *testing.T, path, tenant string) string {
	t.Helper()
	db := storetest.Open(t, path)
	defer db.Close() // a server has a bounded number of connections: none kept to the end of the test
	s, err := ledgertest.Dump(context.Background(), db, tenant)
	if err != nil {
		t.Fatalf("dump %s: %v", path, err)
	}
	fails := query(t, path, `SELECT f.kind, coalesce(f.source_id, ''), coalesce(f.file, ''), coalesce(f.line, 0), f.reason
		FROM record_failures f JOIN migrations m ON m.id = f.migration_id WHERE m.tenant_id = ?
		ORDER BY f.kind, f.source_id, f.line, f.reason`, tenant)
	var b strings.Builder
	b.WriteString(s)
	b.WriteString("record_failures:\n")
	for _, f := range fails {
		b.WriteString("  " + f + "\n")
	}
	return b.String()
}

// usersTaskFailed matches a case's steps when one fails the users task
// (an injected error or a full disk at one of its batches).
var usersTaskFailed = regexp.MustCompile(`(batch|commit):` + gen.KindUser + `:[0-9]+=(error|full)`)

// outcomeDiff says how a run's status and per-kind outcomes differ from the
// reference's ("" when they do not); relinkedMay: its relinked counts may.
func outcomeDiff(wantStatus string, want map[string]phases.Counts, gotStatus string, got map[string]phases.Counts, relinkedMay bool) string {
	var out []string
	if gotStatus != wantStatus {
		out = append(out, fmt.Sprintf("status %s, want %s", gotStatus, wantStatus))
	}
	for _, k := range gen.Kinds() {
		w, g := want[k], got[k]
		if _, ok := got[k]; !ok && len(got) > 0 {
			out = append(out, k+" missing")
			continue
		}
		wb, _ := json.Marshal(w)
		gb, _ := json.Marshal(g)
		var wm, gm map[string]int64
		_ = json.Unmarshal(wb, &wm)
		_ = json.Unmarshal(gb, &gm)
		var fields []string
		for _, f := range []string{"imported", "unchanged", "skipped", "failed", "matched", "unlinked", "relinked", "duplicate"} {
			if wm[f] != gm[f] && !(f == "relinked" && relinkedMay) {
				fields = append(fields, fmt.Sprintf("%s %d want %d", f, gm[f], wm[f]))
			}
		}
		if len(fields) > 0 {
			out = append(out, k+": "+strings.Join(fields, ", "))
		}
	}
	return strings.Join(out, "; ")
}

// shortDiff lists, section by section, the lines only the reference has
// (-) and those only the result has (+), at most 20 of them.
func shortDiff(want, got string) string {
	sectioned := func(s string) []string {
		var out []string
		section := ""
		for _, l := range strings.Split(s, "\n") {
			if l != "" && !strings.HasPrefix(l, " ") {
				section = l
				continue
			}
			if l != "" {
				out = append(out, section+l)
			}
		}
		return out
	}
	w, g := sectioned(want), sectioned(got)
	count := map[string]int{}
	for _, l := range w {
		count[l]++
	}
	for _, l := range g {
		count[l]--
	}
	var out []string
	for _, l := range w {
		if count[l] > 0 {
			count[l]--
			out = append(out, "- "+l)
		}
	}
	for _, l := range g {
		if count[l] < 0 {
			count[l]++
			out = append(out, "+ "+l)
		}
	}
	n := len(out)
	if n > 20 {
		out = append(out[:20], fmt.Sprintf("… and %d more lines", n-20))
	}
	return fmt.Sprintf("%d lines differ (- reference only, + result only):\n%s", n, strings.Join(out, "\n"))
}

// crashCase is one case of a group: its number, its point and how to
// replay it. fatalf fails it with all three.
type crashCase struct {
	t     *testing.T
	group string
	n     int
	point string
}

func (c *crashCase) replay() string {
	dialect := ""
	if *crashDialect != "sqlite" {
		dialect = " -crash.dialect=" + *crashDialect
	}
	return fmt.Sprintf("go test ./cmd/crmimport -run 'TestCrash/%s' -crash.seed=%d -crash.only=%d%s -v", c.group, *crashSeed, c.n, dialect)
}

func (c *crashCase) fatalf(format string, args ...any) {
	c.t.Helper()
	c.failNow(fmt.Sprintf(format, args...))
}

// failNow fails the case with its seed, point and replay command.
func (c *crashCase) failNow(msg string) {
	c.t.Helper()
	c.t.Fatalf("%s case %d, seed %d, point %s:\n%s\nreplay: %s", c.group, c.n, *crashSeed, c.point, msg, c.replay())
}

// newCase registers a case; a failure anywhere in it (also in a shared
// helper's require) is followed by the seed, the point (c.point as it stands
// then) and the replay command.
func newCase(t *testing.T, group string, n int) *crashCase {
	c := &crashCase{t: t, group: group, n: n}
	t.Cleanup(func() {
		if t.Failed() {
			stats.failed(group)
			t.Logf("%s case %d, seed %d, point %s\nreplay: %s", group, n, *crashSeed, c.point, c.replay())
		}
	})
	return c
}

// cases runs group cases 1..n (or only -crash.only) as parallel subtests.
func cases(t *testing.T, n int, f func(t *testing.T, i int)) {
	if *crashOnly > 0 {
		n = max(n, *crashOnly)
	}
	for i := 1; i <= n; i++ {
		if *crashOnly > 0 && i != *crashOnly {
			continue
		}
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
			f(t, i)
		})
	}
}

// runsOf lists the tenant's runs (crmimport runs --json).
func runsOf(t *testing.T, path, tenant string) []report.Summary {
	t.Helper()
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) && !store.IsAddress(path) {
		return nil // killed before it made the database: no run, and `runs` makes no file
	}
	if store.IsAddress(path) {
		db, err := store.OpenExisting(context.Background(), path)
		if errors.Is(err, store.ErrNoDatabase) {
			return nil // killed before it made its schema
		}
		if err != nil {
			t.Fatalf("open %s: %v", path, err)
		}
		db.Close()
	}
	r := crm(t, nil, "--db", path, "--json", "runs", "--tenant", tenant)
	if r.code != exitOK {
		t.Fatalf("runs: exit %d: %s", r.code, r.stderr)
	}
	var doc struct{ Runs []report.Summary }
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("runs --json: %v\n%s", err, r.stdout)
	}
	return doc.Runs
}

// checkEqualToReference is the end of every case: one run, finalized, with
// the reference's status and outcomes (also in last, the summary the last
// command printed, when there is one), no task left queued, and the dump of
// the reference. Every difference is reported at once.
func checkEqualToReference(c *crashCase, path, tenant string, ref *crashRef, last *report.Summary) {
	t := c.t
	t.Helper()
	runs := runsOf(t, path, tenant)
	if len(runs) != 1 {
		c.fatalf("want exactly one run of the tenant, got %d: %+v", len(runs), runs)
	}
	r := runs[0]
	var diffs []string
	if got := crashDump(t, path, tenant); got != ref.dump {
		diffs = append(diffs, "the database differs from the reference: "+shortDiff(ref.dump, got))
	}
	// A users task that failed (an injected error, a full disk) stopped
	// nothing (R7): the other tasks imported their records unowned, and the
	// resume that imports the users completes their owners (R6a) — the same
	// database, counted relinked where the reference counted nothing.
	relinkedMay := usersTaskFailed.MatchString(c.point)
	if d := outcomeDiff(ref.status, ref.kinds, r.Status, r.Kinds, relinkedMay); d != "" {
		diffs = append(diffs, "runs --json: "+d)
	}
	if r.Interrupted || r.DurationMS == nil {
		diffs = append(diffs, fmt.Sprintf("R15: the run is %s, interrupted %v, without a duration %v", r.Status, r.Interrupted, r.DurationMS == nil))
	}
	if last != nil {
		if d := outcomeDiff(ref.status, ref.kinds, last.Status, last.Kinds, relinkedMay); d != "" {
			diffs = append(diffs, "the summary of the last command: "+d)
		}
	}
	if q := query(t, path, `SELECT kind || ':' || status FROM migration_tasks WHERE migration_id = ? AND status IN ('pending', 'running')`, r.Run); len(q) > 0 {
		diffs = append(diffs, fmt.Sprintf("R9: tasks still queued in a finalized run: %v", q))
	}
	if q := query(t, path, `SELECT kind, source_id, count(*) FROM migration_records WHERE tenant_id = ?
		GROUP BY source, kind, source_id HAVING count(*) > 1`, tenant); len(q) > 0 {
		diffs = append(diffs, fmt.Sprintf("duplicate slots: %v", q))
	}
	if len(diffs) > 0 {
		c.fatalf("%s", strings.Join(diffs, "\n"))
	}
}

// The suite's figures, for the summary line.
var stats crashStats

type crashStats struct {
	mu          sync.Mutex
	ran         bool
	start       time.Time
	refTook     time.Duration
	refRan      time.Duration
	kills       int
	killsFP     int
	killsWall   int
	wallMin     time.Duration
	wallMax     time.Duration
	wallAfter   int // wall-clock kills that found the run already finished
	resumeKills int // cases killed again while resuming
	partialKill int // resumes of a partial run killed
	stops       map[string]int
	stopsCancel int
	stopsEarly  int // the run ended before the stop took effect
	races       int
	racesOK     int
	tenants     int
	faults      int
	failedBy    map[string]int
	drift       []string

	// The undos (crash_undo_test.go) and the undos of a delta rerun
	// (crash_deltas_test.go).
	undo            undoFigures
	deltaUndo       undoFigures
	undoStops       map[string]int
	undoStopsCancel int
	undoRan         time.Duration
	undoTook        time.Duration
	undoInexact     bool
	undoCounts      phases.Counts // what the reference undo took back

	// The delta reruns (crash_deltas_test.go).
	deltas           int // cases started
	deltasEqual      int // cases that ended equal to the reference rerun
	deltaFPCompany   int // SIGKILLs at a user or company batch (the rerun relinks there)
	deltaFP          int // at other failpoints
	deltaWall        []time.Duration
	deltaWallAfter   int
	deltaResumeKills int
	deltaRan         time.Duration
	deltaTook        time.Duration
	deltaCounts      phases.Counts // what the reference rerun did
	deltaUndoCounts  phases.Counts // what its reference undo took back
}

func (s *crashStats) begin() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ran, s.start = true, time.Now()
	s.stops, s.failedBy, s.undoStops = map[string]int{}, map[string]int{}, map[string]int{}
}

func (s *crashStats) setUndoReference(u *undoRef) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.undoRan, s.undoTook, s.undoInexact = u.ran, u.took, u.exact != ""
	for _, c := range u.kinds {
		s.undoCounts.Add(c)
	}
}

func (s *crashStats) setReference(ref *crashRef) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refTook, s.refRan = ref.took, ref.ran
	for _, d := range ref.drift {
		k, _, _ := strings.Cut(d, " ")
		s.drift = append(s.drift, k)
	}
}

func (s *crashStats) add(f func(s *crashStats)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

func (s *crashStats) wall(d time.Duration) {
	s.add(func(s *crashStats) {
		if s.wallMin == 0 || d < s.wallMin {
			s.wallMin = d
		}
		if d > s.wallMax {
			s.wallMax = d
		}
	})
}

func (s *crashStats) failed(group string) { s.add(func(s *crashStats) { s.failedBy[group]++ }) }

// line is the one summary line of make crashtest.
func (s *crashStats) line() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	var b strings.Builder
	fmt.Fprintf(&b, "crashtest %s seed=%d export=%d contacts/batch %d (reference run %s, %s in its process)", *crashDialect, *crashSeed,
		*crashContacts, *crashBatch, ms(s.refRan), ms(s.refTook))
	fmt.Fprintf(&b, " kills=%d (%d SIGKILLs: %d at failpoints, %d wall-clock %s–%s", s.kills, s.killsFP+s.killsWall,
		s.killsFP, s.killsWall, ms(s.wallMin), ms(s.wallMax))
	if s.wallAfter > 0 {
		fmt.Fprintf(&b, " of which %d after the run ended", s.wallAfter)
	}
	fmt.Fprintf(&b, "; %d killed again while resuming, %d resumes of a partial run killed)", s.resumeKills, s.partialKill)
	total := 0
	for _, n := range s.stops {
		total += n
	}
	fmt.Fprintf(&b, " stops=%d (%d SIGTERM, %d SIGINT, %d stop; %d cancelled, %d ended first)", total,
		s.stops["SIGTERM"], s.stops["SIGINT"], s.stops["stop"], s.stopsCancel, s.stopsEarly)
	fmt.Fprintf(&b, " races=%d×%d (%d admitted exactly one) tenants=%d faults=%d", s.races, *crashRacers, s.racesOK, s.tenants, s.faults)
	b.WriteString(s.undoLine())
	b.WriteString(s.deltaLine())
	if len(s.drift) > 0 {
		fmt.Fprintf(&b, "; the reference differs from fixtures/gen's model in %s (see -v)", strings.Join(s.drift, ", "))
	}
	failed := 0
	var groups []string
	for g, n := range s.failedBy {
		failed += n
		groups = append(groups, fmt.Sprintf("%s %d", g, n))
	}
	sort.Strings(groups)
	if failed == 0 {
		b.WriteString("; all equal to the reference")
	} else {
		fmt.Fprintf(&b, "; %d FAILED (%s)", failed, strings.Join(groups, ", "))
	}
	fmt.Fprintf(&b, "; %s", time.Since(s.start).Round(time.Second))
	return b.String()
}

// printCrashSummary prints the summary line after the tests when asked
// (-crash.summary, which make crashtest sets) and the suite ran.
func printCrashSummary() {
	if *crashSummary && stats.ran {
		fmt.Println(stats.line())
	}
}

// sleepUntilStartAt is the child side of an admission race: with
// CRMIMPORT_TEST_START_AT (unix nanoseconds) the child sleeps until then, so
// that several children call `run` at the same instant.
func sleepUntilStartAt() {
	at := os.Getenv("CRMIMPORT_TEST_START_AT")
	if at == "" {
		return
	}
	n, err := strconv.ParseInt(at, 10, 64)
	if err != nil {
		panic("CRMIMPORT_TEST_START_AT: " + err.Error())
	}
	time.Sleep(time.Until(time.Unix(0, n)))
}

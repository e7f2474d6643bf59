package main

// Stops at random instants (R14): SIGTERM, SIGINT and `crmimport stop RUN`
// from another process; the run ends cancelled (exit 5) with the batch in
// flight committed whole, and resume finishes it as an uninterrupted run
// would have.

import (
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"crmimport/phases"
	"crmimport/store"
)

func crashStopsGroup(t *testing.T, ref *crashRef) {
	cases(t, *crashStops, func(t *testing.T, n int) {
		c := newCase(t, "Stops", n)
		r := caseRand("Stops", n)
		how := []string{"SIGTERM", "SIGINT", "stop"}[(n-1)%3]
		// Half the runs wait a while at one batch, so that some stops
		// land between batches and some in the middle of one.
		var fp string
		var pause time.Duration
		if r.IntN(2) == 0 {
			pts := ref.batchPoints()
			pause = time.Duration(50+r.IntN(150)) * time.Millisecond
			fp = pts[r.IntN(len(pts))] + "=sleep:" + pause.String()
		}
		// Counted from the moment the run is planned, most stops land
		// while it works, a few after it ended.
		frac := 0.9 * r.Float64()
		delay := time.Duration(frac * float64(ref.ran+pause))
		killResume := r.IntN(4) == 0
		c.point = fmt.Sprintf("run[%s] + %s after %s (%.0f%% of the reference run) once the run is planned", fp, how,
			delay.Round(time.Millisecond), 100*frac)

		path := dbPath(t)
		env := map[string]string{}
		if fp != "" {
			env["CRMIMPORT_FAILPOINTS"] = fp
		}
		p := startProc(t, env, runArgs(path, crashTenant, ref)...)
		id, planned := waitPlanned(c, path, p)
		var stopper *proc
		if !planned {
			c.fatalf("the run ended before the test saw it planned; stderr:\n%s", p.c.stderr.String())
		}
		time.Sleep(delay)
		sig := map[string]syscall.Signal{"SIGTERM": syscall.SIGTERM, "SIGINT": syscall.SIGINT}[how]
		if sig != 0 {
			_ = p.c.cmd.Process.Signal(sig) // an error: it has ended already
		} else {
			stopper = startProc(t, nil, "--db", path, "--json", "stop", strconv.FormatInt(id, 10))
		}
		res := p.result(t, 0)
		if sig != 0 && res.signal == sig {
			// The signal came once the run was over and its handler gone,
			// as the process exited: the default action ended it. Fine if
			// the run had finished and said so.
			if sum, err := decodeSummary(res.stdout); err != nil || sum.Status != ref.status {
				c.fatalf("%s killed the process before its run finished (exit %d); stdout:\n%s\nstderr:\n%s", how, res.code, res.stdout, res.stderr)
			}
			t.Logf("%s came as the process exited, its run finished", how)
			res.signal, res.code = 0, ref.code
		}
		cancelled := res.code == exitCancelled
		if !cancelled && res.code != ref.code {
			c.fatalf("want exit 5 (cancelled) or, if the run ended first, %d: got %d; stderr:\n%s", ref.code, res.code, res.stderr)
		}
		if stopper != nil {
			sr := stopper.result(t, 0)
			ok := sr.code == exitOK && strings.Contains(sr.stdout, fmt.Sprintf(`"stopped": %v`, cancelled))
			if !cancelled && sr.code == exitError && strings.Contains(sr.stderr, "is not running") {
				ok = true // the run ended before `stop` read it
			}
			if !ok {
				msg := fmt.Sprintf("crmimport stop %d (run exit %d): exit %d\nstdout: %s\nstderr: %s", id, res.code, sr.code, sr.stdout, sr.stderr)
				c.failNow(msg)
			}
		}
		st := afterStep(c, path, ref, crashStep{cmd: "run", fp: fp}, res)
		if cancelled {
			if how != "stop" && !strings.Contains(res.stderr, "stopping after the current batch") {
				c.fatalf("%s: the run did not say it was stopping; stderr:\n%s", how, res.stderr)
			}
			if st.status != string(phases.RunCancelled) {
				c.fatalf("exit 5, but the run is %s", st.status)
			}
			checkCheckpoints(c, path)
			if q := query(t, path, `SELECT kind || ':' || status FROM migration_tasks WHERE status IN ('pending', 'running')`); len(q) > 0 {
				c.fatalf("R14: a cancelled run still has queued tasks: %v", q)
			}
		}
		stats.add(func(s *crashStats) {
			s.stops[how]++
			if cancelled {
				s.stopsCancel++
			} else {
				s.stopsEarly++
			}
		})
		if cancelled && killResume {
			// R8 after R14: a resume of the cancelled run, killed at a
			// failpoint it passes, then resumed again.
			pts := reachable(c, path, st.id, ref)
			kp := pts[r.IntN(len(pts))]
			s := crashStep{cmd: "resume", fp: kp + "=exit", expect: "kill"}
			c.point += " → " + s.String()
			st = afterStep(c, path, ref, s, runStep(t, path, s, ref, st.id))
		}
		if !st.finished {
			c.point += " → resume"
		}
		finish(c, path, ref, st)
		t.Logf("%s: exit %d after %s", c.point, res.code, res.took.Round(time.Millisecond))
	})
}

// waitPlanned waits until the child's run is planned (its row is running)
// and returns its id; planned is false when the child ended first. It polls
// through a read-only connection: in WAL mode a reader never waits for the
// writer, whereas store.Open may begin a write transaction (the schema
// check) and then wait behind the run's batches.
func waitPlanned(c *crashCase, path string, p *proc) (id int64, planned bool) {
	c.t.Helper()
	deadline := time.Now().Add(childTimeout)
	var db *sql.DB
	defer func() {
		if db != nil {
			db.Close()
		}
	}()
	for time.Now().Before(deadline) {
		if db == nil && store.IsAddress(path) {
			var err error
			if db, err = store.PostgresDB(path); err != nil {
				c.fatalf("open %s: %v", path, err)
			}
		}
		if db == nil {
			if _, err := os.Stat(path + "-wal"); err == nil { // the child has opened it, in WAL mode
				var err error
				if db, err = sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(10000)"); err != nil {
					c.fatalf("open %s: %v", path, err)
				}
			}
		}
		if db != nil {
			err := db.QueryRow(`SELECT id FROM migrations WHERE tenant_id = ? AND status = 'running'`, crashTenant).Scan(&id)
			switch {
			case err == nil:
				return id, true
			case err != sql.ErrNoRows && !strings.Contains(err.Error(), "no such table") &&
				!strings.Contains(err.Error(), "does not exist"): // on PostgreSQL, the schema not made yet
				c.fatalf("poll %s: %v", path, err)
			}
		}
		if p.ended() {
			return 0, false
		}
		time.Sleep(2 * time.Millisecond)
	}
	c.fatalf("no run was planned in %s", childTimeout)
	return 0, false
}

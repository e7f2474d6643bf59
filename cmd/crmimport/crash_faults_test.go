package main

// Write faults: a batch's commit fails as on a full disk (SQLite's own
// "database or disk is full", through PRAGMA max_page_count; PostgreSQL's
// own disk_full: failpoint commit:KIND:N=full). The batch rolls back whole, its task fails, the
// later phases are cancelled (R7), the run ends partial — or failed, when
// nothing was accounted for yet (R9) — and resume finishes it once the
// fault is gone (R8, R12). And a database that cannot be created is a clear
// error that leaves nothing behind.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func crashFaultsGroup(t *testing.T, ref *crashRef) {
	cases(t, *crashFaults, func(t *testing.T, n int) {
		c := newCase(t, "WriteFaults", n)
		r := caseRand("WriteFaults", n)
		pts := ref.batchPoints()
		first := crashStep{cmd: "run", fp: "commit:" + strings.TrimPrefix(pts[r.IntN(len(pts))], "batch:") + "=full", expect: "fault"}
		c.point = first.String()
		path := dbPath(t)
		st := checkFault(c, path, ref, first, runStep(t, path, first, ref))
		checkCheckpoints(c, path)
		if n%2 == 0 {
			// The disk fills up again while resuming, at a batch the
			// resume passes.
			var left []string
			for _, p := range reachable(c, path, st.id, ref) {
				if strings.HasPrefix(p, "batch:") {
					left = append(left, p)
				}
			}
			again := crashStep{cmd: "resume", fp: "commit:" + strings.TrimPrefix(left[r.IntN(len(left))], "batch:") + "=full", expect: "fault"}
			c.point += " → " + again.String()
			st = checkFault(c, path, ref, again, runStep(t, path, again, ref, st.id))
			checkCheckpoints(c, path)
		}
		c.point += " → resume"
		finish(c, path, ref, st)
		stats.add(func(s *crashStats) { s.faults++ })
		t.Logf("%s", c.point)
	})
}

// crashBadPath: a database whose folder is a regular file (not a permission
// problem: CI runs as root) or does not exist is an error before any run
// (exit 1) that names the path, and nothing is created.
func crashBadPath(t *testing.T, ref *crashRef) {
	c := newCase(t, "DatabasePathCannotBeCreated", 1)
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, []byte("not a folder\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, says string }{
		{filepath.Join(plain, "crm.db"), plain + " is not a folder"},
		{filepath.Join(dir, "missing", "crm.db"), "folder " + filepath.Join(dir, "missing") + " does not exist"},
	} {
		for _, args := range [][]string{
			runArgs(tc.path, crashTenant, ref),
			{"--db", tc.path, "--json", "resume", "1"},
			{"--db", tc.path, "--json", "stop", "1"},
			{"--db", tc.path, "--json", "runs"},
		} {
			c.point = strings.Join(args[2:4], " ") + " --db " + tc.path
			res := startProc(t, nil, args...).result(t, 0)
			var doc map[string]any
			_ = jsonUnmarshal(res.stdout, &doc)
			msg, _ := doc["error"].(string)
			if res.code != exitError || !strings.Contains(msg, "open database "+tc.path) || !strings.Contains(msg, tc.says) {
				c.fatalf("want exit 1 and an error naming %s (%q), got exit %d: %s\nstderr: %s", tc.path, tc.says, res.code, res.stdout, res.stderr)
			}
			if !strings.HasPrefix(res.stderr, "crmimport: open database "+tc.path) {
				c.fatalf("stderr should say what went wrong: %s", res.stderr)
			}
		}
	}
	var names []string
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if b, _ := os.ReadFile(plain); !slices.Equal(names, []string{"plain"}) || string(b) != "not a folder\n" {
		c.fatalf("something was left behind: %v, plain holds %q", names, b)
	}
}

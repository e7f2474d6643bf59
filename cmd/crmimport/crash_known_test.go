package main

// Reproductions of engine bugs the crash suite found, kept as tests of
// their fixes: each failed every time before its fix.
//
//	go test ./cmd/crmimport -run TestFixedEngineBugs -v

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"crmimport/fixtures/gen"
)

var crashOpenRaces = flag.Int("crash.openraces", 10, "TestFixedEngineBugs/open-races-wal: rounds of 8 processes opening one new file")

func TestFixedEngineBugs(t *testing.T) {
	t.Parallel()

	// stop-starves: `crmimport stop` from another process stops a busy run
	// after its batch in flight (R14), promptly, and says so (exit 0,
	// "stopped": true); the run ends cancelled (exit 5).
	t.Run("stop-starves", func(t *testing.T) {
		dir := t.TempDir()
		if _, err := gen.Write(dir, gen.Config{Contacts: 3000, Seed: 1, Dirty: true, NoteMax: 400}); err != nil {
			t.Fatal(err)
		}
		ref := &crashRef{export: dir}
		for try := 1; try <= 3; try++ {
			c := &crashCase{t: t, group: "KnownEngineBugs", n: try, point: "stop a busy run"}
			path := filepath.Join(t.TempDir(), "crm.db")
			p := startProc(t, nil, runArgs(path, crashTenant, ref)...)
			id, planned := waitPlanned(c, path, p)
			if !planned {
				t.Fatalf("try %d: the run ended before it was seen planned", try)
			}
			time.Sleep(200 * time.Millisecond)
			start := time.Now()
			sr := startProc(t, nil, "--db", path, "--json", "stop", strconv.FormatInt(id, 10)).result(t, 0)
			took := time.Since(start)
			res := p.result(t, 0)
			// No limit on how long the stop took: these machines are shared,
			// and a wall-clock bound would fail on a busy one. Before the fix
			// the stop failed outright or came after the run had ended.
			if sr.code != exitOK || !strings.Contains(sr.stdout, `"stopped": true`) || res.code != exitCancelled {
				t.Fatalf("try %d: stop took %s and exited %d (%s%s); the run exited %d (want stop 0 \"stopped\": true, run 5)",
					try, took.Round(time.Millisecond), sr.code, strings.TrimSpace(sr.stdout), strings.TrimSpace(sr.stderr), res.code)
			}
		}
	})

	// open-races-wal: several processes opening a file that does not
	// exist yet all succeed (busy timeout), none says "database is locked".
	// Each imports for a tenant of its own (a command that only reads
	// never makes a file).
	t.Run("open-races-wal", func(t *testing.T) {
		export := t.TempDir()
		if err := os.WriteFile(filepath.Join(export, "companies.csv"), []byte("id,name\nco1,Acme\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		for try := 1; try <= *crashOpenRaces; try++ {
			path := filepath.Join(t.TempDir(), "crm.db")
			var ps []*proc
			for i := range 8 {
				ps = append(ps, startProc(t, nil, "--db", path, "--json", "run", "--tenant", fmt.Sprintf("t%d", i),
					"--source", "canonical", export))
			}
			for i, p := range ps {
				if res := p.result(t, 0); res.code != exitOK {
					t.Fatalf("try %d, process %d of 8 opening a new %s at once: exit %d: %s", try, i+1, path, res.code, res.stdout)
				}
			}
			if _, err := os.Stat(path); err != nil {
				t.Fatal(fmt.Errorf("try %d: %w", try, err))
			}
		}
	})
}

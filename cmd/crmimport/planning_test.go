package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"crmimport/store/storetest"
)

// TestPlanningRefusesWhatIsNotAFile: issue 11 item 12. A contacts.csv that
// is a named pipe, or a link to a device, is refused before any run exists,
// naming it (exit 1) — it used to hang the open, or read /dev/zero forever.
func TestPlanningRefusesWhatIsNotAFile(t *testing.T) {
	t.Parallel()
	for name, make := range map[string]func(t *testing.T, p string){
		"NamedPipe": func(t *testing.T, p string) { require.NoError(t, syscall.Mkfifo(p, 0o600)) },
		"LinkToDevZero": func(t *testing.T, p string) {
			require.NoError(t, os.Symlink("/dev/zero", p))
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := writeExport(t, map[string]string{"companies.csv": storyCompanies})
			make(t, filepath.Join(dir, "contacts.csv"))
			storetest.RunAddress(t, func(t *testing.T, path string) {
				for _, input := range []string{dir, filepath.Join(dir, "contacts.csv")} {
					r := crm(t, nil, "--db", path, "--json", "run", "--tenant", "acme", "--source", "canonical", input)
					require.Equal(t, exitError, r.code, r.stderr)
					require.Contains(t, r.stderr, "contacts.csv: is a ")
					require.Contains(t, r.stderr, "not a file: crmimport reads files, folders and zips")
					require.Equal(t, []string{"0"}, query(t, path, `SELECT count(*) FROM migrations`), "no run")
				}
			})
		})
	}
}

// TestStopWhilePlanning: issue 11 item 12. Planning reads every byte of the
// export (fingerprints, R10); a stop while it reads a file of many
// gigabytes ends it there: exit 5, no run (none is named, none exists),
// and the message says nothing was written. The file here is 8 TiB (sparse:
// it takes no disk), which a planning that did not stop would read for
// hours.
func TestStopWhilePlanning(t *testing.T) {
	t.Parallel()
	dir := writeExport(t, map[string]string{"companies.csv": storyCompanies})
	big := filepath.Join(dir, "contacts.csv")
	require.NoError(t, os.WriteFile(big, []byte("id,first_name\nc1,Ann\n"), 0o600))
	require.NoError(t, os.Truncate(big, 8<<40))
	storetest.RunAddress(t, func(t *testing.T, path string) {
		c := startChild(t, nil, "--db", path, "--json", "run", "--tenant", "acme", "--source", "canonical", dir)
		waitReading(t, c, big)
		require.NoError(t, c.cmd.Process.Signal(syscall.SIGTERM))
		require.Equal(t, exitCancelled, c.wait(t), c.stderr.String())
		require.Contains(t, c.stderr.String(), "stopping before any run is planned or resumed: nothing is written")
		require.NotContains(t, c.stderr.String(), "crmimport resume")
		var doc map[string]any
		require.NoError(t, json.Unmarshal(c.stdout.Bytes(), &doc), c.stdout.String())
		require.Equal(t, "stopped while planning (reading the export's files), before any run existed: nothing was written", doc["error"])
		require.Equal(t, float64(exitCancelled), doc["exit_code"])
		require.Equal(t, []string{"0"}, query(t, path, `SELECT count(*) FROM migrations`), "no run row")
	})
}

// waitReading waits until the child process has file open (Linux: its
// /proc fd table): planning has begun, the signal handler is in place.
func waitReading(t *testing.T, c *childProc, file string) {
	t.Helper()
	fds := fmt.Sprintf("/proc/%d/fd", c.cmd.Process.Pid)
	for i := 0; i < 3000; i++ {
		entries, _ := os.ReadDir(fds)
		for _, e := range entries {
			if target, err := os.Readlink(filepath.Join(fds, e.Name())); err == nil && target == file {
				return
			}
		}
		if c.cmd.ProcessState != nil {
			t.Fatalf("the child ended before it read %s: %s", file, c.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the child never opened %s", file)
}

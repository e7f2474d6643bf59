package storetest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// Locks is what a second process sees of the POSIX locks that SQLite's
// connections hold on a database in WAL mode: each names the process that
// holds the lock (its pid), 0 for none. Every open connection holds a
// read lock on the database file's shared range and on the -shm file's
// "dead man switch" byte for as long as it is open (that is how a closing
// connection knows it is not the last one and must not delete the -wal);
// a write transaction holds the -shm file's write lock. A process that
// closes any descriptor of one of those files outside SQLite drops them
// all, and the second process then sees none.
type Locks struct {
	Shared int `json:"shared"` // a read lock on the database file's shared range
	DMS    int `json:"dms"`    // a read lock on the -shm file's dead man switch
	Writer int `json:"writer"` // the -shm file's write lock: a write transaction
}

// lockProbe is the variable under which the test binary, started again as
// a second process by ProbeLocks, reports the locks on a file and exits
// (Tests, before any test runs).
const lockProbe = "CRMIMPORT_TEST_LOCKPROBE"

// ProbeLocks starts the test binary again as a second process, which
// reports the locks that other processes hold on the SQLite database at
// path (F_GETLK: a process never sees its own). The package's TestMain
// must go through Main or Tests.
func ProbeLocks(t testing.TB, path string) Locks {
	t.Helper()
	if !pg.main.Load() {
		t.Fatal("storetest: ProbeLocks starts the test binary again: add `func TestMain(m *testing.M) { storetest.Main(m) }`")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), lockProbe+"="+path)
	out, err := cmd.Output()
	require.NoError(t, err, "the lock probe of %s", path)
	var l Locks
	require.NoError(t, json.Unmarshal(out, &l), "the lock probe said: %s", out)
	return l
}

// probeMain is the second process of ProbeLocks: it prints the locks on
// the file named in lockProbe and says whether it could tell.
func probeMain(path string) int {
	l, err := probe(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "lock probe:", err)
		return 1
	}
	if err := json.NewEncoder(os.Stdout).Encode(l); err != nil {
		fmt.Fprintln(os.Stderr, "lock probe:", err)
		return 1
	}
	return 0
}

// Command crmimport imports CRM exports into one local SQLite file through
// an idempotency ledger: every run is safe to repeat, stop, kill and resume.
package main

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"runtime/pprof"

	"golang.org/x/term"
)

// memoryLimit is the Go heap's soft limit: the garbage collector works
// harder near it instead of letting the heap double past the run's index
// (about 100 MiB at four times the seed's scale). GOMEMLIMIT overrides it.
const memoryLimit = 176 << 20

func main() {
	limitMemory()
	a := newApp(os.Stdout, os.Stderr, os.Getenv)
	a.signals = true
	a.stdin = os.Stdin
	a.asking = func() bool { return term.IsTerminal(int(os.Stdin.Fd())) && term.IsTerminal(int(os.Stderr.Fd())) }
	os.Exit(profiled(os.Getenv("CRMIMPORT_CPUPROFILE"), func() int { return a.run(context.Background(), os.Args) }))
}

// limitMemory sets the heap's soft limit (memoryLimit) unless GOMEMLIMIT
// says otherwise; the tests' child processes set it as main does.
func limitMemory() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
}

// profiled runs f, writing a CPU profile of it to path when path is set
// (CRMIMPORT_CPUPROFILE: for `go tool pprof`, as the bench's figures were
// found; not a flag, since it is no user's business).
func profiled(path string, f func() int) int {
	if path == "" {
		return f()
	}
	out, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "crmimport: CRMIMPORT_CPUPROFILE:", err)
		return f()
	}
	defer out.Close()
	defer pprof.StopCPUProfile()
	return f()
}

// Command crmimport imports CRM exports into one local SQLite file through
// an idempotency ledger: every run is safe to repeat, stop, kill and resume.
package main

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"time"

	"golang.org/x/term"
)

// memoryLimit is the Go heap's soft limit: the garbage collector works
// harder near it instead of letting the heap double past the run's index
// (132 to 153 MB live at four times the seed's scale). GOMEMLIMIT overrides
// it.
const memoryLimit = 176 << 20

func main() {
	limitMemory()
	a := newApp(os.Stdout, os.Stderr, os.Getenv)
	a.signals = true
	a.stdin = os.Stdin
	a.asking = func() bool { return term.IsTerminal(int(os.Stdin.Fd())) && term.IsTerminal(int(os.Stderr.Fd())) }
	os.Exit(profiled(os.Getenv("CRMIMPORT_CPUPROFILE"), func() int { return a.run(context.Background(), os.Args) }))
}

// A run's index grows with its tenant: at sixteen times the seed's scale
// its live heap passed memoryLimit, and a limit under the live heap makes
// the collector run without pause (a fifth of that run's CPU: issue 28).
// So the limit follows the live heap (limitFor) up to maxMemoryLimit,
// which keeps that run's memory under 1 GiB.
const maxMemoryLimit = 768 << 20

// limitFor is the soft limit for a live heap of live bytes: as much room
// above it as the collector's own pace gives (twice the live heap), less
// memorySlack, and never above maxMemoryLimit.
func limitFor(live uint64) int64 {
	return min(max(2*int64(live)-memorySlack, memoryLimit), maxMemoryLimit)
}

// memorySlack keeps the limit at memoryLimit up to four times the seed's
// scale, where the memory goal (256 MiB) is the tightest: a live heap of up
// to 160 MiB. The first run of the clean export at that scale holds 153 MB
// live; with half of memoryLimit as the slack, its limit rose to 218 MiB
// and its peak RSS to 270 MiB (issue 28).
const memorySlack = 2*160<<20 - memoryLimit

// limitMemory sets the heap's soft limit (memoryLimit), and has it follow
// the live heap (followLiveHeap), unless GOMEMLIMIT says otherwise; the
// tests' child processes set it as main does.
func limitMemory() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
		go followLiveHeap(time.Tick(followEvery))
	}
}

// followEvery is how often the limit is set again from the live heap the
// last collection found.
const followEvery = 250 * time.Millisecond

// followLiveHeap sets the soft limit from the live heap at every tick.
func followLiveHeap(tick <-chan time.Time) {
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	for range tick {
		metrics.Read(live)
		debug.SetMemoryLimit(limitFor(live[0].Value.Uint64()))
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

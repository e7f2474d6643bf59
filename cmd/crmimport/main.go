// Command crmimport imports CRM exports into one local SQLite file through
// an idempotency ledger: every run is safe to repeat, stop, kill and resume.
package main

import (
	"context"
	"os"
	"runtime/debug"
)

// memoryLimit is the Go heap's soft limit: the garbage collector works
// harder near it instead of letting the heap double past the run's index
// (about 100 MiB at four times the seed's scale). GOMEMLIMIT overrides it.
const memoryLimit = 176 << 20

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	a := newApp(os.Stdout, os.Stderr, os.Getenv)
	a.signals = true
	os.Exit(a.run(context.Background(), os.Args))
}

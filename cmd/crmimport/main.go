// Command crmimport imports CRM exports into one local SQLite file through
// an idempotency ledger: every run is safe to repeat, stop, kill and resume.
package main

import (
	"context"
	"os"
)

func main() {
	a := newApp(os.Stdout, os.Stderr, os.Getenv)
	a.signals = true
	os.Exit(a.run(context.Background(), os.Args))
}

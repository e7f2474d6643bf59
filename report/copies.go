package report

import (
	"fmt"
	"io"

	"crmimport/store"
)

// WriteLeftCopies says, after the list of runs, which copies of the
// ledger's data dry runs on the server left behind (store.LeftCopies):
// each with what it is, that the next dry run removes it, and the
// statement that drops it now (issue 23 item 22: a killed dry run's copy
// was mentioned nowhere).
func WriteLeftCopies(w io.Writer, copies []store.DryRunCopy) {
	for _, c := range copies {
		fmt.Fprintf(w, "left behind: %s — the next dry run removes it, or drop it now: %s\n", c, c.Drop())
	}
}

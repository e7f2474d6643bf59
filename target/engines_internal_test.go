package target

import (
	"context"
	"testing"

	"crmimport/ledger"
	"crmimport/store"
	"crmimport/store/storetest"
)

// TestEveryEngineIsTaught: the rows' statement and their bulk path know every engine of
// store's, and a third engine fails it, naming it.
func TestEveryEngineIsTaught(t *testing.T) {
	t.Parallel()
	storetest.Taught(t, map[string]func(store.Dialect){
		"target.buildInsertSQL": func(d store.Dialect) { buildInsertSQL(d, ledger.Contact, 2) },
		"target.Writer.copies":  func(d store.Dialect) { (&Writer{d: d}).copies(store.CopyMin) },
		"target.ReadRows": func(d store.Dialect) {
			_, _ = ReadRows(context.Background(), nil, d, ledger.Contact, "acme", []int64{1})
		},
	})
}

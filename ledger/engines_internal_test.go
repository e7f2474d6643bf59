package ledger

import (
	"context"
	"testing"

	"crmimport/store"
	"crmimport/store/storetest"
)

// TestEveryEngineIsTaught: the ledger's choices between engines know every
// engine of store's, and a third engine fails each, naming it.
func TestEveryEngineIsTaught(t *testing.T) {
	t.Parallel()
	storetest.Taught(t, map[string]func(store.Dialect){
		"ledger.claimSQL":      func(d store.Dialect) { claimSQL(d, 1) },
		"ledger.Ledger.copies": func(d store.Dialect) { on := true; (&Ledger{d: d, copying: &on}).copies(store.CopyMin) },
		"ledger.setHashesRows": func(d store.Dialect) { setHashesRows(d) },
		"ledger.FinalSlots": func(d store.Dialect) {
			_, _ = FinalSlots(context.Background(), nil, d, "acme", "canonical", Company, []string{"1"})
		},
		"ledger.LoadFinalAmong": func(d store.Dialect) {
			_ = LoadFinalAmong(context.Background(), nil, d, "acme", "canonical", Company, []string{"1"}, func(string, int64, int64) {})
		},
	})
}

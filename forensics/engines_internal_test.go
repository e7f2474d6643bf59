package forensics

import (
	"context"
	"testing"

	"crmimport/ledger"
	"crmimport/store"
	"crmimport/store/storetest"
)

// TestEveryEngineIsTaught: the load's choices between engines know every
// engine of store's, and a third engine fails each, naming it. (The
// readers' choices, which take a handle, are listed by store's
// TestEveryEngineChoiceIsANamedCase.)
func TestEveryEngineIsTaught(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	loading := func(d store.Dialect) *loader {
		return &loader{d: d, sum: &LoadSummary{Runs: []int64{1}, Tasks: 1, Placeholders: map[string]int{}},
			rows: map[ledger.Kind]*rows{ledger.Company: {}}}
	}
	storetest.Taught(t, map[string]func(store.Dialect){
		"forensics.loader.advanceIdentities": func(d store.Dialect) { _ = loading(d).advanceIdentities(ctx) },
		"forensics.loader.writePlaceholders": func(d store.Dialect) { _ = loading(d).writePlaceholders(ctx) },
	})
}

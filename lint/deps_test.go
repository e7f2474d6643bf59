package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEachRuleNamesWhatBrokeIt: the module's graph as STYLE §1 draws it
// breaks no rule; each bad import added to it breaks its rule, and the
// finding names the package, the import and the rule.
func TestEachRuleNamesWhatBrokeIt(t *testing.T) {
	t.Parallel()
	good := func() map[string][]string {
		return map[string][]string{
			"store": {}, "store/pgtest": {}, "store/storetest": {"store", "store/pgtest"},
			"ledger": {"store"}, "ledger/ledgertest": {"ledger"}, "canon": {"ledger"}, "target": {"canon", "ledger", "store"},
			"phases": {"ledger", "store"}, "importer": {"phases", "ledger", "canon", "target"}, "runs": {"importer", "phases"},
			"desktop": {"runs"}, "cmd/crmimport": {"runs", "desktop"}, "bench": {"store/pgtest", "ledger"},
			"cmd/crmbench": {"store/pgtest"}, "lint": {},
		}
	}
	require.Empty(t, breaks(good(), rules))
	for _, tc := range []struct{ pkg, dep, rule string }{
		{"store", "visible", "store is the ground floor"},
		{"ledger", "canon", "ledger imports store and nothing else"},
		{"phases", "importer/reader", "phases never imports importer"},
		{"canon", "phases", "canon and target stand just above ledger"},
		{"target", "importer", "canon and target stand just above ledger"},
		{"importer", "cmd/crmimport", "nothing imports cmd/…, lint or bench"},
		{"desktop", "bench", "nothing imports cmd/…, lint or bench"},
		{"report", "lint", "nothing imports cmd/…, lint or bench"},
		{"importer", "ledger/ledgertest", "nothing imports a …test package"},
		{"desktop", "undo", "desktop and cmd/crmimport reach importer, undo and phases only through the application layer runs"},
		{"cmd/crmimport", "importer", "desktop and cmd/crmimport reach importer, undo and phases only through the application layer runs"},
		{"cmd/crmimport", "phases", "desktop and cmd/crmimport reach importer, undo and phases only through the application layer runs"},
	} {
		g := good()
		g[tc.pkg] = append(g[tc.pkg], tc.dep)
		found := breaks(g, rules)
		require.Len(t, found, 1, "%s imports %s: %q", tc.pkg, tc.dep, found)
		require.Contains(t, found[0], tc.pkg+" imports "+tc.dep+": "+tc.rule)
	}

}

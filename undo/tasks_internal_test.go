package undo

import (
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/canon/canontest"
	"crmimport/ledger"
	"crmimport/phases"
)

// TestTaskSpecsOfANewKind: a kind added to canon's table in this test
// alone is undone in its own task, before its company's (R16: children
// first, so that every foreign key holds at every commit).
func TestTaskSpecsOfANewKind(t *testing.T) {
	t.Parallel()
	tbl := canontest.WithKind(t, canontest.Ticket())
	counts := map[ledger.Kind]phases.Counts{ledger.Company: {Removed: 2}, "ticket": {Removed: 3, Released: 1}, ledger.Note: {Cleared: 4}}
	require.Equal(t, []phases.TaskSpec{
		{Kind: ledger.Note, Phase: 2, File: "undo:run:7", Size: 4},
		{Kind: "ticket", Phase: 3, File: "undo:run:7", Size: 4},
		{Kind: ledger.Company, Phase: 5, File: "undo:run:7", Size: 2},
	}, taskSpecs(tbl, counts, "undo:run:7"))
}

// TestTaskSpecsChildrenFirst: every kind of the table in an undo's phase
// later than the phases of the kinds that link to it.
func TestTaskSpecsChildrenFirst(t *testing.T) {
	t.Parallel()
	tbl := canon.KindTable()
	counts := map[ledger.Kind]phases.Counts{}
	for _, k := range tbl.Kinds() {
		counts[k] = phases.Counts{Removed: 1}
	}
	phase, place := map[ledger.Kind]int{}, map[ledger.Kind]int{}
	for i, s := range taskSpecs(tbl, counts, "f") {
		phase[s.Kind], place[s.Kind] = s.Phase, i
	}
	require.Len(t, phase, len(tbl))
	for _, d := range tbl {
		for _, p := range canon.ParentKinds(d.Kind) {
			// An earlier phase, or earlier in its own: a phase runs its
			// tasks in the order they were planned (a company before its
			// owner, a user).
			require.LessOrEqual(t, phase[d.Kind], phase[p], "%s before its parent %s", d.Kind, p)
			require.Less(t, place[d.Kind], place[p], "%s before its parent %s", d.Kind, p)
		}
	}
	require.Equal(t, map[ledger.Kind]int{ledger.Activity: 1, ledger.Email: 1, ledger.Note: 2, ledger.Deal: 3, ledger.Lead: 4, ledger.Contact: 4,
		ledger.Company: 5, ledger.User: 5}, phase)
}

package desktop

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/phases"
	"crmimport/report"
)

// TestApplyAction (R17): "Apply these changes" is offered for a run that
// found outdated records --update would apply, disabled with its reason
// while the run is live or when it was loaded from a dump, and not at all
// for a run that was itself an update, an undo, or found none to apply.
func TestApplyAction(t *testing.T) {
	t.Parallel()
	rep := func(options string, applicable int64) *report.Report {
		return &report.Report{Run: phases.Run{ID: 1, Options: json.RawMessage(options)},
			Changes: []report.KindChanges{{Kind: "contact", Outdated: 3, Applicable: applicable}}}
	}
	const plain = `{"input":"/x","batch_size":500}`
	require.Equal(t, action{Label: "Apply these changes — 2 records", OK: true}, applyAction(rep(plain, 2), false))
	require.Equal(t, action{Label: "Apply these changes — 1 record", OK: true}, applyAction(rep(plain, 1), false))
	live := applyAction(rep(plain, 2), true)
	require.False(t, live.OK, "a live run's changes wait for its end")
	require.Equal(t, "the run is working: it can be applied once it has ended", live.Why)
	dumped := rep(plain, 2)
	dumped.Dump = "prod.dump"
	require.False(t, applyAction(dumped, false).OK)
	require.Empty(t, applyAction(rep(plain, 0), false).Label, "nothing to apply: no button")
	require.Empty(t, applyAction(rep(`{"input":"/x","update":"apply"}`, 2), false).Label, "an update run offers no update of itself")
	undo := rep(plain, 2)
	undo.Run.Undoes = 7
	require.Empty(t, applyAction(undo, false).Label)
}

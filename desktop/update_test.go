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
		return &report.Report{Run: phases.Run{ID: 1, Tenant: "acme", Source: "hubspot", Options: json.RawMessage(options)},
			Changes: []report.KindChanges{{Kind: "contact", Outdated: 3, Applicable: applicable}}}
	}
	const plain = `{"input":"/x y","batch_size":500,"profile":"hubspot","only":["contact","deal"]}`
	link := "/import?from=1&only=contact%2Cdeal&path=%2Fx+y&profile=hubspot&source=hubspot&tenant=acme&update=1"
	require.Equal(t, action{Label: "Apply these changes — 2 records", OK: true, Href: link}, applyAction(rep(plain, 2), false),
		"New import with the run's options and --update: a dry run, then its plan")
	require.Equal(t, "Apply these changes — 1 record", applyAction(rep(plain, 1), false).Label)
	custom := applyAction(rep(`{"input":"/x","profile":"zoho","profile_file":"/p/zoho.yaml"}`, 1), false)
	require.Contains(t, custom.Href, "profile=%2Fp%2Fzoho.yaml", "a custom profile by its file")
	zips := applyAction(rep(`{"input":"/a_1.zip","inputs":["/a_2.zip"]}`, 1), false)
	require.False(t, zips.OK, "New import takes one path")
	require.Contains(t, zips.Why, "several zips")
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

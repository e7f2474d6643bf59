package undo_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store/storetest"
	"crmimport/undo"
)

// TestUndoConfirmsThePlanItShowed (R16; SPEC §11: a preview and its commit
// are the same plan): the preview's digest covers every item, not the
// counts; an undo that carries it commits that very plan or nothing,
// naming what changed — by run, kind and fate when the preview's parts
// come back with it (the page), else what the plan is now (--plan).
func TestUndoConfirmsThePlanItShowed(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		first := w.run(export(t, map[string]string{"companies.csv": "id,name\nco1,Acme\nco2,Beta\n"}), "canonical")
		second := w.run(export(t, map[string]string{"contacts.csv": "id,first_name,company_id\nc1,Ann,co1\nc2,Bob,\n"}), "canonical")
		shown, err := undo.Build(ctx, db, w.imp.Engine, first.ID, true)
		require.NoError(t, err)
		require.Len(t, shown.Digest, 64)
		require.Equal(t, []undo.PlanPart{
			{Run: first.ID, Kind: "company", Fate: "removed", Count: 2},
			{Run: second.ID, Kind: "contact", Fate: "removed", Count: 1},
		}, shown.Parts)
		v := shown.Preview()
		require.Equal(t, shown.Digest, v.Plan, "the preview carries the digest")
		b, err := json.Marshal(v)
		require.NoError(t, err)
		require.Contains(t, string(b), `"plan":"`+shown.Digest+`"`)
		again, err := undo.Build(ctx, db, w.imp.Engine, first.ID, true)
		require.NoError(t, err)
		require.Equal(t, shown.Digest, again.Digest, "the same database, the same plan")
		alone, err := undo.Build(ctx, db, w.imp.Engine, second.ID, false)
		require.NoError(t, err)
		require.NotEqual(t, shown.Digest, alone.Digest)

		runs := func() int {
			n, err := phases.ListRuns(ctx, db, tenant)
			require.NoError(t, err)
			return len(n)
		}
		// Another run imports two more contacts of Acme and Beta between the
		// preview and its confirmation (and Eve, of no company).
		w.run(export(t, map[string]string{"contacts.csv": "id,first_name,company_id\nc3,Cy,co1\nc4,Dee,co2\nc5,Eve,\n"}), "canonical")
		before := w.dump()
		_, _, err = undo.StartWith(ctx, w.imp.Engine, undo.Options{Undo: first.ID, Cascade: true, Plan: shown.Digest, Shown: shown.Parts})
		var changed *undo.PlanChangedError
		require.ErrorAs(t, err, &changed)
		require.Contains(t, err.Error(), "the undo of run 1 was not started: its plan changed since the preview: 2 more contacts of run 3 to remove; "+
			"nothing was written — look at it again (`crmimport undo 1 --cascade --dry-run`, or Undo on the run's page)")
		_, _, err = undo.StartWith(ctx, w.imp.Engine, undo.Options{Undo: first.ID, Cascade: true, Plan: shown.Digest})
		require.ErrorAs(t, err, &changed)
		require.Contains(t, err.Error(), "its plan changed since the preview that showed plan "+shown.Digest[:12]+"…: it now would "+
			"remove 2 companies of run 1, 1 contact of run 2 and 2 contacts of run 3; nothing was written")
		require.Equal(t, 3, runs(), "a refused undo leaves no run")
		require.Equal(t, before, w.dump(), "and takes nothing back")

		// The same counts, other records: Cy no longer links to Acme, Eve
		// of the same run does. A plan of counts would not see it.
		shown, err = undo.Build(ctx, db, w.imp.Engine, first.ID, true)
		require.NoError(t, err)
		_, err = db.Exec(`UPDATE contacts SET company_id = NULL WHERE tenant_id = ? AND first_name = 'Cy'`, tenant)
		require.NoError(t, err)
		_, err = db.Exec(`UPDATE contacts SET company_id = (SELECT record_id FROM migration_records WHERE tenant_id = ? AND kind = 'company' AND source_id = 'co1')
			WHERE tenant_id = ? AND first_name = 'Eve'`, tenant, tenant)
		require.NoError(t, err)
		now, err := undo.Build(ctx, db, w.imp.Engine, first.ID, true)
		require.NoError(t, err)
		require.Equal(t, shown.Counts, now.Counts, "as many records of each kind and fate")
		require.NotEqual(t, shown.Digest, now.Digest, "but not the same records")
		_, _, err = undo.StartWith(ctx, w.imp.Engine, undo.Options{Undo: first.ID, Cascade: true, Plan: shown.Digest, Shown: shown.Parts})
		require.ErrorAs(t, err, &changed)
		require.Contains(t, err.Error(), "its plan changed since the preview: as many slots of each run, kind and fate, but not the same ones")
		require.Equal(t, 3, runs())

		// The plan a preview showed, unchanged, is committed, and the undo
		// keeps its digest.
		u, p, err := undo.StartWith(ctx, w.imp.Engine, undo.Options{Undo: first.ID, Cascade: true, Plan: now.Digest, Shown: now.Parts})
		require.NoError(t, err)
		require.Equal(t, now.Digest, p.Digest)
		o, _, err := undo.OptionsOf(u)
		require.NoError(t, err)
		require.Equal(t, now.Digest, o.Plan)
		u, err = w.imp.Engine.Execute(ctx, u.ID, undo.Open(w.imp.Engine.DB))
		require.NoError(t, err)
		require.Equal(t, phases.RunSucceeded, u.Status)
		require.Equal(t, map[ledger.Kind]phases.Counts{ledger.Company: {Removed: 2}, ledger.Contact: {Removed: 3}}, u.Stats,
			"what the confirmed plan showed: Ann, Dee and Eve, not Cy")
		require.Equal(t, 2, countOf(t, db, `SELECT count(*) FROM contacts WHERE tenant_id = ? AND first_name IN ('Bob', 'Cy')`, tenant))
		require.Equal(t, 2, countOf(t, db, `SELECT count(*) FROM contacts WHERE tenant_id = ?`, tenant))
	})
}

func countOf(t *testing.T, db *sql.DB, q string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, db.QueryRow(q, args...).Scan(&n))
	return n
}

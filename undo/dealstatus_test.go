package undo_test

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store/storetest"
)

// dealsExport is a company and three deals, d1's status and pipeline as
// given (issue 26 item 3).
func dealsExport(status, pipeline string) map[string]string {
	return map[string]string{
		"companies.csv": "id,name,domain\nco1,Acme,acme.example\n",
		"deals.csv": "id,name,stage,status,pipeline,company_id\n" +
			"d1,Fleet,Negotiation," + status + "," + pipeline + ",co1\n" +
			"d2,Parts,Proposal,,,co1\n" +
			"d3,Spares,Closed,closed,,co1\n",
	}
}

// dealOutcome is deal sourceID's row's status and pipeline.
func dealOutcome(t *testing.T, db *sql.DB, sourceID string) (status, pipeline sql.NullString) {
	t.Helper()
	row, _ := rowOf(t, db, tenant, ledger.Deal, sourceID)
	require.NoError(t, db.QueryRow(`SELECT status, pipeline FROM deals WHERE id = ?`, row).Scan(&status, &pipeline))
	return status, pipeline
}

// TestADealsOutcomeIsImportedUpdatedAndTakenBack: issue 26 item 3 (SPEC §4,
// R17, R16), on both engines. A deal's status and pipeline are written; a
// status that is none of open, won, lost fails its deal alone, saying so;
// a status changed at the source is outdated in that field alone, applied
// by --update and taken back exactly by its undo; and a deal whose slot
// kept its hashes before deals had a status (a text without their places)
// is unchanged on a rerun of the same export.
func TestADealsOutcomeIsImportedUpdatedAndTakenBack(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		w := newWorld(t, db)
		first := w.run(export(t, dealsExport("open", "Enterprise")), "canonical")
		require.Equal(t, phases.RunPartial, first.Status, first.Message)
		require.Equal(t, int64(2), first.Stats[ledger.Deal].Imported, "%+v", first.Stats)
		require.Equal(t, int64(1), first.Stats[ledger.Deal].Failed, "%+v", first.Stats)
		var reason string
		require.NoError(t, db.QueryRow(`SELECT reason FROM record_failures WHERE migration_id = ? AND source_id = 'd3'`, first.ID).Scan(&reason))
		require.Equal(t, `status "closed" is not open, won or lost (a profile maps an export's own words with map:)`, reason)
		status, pipeline := dealOutcome(t, db, "d1")
		require.Equal(t, "open", status.String)
		require.Equal(t, "Enterprise", pipeline.String)
		status, pipeline = dealOutcome(t, db, "d2")
		require.False(t, status.Valid || pipeline.Valid, "no status, no pipeline: NULL")

		// A slot written before deals had a status keeps a text of hashes
		// without their two places.
		var hashes string
		require.NoError(t, db.QueryRow(`SELECT hashes FROM migration_records WHERE tenant_id = ? AND kind = 'deal' AND source_id = 'd2'`, tenant).Scan(&hashes))
		placedPart, rest, _ := strings.Cut(hashes, " ")
		placedText, extras, _ := strings.Cut(rest, " ")
		require.True(t, strings.HasSuffix(placedText, ".."), hashes)
		old := placedPart + " " + strings.TrimSuffix(placedText, "..")
		if extras != "" {
			old += " " + extras
		}
		_, err := db.Exec(`UPDATE migration_records SET hashes = ? WHERE tenant_id = ? AND kind = 'deal' AND source_id = 'd2'`, old, tenant)
		require.NoError(t, err)
		again := w.run(export(t, dealsExport("open", "Enterprise")), "canonical")
		require.Zero(t, again.Stats[ledger.Deal].Outdated, "%+v", again.Stats)
		require.Equal(t, int64(2), again.Stats[ledger.Deal].Unchanged, "%+v", again.Stats)
		before := exactState(t, db)

		v2 := dealsExport("Won", "Enterprise")
		v2["deals.csv"] = strings.Replace(v2["deals.csv"], "d2,Parts,Proposal", "d2,Parts,Negotiation", 1)
		won := w.run(export(t, v2), "canonical")
		require.Equal(t, int64(2), won.Stats[ledger.Deal].Outdated, "%+v", won.Stats)
		for id, want := range map[string]string{"d1": `["status"]`, "d2": `["stage"]`} {
			var fields string
			require.NoError(t, db.QueryRow(`SELECT fields FROM record_changes WHERE migration_id = ? AND source_id = ?`, won.ID, id).Scan(&fields))
			require.Equal(t, want, fields, "%s: the field that changed, read against hashes kept before deals had a status", id)
		}
		status, _ = dealOutcome(t, db, "d1")
		require.Equal(t, "open", status.String, "outdated: nothing written")

		upd := w.runUpdate(export(t, map[string]string{"companies.csv": dealsExport("", "")["companies.csv"],
			"deals.csv": "id,name,stage,status,pipeline,company_id\nd1,Fleet,Negotiation,won,Enterprise,co1\nd2,Parts,Proposal,,,co1\n"}))
		require.Equal(t, int64(1), upd.Stats[ledger.Deal].Updated, "%+v", upd.Stats)
		status, pipeline = dealOutcome(t, db, "d1")
		require.Equal(t, "won", status.String)
		require.Equal(t, "Enterprise", pipeline.String)

		u := w.undo(upd.ID, false)
		require.Equal(t, phases.RunSucceeded, u.Status, u.Message)
		require.Equal(t, int64(1), u.Stats[ledger.Deal].Reverted, "%+v", u.Stats)
		require.Equal(t, before, exactState(t, db), "the deal open again, its slot's hashes as they were")
	})
}

// TestUndoOfAnUpdateKeptBeforeDealsHadAStatus: a before-image kept by an
// update before schema 17 holds no status and no pipeline; its undo gives
// the row back as it was then — without them — instead of refusing.
func TestUndoOfAnUpdateKeptBeforeDealsHadAStatus(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		w := newWorld(t, db)
		v1 := map[string]string{"companies.csv": "id,name,domain\nco1,Acme,acme.example\n",
			"deals.csv": "id,name,stage,company_id\nd1,Fleet,Negotiation,co1\n"}
		w.run(export(t, v1), "canonical")
		before := exactState(t, db)
		v2 := map[string]string{"companies.csv": v1["companies.csv"], "deals.csv": "id,name,stage,company_id\nd1,Fleet,Won,co1\n"}
		upd := w.runUpdate(export(t, v2))
		require.Equal(t, int64(1), upd.Stats[ledger.Deal].Updated, "%+v", upd.Stats)
		var image string
		require.NoError(t, db.QueryRow(`SELECT before_values FROM record_updates WHERE migration_id = ?`, upd.ID).Scan(&image))
		require.Contains(t, image, `"status":null`)
		old := strings.NewReplacer(`,"status":null`, ``, `"pipeline":null,`, ``).Replace(image)
		require.NotContains(t, old, "status")
		_, err := db.Exec(`UPDATE record_updates SET before_values = ? WHERE migration_id = ?`, old, upd.ID)
		require.NoError(t, err)
		u := w.undo(upd.ID, false)
		require.Equal(t, phases.RunSucceeded, u.Status, u.Message)
		require.Equal(t, before, exactState(t, db))
	})
}

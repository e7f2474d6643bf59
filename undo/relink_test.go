package undo_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/importer"
	"crmimport/ledger"
	"crmimport/ledger/ledgertest"
	"crmimport/phases"
	"crmimport/store/storetest"
	"crmimport/undo"
)

// runAs imports dir for tenant as source (canonical profile), in small
// batches, reading only the kinds only names (all when none).
func (w *world) runAs(tn, dir, source string, only ...ledger.Kind) phases.Run {
	w.t.Helper()
	ctx := context.Background()
	run, err := w.imp.Plan(ctx, importer.RunSpec{Tenant: tn, Source: source, Profile: "canonical", Input: dir, BatchSize: 2, Only: only})
	require.NoError(w.t, err)
	run, err = w.imp.Execute(ctx, run.ID)
	require.NoError(w.t, err)
	return run
}

func dumpOf(t *testing.T, db *sql.DB, tn string) string {
	t.Helper()
	d, err := ledgertest.Dump(context.Background(), db, tn)
	require.NoError(t, err)
	return d
}

// A company that fails on a bad value, and a deal (and a contact) that
// name it: imported first with the link empty (R6), completed when the
// company arrives (R6a).
func relinkExport(companyCreated string) map[string]string {
	return map[string]string{
		"companies.csv": "id,name,domain,created_at\nco1,Acme,acme.example," + companyCreated + "\nco9,Other,other.example,\n",
		"deals.csv":     "id,name,amount,company_id\nd1,Big,100,co1\n",
	}
}

const badDate, goodDate = "not a date", "2024-01-02"

func linkOf(t *testing.T, db *sql.DB, tn, table, field, sourceID string) sql.NullInt64 {
	t.Helper()
	var v sql.NullInt64
	require.NoError(t, db.QueryRow(`SELECT t.`+field+` FROM `+table+` t JOIN migration_records r ON r.record_id = t.id
		AND r.tenant_id = t.tenant_id AND r.record_type = ? WHERE r.tenant_id = ? AND r.source_id = ?`, table, tn, sourceID).Scan(&v))
	return v
}

func rowOf(t *testing.T, db *sql.DB, tn string, k ledger.Kind, sourceID string) (row, owner int64) {
	t.Helper()
	require.NoError(t, db.QueryRow(`SELECT record_id, migration_id FROM migration_records WHERE tenant_id = ? AND kind = ? AND source_id = ?`,
		tn, string(k), sourceID).Scan(&row, &owner))
	return row, owner
}

// TestRelinkWhenParentArrives (R6a): a deal imported before its company
// (which failed on a bad value) is linked by the run that imports the
// fixed company, counted relinked on deals, its slot still run 1's; the
// database is then one clean run's. Undo of that run empties the link
// again (unlinked), the deal not a dependent, and a third run completes it
// again.
func TestRelinkWhenParentArrives(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		w := newWorld(t, db)
		first := w.runAs(tenant, export(t, relinkExport(badDate)), "canonical")
		require.Equal(t, int64(1), first.Stats[ledger.Deal].Unlinked)
		require.False(t, linkOf(t, db, tenant, "deals", "company_id", "d1").Valid)
		afterFirst := dumpOf(t, db, tenant)

		fixed := export(t, relinkExport(goodDate))
		second := w.runAs(tenant, fixed, "canonical")
		require.Equal(t, int64(1), second.Stats[ledger.Company].Imported)
		require.Equal(t, int64(1), second.Stats[ledger.Deal].Relinked, "%+v", second.Stats)
		co1, _ := rowOf(t, db, tenant, ledger.Company, "co1")
		require.Equal(t, co1, linkOf(t, db, tenant, "deals", "company_id", "d1").Int64)
		_, owner := rowOf(t, db, tenant, ledger.Deal, "d1")
		require.Equal(t, first.ID, owner, "the deal's slot stays run 1's")

		w.runAs("clean", fixed, "canonical")
		require.Equal(t, dumpOf(t, db, "clean"), dumpOf(t, db, tenant), "broken then fixed ends as one clean run")

		u := w.undo(second.ID, false) // the deal is not a dependent: no cascade needed
		require.Equal(t, int64(1), u.Stats[ledger.Deal].Unlinked, "%+v", u.Stats)
		require.Contains(t, u.Message, "links emptied again (unlinked): deals 1")
		require.False(t, linkOf(t, db, tenant, "deals", "company_id", "d1").Valid)
		require.Equal(t, afterFirst, dumpOf(t, db, tenant), "the undo gives back the state after run 1, the link remembered")

		third := w.runAs(tenant, fixed, "canonical")
		require.Equal(t, int64(1), third.Stats[ledger.Deal].Relinked)
		co1, _ = rowOf(t, db, tenant, ledger.Company, "co1")
		require.Equal(t, co1, linkOf(t, db, tenant, "deals", "company_id", "d1").Int64)
		require.Equal(t, dumpOf(t, db, "clean"), dumpOf(t, db, tenant))
	})
}

// TestRelinkLeavesAHandFilledLink (R6a, R11): a link filled by hand since
// its row was written is not overwritten: the compare-and-set changes no
// row, which is not an error; it is not counted relinked and stays
// remembered.
func TestRelinkLeavesAHandFilledLink(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		w := newWorld(t, db)
		w.runAs(tenant, export(t, relinkExport(badDate)), "canonical")
		co9, _ := rowOf(t, db, tenant, ledger.Company, "co9")
		d1, _ := rowOf(t, db, tenant, ledger.Deal, "d1")
		_, err := db.Exec(`UPDATE deals SET company_id = ? WHERE id = ?`, co9, d1)
		require.NoError(t, err)
		second := w.runAs(tenant, export(t, relinkExport(goodDate)), "canonical")
		require.Equal(t, phases.RunSucceeded, second.Status, second.Message)
		require.Equal(t, int64(0), second.Stats[ledger.Deal].Relinked)
		require.Equal(t, co9, linkOf(t, db, tenant, "deals", "company_id", "d1").Int64)
		var waiting int
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM pending_links WHERE tenant_id = ? AND completed_by IS NULL`, tenant).Scan(&waiting))
		require.Equal(t, 1, waiting)
	})
}

// TestRelinkToAMatchedParent (R5, R6a): a parent matched by its domain
// completes the links that wait for it, as a created one does.
func TestRelinkToAMatchedParent(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		w := newWorld(t, db)
		w.runAs(tenant, export(t, map[string]string{"companies.csv": "id,name,domain\nk1,Acme,acme.example\n"}), "crm2")
		w.runAs(tenant, export(t, relinkExport(badDate)), "canonical")
		second := w.runAs(tenant, export(t, relinkExport(goodDate)), "canonical")
		require.Equal(t, int64(1), second.Stats[ledger.Company].Matched)
		require.Equal(t, int64(1), second.Stats[ledger.Deal].Relinked)
		k1, _ := rowOf(t, db, tenant, ledger.Company, "k1")
		require.Equal(t, k1, linkOf(t, db, tenant, "deals", "company_id", "d1").Int64)
	})
}

// TestRelinkOnlyParents (R6a): `--only companies` after a broken run
// completes the links of deals it does not read.
func TestRelinkOnlyParents(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		w := newWorld(t, db)
		w.runAs(tenant, export(t, relinkExport(badDate)), "canonical")
		second := w.runAs(tenant, export(t, relinkExport(goodDate)), "canonical", ledger.Company)
		require.Equal(t, int64(1), second.Stats[ledger.Deal].Relinked, "%+v", second.Stats)
		co1, _ := rowOf(t, db, tenant, ledger.Company, "co1")
		require.Equal(t, co1, linkOf(t, db, tenant, "deals", "company_id", "d1").Int64)
	})
}

// TestRelinkParentsAlreadyThere (R6a): a link remembered before and still
// waiting though its parent is final already (remembered by an older
// version, or its parent arrived by a run that did not complete it) is
// completed by the next run that reads a file of the parent's kind.
func TestRelinkParentsAlreadyThere(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		w := newWorld(t, db)
		w.runAs(tenant, export(t, relinkExport(badDate)), "canonical")
		w.runAs(tenant, export(t, relinkExport(goodDate)), "canonical")
		// As a run that did not complete it would have left it.
		d1, _ := rowOf(t, db, tenant, ledger.Deal, "d1")
		_, err := db.Exec(`UPDATE deals SET company_id = NULL, extra = '{"company_id":"co1"}' WHERE id = ?`, d1)
		require.NoError(t, err)
		_, err = db.Exec(`UPDATE pending_links SET completed_by = NULL WHERE tenant_id = ?`, tenant)
		require.NoError(t, err)

		more := relinkExport(goodDate)
		more["companies.csv"] += "co3,Third,third.example,\n" // a changed file: its task reads it
		third := w.runAs(tenant, export(t, more), "canonical", ledger.Company)
		require.Equal(t, int64(1), third.Stats[ledger.Deal].Relinked, "%+v", third.Stats)
		co1, _ := rowOf(t, db, tenant, ledger.Company, "co1")
		require.Equal(t, co1, linkOf(t, db, tenant, "deals", "company_id", "d1").Int64)
	})
}

// TestUndoOfTheChildForgetsItsLinks (R16, R6a): the undo of the run that
// wrote a child takes its remembered links with its row.
func TestUndoOfTheChildForgetsItsLinks(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		w := newWorld(t, db)
		first := w.runAs(tenant, export(t, relinkExport(badDate)), "canonical")
		second := w.runAs(tenant, export(t, relinkExport(goodDate)), "canonical")
		require.Equal(t, int64(1), second.Stats[ledger.Deal].Relinked)
		w.undo(first.ID, false)
		var n int
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM pending_links WHERE tenant_id = ?`, tenant).Scan(&n))
		require.Zero(t, n)
		u := w.undo(second.ID, false) // the link it completed went with its child
		require.Equal(t, int64(0), u.Stats[ledger.Deal].Unlinked)
	})
}

// TestUndoPlanCoversRelinks (R6a, SPEC §11): the links a run completed
// are in its undo's plan: a preview whose relinks changed before its
// commit is not the plan committed (PlanChangedError), and the preview
// counts them unlinked on the child's kind.
func TestUndoPlanCoversRelinks(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		w := newWorld(t, db)
		w.runAs(tenant, export(t, relinkExport(badDate)), "canonical")
		second := w.runAs(tenant, export(t, relinkExport(goodDate)), "canonical")
		p, err := undo.Build(ctx, db, w.imp.Engine, second.ID, false)
		require.NoError(t, err)
		require.Equal(t, int64(1), p.Counts[ledger.Deal].Unlinked)
		require.Contains(t, p.Notices, fmt.Sprintf(
			"links that run %d completed when their parents arrived are emptied again and wait for their parents (R6a, counted unlinked): deals 1", second.ID))
		_, inPreview := p.Preview().Kinds[string(ledger.Deal)]
		require.False(t, inPreview, "no deal slot is taken back")
		// The link is no longer the run's to empty (as if emptied and made
		// pending since): the plan is another.
		_, err = db.Exec(`UPDATE pending_links SET completed_by = NULL WHERE completed_by = ?`, second.ID)
		require.NoError(t, err)
		_, _, err = undo.StartWith(ctx, w.imp.Engine, undo.Options{Undo: second.ID, Plan: p.Digest})
		var changed *undo.PlanChangedError
		require.ErrorAs(t, err, &changed)
	})
}

// TestRelinkInALaterBatch (R6a, R12): a parent that arrives in a later
// batch of its task completes its links in that batch, by the parents the
// batch gave a final slot.
func TestRelinkInALaterBatch(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		w := newWorld(t, db)
		broken := relinkExport(badDate)
		w.runAs(tenant, export(t, broken), "canonical")
		fixed := map[string]string{
			"companies.csv": "id,name,domain,created_at\nco7,Seven,seven.example,\nco8,Eight,eight.example,\nco1,Acme,acme.example," + goodDate + "\n",
			"deals.csv":     broken["deals.csv"],
		}
		second := w.runAs(tenant, export(t, fixed), "canonical") // batches of 2: co1 is in the second
		require.Equal(t, int64(1), second.Stats[ledger.Deal].Relinked, "%+v", second.Stats)
		co1, _ := rowOf(t, db, tenant, ledger.Company, "co1")
		require.Equal(t, co1, linkOf(t, db, tenant, "deals", "company_id", "d1").Int64)
	})
}

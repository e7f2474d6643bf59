package undo_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/failpoint"
	"crmimport/importer"
	"crmimport/importer/runopts"
	"crmimport/ledger"
	"crmimport/ledger/ledgertest"
	"crmimport/phases"
	"crmimport/store/storetest"
	"crmimport/undo"
)

// updateExport is a company and two contacts, c1's title as given.
func updateExport(title string) map[string]string { return updateExport2(title, "Sales") }

// updateExport2 is updateExport with c2's title as given too.
func updateExport2(title1, title2 string) map[string]string {
	return map[string]string{
		"companies.csv": "id,name,domain\nco1,Acme,acme.example\n",
		"contacts.csv": "id,first_name,last_name,email,title,company_id\n" +
			"c1,Ann,Lee,ann@acme.example," + title1 + ",co1\nc2,Bob,Ray,bob@acme.example," + title2 + ",co1\n",
	}
}

// runUpdate imports dir under --update (R17).
func (w *world) runUpdate(dir string) phases.Run {
	w.t.Helper()
	ctx := context.Background()
	run, err := w.imp.Plan(ctx, importer.RunSpec{Tenant: tenant, Source: "canonical", Profile: "canonical", Input: dir, BatchSize: 2,
		Update: runopts.UpdateApply})
	require.NoError(w.t, err)
	run, err = w.imp.Execute(ctx, run.ID)
	require.NoError(w.t, err)
	require.Equal(w.t, phases.RunSucceeded, run.Status, run.Message)
	return run
}

// undoEnds takes run id back and returns the undo's run, however it ended.
func (w *world) undoEnds(id int64, cascade bool) phases.Run {
	w.t.Helper()
	ctx := context.Background()
	run, _, err := undo.Start(ctx, w.imp.Engine, id, cascade)
	require.NoError(w.t, err)
	run, err = w.imp.Engine.Execute(ctx, run.ID, undo.Open(w.imp.Engine.DB))
	require.NoError(w.t, err)
	return run
}

// exactState is the tenant's canonical dump (ids and runs included) and
// every slot's digest and hashes (R17), which the dump leaves out.
func exactState(t *testing.T, db *sql.DB) string {
	t.Helper()
	d, err := ledgertest.DumpExact(context.Background(), db, tenant)
	require.NoError(t, err)
	rows, err := db.Query(`SELECT kind, source_id, coalesce(cast(digest AS TEXT), 'null'), coalesce(hashes, 'null')
FROM migration_records WHERE tenant_id = ? ORDER BY kind, source_id`, tenant)
	require.NoError(t, err)
	defer rows.Close()
	var b strings.Builder
	b.WriteString(d)
	for rows.Next() {
		var k, id, digest, hashes string
		require.NoError(t, rows.Scan(&k, &id, &digest, &hashes))
		b.WriteString(k + " " + id + " " + digest + " " + hashes + "\n")
	}
	require.NoError(t, rows.Err())
	return b.String()
}

func titleOf(t *testing.T, db *sql.DB, sourceID string) string {
	t.Helper()
	var title string
	require.NoError(t, db.QueryRow(`SELECT c.title FROM contacts c JOIN migration_records r ON r.record_id = c.id AND r.kind = 'contact'
		WHERE r.tenant_id = ? AND r.source_id = ?`, tenant, sourceID).Scan(&title))
	return title
}

func revertedBy(t *testing.T, db *sql.DB, run int64) []int64 {
	t.Helper()
	rows, err := db.Query(`SELECT coalesce(reverted_by, 0) FROM record_updates WHERE migration_id = ? ORDER BY id`, run)
	require.NoError(t, err)
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var n int64
		require.NoError(t, rows.Scan(&n))
		out = append(out, n)
	}
	require.NoError(t, rows.Err())
	return out
}

// TestUndoGivesUpdatesBack (R16, R17): the undo of a run that updated a
// row gives the row its values and the slot its digest and hashes back,
// counted reverted (in its preview too), and marks the before-image
// reverted by it: the tenant is exactly as before the update.
func TestUndoGivesUpdatesBack(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		w := newWorld(t, db)
		w.run(export(t, updateExport("Engineer")), "canonical")
		before := exactState(t, db)

		upd := w.runUpdate(export(t, updateExport("CTO")))
		require.Equal(t, int64(1), upd.Stats[ledger.Contact].Updated, "%+v", upd.Stats)
		require.Equal(t, "CTO", titleOf(t, db, "c1"))
		require.NotEqual(t, before, exactState(t, db))

		p, err := undo.Build(context.Background(), db, w.imp.Engine, upd.ID, false)
		require.NoError(t, err)
		require.Equal(t, int64(1), p.Counts[ledger.Contact].Reverted, "the plan counts the update reverted")
		require.Equal(t, map[string]undo.PreviewCounts{"contact": {Reverted: 1}}, p.Preview().Kinds, "so does --dry-run")

		u := w.undo(upd.ID, false)
		require.Equal(t, int64(1), u.Stats[ledger.Contact].Reverted, "%+v", u.Stats)
		require.Equal(t, "Engineer", titleOf(t, db, "c1"))
		require.Equal(t, before, exactState(t, db), "rows and slots (digest, hashes) as before the update")
		require.Equal(t, []int64{u.ID}, revertedBy(t, db, upd.ID))
	})
}

// TestUndoOfUpdatesMovesTheEpoch (R2, R16, schema 15): an undo that only
// gives updated rows back — it removes no slot — still moves the epoch of
// the tenant and source (the slots' digests changed), so that R2's
// shortcut never vouches for a file across it.
func TestUndoOfUpdatesMovesTheEpoch(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		w := newWorld(t, db)
		w.run(export(t, updateExport("Engineer")), "canonical")
		upd := w.runUpdate(export(t, updateExport("CTO")))
		require.Equal(t, int64(1), upd.Stats[ledger.Contact].Updated, "%+v", upd.Stats)
		epoch := func() int64 {
			var n int64
			require.NoError(t, db.QueryRow(`SELECT coalesce((SELECT n FROM ledger_epochs WHERE tenant_id = ? AND source = 'canonical'), 0)`, tenant).Scan(&n))
			return n
		}
		e := epoch()
		u := w.undo(upd.ID, false)
		require.Equal(t, int64(1), u.Stats[ledger.Contact].Reverted, "%+v", u.Stats)
		require.Equal(t, int64(0), u.Stats[ledger.Contact].Removed+u.Stats[ledger.Company].Removed, "%+v", u.Stats)
		require.Greater(t, epoch(), e, "the reverted slot's digest moved the epoch")
	})
}

// TestUndoLeavesARowEditedSince (SPEC §11): a row edited by hand after the
// update is left as it is, keeps the update's before-image (not marked),
// is named among the undo's failures, and the undo ends partial.
func TestUndoLeavesARowEditedSince(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		w := newWorld(t, db)
		w.run(export(t, updateExport("Engineer")), "canonical")
		upd := w.runUpdate(export(t, updateExport2("CTO", "Lead")))
		require.Equal(t, int64(2), upd.Stats[ledger.Contact].Updated, "%+v", upd.Stats)
		_, err := db.Exec(`UPDATE contacts SET title = 'Boss' WHERE tenant_id = ? AND title = 'CTO'`, tenant)
		require.NoError(t, err)

		u := w.undoEnds(upd.ID, false)
		require.Equal(t, phases.RunPartial, u.Status, u.Message)
		require.Equal(t, int64(1), u.Stats[ledger.Contact].Reverted, "%+v", u.Stats)
		require.Equal(t, int64(1), u.Stats[ledger.Contact].Failed, "%+v", u.Stats)
		require.Contains(t, u.Message, "left as they are (failed): contacts 1")
		require.Equal(t, "Boss", titleOf(t, db, "c1"), "the hand edit stays")
		require.Equal(t, "Sales", titleOf(t, db, "c2"), "the row as the update left it is given back")
		require.Equal(t, []int64{0, u.ID}, revertedBy(t, db, upd.ID), "c1's before-image stays, not marked")
		var reason string
		require.NoError(t, db.QueryRow(`SELECT reason FROM record_failures WHERE migration_id = ? AND source_id = 'c1'`, u.ID).Scan(&reason))
		require.Contains(t, reason, "changed since run")
	})
}

// TestLaterUpdateIsADependent (SPEC §10, R17): a later run's update of a
// row the run updated, and of a row it created, depends on it: the undo
// refuses naming that run, and --cascade gives the later update's
// before-image back first, then the run's — the tenant is exactly as
// before the run.
func TestLaterUpdateIsADependent(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		w.run(export(t, updateExport("Engineer")), "canonical")
		before := exactState(t, db)
		v2 := updateExport("CTO")
		v2["contacts.csv"] += "c3,Cy,Poe,cy@acme.example,Intern,co1\n"
		first := w.runUpdate(export(t, v2))
		require.Equal(t, int64(1), first.Stats[ledger.Contact].Updated, "%+v", first.Stats)
		v3 := updateExport("CEO")
		v3["contacts.csv"] += "c3,Cy,Poe,cy@acme.example,Analyst,co1\n"
		later := w.runUpdate(export(t, v3))
		require.Equal(t, int64(2), later.Stats[ledger.Contact].Updated, "%+v", later.Stats)

		_, err := undo.Build(ctx, db, w.imp.Engine, first.ID, false)
		var deps *undo.DependentsError
		require.ErrorAs(t, err, &deps)
		require.Len(t, deps.Dependents, 1, "%v", deps.Dependents)
		d := deps.Dependents[0]
		require.Equal(t, later.ID, d.Run)
		require.Equal(t, "updates", d.How)
		require.Equal(t, []string{"c1", "c3"}, d.Examples)
		require.Contains(t, err.Error(), "updated since")

		p, err := undo.Build(ctx, db, w.imp.Engine, first.ID, true)
		require.NoError(t, err)
		require.Equal(t, int64(3), p.Counts[ledger.Contact].Reverted, "the run's update and the later two")
		u := w.undo(first.ID, true)
		require.Equal(t, int64(3), u.Stats[ledger.Contact].Reverted, "%+v", u.Stats)
		require.Equal(t, int64(1), u.Stats[ledger.Contact].Removed, "%+v", u.Stats)
		require.Equal(t, before, exactState(t, db), "rows and slots as before the run")
		require.Equal(t, []int64{u.ID}, revertedBy(t, db, first.ID))
		require.Equal(t, []int64{u.ID, u.ID}, revertedBy(t, db, later.ID))
	})
}

// TestUndoOfUpdatesResumes (R12, R8): an undo that fails at its first
// batch of contacts (the one that gives the updates back) or its second
// (after the first committed), resumed, ends exactly as one that did not
// fail: each update given back once, counted once.
func TestUndoOfUpdatesResumes(t *testing.T) {
	for _, at := range []string{"batch:contact:1=error", "batch:contact:2=error"} {
		t.Run(strings.NewReplacer(":", "_", "=", "_").Replace(at), func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, db *sql.DB) {
				w := newWorld(t, db)
				ctx := context.Background()
				w.run(export(t, updateExport("Engineer")), "canonical")
				before := exactState(t, db)
				v2 := updateExport2("CTO", "Lead")
				v2["contacts.csv"] += "c3,Cy,Poe,cy@acme.example,Intern,co1\nc4,Di,Fox,di@acme.example,Intern,co1\n"
				upd := w.runUpdate(export(t, v2))
				require.Equal(t, int64(2), upd.Stats[ledger.Contact].Updated, "%+v", upd.Stats)

				u, _, err := undo.StartWith(ctx, w.imp.Engine, undo.Options{Undo: upd.ID, BatchSize: 1})
				require.NoError(t, err)
				fp, err := failpoint.Parse(at, canon.ParseKind)
				require.NoError(t, err)
				u, err = phases.New(db, fp).Execute(ctx, u.ID, undo.Open(db))
				require.NoError(t, err)
				require.Equal(t, phases.RunFailed, u.Status)

				_, _, err = w.imp.Resume(ctx, u.ID)
				require.NoError(t, err)
				u, err = w.imp.Engine.Execute(ctx, u.ID, undo.Open(w.imp.Engine.DB))
				require.NoError(t, err)
				require.Equal(t, phases.RunSucceeded, u.Status, u.Message)
				require.Equal(t, int64(2), u.Stats[ledger.Contact].Reverted, "%+v", u.Stats)
				require.Equal(t, int64(2), u.Stats[ledger.Contact].Removed, "%+v", u.Stats)
				require.Equal(t, before, exactState(t, db))
				require.Equal(t, []int64{u.ID, u.ID}, revertedBy(t, db, upd.ID))
			})
		})
	}
}

// TestUndoOfAnUpdateToANewParent (SPEC §10, R17): a run that created a
// company and updated a contact to link to it is undone alone — the
// contact's link is the run's own update, not a dependent — the contact
// given its link back before the company goes.
func TestUndoOfAnUpdateToANewParent(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		w := newWorld(t, db)
		w.run(export(t, updateExport("Engineer")), "canonical")
		before := exactState(t, db)
		v2 := updateExport("Engineer")
		v2["companies.csv"] += "co2,Beta,beta.example\n"
		v2["contacts.csv"] = strings.Replace(v2["contacts.csv"], "Engineer,co1", "Engineer,co2", 1)
		upd := w.runUpdate(export(t, v2))
		require.Equal(t, int64(1), upd.Stats[ledger.Contact].Updated, "%+v", upd.Stats)
		co2, _ := rowOf(t, db, tenant, ledger.Company, "co2")
		require.Equal(t, co2, linkOf(t, db, tenant, "contacts", "company_id", "c1").Int64)

		u := w.undo(upd.ID, false)
		require.Equal(t, int64(1), u.Stats[ledger.Contact].Reverted, "%+v", u.Stats)
		require.Equal(t, int64(1), u.Stats[ledger.Company].Removed, "%+v", u.Stats)
		require.Equal(t, before, exactState(t, db))
	})
}

// TestUndoOfAnUpdateOfARowItsRunRelinked (R16, R17, R6a): a run that
// completes a contact's link (its company arrives) and then updates that
// contact keeps as the before-image the row as it was before the run —
// the link empty, its value kept in extra — so that its undo gives the
// tenant back exactly, and can remove the company.
func TestUndoOfAnUpdateOfARowItsRunRelinked(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		w := newWorld(t, db)
		first := updateExport("Engineer")
		delete(first, "companies.csv") // the contacts' company is not there yet
		w.run(export(t, first), "canonical")
		before := exactState(t, db)

		upd := w.runUpdate(export(t, updateExport("CTO")))
		require.Equal(t, int64(2), upd.Stats[ledger.Contact].Relinked, "%+v", upd.Stats)
		require.Equal(t, int64(1), upd.Stats[ledger.Contact].Updated, "%+v", upd.Stats)

		u := w.undo(upd.ID, false)
		require.Equal(t, phases.RunSucceeded, u.Status, u.Message)
		require.Equal(t, int64(1), u.Stats[ledger.Contact].Reverted, "%+v", u.Stats)
		require.Equal(t, before, exactState(t, db), "rows, links kept in extra, slots and hashes as before the run")
	})
}

// TestUndoOfAnUpdateThatChangedAWaitingLink (R16, R17, R6a): an update
// that changes a link value still waiting for its parent to another that
// does not resolve either forgets the first and remembers the second; its
// undo remembers the first again and forgets the second — the tenant and
// its ledger as before the run — so that the parent the record names, once
// it arrives, completes the link, and the one it no longer names does not.
func TestUndoOfAnUpdateThatChangedAWaitingLink(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		w := newWorld(t, db)
		first := updateExport("Engineer")
		first["contacts.csv"] = strings.Replace(first["contacts.csv"], "Engineer,co1", "Engineer,co9", 1)
		w.run(export(t, first), "canonical")
		before := exactState(t, db)

		v2 := updateExport("Engineer")
		v2["contacts.csv"] = strings.Replace(v2["contacts.csv"], "Engineer,co1", "Engineer,co8", 1)
		upd := w.runUpdate(export(t, v2))
		require.Equal(t, int64(1), upd.Stats[ledger.Contact].Updated, "%+v", upd.Stats)

		u := w.undo(upd.ID, false)
		require.Equal(t, phases.RunSucceeded, u.Status, u.Message)
		require.Equal(t, int64(1), u.Stats[ledger.Contact].Reverted, "%+v", u.Stats)
		require.Equal(t, before, exactState(t, db), "the link waiting for co9 remembered again, the one for co8 forgotten")

		both := updateExport("Engineer")
		both["companies.csv"] += "co8,Eight,eight.example\nco9,Nine,nine.example\n"
		both["contacts.csv"] = strings.Replace(both["contacts.csv"], "Engineer,co1", "Engineer,co9", 1)
		again := w.run(export(t, both), "canonical")
		require.Equal(t, int64(1), again.Stats[ledger.Contact].Relinked, "%+v", again.Stats)
		co9, _ := rowOf(t, db, tenant, ledger.Company, "co9")
		require.Equal(t, co9, linkOf(t, db, tenant, "contacts", "company_id", "c1").Int64)
	})
}

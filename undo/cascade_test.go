package undo_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/failpoint"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store/storetest"
	"crmimport/undo"
)

// TestCascadeNeverGivesBackTheUndoneRunsSkips (R16, SPEC §10): a record
// that a dependent run imported over a skip of the undone run goes back
// under --cascade with its slot deleted, not given back the undone run's
// skip (a before-image whose owner is undone is never restored); one that
// it imported over a skip of a third run gets that skip back. The counts
// say what was done to each slot, and doctor finds nothing stale after.
func TestCascadeNeverGivesBackTheUndoneRunsSkips(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		w := newWorld(t, db)
		// A third run skips n5: its contact c2 is not there yet.
		third := w.run(export(t, map[string]string{"notes.csv": "id,body,contact_id\nn5,For Bob,c2\n"}), "canonical")
		afterThird := w.dump()
		// The run to undo: a company and a contact, and n1 skipped (c2 is
		// still missing).
		undone := w.run(export(t, map[string]string{
			"companies.csv": "id,name\nco1,Acme\n",
			"contacts.csv":  "id,first_name,company_id\nc1,Ann,co1\n",
			"notes.csv":     "id,body,contact_id\nn1,Hello Bob,c2\n",
		}), "canonical", ledger.Company, ledger.Contact, ledger.Note)
		// The dependent run: c2 at co1, and both notes, which take the two
		// skips over (n1's was the undone run's, n5's the third run's).
		dependent := w.run(export(t, map[string]string{
			"contacts.csv": "id,first_name,company_id\nc2,Bob,co1\n",
			"notes.csv":    "id,body,contact_id\nn1,Hello Bob,c2\nn5,For Bob,c2\n",
		}), "canonical")
		require.Equal(t, phases.Counts{Imported: 2}, dependent.Stats[ledger.Note])

		p, err := undo.Build(context.Background(), db, w.imp.Engine, undone.ID, true)
		require.NoError(t, err)
		require.Equal(t, map[string]undo.PreviewCounts{"company": {Removed: 1}, "contact": {Removed: 2}, "note": {Removed: 1, Restored: 1}},
			p.Preview().Kinds, "the dry run says what the undo will do")
		u := w.undo(undone.ID, true)
		var n1 int
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM migration_records WHERE tenant_id = ? AND source_id = 'n1'`, tenant).Scan(&n1))
		require.Zero(t, n1, "SPEC §10: n1's before-image is the undone run's skip: the slot is deleted, never given back")
		var owner int64
		var reason string
		require.NoError(t, db.QueryRow(`SELECT migration_id, reason FROM migration_records WHERE tenant_id = ? AND source_id = 'n5' AND action = 'skipped'`,
			tenant).Scan(&owner, &reason))
		require.Equal(t, third.ID, owner, "n5 gets the third run's skip back")
		require.Equal(t, "not linked to any record", reason)
		require.Equal(t, map[ledger.Kind]phases.Counts{
			ledger.Company: {Removed: 1},
			ledger.Contact: {Removed: 2},
			// n1: row and slot gone; n5: row gone, its slot given back the
			// third run's skip — each slot counted for what became of it.
			ledger.Note: {Removed: 1, Restored: 1},
		}, u.Stats, "the counts say what the undo did to each slot")
		require.Equal(t, `[]`, w.doctor(), "nothing stale: no skip of the undone run is left, and n5's skip is the third run's, whose note the dependent's import of was taken back")

		// Both the undone run and every record of the dependent run that
		// depends on it are taken back: what is left is the tenant as the
		// third run left it.
		require.Equal(t, afterThird, w.dump())
	})
}

// TestCascadeMarksTheRunsItTakesRecordsFrom (R16, SPEC §10): --cascade
// takes records back, not whole runs; each run it took records from keeps
// its status and counts and is marked with what was taken back of it, per
// kind, as far as the undo went — nothing while it is only planned.
func TestCascadeMarksTheRunsItTakesRecordsFrom(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		undone := w.run(export(t, map[string]string{"companies.csv": "id,name\nco1,Acme\nco2,Beta\n"}), "canonical")
		dependent := w.run(export(t, map[string]string{
			"contacts.csv": "id,first_name,email,company_id\nc1,Ann,ann@acme.example,co1\nc2,Bob,,co2\nc3,Cy,,\n",
			"notes.csv":    "id,body,contact_id\nn1,Hi Ann,c1\nn2,Hi Cy,c3\n",
		}), "canonical")
		// Another source finds Ann by her email (R5): its matched slot goes too.
		other := w.run(export(t, map[string]string{"contacts.csv": "id,first_name,email\nk1,Ann,ANN@acme.example\n"}), "other")
		require.Equal(t, int64(1), other.Stats[ledger.Contact].Matched)
		bystander := w.run(export(t, map[string]string{"contacts.csv": "id,first_name\nc9,Dee\n"}), "canonical")

		u, _, err := undo.StartWith(ctx, w.imp.Engine, undo.Options{Undo: undone.ID, Cascade: true, BatchSize: 1})
		require.NoError(t, err)
		for _, r := range []phases.Run{undone, dependent, other, bystander} {
			parts, err := undo.TakenBack(ctx, db, w.runRow(r.ID))
			require.NoError(t, err)
			require.Empty(t, parts, "run %d: a planned undo has taken nothing back yet", r.ID)
		}
		// The undo fails at its second batch of contacts (children first:
		// the notes are back, and one contact of two).
		fp, err := failpoint.Parse("batch:contact:2=error", canon.ParseKind)
		require.NoError(t, err)
		u, err = phases.New(db, fp).Execute(ctx, u.ID, undo.Open(db))
		require.NoError(t, err)
		require.Equal(t, phases.RunFailed, u.Status)
		parts, err := undo.TakenBack(ctx, db, w.runRow(dependent.ID))
		require.NoError(t, err)
		require.Equal(t, []undo.Part{
			{Undo: u.ID, Undoes: undone.ID, Kind: "contact", Count: 1},
			{Undo: u.ID, Undoes: undone.ID, Kind: "note", Count: 1},
		}, parts, "what the failed undo took back, as far as it went")
		parts, err = undo.TakenBack(ctx, db, w.runRow(other.ID))
		require.NoError(t, err)
		require.Empty(t, parts, "k1 comes after c2, where the undo failed")

		_, _, err = w.imp.Resume(ctx, u.ID)
		require.NoError(t, err)
		u, err = w.imp.Engine.Execute(ctx, u.ID, undo.Open(w.imp.Engine.DB))
		require.NoError(t, err)
		require.Equal(t, phases.RunSucceeded, u.Status)

		parts, err = undo.TakenBack(ctx, db, w.runRow(dependent.ID))
		require.NoError(t, err)
		require.Equal(t, []undo.Part{
			{Undo: u.ID, Undoes: undone.ID, Kind: "contact", Count: 2},
			{Undo: u.ID, Undoes: undone.ID, Kind: "note", Count: 1},
		}, parts)
		parts, err = undo.TakenBack(ctx, db, w.runRow(other.ID))
		require.NoError(t, err)
		require.Equal(t, []undo.Part{{Undo: u.ID, Undoes: undone.ID, Kind: "contact", Count: 1}}, parts)
		for _, r := range []phases.Run{undone, bystander, u} {
			parts, err := undo.TakenBack(ctx, db, w.runRow(r.ID))
			require.NoError(t, err)
			require.Empty(t, parts, "run %d: nothing of it was taken back by a cascade", r.ID)
		}
		// An undo planned before its options kept what it takes back of
		// each run: its items tell the same.
		_, err = db.Exec(`UPDATE migrations SET options = ? WHERE id = ?`, fmt.Sprintf(`{"undo": %d, "cascade": true}`, undone.ID), u.ID)
		require.NoError(t, err)
		again, err := undo.TakenBack(ctx, db, w.runRow(dependent.ID))
		require.NoError(t, err)
		require.Equal(t, []undo.Part{
			{Undo: u.ID, Undoes: undone.ID, Kind: "contact", Count: 2},
			{Undo: u.ID, Undoes: undone.ID, Kind: "note", Count: 1},
		}, again)

		require.Equal(t, dependent.Status, w.runRow(dependent.ID).Status, "the run keeps its status")
		require.Equal(t, dependent.Stats, w.runRow(dependent.ID).Stats, "and its counts: what it did")
	})
}

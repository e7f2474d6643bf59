package importer

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/importer/runopts"
	"crmimport/ledger"
	"crmimport/ledger/ledgertest"
	"crmimport/phases"
	"crmimport/store/storetest"
)

// runFor plans and executes one run of dir for tenant, in batches of two,
// with --update as update ("", apply or overwrite) and --only as only
// (none: every kind); no task of it may end in an error.
func runFor(t *testing.T, imp *Importer, tenant, dir, update string, only ...ledger.Kind) phases.Run {
	t.Helper()
	ctx := context.Background()
	run, err := imp.Plan(ctx, RunSpec{Tenant: tenant, Source: "canonical", Input: dir, BatchSize: 2, Update: update, Only: only})
	require.NoError(t, err)
	run, err = imp.Execute(ctx, run.ID)
	require.NoError(t, err)
	require.Empty(t, lastErrors(t, imp.Engine.DB, run.ID), "%s: %s", run.Status, run.Message) // partial for failed records, never a task's error
	return run
}

// total is a run's counts summed over its kinds.
func total(r phases.Run) phases.Counts {
	var c phases.Counts
	for _, k := range r.Stats {
		c.Add(k)
	}
	return c
}

// stateOf is the tenant's canonical dump (slots, rows by content, links
// by their parents' source ids, waiting links; ids and runs aside) and
// each final slot's digest and hashes: what R17 compares the next run
// with must converge too.
func stateOf(t *testing.T, db *sql.DB, tenant string) string {
	t.Helper()
	d, err := ledgertest.Dump(context.Background(), db, tenant)
	require.NoError(t, err)
	var b strings.Builder
	b.WriteString(d)
	b.WriteString("hashes:\n")
	rows, err := db.Query(`SELECT kind, source_id, coalesce(digest, 0), coalesce(hashes, '') FROM migration_records
		WHERE tenant_id = ? AND action <> 'skipped' ORDER BY kind, source_id`, tenant)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var kind, id, hashes string
		var digest int64
		require.NoError(t, rows.Scan(&kind, &id, &digest, &hashes))
		fmt.Fprintf(&b, "  %s %s %d %s\n", kind, id, digest, hashes)
	}
	require.NoError(t, rows.Err())
	return b.String()
}

// rowsOf is the tenant's target rows alone (the dump's part after its
// slots, waiting links left out): what a row holds, whatever the ledger
// says of it.
func rowsOf(t *testing.T, db *sql.DB, tenant string) string {
	t.Helper()
	d, err := ledgertest.Dump(context.Background(), db, tenant)
	require.NoError(t, err)
	start := strings.Index(d, "companies:\n")
	end := strings.Index(d, "pending_links:\n")
	require.True(t, start >= 0 && end > start, d)
	return d[start:end]
}

// field is one column of the row of a final slot, as text ("" for NULL;
// a link as its parent's row id).
func field(t *testing.T, db *sql.DB, tenant string, k ledger.Kind, sourceID, column string) string {
	t.Helper()
	var v sql.NullString
	require.NoError(t, db.QueryRow(`SELECT CAST(t.`+column+` AS TEXT) FROM `+k.Table()+` t JOIN migration_records r ON r.record_id = t.id
		AND r.tenant_id = t.tenant_id AND r.kind = ? WHERE r.tenant_id = ? AND r.source_id = ? AND r.action <> 'skipped'`,
		string(k), tenant, sourceID).Scan(&v))
	return v.String
}

// rowID is the row of a final slot.
func rowID(t *testing.T, db *sql.DB, tenant string, k ledger.Kind, sourceID string) int64 {
	t.Helper()
	var id int64
	require.NoError(t, db.QueryRow(`SELECT record_id FROM migration_records WHERE tenant_id = ? AND kind = ? AND source_id = ?
		AND action <> 'skipped'`, tenant, string(k), sourceID).Scan(&id))
	return id
}

// changeOf is a run's record_changes row of a record: its change and its
// edited fields ("" when none is listed).
func changeOf(t *testing.T, db *sql.DB, run int64, k ledger.Kind, sourceID string) (change, edited string) {
	t.Helper()
	var e sql.NullString
	require.NoError(t, db.QueryRow(`SELECT change, edited FROM record_changes WHERE migration_id = ? AND kind = ? AND source_id = ?`,
		run, string(k), sourceID).Scan(&change, &e))
	return change, e.String
}

// A small export of the three kinds with links; edited changes one field
// of one record of each.
func smallExport(edited bool) map[string]string {
	co, c, d := "co1,Acme,acme.example", "c1,Ann,ann@acme.example,co1", "d1,Big,100,co1,c1"
	if edited {
		co, c, d = "co1,Acme Inc,acme.example", "c1,Annie,ann@acme.example,co1", "d1,Big,250,co1,c1"
	}
	return map[string]string{
		"companies.csv": "id,name,domain\n" + co + "\nco2,Beta,beta.example\n",
		"contacts.csv":  "id,first_name,email,company_id\n" + c + "\nc2,Bob,bob@beta.example,co2\n",
		"deals.csv":     "id,name,amount,company_id,contact_id\n" + d + "\nd2,Small,5,co2,c2\n",
	}
}

// TestRerunsThenUpdateApply (R17, SPEC §11): a changed record is outdated
// on every run without --update — the same file read again is revisited,
// never vouched for by R2's same-input shortcut — and `run --update` of
// that same unchanged file applies every change; the run after finds
// nothing outdated, and the tenant is one clean run of the edited export.
func TestRerunsThenUpdateApply(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		imp := New(phases.New(db, nil))
		runFor(t, imp, "acme", export(t, smallExport(false)), "")
		before := rowsOf(t, db, "acme")
		edited := export(t, smallExport(true))
		for i := range 2 {
			r := runFor(t, imp, "acme", edited, "")
			c := total(r)
			require.Equal(t, int64(3), c.Outdated, "run %d: %+v", i+2, r.Stats)
			require.Equal(t, int64(6), c.Unchanged, "run %d: %+v", i+2, r.Stats)
			require.Zero(t, c.Imported+c.Updated, "run %d: %+v", i+2, r.Stats)
			for _, k := range []ledger.Kind{ledger.Company, ledger.Contact, ledger.Deal} {
				require.Equal(t, int64(1), r.Stats[k].Outdated, "run %d, %s: %+v", i+2, k, r.Stats)
			}
			require.Equal(t, before, rowsOf(t, db, "acme"), "run %d wrote nothing", i+2)
		}
		epoch, err := ledger.Epoch(context.Background(), db, "acme", "canonical")
		require.NoError(t, err)
		up := runFor(t, imp, "acme", edited, runopts.UpdateApply)
		moved, err := ledger.Epoch(context.Background(), db, "acme", "canonical")
		require.NoError(t, err)
		require.NotEqual(t, epoch, moved, "a change of hashes moves the epoch (SPEC §11): no earlier task vouches across it")
		c := total(up)
		require.Equal(t, phases.Counts{Imported: 3, Unchanged: 3, Updated: 3}, phases.Counts{Imported: c.Imported, Unchanged: c.Unchanged,
			Updated: c.Updated, Outdated: c.Outdated, Conflict: c.Conflict, Failed: c.Failed}, "%+v", up.Stats)
		require.Equal(t, "Acme Inc", field(t, db, "acme", ledger.Company, "co1", "name"))
		require.Equal(t, "Annie", field(t, db, "acme", ledger.Contact, "c1", "first_name"))
		require.Equal(t, "250", field(t, db, "acme", ledger.Deal, "d1", "amount"))
		for _, k := range []ledger.Kind{ledger.Company, ledger.Contact, ledger.Deal} {
			ch, _ := changeOf(t, db, up.ID, k, map[ledger.Kind]string{ledger.Company: "co1", ledger.Contact: "c1", ledger.Deal: "d1"}[k])
			require.Equal(t, ledger.ChangeUpdated, ch, k)
		}

		last := runFor(t, imp, "acme", edited, "")
		c = total(last)
		require.Zero(t, c.Outdated, "%+v", last.Stats)
		require.Equal(t, int64(6), c.Unchanged, "%+v", last.Stats)

		runFor(t, imp, "clean", edited, "")
		require.Equal(t, stateOf(t, db, "clean"), stateOf(t, db, "acme"), "updated in place ends as one clean run of the edited export")
	})
}

// TestUpdateOfAnUntouchedRow (R17): the source changed a record, its row
// is as crmimport wrote it: --update writes it, no conflict.
func TestUpdateOfAnUntouchedRow(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		imp := New(phases.New(db, nil))
		runFor(t, imp, "acme", export(t, smallExport(false)), "")
		id := rowID(t, db, "acme", ledger.Contact, "c1")
		up := runFor(t, imp, "acme", export(t, smallExport(true)), runopts.UpdateApply)
		c := up.Stats[ledger.Contact]
		require.Equal(t, [3]int64{1, 0, 0}, [3]int64{c.Updated, c.Conflict, c.Overwritten}, "%+v", c)
		require.Equal(t, "Annie", field(t, db, "acme", ledger.Contact, "c1", "first_name"))
		require.Equal(t, id, rowID(t, db, "acme", ledger.Contact, "c1"), "updated in place")
	})
}

// TestConflictWithAHandEdit (R17, "Edited since import"): a row edited by
// hand in a field the source did not change, the source changing another
// field: a conflict with and without --update, listed with the edited
// field, the row left as is; --update=overwrite writes the source's
// values over the edit, counted overwritten (of updated).
func TestConflictWithAHandEdit(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		imp := New(phases.New(db, nil))
		runFor(t, imp, "acme", export(t, smallExport(false)), "")
		_, err := db.Exec(`UPDATE contacts SET title = 'CEO' WHERE id = ?`, rowID(t, db, "acme", ledger.Contact, "c1"))
		require.NoError(t, err)
		edited := export(t, smallExport(true)) // c1's first_name changed; its title is empty at the source
		for _, update := range []string{"", runopts.UpdateApply} {
			r := runFor(t, imp, "acme", edited, update)
			c := r.Stats[ledger.Contact]
			require.Equal(t, phases.Counts{Unchanged: 2, Outdated: 1, Conflict: 1}, phases.Counts{Imported: c.Imported, Unchanged: c.Unchanged,
				Outdated: c.Outdated, Conflict: c.Conflict, Updated: c.Updated}, "--update=%q: %+v", update, c)
			ch, fields := changeOf(t, db, r.ID, ledger.Contact, "c1")
			require.Equal(t, ledger.ChangeConflict, ch, update)
			require.Equal(t, `["title"]`, fields, update)
			require.Equal(t, "Ann", field(t, db, "acme", ledger.Contact, "c1", "first_name"), update)
			require.Equal(t, "CEO", field(t, db, "acme", ledger.Contact, "c1", "title"), update)
		}
		over := runFor(t, imp, "acme", edited, runopts.UpdateOverwrite)
		c := over.Stats[ledger.Contact]
		require.Equal(t, [4]int64{1, 1, 1, 0}, [4]int64{c.Imported, c.Updated, c.Overwritten, c.Conflict}, "%+v", c)
		ch, fields := changeOf(t, db, over.ID, ledger.Contact, "c1")
		require.Equal(t, ledger.ChangeOverwritten, ch)
		require.Equal(t, `["title"]`, fields)
		require.Equal(t, "Annie", field(t, db, "acme", ledger.Contact, "c1", "first_name"))
		require.Equal(t, "", field(t, db, "acme", ledger.Contact, "c1", "title"), "the source's empty title over the edit")
		again := runFor(t, imp, "acme", edited, "")
		require.Zero(t, total(again).Outdated+total(again).Conflict, "%+v", again.Stats)
		runFor(t, imp, "clean", edited, "")
		require.Equal(t, stateOf(t, db, "clean"), stateOf(t, db, "acme"))
	})
}

// relinkedExport: a deal whose company is broken (a bad date) or fixed,
// with the deal's amount as given.
func relinkedExport(companyCreated, amount string) map[string]string {
	return map[string]string{
		"companies.csv": "id,name,domain,created_at\nco1,Acme,acme.example," + companyCreated + "\n",
		"deals.csv":     "id,name,amount,company_id\nd1,Big," + amount + ",co1\n",
	}
}

// TestUpdateOfARelinkedRow (R6a, R17): a link R6a completed counts as
// written: the deal imported before its company, linked when the company
// arrived, then changed at the source in another field, is updated, not
// a conflict — whether the change comes a run after the relink or in the
// same run.
func TestUpdateOfARelinkedRow(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		for _, sameRun := range []bool{false, true} {
			tn := fmt.Sprintf("same-run-%v", sameRun)
			imp := New(phases.New(db, nil))
			first := runFor(t, imp, tn, export(t, relinkedExport("not a date", "100")), "")
			require.Equal(t, int64(1), first.Stats[ledger.Deal].Unlinked, "%+v", first.Stats)
			if !sameRun {
				fixed := runFor(t, imp, tn, export(t, relinkedExport("2024-01-02", "100")), "")
				require.Equal(t, int64(1), fixed.Stats[ledger.Deal].Relinked, "%+v", fixed.Stats)
			}
			final := export(t, relinkedExport("2024-01-02", "300"))
			up := runFor(t, imp, tn, final, runopts.UpdateApply)
			d := up.Stats[ledger.Deal]
			require.Equal(t, [3]int64{1, 0, 0}, [3]int64{d.Updated, d.Conflict, d.Failed}, "same run %v: %+v", sameRun, up.Stats)
			require.Equal(t, "300", field(t, db, tn, ledger.Deal, "d1", "amount"))
			require.Equal(t, fmt.Sprint(rowID(t, db, tn, ledger.Company, "co1")), field(t, db, tn, ledger.Deal, "d1", "company_id"))
			runFor(t, imp, tn+"-clean", final, "")
			require.Equal(t, stateOf(t, db, tn+"-clean"), stateOf(t, db, tn), "same run %v", sameRun)
		}
	})
}

// manyContacts is five contacts, the first three changed when edited.
func manyContacts(edited bool) map[string]string {
	var b strings.Builder
	b.WriteString("id,first_name,email\n")
	for i := range 5 {
		name := fmt.Sprintf("Person %d", i)
		if edited && i < 3 {
			name += " edited"
		}
		fmt.Fprintf(&b, "c%d,%s,p%d@mail.example\n", i, name, i)
	}
	return map[string]string{"contacts.csv": b.String()}
}

// TestUpdateOverSeveralBatches (R17, R2): run --update of the file a run
// found outdated revisits its outdated records, more than one batch of
// them: the updates of the first batch move the tenant's epoch, which must
// not stop the next batch as if another run had removed a final slot.
func TestUpdateOverSeveralBatches(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		imp := New(phases.New(db, nil))
		runFor(t, imp, "acme", export(t, manyContacts(false)), "")
		edited := export(t, manyContacts(true))
		r := runFor(t, imp, "acme", edited, "")
		require.Equal(t, int64(3), r.Stats[ledger.Contact].Outdated, "%+v", r.Stats)
		up := runFor(t, imp, "acme", edited, runopts.UpdateApply) // batches of 2: the outdated records take two
		require.Equal(t, int64(3), up.Stats[ledger.Contact].Updated, "%+v", up.Stats)
	})
}

// lastErrors are the last errors of a run's tasks, to say why it did not
// succeed.
func lastErrors(t *testing.T, db *sql.DB, id int64) string {
	t.Helper()
	tasks, err := phases.LoadTasks(context.Background(), db, id)
	require.NoError(t, err)
	var s string
	for _, task := range tasks {
		if task.LastError != "" {
			s += fmt.Sprintf("\n%s task %d: %s", task.Kind, task.ID, task.LastError)
		}
	}
	return s
}

// TestUpdateOverSeveralBatchesRead (R17): run --update of an edited file
// no run read before reads it whole; its updates over several batches all
// apply.
func TestUpdateOverSeveralBatchesRead(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		imp := New(phases.New(db, nil))
		runFor(t, imp, "acme", export(t, manyContacts(false)), "")
		up := runFor(t, imp, "acme", export(t, manyContacts(true)), runopts.UpdateApply)
		require.Equal(t, int64(3), up.Stats[ledger.Contact].Updated, "%+v", up.Stats)
		runFor(t, imp, "clean", export(t, manyContacts(true)), "")
		require.Equal(t, stateOf(t, db, "clean"), stateOf(t, db, "acme"))
	})
}

// TestUpdateOfALinkToAMissingParent (R6a, R17): a link edited at the
// source to a parent not there yet is emptied by the update and
// remembered, as one clean run of the edited export leaves it; the run
// that brings the parent completes it.
func TestUpdateOfALinkToAMissingParent(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		imp := New(phases.New(db, nil))
		files := smallExport(false)
		runFor(t, imp, "acme", export(t, files), "")
		files["contacts.csv"] = strings.Replace(files["contacts.csv"], "c1,Ann,ann@acme.example,co1", "c1,Ann,ann@acme.example,co9", 1)
		edited := export(t, files)
		up := runFor(t, imp, "acme", edited, runopts.UpdateApply)
		require.Equal(t, int64(1), up.Stats[ledger.Contact].Updated, "%+v", up.Stats)
		require.Equal(t, "", field(t, db, "acme", ledger.Contact, "c1", "company_id"))
		runFor(t, imp, "clean", edited, "")
		require.Equal(t, stateOf(t, db, "clean"), stateOf(t, db, "acme"), "the edited link waits for its parent")

		files["companies.csv"] += "co9,Nine,nine.example\n"
		more := runFor(t, imp, "acme", export(t, files), "")
		require.Equal(t, int64(1), more.Stats[ledger.Contact].Relinked, "%+v", more.Stats)
		require.Equal(t, fmt.Sprint(rowID(t, db, "acme", ledger.Company, "co9")), field(t, db, "acme", ledger.Contact, "c1", "company_id"))
		require.Zero(t, total(runFor(t, imp, "acme", export(t, files), "")).Outdated)
	})
}

// TestUpdateOfAWaitingLink (R6a, R17): a contact imported unlinked (its
// company not there) whose link the source then points at a company that
// is there: the update links it, and the link it waited for is no longer
// waited for — as after one clean run of the edited export.
func TestUpdateOfAWaitingLink(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		imp := New(phases.New(db, nil))
		files := smallExport(false)
		files["contacts.csv"] = strings.Replace(files["contacts.csv"], "c1,Ann,ann@acme.example,co1", "c1,Ann,ann@acme.example,co8", 1)
		first := runFor(t, imp, "acme", export(t, files), "")
		require.Equal(t, int64(1), first.Stats[ledger.Contact].Unlinked, "%+v", first.Stats)
		edited := export(t, smallExport(false)) // c1 now names co1
		up := runFor(t, imp, "acme", edited, runopts.UpdateApply)
		require.Equal(t, int64(1), up.Stats[ledger.Contact].Updated, "%+v", up.Stats)
		require.Equal(t, fmt.Sprint(rowID(t, db, "acme", ledger.Company, "co1")), field(t, db, "acme", ledger.Contact, "c1", "company_id"))
		runFor(t, imp, "clean", edited, "")
		require.Equal(t, stateOf(t, db, "clean"), stateOf(t, db, "acme"))
	})
}

// TestSlotsWithoutHashesAdopt (SPEC §11): slots written before hashes (a
// file of an older crmimport) are compared with their rows and take their
// hashes then, counted adopted, never outdated when the record is what the
// row holds; a record that differs from its row is outdated, and its slot
// has the row's hashes from then on.
func TestSlotsWithoutHashesAdopt(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		imp := New(phases.New(db, nil))
		dir := export(t, smallExport(false))
		runFor(t, imp, "acme", dir, "")
		// The slots as an older file has them. Hashes written alone move no
		// epoch (schema 15: their writers do), so the epoch is moved too, or
		// R2's shortcut would rightly take the same file without reading it.
		forgetHashes := func(where string) {
			_, err := db.Exec(`UPDATE migration_records SET digest = NULL, hashes = NULL WHERE tenant_id = 'acme'` + where)
			require.NoError(t, err)
			_, err = db.Exec(`INSERT INTO ledger_epochs (tenant_id, source, n) SELECT DISTINCT tenant_id, source, 1 FROM migration_records
WHERE tenant_id = 'acme' ON CONFLICT (tenant_id, source) DO UPDATE SET n = ledger_epochs.n + 1`)
			require.NoError(t, err)
		}
		forgetHashes("")

		r := runFor(t, imp, "acme", export(t, smallExport(false)), "")
		c := total(r)
		require.Equal(t, int64(6), c.Adopted, "%+v", r.Stats)
		require.Zero(t, c.Outdated, "%+v", r.Stats)
		var none int
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM migration_records WHERE tenant_id = 'acme' AND action <> 'skipped' AND hashes IS NULL`).Scan(&none))
		require.Zero(t, none, "every final slot has its hashes now")

		forgetHashes(` AND kind = 'contact' AND source_id = 'c1'`)
		r = runFor(t, imp, "acme", export(t, smallExport(true)), "")
		require.Equal(t, int64(1), r.Stats[ledger.Contact].Adopted, "%+v", r.Stats)
		require.Equal(t, int64(1), r.Stats[ledger.Contact].Outdated, "the record differs from its row: outdated")
		ch, edited := changeOf(t, db, r.ID, ledger.Contact, "c1")
		require.Equal(t, ledger.ChangeOutdated, ch)
		require.Empty(t, edited, "compared with the row it has: no hand edit")
		var fields string
		require.NoError(t, db.QueryRow(`SELECT fields FROM record_changes WHERE migration_id = ? AND source_id = 'c1'`, r.ID).Scan(&fields))
		require.Equal(t, `["first_name"]`, fields)
	})
}

// TestHandEditOfARowRelinkedLater (R6a, R17; issue 25 item 7): a deal
// imported unlinked (its company failed), edited by hand in its name,
// then linked when the fixed company arrives: the relink leaves the edit
// alone, and when the source then changes the deal's amount, the deal is
// a conflict for the edited field only — the link R6a completed counts as
// written, never as an edit.
func TestHandEditOfARowRelinkedLater(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		imp := New(phases.New(db, nil))
		first := runFor(t, imp, "acme", export(t, relinkedExport("not a date", "100")), "")
		require.Equal(t, int64(1), first.Stats[ledger.Deal].Unlinked, "%+v", first.Stats)
		_, err := db.Exec(`UPDATE deals SET name = 'Big (kept by hand)' WHERE id = ?`, rowID(t, db, "acme", ledger.Deal, "d1"))
		require.NoError(t, err)
		fixed := runFor(t, imp, "acme", export(t, relinkedExport("2024-01-02", "100")), "")
		require.Equal(t, int64(1), fixed.Stats[ledger.Deal].Relinked, "%+v", fixed.Stats)
		require.Equal(t, "Big (kept by hand)", field(t, db, "acme", ledger.Deal, "d1", "name"), "a relink writes the link alone")
		require.Equal(t, fmt.Sprint(rowID(t, db, "acme", ledger.Company, "co1")), field(t, db, "acme", ledger.Deal, "d1", "company_id"))

		up := runFor(t, imp, "acme", export(t, relinkedExport("2024-01-02", "300")), runopts.UpdateApply)
		d := up.Stats[ledger.Deal]
		require.Equal(t, [3]int64{0, 1, 0}, [3]int64{d.Updated, d.Conflict, d.Failed}, "%+v", up.Stats)
		ch, fields := changeOf(t, db, up.ID, ledger.Deal, "d1")
		require.Equal(t, ledger.ChangeConflict, ch)
		require.Equal(t, `["name"]`, fields, "the hand edit alone: the completed link is as written")
		require.Equal(t, "100", field(t, db, "acme", ledger.Deal, "d1", "amount"), "a conflict is left as it is")
	})
}

// TestDuplicateKeyBehindAFailingRow (R5, R6a; issue 25 item 7): two
// contacts share an email, the first failing (a bad date) in the broken
// export, so the second makes the row; once the first is fixed, it
// matches that row (R5: found, not made, never written) instead of making
// another. The sequence does not end where one clean run of the fixed
// export ends — there the first record makes the row, with its values —
// but where one clean run ends that reads the two in the order they first
// arrived: the row holds the values of the record that made it.
func TestDuplicateKeyBehindAFailingRow(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		c1 := func(created string) string { return "c1,Ann,ann@example.com," + created + "\n" }
		c2 := "c2,Ann,ann@example.com,2024-01-02\n"
		contacts := func(rows string) map[string]string {
			return map[string]string{
				"contacts.csv": "id,first_name,email,created_at\n" + rows,
				"notes.csv":    "id,body,contact_id\nn1,Met Ann,c1\nn2,Called Ann,c2\n",
			}
		}
		imp := New(phases.New(db, nil))
		broken := runFor(t, imp, "acme", export(t, contacts(c1("not a date")+c2)), "")
		require.Equal(t, [2]int64{1, 1}, [2]int64{broken.Stats[ledger.Contact].Imported, broken.Stats[ledger.Contact].Failed}, "%+v", broken.Stats)
		fixed := runFor(t, imp, "acme", export(t, contacts(c1("2024-01-01")+c2)), "")
		c := fixed.Stats[ledger.Contact]
		require.Equal(t, [2]int64{1, 1}, [2]int64{c.Imported, c.Matched}, "c1 matches the row c2 made: %+v", fixed.Stats)
		require.Equal(t, rowID(t, db, "acme", ledger.Contact, "c1"), rowID(t, db, "acme", ledger.Contact, "c2"), "one row for one email (R5)")
		require.Equal(t, "2024-01-02", field(t, db, "acme", ledger.Contact, "c1", "created_at"), "the row holds the values of c2, which made it")

		runFor(t, imp, "clean", export(t, contacts(c1("2024-01-01")+c2)), "")
		require.NotEqual(t, stateOf(t, db, "clean"), stateOf(t, db, "acme"), "one clean run of the fixed export: c1 makes the row")
		runFor(t, imp, "arrived", export(t, contacts(c2+c1("2024-01-01"))), "")
		require.Equal(t, stateOf(t, db, "arrived"), stateOf(t, db, "acme"), "one clean run reading c2 first")
	})
}

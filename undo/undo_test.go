package undo_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"crmimport/forensics"
	"crmimport/importer"
	"crmimport/ledger"
	"crmimport/ledger/ledgertest"
	"crmimport/phases"
	"crmimport/store"
	"crmimport/store/storetest"
	"crmimport/undo"
)

const tenant = "acme"

// world is one database and the importer that runs on it.
type world struct {
	t   *testing.T
	db  *sql.DB
	imp *importer.Importer
}

func newWorld(t *testing.T, db *sql.DB) *world {
	return &world{t: t, db: db, imp: importer.New(phases.New(db, nil))}
}

// export writes files into a new folder.
func export(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600))
	}
	return dir
}

// run imports dir for the tenant as source (read with the canonical
// profile), in small batches.
func (w *world) run(dir, source string, only ...ledger.Kind) phases.Run {
	w.t.Helper()
	ctx := context.Background()
	run, err := w.imp.Plan(ctx, importer.RunSpec{Tenant: tenant, Source: source, Profile: "canonical", Input: dir, BatchSize: 2, Only: only})
	require.NoError(w.t, err)
	run, err = w.imp.Execute(ctx, run.ID)
	require.NoError(w.t, err)
	return run
}

// undo takes run id back and returns the undo's run.
func (w *world) undo(id int64, cascade bool) phases.Run {
	w.t.Helper()
	ctx := context.Background()
	run, _, err := undo.Start(ctx, w.imp.Engine, id, cascade)
	require.NoError(w.t, err)
	run, err = w.imp.Engine.Execute(ctx, run.ID, undo.Open(w.imp.Engine.DB))
	require.NoError(w.t, err)
	require.Equal(w.t, phases.RunSucceeded, run.Status, "%s%s", run.Message, taskErrors(w.t, w.db, run.ID))
	return run
}

// taskErrors are the last errors of a run's tasks, one a line, to say why
// it did not succeed.
func taskErrors(t *testing.T, db *sql.DB, id int64) string {
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

func (w *world) dump() string {
	w.t.Helper()
	s, err := ledgertest.DumpExact(context.Background(), w.db, tenant)
	require.NoError(w.t, err)
	return s
}

// doctor is doctor's findings for the tenant, as JSON.
func (w *world) doctor() string {
	w.t.Helper()
	d, err := forensics.Doctor(context.Background(), w.db, w.imp.Engine, forensics.DoctorOptions{Tenant: tenant})
	require.NoError(w.t, err)
	b, err := json.MarshalIndent(d.Findings, "", " ")
	require.NoError(w.t, err)
	return string(b)
}

func (w *world) runRow(id int64) phases.Run {
	w.t.Helper()
	r, err := phases.LoadRun(context.Background(), w.db, id)
	require.NoError(w.t, err)
	return r
}

// The first run: companies, one deleted; a contact and one that fails;
// notes, one waiting for its contact, one empty.
var firstExport = map[string]string{
	"companies.csv": "id,name,domain,deleted\n" +
		"co1,Acme,acme.example,\n" +
		"co2,Beta,beta.example,\n" +
		"co3,Gone,gone.example,yes\n",
	"contacts.csv": "id,first_name,email,company_id\n" +
		"c1,Ann,ann@acme.example,co1\n" +
		"c2,,,co1\n", // neither a name nor an email: failed
	"notes.csv": "id,body,contact_id\n" +
		"n1,Hello,c9\n" + // c9 is not there yet: skipped
		"n2,,c1\n" + // empty body: skipped
		"n3,Hi,c1\n",
}

// The run to undo: it creates (co3 taking over the first run's skip, co4,
// c9, c4, d1, n1 taking over a skip), matches (co5 by domain, c3 by email),
// refreshes a skip (n2), skips afresh (n4) and fails (c2).
var secondExport = map[string]string{
	"companies.csv": "id,name,domain\n" +
		"co1,Acme,acme.example\n" +
		"co3,Gone,gone.example\n" +
		"co4,Gamma,gamma.example\n" +
		"co5,Acme Again,https://www.ACME.example/\n",
	"contacts.csv": "id,first_name,email,company_id\n" +
		"c9,Cy,cy@gamma.example,co4\n" +
		"c3,Annie,ANN@acme.example,co1\n" +
		"c4,Dee,dee@acme.example,co5\n" +
		"c2,,,co1\n",
	"deals.csv": "id,name,amount,company_id,contact_id\n" +
		"d1,Big,1234567890123.45,co4,c9\n",
	"notes.csv": "id,body,contact_id\n" +
		"n1,Hello,c9\n" +
		"n2,,c1\n" +
		"n4,Orphan,c77\n",
}

// TestUndoIsExact (R16): the canonical dump of the tenant — every slot
// with its action, reason, detail, owner and time; every row by content,
// links as source ids, imported_at — before a run equals the dump after the
// run and its undo, and doctor finds after the undo what it found before
// the run. A rerun of the export then imports what the undone run did.
func TestUndoIsExact(t *testing.T) {
	t.Parallel()
	t.Run("CreatedMatchedSkippedFailed", func(t *testing.T) {
		t.Parallel()
		storetest.Run(t, func(t *testing.T, db *sql.DB) {
			w := newWorld(t, db)
			w.run(export(t, firstExport), "canonical")
			before, doctorBefore := w.dump(), w.doctor()

			second := export(t, secondExport)
			run := w.run(second, "canonical")
			require.Equal(t, phases.RunPartial, run.Status)
			require.Equal(t, phases.Counts{Imported: 3, Unchanged: 1, Matched: 1}, run.Stats[ledger.Company])
			require.Equal(t, phases.Counts{Imported: 3, Failed: 1, Matched: 1}, run.Stats[ledger.Contact])
			require.Equal(t, phases.Counts{Imported: 1, Skipped: 2}, run.Stats[ledger.Note])
			require.NotEqual(t, before, w.dump())

			u := w.undo(run.ID, false)
			require.Equal(t, before, w.dump(), "R16: the dump after the run and its undo is the dump before the run")
			require.Equal(t, doctorBefore, w.doctor(), "doctor finds after the undo what it found before the run")
			// Each slot counted for what became of it (SPEC §10): co3 and
			// n1, created over the first run's skips, get those skips back
			// (restored; their rows go), as does n2's refreshed skip.
			require.Equal(t, map[ledger.Kind]phases.Counts{
				ledger.Company: {Removed: 1, Released: 1, Restored: 1},
				ledger.Contact: {Removed: 2, Released: 1},
				ledger.Deal:    {Removed: 1},
				ledger.Note:    {Restored: 2, Cleared: 1},
			}, u.Stats)
			require.Equal(t, u.ID, w.runRow(run.ID).UndoneBy, "the undone run names its undo")
			require.Equal(t, run.ID, u.Undoes)
			require.Equal(t, phases.RunPartial, w.runRow(run.ID).Status, "the undone run keeps its status")

			var maxContact, maxSlot int64
			require.NoError(t, w.db.QueryRow(`SELECT next - 1 FROM id_allocators WHERE name = 'contacts'`).Scan(&maxContact))
			require.NoError(t, w.db.QueryRow(`SELECT next - 1 FROM id_allocators WHERE name = 'migration_records'`).Scan(&maxSlot))

			again := w.run(second, "canonical")
			require.Equal(t, run.Stats, again.Stats, "a rerun after the undo imports what the undone run did")
			var newContact, newSlot int64
			require.NoError(t, w.db.QueryRow(`SELECT min(c.id) FROM contacts c JOIN migration_records r
			ON r.record_id = c.id AND r.kind = 'contact' AND r.action = 'created' AND r.migration_id = ?`, again.ID).Scan(&newContact))
			// The slots the undo deleted (the run's fresh ones: co4, c9, c4, d1, n4);
			// a slot the undo gave back its skip keeps its id, as a takeover does.
			require.NoError(t, w.db.QueryRow(`SELECT min(id) FROM migration_records
			WHERE source_id IN ('co4', 'c9', 'c4', 'd1', 'n4')`).Scan(&newSlot))
			require.Greater(t, newContact, maxContact, "SPEC §10: the ids of rows taken back are never given again")
			require.Greater(t, newSlot, maxSlot, "nor those of slots")
		})
	})

	t.Run("TookSkipsOver", func(t *testing.T) {
		t.Parallel()
		storetest.Run(t, func(t *testing.T, db *sql.DB) {
			w := newWorld(t, db)
			w.run(export(t, map[string]string{
				"contacts.csv": "id,first_name,email\nc1,Ann,ann@acme.example\n",
				"notes.csv":    "id,body,contact_id\nn1,For Bob,c2\nn2,For Cy,c3\nn3,For Ann,c1\n",
			}), "canonical")
			w.run(export(t, map[string]string{"contacts.csv": "id,first_name,email\nc2,Bob,bob@acme.example\nc3,Cy,cy@acme.example\n"}), "canonical")
			before, doctorBefore := w.dump(), w.doctor()
			require.Contains(t, doctorBefore, "ready-to-take-over", "the notes' contacts have arrived")

			notes := export(t, map[string]string{"notes.csv": "id,body,contact_id\nn1,For Bob,c2\nn2,For Cy,c3\nn3,For Ann,c1\n"})
			run := w.run(notes, "canonical", ledger.Note)
			require.Equal(t, phases.Counts{Imported: 2, Unchanged: 1}, run.Stats[ledger.Note])
			u := w.undo(run.ID, false)
			require.Equal(t, map[ledger.Kind]phases.Counts{ledger.Note: {Restored: 2}}, u.Stats, "two skips given back, their notes' rows removed")
			require.Equal(t, before, w.dump(), "the skips it took over are the first run's again: reason, detail, owner, time")
			require.Equal(t, doctorBefore, w.doctor())
			require.Equal(t, run.Stats, w.run(notes, "canonical", ledger.Note).Stats)
		})
	})
}

// TestUndoDependents (R16): rows of other runs that link to the run's
// rows, and other runs' matched slots that point at them, refuse the undo,
// named per run and kind with example ids; --cascade takes them back too,
// and nothing else.
func TestUndoDependents(t *testing.T) {
	t.Parallel()
	t.Run("SameSourceLinks", func(t *testing.T) {
		t.Parallel()
		storetest.Run(t, func(t *testing.T, db *sql.DB) {
			w := newWorld(t, db)
			first := w.run(export(t, map[string]string{"companies.csv": "id,name,domain\nco1,Acme,acme.example\nco2,Beta,\n"}), "canonical")
			later := w.run(export(t, map[string]string{
				"contacts.csv": "id,first_name,email,company_id\nc1,Ann,ann@acme.example,co1\nc2,Bob,bob@beta.example,\nc3,Cy,,co1\n",
				"notes.csv":    "id,body,contact_id,company_id\nn1,About Ann,c1,\nn2,About Bob,c2,\nn3,About Beta,,co2\n",
			}), "canonical")

			_, err := undo.Build(context.Background(), w.db, w.imp.Engine, first.ID, false)
			var dep *undo.DependentsError
			require.ErrorAs(t, err, &dep)
			require.Equal(t, []undo.Dependent{
				{Run: later.ID, Source: "canonical", Kind: "contact", How: "links", Count: 2, Examples: []string{"c1", "c3"}},
				{Run: later.ID, Source: "canonical", Kind: "note", How: "links", Count: 2, Examples: []string{"n1", "n3"}},
			}, dep.Dependents)
			require.Contains(t, err.Error(), "run 2 (canonical): 2 contacts that link to its rows, e.g. c1, c3")
			_, _, err = undo.Start(context.Background(), w.imp.Engine, first.ID, false)
			require.ErrorAs(t, err, &dep, "the undo itself refuses as its dry run does")
			runs, err := phases.ListRuns(context.Background(), w.db, tenant)
			require.NoError(t, err)
			require.Len(t, runs, 2, "a refused undo leaves no run row")

			u := w.undo(first.ID, true)
			require.Equal(t, map[ledger.Kind]phases.Counts{
				ledger.Company: {Removed: 2}, ledger.Contact: {Removed: 2}, ledger.Note: {Removed: 2},
			}, u.Stats)
			// What stays is what a run of the records that depend on nothing
			// of the first run would have left.
			ref := newWorld(t, storetest.OpenDialect(t, store.DialectOf(db)))
			ref.run(export(t, map[string]string{
				"contacts.csv": "id,first_name,email,company_id\nc2,Bob,bob@beta.example,\n",
				"notes.csv":    "id,body,contact_id\nn2,About Bob,c2\n",
			}), "canonical")
			requireSameContent(t, ref, w)
			require.Equal(t, u.ID, w.runRow(first.ID).UndoneBy)
			require.Zero(t, w.runRow(later.ID).UndoneBy, "cascade takes records back, not whole runs")
		})
	})

	t.Run("OtherSourceMatchedByEmail", func(t *testing.T) {
		t.Parallel()
		storetest.Run(t, func(t *testing.T, db *sql.DB) {
			w := newWorld(t, db)
			before := w.dump()
			first := w.run(export(t, map[string]string{"contacts.csv": "id,first_name,email\nc1,Ann,ann@acme.example\n"}), "canonical")
			other := w.run(export(t, map[string]string{
				"contacts.csv": "id,first_name,email\nk1,Ann,Ann@Acme.example\n",
				"notes.csv":    "id,body,contact_id\nm1,Called Ann,k1\n",
			}), "crm2")
			require.Equal(t, int64(1), other.Stats[ledger.Contact].Matched)

			_, err := undo.Build(context.Background(), w.db, w.imp.Engine, first.ID, false)
			var dep *undo.DependentsError
			require.ErrorAs(t, err, &dep)
			require.Equal(t, []undo.Dependent{
				{Run: other.ID, Source: "crm2", Kind: "contact", How: "matched", Count: 1, Examples: []string{"k1"}},
				{Run: other.ID, Source: "crm2", Kind: "note", How: "links", Count: 1, Examples: []string{"m1"}},
			}, dep.Dependents)

			p, err := undo.Build(context.Background(), w.db, w.imp.Engine, first.ID, true)
			require.NoError(t, err)
			require.Equal(t, map[string]undo.PreviewCounts{"contact": {Removed: 1, Released: 1}, "note": {Removed: 1}}, p.Preview().Kinds)
			w.undo(first.ID, true)
			require.Equal(t, before, w.dump(), "both runs' records are gone, and nothing else")
		})
	})
}

// requireSameContent: the two worlds hold the same slots and rows (Dump,
// not DumpExact: run ids and times differ between two databases).
func requireSameContent(t *testing.T, want, got *world) {
	t.Helper()
	a, err := ledgertest.Dump(context.Background(), want.db, tenant)
	require.NoError(t, err)
	b, err := ledgertest.Dump(context.Background(), got.db, tenant)
	require.NoError(t, err)
	require.Equal(t, a, b)
}

// TestUndoRefusals (R16): an undo, an undone run, a run being undone and a
// run with nothing left to take back are refused (RefusedError, exit 1);
// a live run is refused by admission control (exit 6).
func TestUndoRefusals(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		first := w.run(export(t, map[string]string{"contacts.csv": "id,first_name\nc1,Ann\n"}), "canonical")
		var refused *undo.RefusedError

		u := w.undo(first.ID, false)
		_, err := undo.Build(ctx, w.db, w.imp.Engine, first.ID, false)
		require.ErrorAs(t, err, &refused)
		require.Contains(t, err.Error(), "already undone by run 2")
		_, err = undo.Build(ctx, w.db, w.imp.Engine, u.ID, false)
		require.ErrorAs(t, err, &refused)
		require.Contains(t, err.Error(), "an undo cannot be undone")

		// A run whose every slot a later run has taken over: nothing to take back.
		skips := w.run(export(t, map[string]string{"notes.csv": "id,body,contact_id\nn1,Hi,c2\n"}), "canonical")
		w.run(export(t, map[string]string{"notes.csv": "id,body,contact_id\nn1,Hi,c2\n"}), "canonical")
		_, err = undo.Build(ctx, w.db, w.imp.Engine, skips.ID, false)
		require.ErrorAs(t, err, &refused)
		require.Contains(t, err.Error(), "nothing to take back")

		// A live run, and an undo planned but not finished.
		live := w.run(export(t, map[string]string{"contacts.csv": "id,first_name\nc5,Eve\n"}), "canonical")
		spare := w.run(export(t, map[string]string{"contacts.csv": "id,first_name\nc6,Flo\n"}), "other")
		undoing, _, err := undo.Start(ctx, w.imp.Engine, live.ID, false)
		require.NoError(t, err)
		_, err = undo.Build(ctx, w.db, w.imp.Engine, live.ID, false)
		require.ErrorAs(t, err, &refused)
		require.Contains(t, err.Error(), "is being undone by run")
		var adm *phases.AdmissionError
		_, _, err = undo.Start(ctx, w.imp.Engine, first.ID+100, false)
		require.ErrorIs(t, err, phases.ErrNoRun)
		_, _, err = undo.Start(ctx, w.imp.Engine, spare.ID, false)
		require.ErrorAs(t, err, &adm, "the tenant has a live run (the undo planned above): admission control refuses (exit 6)")
		_, err = w.imp.Engine.Execute(ctx, undoing.ID, undo.Open(w.imp.Engine.DB))
		require.NoError(t, err)
		require.Equal(t, undoing.ID, w.runRow(live.ID).UndoneBy)
	})
}

// TestUndoOfALoadedRun (SPEC §10): a run loaded from a dump loses its
// created slots and the placeholder rows that back only them, its matched
// slots, and its skips, which have no before-image — and the plan says so.
func TestUndoOfALoadedRun(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		_, err := forensics.Load(ctx, w.db, filepath.Join("..", "fixtures", "dumps", "clean"), time.Now())
		require.NoError(t, err)
		const loaded = "initech"
		p, err := undo.Build(ctx, w.db, w.imp.Engine, 1, false)
		require.NoError(t, err)
		require.True(t, p.Loaded)
		require.Equal(t, map[string]undo.PreviewCounts{
			"company": {Removed: 2}, "contact": {Removed: 2, Released: 1}, "note": {Removed: 2, Cleared: 2},
		}, p.Preview().Kinds)
		require.Len(t, p.Notices, 1)
		require.Contains(t, p.Notices[0], "its 2 skips have no earlier state here and are deleted")

		w.undo(1, false)
		var slots, rows int
		require.NoError(t, w.db.QueryRow(`SELECT count(*) FROM migration_records WHERE tenant_id = ?`, loaded).Scan(&slots))
		require.Zero(t, slots)
		for _, table := range []string{"companies", "contacts", "notes"} {
			var n int
			require.NoError(t, w.db.QueryRow(`SELECT count(*) FROM `+table+` WHERE tenant_id = ?`, loaded).Scan(&n))
			rows += n
		}
		require.Zero(t, rows, "every placeholder backed only the undone run's slots")
		d, err := forensics.Doctor(ctx, w.db, w.imp.Engine, forensics.DoctorOptions{Tenant: loaded})
		require.NoError(t, err)
		require.True(t, d.Clean, "%v", d.Names())
	})
}

// TestUndoLeavesWhatChangedSincePlanned: each statement of an undo names
// the slot as its plan found it; a slot changed since fails the task, and
// the batch — its deleted rows too — rolls back whole (R11, R12).
func TestUndoLeavesWhatChangedSincePlanned(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		run := w.run(export(t, map[string]string{"contacts.csv": "id,first_name\nc1,Ann\nc2,Bob\n"}), "canonical")
		u, _, err := undo.Start(ctx, w.imp.Engine, run.ID, false)
		require.NoError(t, err)
		_, err = w.db.Exec(`UPDATE migration_records SET migration_id = 99 WHERE source_id = 'c2'`)
		require.NoError(t, err)
		before := w.dump()
		u, err = w.imp.Engine.Execute(ctx, u.ID, undo.Open(w.imp.Engine.DB))
		require.NoError(t, err)
		require.Equal(t, phases.RunFailed, u.Status)
		tasks, err := phases.LoadTasks(ctx, w.db, u.ID)
		require.NoError(t, err)
		require.Contains(t, tasks[0].LastError, "contact slot c2 (source canonical) is no longer created by run 1 as the undo found it")
		require.Equal(t, before, w.dump(), "nothing of the batch stays: c1 is still there, with its row")
		require.Zero(t, w.runRow(run.ID).UndoneBy, "a failed undo does not mark the run undone")
	})
}

// TestUndoNeverRestoresAnUndoneOwner (SPEC §10): a before-image whose owner
// was itself undone is never given back: the slot is deleted instead.
func TestUndoNeverRestoresAnUndoneOwner(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		w := newWorld(t, db)
		notes := map[string]string{"notes.csv": "id,body,contact_id\nn1,For Bob,c2\n"}
		first := w.run(export(t, map[string]string{
			"contacts.csv": "id,first_name\nc1,Ann\n", "notes.csv": notes["notes.csv"],
		}), "canonical")
		second := w.run(export(t, notes), "canonical") // refreshes the skip: its image is the first run's
		var owner int64
		require.NoError(t, w.db.QueryRow(`SELECT migration_id FROM slot_before WHERE source_id = 'n1'`).Scan(&owner))
		require.Equal(t, first.ID, owner)

		w.undo(first.ID, false) // takes c1 back; n1 is the second run's
		u := w.undo(second.ID, false)
		require.Equal(t, map[ledger.Kind]phases.Counts{ledger.Note: {Cleared: 1}}, u.Stats)
		var n int
		require.NoError(t, w.db.QueryRow(`SELECT count(*) FROM migration_records WHERE source_id = 'n1'`).Scan(&n))
		require.Zero(t, n, "the skip of an undone run is not given back")
	})
}

// TestUndoMovesTheEpochOfItsTenantAndSourceOnly (SPEC §10, R2): after an
// undo, a rerun of its export in its tenant reads the files again (their
// records are not in final slots any more); another tenant's rerun of the
// same files still counts them unchanged without reading them.
func TestUndoMovesTheEpochOfItsTenantAndSourceOnly(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		imp := importer.New(phases.New(db, nil))
		ctx := context.Background()
		dir := export(t, map[string]string{"contacts.csv": "id,first_name\nc1,Ann\nc2,Bob\n"})
		run := func(tenant string) phases.Run {
			r, err := imp.Plan(ctx, importer.RunSpec{Tenant: tenant, Source: "canonical", Input: dir})
			require.NoError(t, err)
			r, err = imp.Execute(ctx, r.ID)
			require.NoError(t, err)
			return r
		}
		unread := func(r phases.Run) bool {
			var n int
			require.NoError(t, db.QueryRow(`SELECT count(*) FROM run_log WHERE migration_id = ? AND message LIKE '%counted unchanged without reading it again%'`, r.ID).Scan(&n))
			return n > 0
		}
		acme := run("acme")
		run("beta")
		u, _, err := undo.Start(ctx, imp.Engine, acme.ID, false)
		require.NoError(t, err)
		_, err = imp.Engine.Execute(ctx, u.ID, undo.Open(imp.Engine.DB))
		require.NoError(t, err)

		beta := run("beta")
		require.True(t, unread(beta), "beta's evidence stands: the undo was acme's")
		require.Equal(t, int64(2), beta.Stats[ledger.Contact].Unchanged)
		again := run("acme")
		require.False(t, unread(again), "acme's evidence moved with its undo")
		require.Equal(t, int64(2), again.Stats[ledger.Contact].Imported)
	})
}

// TestUndoPlanGoesStaleWhenTheTenantIsWritten: an undo commits the plan it
// showed, or nothing — a run of the tenant between the plan and its start
// that changes what it would take back refuses the start, naming what
// changed (R10, R16).
func TestUndoPlanGoesStaleWhenTheTenantIsWritten(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		first := w.run(export(t, map[string]string{"companies.csv": "id,name\nco1,Acme\n"}), "canonical")
		p, err := undo.Build(ctx, w.db, w.imp.Engine, first.ID, false)
		require.NoError(t, err)
		w.run(export(t, map[string]string{"contacts.csv": "id,first_name,company_id\nc1,Ann,co1\n"}), "canonical")
		_, err = p.Start(ctx, w.imp.Engine)
		var changed *undo.PlanChangedError
		require.ErrorAs(t, err, &changed)
		require.Contains(t, err.Error(), "its plan changed since the preview: 1 more contact of run 2 to remove; nothing was written")
		runs, err := phases.ListRuns(ctx, w.db, tenant)
		require.NoError(t, err)
		require.Len(t, runs, 2)

		// Under --cascade, where the new record is no refusal but one more
		// to take back: the plan committed is still the one built.
		p, err = undo.Build(ctx, w.db, w.imp.Engine, first.ID, true)
		require.NoError(t, err)
		bob := w.run(export(t, map[string]string{"contacts.csv": "id,first_name,company_id\nc2,Bob,co1\n"}), "canonical")
		_, err = p.Start(ctx, w.imp.Engine)
		require.ErrorAs(t, err, &changed)
		require.Contains(t, err.Error(), fmt.Sprintf("its plan changed since the preview: 1 more contact of run %d to remove; nothing was written", bob.ID))
		runs, err = phases.ListRuns(ctx, w.db, tenant)
		require.NoError(t, err)
		require.Len(t, runs, 3)
	})
}

// TestUndoMovesTheEpochOncePerBatch: while an undo's batch takes its final
// slots back, the triggers that move the epoch per slot stand aside
// (schema 9's epoch_hold) and the batch moves it once itself: 7 contacts in
// batches of 3 move it by 3, not 7. Nothing of the hold is left, and a final
// slot deleted by hand, outside an undo, still moves the epoch.
func TestUndoMovesTheEpochOncePerBatch(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		imp := importer.New(phases.New(db, nil))
		ctx := context.Background()
		dir := export(t, map[string]string{"contacts.csv": "id,first_name\nc1,A\nc2,B\nc3,C\nc4,D\nc5,E\nc6,F\nc7,G\n"})
		r, err := imp.Plan(ctx, importer.RunSpec{Tenant: "acme", Source: "canonical", Input: dir})
		require.NoError(t, err)
		r, err = imp.Execute(ctx, r.ID)
		require.NoError(t, err)
		require.Equal(t, int64(7), r.Stats[ledger.Contact].Imported)
		epoch := func() int64 {
			n, err := ledger.Epoch(ctx, db, "acme", "canonical")
			require.NoError(t, err)
			return n
		}
		before := epoch()

		u, _, err := undo.StartWith(ctx, imp.Engine, undo.Options{Undo: r.ID, BatchSize: 3})
		require.NoError(t, err)
		u, err = imp.Engine.Execute(ctx, u.ID, undo.Open(imp.Engine.DB))
		require.NoError(t, err)
		require.Equal(t, phases.RunSucceeded, u.Status)
		require.Equal(t, before+3, epoch(), "one step per batch (3 + 3 + 1 slots)")
		var held int
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM epoch_hold`).Scan(&held))
		require.Zero(t, held, "the hold ends with its batch")

		r, err = imp.Plan(ctx, importer.RunSpec{Tenant: "acme", Source: "canonical", Input: dir})
		require.NoError(t, err)
		_, err = imp.Execute(ctx, r.ID)
		require.NoError(t, err)
		before = epoch()
		_, err = db.Exec(`DELETE FROM migration_records WHERE tenant_id = 'acme' AND source_id IN ('c1', 'c2')`)
		require.NoError(t, err)
		require.Equal(t, before+2, epoch(), "outside an undo, the triggers move it per slot")
	})
}

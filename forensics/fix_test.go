package forensics_test

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/forensics"
	"crmimport/importer"
	"crmimport/importer/input"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/report"
	"crmimport/store/storetest"
)

// TestResumeFromFixesTheStrandedRetry: the loaded run of incident two is
// never resumed by accident — it has no input files here — but resume
// --from plans its stranded contacts over a local export, and the engine
// finishes what production declared finished: doctor is clean after.
func TestResumeFromFixesTheStrandedRetry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		loadFixture(t, db, "stranded-retry")
		imp := importer.New(phases.New(db, nil))

		_, _, err := imp.Resume(ctx, 1)
		var usage *importer.UsageError
		require.ErrorAs(t, err, &usage)
		require.Contains(t, err.Error(), "run 1 was loaded from a dump")
		require.Contains(t, err.Error(), "`crmimport resume 1 --from PATH`")

		// An export without contacts: refused before anything changes.
		noContacts := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(noContacts, "notes.csv"), []byte("id,body,contact_id\nn-1,Hello,c-1\n"), 0o600))
		_, _, err = imp.ResumeFrom(ctx, 1, noContacts)
		var input *input.Error
		require.ErrorAs(t, err, &input)
		require.Contains(t, err.Error(), "has no file for contacts, which run 1 has left to do")
		run, err := phases.LoadRun(ctx, db, 1)
		require.NoError(t, err)
		require.Equal(t, phases.RunSucceeded, run.Status)
		require.Equal(t, 5, run.CurrentPhase)

		run, planned, err := imp.ResumeFrom(ctx, 1, filepath.Join(dumps, "stranded-retry", "export"))
		require.NoError(t, err)
		require.Equal(t, 2, run.CurrentPhase, "the barrier is back where the work is (R8)")
		require.Len(t, planned, 1)
		require.Equal(t, "contacts.csv", filepath.Base(planned[0].File))
		require.NotEmpty(t, planned[0].Fingerprint)
		run, err = imp.Execute(ctx, 1)
		require.NoError(t, err)
		require.Equal(t, phases.RunSucceeded, run.Status)
		require.Equal(t, int64(6), run.Stats["contact"].Imported)
		require.Equal(t, int64(0), run.Stats["contact"].Failed, "the contacts task's production failures were its to redo")
		require.Equal(t, int64(4), run.Stats["company"].Imported, "what production counted for the tasks it finished stays")
		require.Equal(t, [][]string{{"6", "6"}}, query(t, db,
			`SELECT count(*), count(company_id) FROM contacts WHERE from_dump = 0`), "linked to the companies production imported (placeholders)")
		require.True(t, doctor(t, db, "").Clean, "%+v", doctor(t, db, "").Findings)

		_, _, err = imp.ResumeFrom(ctx, 1, filepath.Join(dumps, "stranded-retry", "export"))
		require.ErrorContains(t, err, "has no unfinished task")
	})
}

// TestRunOnlyFixesThePoisonedLedger: on the loaded ledger of incident one,
// the run doctor suggests takes every stale skip over (R3), and doctor is
// clean after.
func TestRunOnlyFixesThePoisonedLedger(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		loadFixture(t, db, "poisoned-ledger")
		imp := importer.New(phases.New(db, nil))
		run, err := imp.Plan(ctx, importer.RunSpec{Tenant: "acme", Source: "hubspot",
			Input: filepath.Join(dumps, "poisoned-ledger", "export"), Only: []ledger.Kind{ledger.Note, ledger.Activity}})
		require.NoError(t, err)
		run, err = imp.Execute(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, phases.RunSucceeded, run.Status)
		require.Equal(t, int64(24), run.Stats["note"].Imported)
		require.Equal(t, int64(20), run.Stats["activity"].Imported)
		d := doctor(t, db, "acme")
		require.True(t, d.Clean, "%+v", d.Findings)
		require.Equal(t, [][]string{{"44"}}, query(t, db, `SELECT count(*) FROM migration_records WHERE migration_id = 3 AND action = 'created'`))
	})
}

// TestResumeFromLeavesFinishedTasksAlone: production finished one contacts
// task (its checkpoint says 500 rows of a file that is not here) and
// failed another; resume --from reads the local file for the failed one
// and never looks for the finished one's file.
func TestResumeFromLeavesFinishedTasksAlone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		dir := writeDump(t, map[string]string{
			"migrations.csv":      "id,tenant_id,source,status,current_phase,started_at,duration_ms\n4,t,canonical,partial,2,2026-01-05 09:00:00+00,10\n",
			"migration_tasks.csv": "id,migration_id,kind,status,checkpoint\n1,4,contacts,succeeded,\"{\"\"rows\"\":500,\"\"line\"\":501}\"\n2,4,contacts,failed,\n",
		})
		_, err := forensics.Load(ctx, db, dir, loadTime)
		require.NoError(t, err)
		export := writeDump(t, map[string]string{"contacts.csv": "id,first_name\nc-1,Ann\n"})
		imp := importer.New(phases.New(db, nil))
		_, _, err = imp.ResumeFrom(ctx, 4, export)
		require.NoError(t, err)
		run, err := imp.Execute(ctx, 4)
		require.NoError(t, err)
		require.Equal(t, phases.RunSucceeded, run.Status, "%v", query(t, db, `SELECT id, status, last_error FROM migration_tasks`))
	})
}

// TestRunPageOfALoadedRun: the run page of a loaded run shows production's
// counts (from its stats), no file for its tasks, and resumes it with
// --from, never with a plain resume that would refuse.
func TestRunPageOfALoadedRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		loadFixture(t, db, "poisoned-ledger")
		r, err := report.Build(ctx, db, phases.New(db, nil), 1, false)
		require.NoError(t, err)
		require.NotEmpty(t, r.Dump)
		require.Equal(t, int64(12), r.Total.Failed, "8 contacts and 4 deals, as production counted them")
		var b bytes.Buffer
		report.WriteReport(&b, r)
		require.Regexp(t, `2\s+2\s+contacts\s+—\s+failed`, b.String())
		require.Contains(t, b.String(), "its contacts task could not be finished: Validation failed: Email is invalid; `crmimport resume 1 --from PATH`")
		require.NotContains(t, b.String(), "`crmimport resume 1` ")
	})
}

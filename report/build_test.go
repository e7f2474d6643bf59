package report_test

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/importer"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/report"
	"crmimport/store/storetest"
	"crmimport/undo"
)

// TestBuild: a run's report as the database tells it, on both dialects —
// per kind in plan order the four outcomes, this run's skips by reason
// (most first, with their first source ids), its failures by reason class,
// R9's warning for a kind skipped whole for one reason, what to do next,
// the run log; and `runs` newest first, an undo and the run it undid
// naming each other (R16).
func TestBuild(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		dir := t.TempDir()
		for name, content := range map[string]string{
			"companies.csv": "id,name,deleted\nco1,Gone,yes\nco2,Also gone,yes\n",
			"contacts.csv":  "id,first_name,email\nc1,Ann,ann@acme.example\nc2,Bob,bob(at)x\nc3,Cy,cy(at)y\nc4,,\n",
			"notes.csv":     "id,body,contact_id\nn4,D,c6\nn1,A,c9\nn2,B,c8\nn3,C,c7\nn5,,c1\nn6,Hi,c1\n",
		} {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600))
		}
		imp := importer.New(phases.New(db, nil))
		run, err := imp.Plan(ctx, importer.RunSpec{Tenant: "acme", Source: "canonical", Profile: "canonical", Input: dir, BatchSize: 2})
		require.NoError(t, err)
		run, err = imp.Execute(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, phases.RunPartial, run.Status)

		r, err := report.Build(ctx, db, imp.Engine, run.ID, true)
		require.NoError(t, err)
		require.Equal(t, []report.Kind{
			{Kind: ledger.Company, Counts: phases.Counts{Skipped: 2},
				Skips:       []report.Reason{{Reason: "deleted in source", Count: 2, Examples: []string{"co1", "co2"}}},
				UniformSkip: "deleted in source"},
			{Kind: ledger.Contact, Counts: phases.Counts{Imported: 1, Failed: 3},
				Failures: []report.Reason{
					{Reason: `email "…" is not an email address`, Count: 2, Examples: []string{"c2", "c3"}},
					{Reason: "contact has neither a name nor an email", Count: 1, Examples: []string{"c4"}},
				},
				FailedRows: 3}, // every failure of a run of this database keeps its row (R4)
			{Kind: ledger.Note, Counts: phases.Counts{Imported: 1, Skipped: 5},
				Skips: []report.Reason{
					{Reason: "not linked to any record", Count: 4, Examples: []string{"n1", "n2", "n3"}},
					{Reason: "empty body", Count: 1, Examples: []string{"n5"}},
				}},
		}, r.Kinds)
		require.Equal(t, int64(3), r.FailedRows)
		require.Zero(t, r.Unlisted(), "a run of this database lists every failed record")
		require.Equal(t, phases.Counts{Imported: 2, Skipped: 7, Failed: 3}, r.Total)
		require.Len(t, r.Warnings(), 1)
		require.Contains(t, r.Warnings()[0], `every one of the 2 companies was skipped as "deleted in source"`)
		require.Len(t, r.Next(), 2)
		require.Contains(t, r.Next()[1], "4 records wait for a contact, company or deal that is not imported (4 notes)")
		require.NotEmpty(t, r.Log)
		require.Equal(t, "run 1 planned for tenant acme, source canonical: 3 tasks", r.Log[0].Message)
		require.Contains(t, r.Log[len(r.Log)-1].Message, "run 1 finalized: partial")
		var text bytes.Buffer
		report.WriteReport(&text, r)
		require.Contains(t, text.String(), "not linked to any record")

		u, _, err := undo.Start(ctx, imp.Engine, run.ID, false)
		require.NoError(t, err)
		u, err = imp.Execute(ctx, u.ID)
		require.NoError(t, err)
		require.Equal(t, phases.RunSucceeded, u.Status, u.Message)
		runs, err := report.List(ctx, db, imp.Engine, "acme")
		require.NoError(t, err)
		require.Len(t, runs, 2)
		require.Equal(t, []int64{u.ID, run.ID}, []int64{runs[0].Run.ID, runs[1].Run.ID}, "newest first")
		require.Equal(t, "undo of run 1", runs[0].UndoWord())
		require.Equal(t, "undone by run 2", runs[1].UndoWord())
		require.Nil(t, runs[1].Log, "runs reads no log")
		took := map[ledger.Kind]phases.Counts{}
		for _, k := range runs[0].Kinds {
			took[k.Kind] = k.Counts
		}
		require.Equal(t, map[ledger.Kind]phases.Counts{
			ledger.Company: {Cleared: 2}, ledger.Contact: {Removed: 1}, ledger.Note: {Removed: 1, Cleared: 5},
		}, took, "what the undo took back, per kind")
		for _, k := range runs[1].Kinds {
			require.Empty(t, k.Skips, "the undone run's skips are gone from the ledger: %s", k.Kind)
		}
	})
}

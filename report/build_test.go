package report_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
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
		require.Contains(t, r.Next()[1], "4 records wait for a contact, lead, company or deal that is not imported (4 notes)")
		require.NotEmpty(t, r.Log)
		require.Equal(t, "run 1 planned for tenant acme, source canonical: 3 tasks", r.Log[0].Message)
		require.Contains(t, r.Log[len(r.Log)-1].Message, "run 1 finalized: partial")
		var text bytes.Buffer
		report.WriteReport(&text, r)
		require.Contains(t, text.String(), "not linked to any record")

		u, _, err := undo.Start(ctx, imp.Engine, run.ID, false)
		require.NoError(t, err)
		u, err = imp.Engine.Execute(ctx, u.ID, undo.Open(imp.Engine.DB))
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

// TestPartlyUndone (R16, SPEC §10): a run whose records an undo under
// --cascade took back keeps its status and counts — what it did — and
// every face says what was taken back of it: runs, its report and
// summary (text and JSON), and what next.
func TestPartlyUndone(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		imp := importer.New(phases.New(db, nil))
		run := func(files map[string]string) phases.Run {
			dir := t.TempDir()
			for name, content := range files {
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600))
			}
			r, err := imp.Plan(ctx, importer.RunSpec{Tenant: "acme", Source: "canonical", Input: dir})
			require.NoError(t, err)
			r, err = imp.Execute(ctx, r.ID)
			require.NoError(t, err)
			return r
		}
		first := run(map[string]string{"companies.csv": "id,name\nco1,Acme\n"})
		second := run(map[string]string{
			"contacts.csv": "id,first_name,company_id\nc1,Ann,co1\nc2,Bob,co1\nc3,Cy,\n",
			"notes.csv":    "id,body,contact_id\nn1,Hi Ann,c1\n",
		})
		require.Equal(t, phases.RunSucceeded, second.Status)
		u, _, err := undo.Start(ctx, imp.Engine, first.ID, true)
		require.NoError(t, err)
		u, err = imp.Engine.Execute(ctx, u.ID, undo.Open(imp.Engine.DB))
		require.NoError(t, err)
		require.Equal(t, phases.RunSucceeded, u.Status)

		r, err := report.Build(ctx, db, imp.Engine, second.ID, false)
		require.NoError(t, err)
		const word = "partly undone by run 3 (cascade of run 1): 2 contacts, 1 note"
		require.Equal(t, word, r.UndoWord())
		require.Equal(t, phases.RunSucceeded, r.Run.Status, "the run keeps its status")
		require.Equal(t, int64(3), r.Kinds[0].Imported, "and its counts: what it did")
		s := r.Summary()
		require.Equal(t, []undo.Part{{Undo: 3, Undoes: 1, Kind: "contact", Count: 2}, {Undo: 3, Undoes: 1, Kind: "note", Count: 1}}, s.PartlyUndone)
		b, err := json.Marshal(s)
		require.NoError(t, err)
		require.Contains(t, string(b), `"partly_undone":[{"undo":3,"undoes":1,"kind":"contact","count":2},{"undo":3,"undoes":1,"kind":"note","count":1}]`)
		require.Contains(t, r.Next(), "run 3 (the undo of run 1 with --cascade) took back 2 contacts and 1 note of run 2, which depended on run 1's rows: "+
			"its counts say what it did, not what is still there; a new run of its export imports them again once their parents are back")

		var text bytes.Buffer
		report.WriteSummary(&text, r)
		require.Contains(t, text.String(), "SUCCEEDED · "+word)
		text.Reset()
		report.WriteReport(&text, r)
		require.Contains(t, text.String(), "  undo        "+word+"\n")
		runs, err := report.List(ctx, db, imp.Engine, "acme")
		require.NoError(t, err)
		text.Reset()
		report.WriteRuns(&text, runs)
		require.Regexp(t, `(?m)^2 +acme +canonical +succeeded .*`+regexp.QuoteMeta(word)+`$`, text.String())
		require.Empty(t, runs[2].TakenBack, "the undone run is undone, not partly")
		require.Equal(t, "undone by run 3", runs[2].UndoWord())
		b, err = json.Marshal(runs[2].Summary())
		require.NoError(t, err)
		require.NotContains(t, string(b), "partly_undone", "absent when nothing was taken back of a run")
	})
}

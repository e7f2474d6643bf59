package report_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/importer"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/report"
	"crmimport/store/storetest"
)

// sourceChanges gives run the changes at the source that a rerun of an
// edited export finds (R17): the contacts task's counts and the run's
// finalized stats, and its record_changes rows — as the engine writes
// them, inserted here.
func sourceChanges(t *testing.T, db *sql.DB, run int64, c phases.Counts, rows ...[]any) {
	t.Helper()
	ctx := context.Background()
	_, err := db.ExecContext(ctx, `UPDATE migration_tasks SET updated = ?, overwritten = ?, outdated = ?, conflict = ?, deleted_since = ?
		WHERE migration_id = ? AND kind = 'contact'`, c.Updated, c.Overwritten, c.Outdated, c.Conflict, c.DeletedSince, run)
	require.NoError(t, err)
	r, err := phases.LoadRun(ctx, db, run)
	require.NoError(t, err)
	if r.Stats != nil {
		k := r.Stats[ledger.Contact]
		k.Updated, k.Overwritten, k.Outdated, k.Conflict, k.DeletedSince = c.Updated, c.Overwritten, c.Outdated, c.Conflict, c.DeletedSince
		r.Stats[ledger.Contact] = k
		b, err := json.Marshal(r.Stats)
		require.NoError(t, err)
		_, err = db.ExecContext(ctx, `UPDATE migrations SET stats = ? WHERE id = ?`, string(b), run)
		require.NoError(t, err)
	}
	for _, row := range rows {
		_, err := db.ExecContext(ctx, `INSERT INTO record_changes (migration_id, kind, source_id, file, line, change, applicable, fields, edited, before, after)
			VALUES (?, 'contact', ?, 'contacts.csv', ?, ?, ?, ?, ?, ?, ?)`, append([]any{run}, row...)...)
		require.NoError(t, err)
	}
}

// TestChangedAtTheSource (R17, SPEC §11): a run that found records changed
// at the source says so on every face the report feeds — per kind the
// counts beside the outcomes, a section with up to five examples per
// change and their fields, the exact command that applies what can be
// applied (quoted for a shell), a line for the conflicts and for the
// deletions never propagated, and --strict's exit.
func TestChangedAtTheSource(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		dir := filepath.Join(t.TempDir(), "my export")
		require.NoError(t, os.Mkdir(dir, 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "contacts.csv"), []byte("id,first_name,email\nc1,Ann,ann@acme.example\n"), 0o600))
		imp := importer.New(phases.New(db, nil))
		run, err := imp.Plan(ctx, importer.RunSpec{Tenant: "acme", Source: "canonical", Input: dir, BatchSize: 100})
		require.NoError(t, err)
		run, err = imp.Execute(ctx, run.ID)
		require.NoError(t, err)

		var rows [][]any
		for i := 1; i <= 7; i++ { // seven outdated, five shown
			rows = append(rows, []any{fmt.Sprintf("c%d", i), i + 1, "outdated", 1, `["email"]`, nil,
				fmt.Sprintf(`{"email":"old%d@x.example"}`, i), fmt.Sprintf(`{"email":"new%d@x.example"}`, i)})
		}
		rows = append(rows,
			[]any{"c8", 9, "conflict", 0, `["phone"]`, `["phone"]`, `{"phone":"1"}`, `{"phone":"<script>alert(1)</script>"}`},
			[]any{"c9", 10, "deleted_since", 0, `[]`, nil, nil, nil})
		sourceChanges(t, db, run.ID, phases.Counts{Outdated: 8, Conflict: 1, DeletedSince: 1}, rows...)

		r, err := report.Build(ctx, db, imp.Engine, run.ID, false)
		require.NoError(t, err)
		require.Len(t, r.Changes, 1)
		k := r.Changes[0]
		require.Equal(t, ledger.Contact, k.Kind)
		require.Equal(t, [4]int64{7, 1, 1, 7}, [4]int64{k.Outdated, k.Conflict, k.DeletedSince, k.Applicable})
		require.Len(t, k.Examples, 7, "five outdated, one conflict, one deleted since")
		require.Equal(t, []report.FieldChange{{Field: "email", Before: "old1@x.example", After: "new1@x.example"}}, k.Examples[0].Values)
		require.Equal(t, []string{"phone"}, k.Edited)

		const cmd = `crmimport run --tenant acme --source canonical --update '`
		require.Equal(t, cmd+dir+`'   # applies 7 of 8 (1 is a conflict or matched)`, r.UpdateCommand())
		next := r.Next()
		require.Contains(t, next, "8 records changed at the source since they were imported (8 contacts) and were left as they were: `"+
			cmd+dir+"'` applies 7 of 8 (1 is a conflict or matched)")
		require.Contains(t, next, "1 record was edited by hand since it was imported (phone): left alone; `--update=overwrite` writes over those edits")
		require.Contains(t, next, "1 record was deleted in the source since it was imported (1 contact): left in place — deletions are never propagated")

		var text bytes.Buffer
		report.WriteReport(&text, r)
		require.Contains(t, text.String(), "(8 outdated (1 conflict), 1 deleted since)")
		require.Contains(t, text.String(), "\nChanged at the source\n  contacts\n           7  outdated\n              c1: email\n")
		require.NotContains(t, text.String(), "c6: email", "five examples per change")
		require.Contains(t, text.String(), "              c8: phone; edited by hand: phone\n")
		require.Contains(t, text.String(), "              c9\n")

		text.Reset()
		report.WriteSummary(&text, r) // the run's closing summary on the command line
		require.Contains(t, text.String(), "(8 outdated (1 conflict), 1 deleted since)")
		require.Contains(t, text.String(), "  - 8 records changed at the source since they were imported (8 contacts) and were left as they were: `"+cmd)
		require.Contains(t, text.String(), "  - 1 record was deleted in the source since it was imported (1 contact): left in place — deletions are never propagated\n")

		b, err := json.Marshal(r.Full())
		require.NoError(t, err)
		require.Contains(t, string(b), `"update_command":`)
		require.Contains(t, string(b), `"changes":[{"kind":"contact","outdated":7,"conflict":1,"deleted_since":1,`)

		require.False(t, r.StrictExit(), "without --strict, changes at the source do not change the exit")
		r.Strict = true
		require.True(t, r.StrictExit())
		require.Contains(t, r.Next(), "--strict: 8 records were outdated (1 in conflict), 1 record was deleted in the source since imported, so this run exits 7")
	})
}

// TestNoChangesNoSection: a run that found nothing changed at the source
// says nothing of it, and its JSON carries an empty list.
func TestNoChangesNoSection(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		dir := writeDump(t, map[string]string{"contacts.csv": "id,first_name\nc1,Ann\n"})
		imp := importer.New(phases.New(db, nil))
		run, err := imp.Plan(ctx, importer.RunSpec{Tenant: "acme", Source: "canonical", Input: dir, BatchSize: 100})
		require.NoError(t, err)
		run, err = imp.Execute(ctx, run.ID)
		require.NoError(t, err)
		r, err := report.Build(ctx, db, imp.Engine, run.ID, false)
		require.NoError(t, err)
		require.Nil(t, r.Changes)
		require.Empty(t, r.UpdateCommand())
		var text bytes.Buffer
		report.WriteReport(&text, r)
		require.NotContains(t, text.String(), "Changed at the source")
		require.NotContains(t, text.String(), "outdated")
		b, err := json.Marshal(r.Full())
		require.NoError(t, err)
		require.Contains(t, string(b), `"changes":[]`)
	})
}

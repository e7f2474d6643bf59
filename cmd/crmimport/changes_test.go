package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/store"
)

// sourceCountKeys are the counts of R17 that every JSON summary gives per
// kind, zeros included (SPEC §11).
var sourceCountKeys = []string{"updated", "overwritten", "outdated", "conflict", "deleted_since"}

// requireSourceCounts fails unless every kind of a summary's kinds holds
// every count of R17.
func requireSourceCounts(t *testing.T, what string, kinds map[string]map[string]any) {
	t.Helper()
	require.NotEmpty(t, kinds, "%s: no kinds", what)
	for kind, counts := range kinds {
		for _, key := range sourceCountKeys {
			require.Contains(t, counts, key, "%s: %s has no %s", what, kind, key)
		}
	}
}

// TestChangesAtTheSourceOnTheCommandLine (R17, SPEC §5 and §11): the run's
// own summary, `runs --json` and `report --format json` give per kind every
// count of R17, zeros included; a run under --strict that found records
// outdated or deleted since at the source exits 7 (its report says so,
// with the command that applies the changes), and one that found none
// exits 0.
func TestChangesAtTheSourceOnTheCommandLine(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "crm.db")
	export := exportOf(t, map[string]string{"contacts.csv": "id,first_name,email\nc1,Ann,ann@acme.example\nc2,Bob,bob@acme.example\n"})
	r := crm(t, nil, "--db", path, "--json", "run", "--tenant", "acme", "--source", "canonical", "--strict", export)
	require.Equal(t, exitOK, r.code, r.stderr)
	var run struct{ Kinds map[string]map[string]any }
	require.NoError(t, jsonUnmarshal(r.stdout, &run))
	requireSourceCounts(t, "the run's summary", run.Kinds)

	r = crm(t, nil, "--db", path, "--json", "runs")
	require.Equal(t, exitOK, r.code, r.stderr)
	var listed struct {
		Runs []struct{ Kinds map[string]map[string]any }
	}
	require.NoError(t, jsonUnmarshal(r.stdout, &listed))
	require.Len(t, listed.Runs, 1)
	requireSourceCounts(t, "runs --json", listed.Runs[0].Kinds)

	// What a rerun of the export, edited since, finds: one contact
	// outdated (applicable), one deleted in the source since.
	db, err := store.Open(context.Background(), path)
	require.NoError(t, err)
	for _, q := range []string{
		`UPDATE migration_tasks SET outdated = 1, deleted_since = 1 WHERE migration_id = 1 AND kind = 'contact'`,
		`UPDATE migrations SET stats = NULL WHERE id = 1`, // read from the tasks
		`INSERT INTO record_changes (migration_id, kind, source_id, change, applicable, fields, before, after)
			VALUES (1, 'contact', 'c1', 'outdated', 1, '["email"]', '{"email":"ann@acme.example"}', '{"email":"ann@globex.example"}')`,
		`INSERT INTO record_changes (migration_id, kind, source_id, change) VALUES (1, 'contact', 'c2', 'deleted_since')`,
	} {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}
	require.NoError(t, db.Close())

	r = crm(t, nil, "--db", path, "report", "1", "--format", "json")
	require.Equal(t, exitOK, r.code, r.stderr)
	var page struct {
		Kinds         map[string]map[string]any
		ExitCode      int      `json:"exit_code"`
		Next          []string `json:"next"`
		UpdateCommand string   `json:"update_command"`
		Changes       []json.RawMessage
	}
	require.NoError(t, jsonUnmarshal(r.stdout, &page))
	requireSourceCounts(t, "report --format json", page.Kinds)
	require.Equal(t, float64(1), page.Kinds["contact"]["outdated"])
	require.Equal(t, exitStrict, page.ExitCode, "--strict: outdated and deleted-since records exit 7: %v", page.Next)
	require.Contains(t, page.Next, "--strict: 1 record was outdated, 1 record was deleted in the source since imported, so this run exits 7")
	require.Equal(t, "crmimport run --tenant acme --source canonical --update "+export+"   # applies 1 of 1", page.UpdateCommand)
	require.Len(t, page.Changes, 1)

	r = crm(t, nil, "--db", path, "report", "1")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "Changed at the source")
	require.Contains(t, r.stdout, "1 record was deleted in the source since it was imported (1 contact): left in place — deletions are never propagated")
}

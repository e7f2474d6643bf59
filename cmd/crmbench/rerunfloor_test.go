package main

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/fixtures/gen"
	"crmimport/importer"
	"crmimport/phases"
	"crmimport/store"
)

// The rerun floor is only a floor if it does what a rerun of an unchanged
// export must: after it, as after a real rerun of the same database, every
// skipped slot belongs to the new run with its before-image kept (R3, R16)
// and every failure of the first run is written again for it (R4).
func TestRerunFloorDoesWhatARerunMust(t *testing.T) {
	dir := t.TempDir()
	export := filepath.Join(dir, "export")
	exp, err := gen.Write(mkdir(export), gen.Config{Contacts: 2000, Seed: 7, Shape: gen.ShapeRealistic, NoteMax: 300})
	require.NoError(t, err)

	first := filepath.Join(dir, "first.db")
	crmRun(t, first, export, exp.Status.First)
	floorDB, rerunDB := filepath.Join(dir, "floor.db"), filepath.Join(dir, "rerun.db")
	for _, to := range []string{floorDB, rerunDB} {
		require.NoError(t, copyFile(first, to))
	}
	crmRun(t, rerunDB, export, exp.Status.Rerun)
	require.NoError(t, rerunFloor(export, floorDB))

	// What a rerun leaves of its run (run 2): its skips, their
	// before-images, its failures; and that no slot of another run is left
	// a skip.
	const state = `
SELECT 'skip', kind, source_id, coalesce(reason, ''), coalesce(detail, '') FROM migration_records WHERE action = 'skipped' AND migration_id = 2
UNION ALL
SELECT 'skip of another run', kind, source_id, migration_id, '' FROM migration_records WHERE action = 'skipped' AND migration_id <> 2
UNION ALL
SELECT 'before', kind, source_id, migration_id, coalesce(reason, '') FROM slot_before WHERE taken_by = 2
UNION ALL
SELECT 'failure', kind, coalesce(source_id, ''), coalesce(line, ''), reason FROM record_failures WHERE migration_id = 2
ORDER BY 1, 2, 3, 4, 5`
	floor, rerun := rowsOf(t, floorDB, state), rowsOf(t, rerunDB, state)
	require.NotEmpty(t, rerun)
	require.Equal(t, rerun, floor)
	kinds := map[string]bool{}
	for _, r := range rerun {
		kinds[r[0]] = true
	}
	require.Equal(t, map[string]bool{"skip": true, "before": true, "failure": true}, kinds, "the export has skips and failures")
}

func crmRun(t *testing.T, path, export, status string) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	require.NoError(t, err)
	defer db.Close()
	imp := importer.New(phases.New(db, nil))
	run, err := imp.Plan(ctx, importer.RunSpec{Tenant: "bench", Source: "canonical", Input: export})
	require.NoError(t, err)
	run, err = imp.Execute(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, status, string(run.Status))
	_, err = db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`) // the file alone holds it all: copied as it is
	require.NoError(t, err)
}

func rowsOf(t *testing.T, path, query string) [][5]string {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	rows, err := db.Query(query)
	require.NoError(t, err)
	defer rows.Close()
	var out [][5]string
	for rows.Next() {
		var r [5]string
		require.NoError(t, rows.Scan(&r[0], &r[1], &r[2], &r[3], &r[4]))
		out = append(out, r)
	}
	require.NoError(t, rows.Err())
	return out
}

package importer

import (
	"compress/gzip"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/failpoint"
	"crmimport/fixtures/gen"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store/storetest"
)

// TestStoredProgressFollowsTheCheckpoints: SPEC §9 (live updates) and R12.
// A task's progress is what its committed checkpoints stored: over a real
// import in small batches, of a CSV file and of a gzip (whose compressed
// bytes are what progress counts), the bytes read never go back, pass
// through the file rather than jump to its end, and are its size once the
// task succeeds. A task whose batch fails keeps the progress of its last
// committed batch; resumed, it starts from it, and every checkpoint stores
// the bytes the uninterrupted run stored at the same checkpoint. A rerun
// that counts the file unchanged without reading it shows it read whole.
func TestStoredProgressFollowsTheCheckpoints(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := gen.Write(dir, gen.Config{Contacts: 4000, Seed: 7})
	require.NoError(t, err)
	gz := t.TempDir()
	copyFile(t, filepath.Join(dir, "companies.csv"), filepath.Join(gz, "companies.csv"), false)
	copyFile(t, filepath.Join(dir, "contacts.csv"), filepath.Join(gz, "contacts.csv.gz"), true)
	for name, c := range map[string]struct{ export, contacts string }{
		"CSV":  {dir, "contacts.csv"},
		"Gzip": {gz, "contacts.csv.gz"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st, err := os.Stat(filepath.Join(c.export, c.contacts))
			require.NoError(t, err)
			followCheckpoints(t, c.export, st.Size())
		})
	}
}

func followCheckpoints(t *testing.T, export string, size int64) {
	ctx := context.Background()
	spec := RunSpec{Tenant: "acme", Source: "canonical", Input: export, BatchSize: 100,
		Only: []ledger.Kind{ledger.Company, ledger.Contact}}

	whole := storetest.OpenDB(t)
	imp := New(phases.New(whole, nil))
	want := watchProgress(t, imp, ledger.Contact)
	run, err := imp.Plan(ctx, spec)
	require.NoError(t, err)
	require.Equal(t, size, contactTask(t, whole, run.ID).Size, "the size is known from the plan")
	run, err = imp.Execute(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, phases.RunSucceeded, run.Status)
	require.Greater(t, len(*want), 10)
	between := 0
	for i, s := range *want {
		require.Equal(t, size, s.size, "checkpoint %d: the input's size", i)
		if i > 0 {
			require.GreaterOrEqual(t, s.read, (*want)[i-1].read, "checkpoint %d: the bytes read never go back", i)
			require.GreaterOrEqual(t, s.rows, (*want)[i-1].rows)
		}
		if s.read > 0 && s.read < size {
			between++
		}
	}
	require.Greater(t, between, 1, "the bytes pass through the file: %v", *want)
	last := contactTask(t, whole, run.ID)
	require.Equal(t, size, last.Read, "succeeded: read to its end")
	require.Equal(t, 100.0, *phases.TaskProgress(last, imp.Engine.Now()).Percent)

	// Batch 3 of contacts fails and rolls back; resumed in a new engine.
	db := storetest.OpenDB(t)
	fps, err := failpoint.Parse("batch:contact:3=error", canon.ParseKind)
	require.NoError(t, err)
	imp = New(phases.New(db, fps))
	got := watchProgress(t, imp, ledger.Contact)
	run, err = imp.Plan(ctx, spec)
	require.NoError(t, err)
	run, err = imp.Execute(ctx, run.ID)
	require.NoError(t, err)
	require.NotEqual(t, phases.RunSucceeded, run.Status)
	failed := contactTask(t, db, run.ID)
	require.Equal(t, phases.TaskFailed, failed.Status)
	require.Equal(t, int64(200), failed.Checkpoint.Rows)
	require.Len(t, *got, 2)
	require.Equal(t, (*got)[1].read, failed.Read, "the progress of the last committed batch")
	require.Equal(t, (*want)[1], (*got)[1], "the bytes an uninterrupted run stored at the same checkpoint")

	imp = New(phases.New(db, nil))
	resumed := watchProgress(t, imp, ledger.Contact)
	var began phases.Task
	imp.Engine.OnTask = func(tk phases.Task) {
		if tk.Kind == ledger.Contact {
			began = tk
		}
	}
	_, _, err = imp.Resume(ctx, run.ID)
	require.NoError(t, err)
	run, err = imp.Execute(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, phases.RunSucceeded, run.Status)
	require.Equal(t, failed.Read, began.Read, "the resumed task starts from its stored progress")
	require.Equal(t, phases.Attempt{StartedAt: began.Attempt.StartedAt, Rows: 200, Bytes: failed.Read}, began.Attempt)
	require.Equal(t, *want, append(*got, *resumed...), "every checkpoint stored what the uninterrupted run stored")

	// The rerun counts the contacts unchanged without reading them: read
	// whole, 100%.
	imp = New(phases.New(whole, nil))
	run, err = imp.Plan(ctx, spec)
	require.NoError(t, err)
	run, err = imp.Execute(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, phases.RunSucceeded, run.Status)
	same := contactTask(t, whole, run.ID)
	require.Equal(t, int64(4000), same.Counts.Unchanged)
	require.Equal(t, []string{"1"}, column(t, whole, fmt.Sprintf(`SELECT count(*) FROM run_log
		WHERE migration_id = %d AND message LIKE 'task %d: %% counted unchanged without reading it again%%'`, run.ID, same.ID)))
	require.Equal(t, size, same.Read)
	require.Equal(t, size, same.Size)
	require.Equal(t, 100.0, *phases.TaskProgress(same, imp.Engine.Now()).Percent)
}

// stored is a task's progress as one committed checkpoint left it.
type stored struct{ rows, read, size int64 }

// watchProgress reads the stored progress of kind's task after each
// committed batch.
func watchProgress(t *testing.T, imp *Importer, kind ledger.Kind) *[]stored {
	var out []stored
	imp.Progress = func(tk phases.Task, _, _ int64) {
		if tk.Kind != kind {
			return
		}
		u := contactTask(t, imp.Engine.DB, tk.RunID)
		out = append(out, stored{rows: u.Checkpoint.Rows, read: u.Read, size: u.Size})
	}
	return &out
}

func contactTask(t *testing.T, db *sql.DB, runID int64) phases.Task {
	t.Helper()
	tasks, err := phases.LoadTasks(context.Background(), db, runID)
	require.NoError(t, err)
	for _, tk := range tasks {
		if tk.Kind == ledger.Contact {
			return tk
		}
	}
	t.Fatalf("run %d has no contact task", runID)
	return phases.Task{}
}

func copyFile(t *testing.T, from, to string, gzipped bool) {
	t.Helper()
	in, err := os.Open(from)
	require.NoError(t, err)
	defer in.Close()
	out, err := os.Create(to)
	require.NoError(t, err)
	var w io.WriteCloser = out
	if gzipped {
		w = gzip.NewWriter(out)
	}
	_, err = io.Copy(w, in)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	if gzipped {
		require.NoError(t, out.Close())
	}
}

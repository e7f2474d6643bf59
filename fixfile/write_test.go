package fixfile_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"crmimport/fixfile"
	"crmimport/importer"
	"crmimport/importer/fixmanifest"
	"crmimport/phases"
	"crmimport/report"
	"crmimport/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// manyFailures makes run 1 fail n contacts: an import of an export that
// fails a few, then each of those written again as more failures of the
// run (other source ids and lines), as a run over a big export leaves
// them — in one statement, so that a test of 60,000 takes a moment.
func manyFailures(t *testing.T, db *sql.DB, n int) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	b.WriteString("id,first_name,last_name,email,title\n")
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&b, "c-%d,Ann,Lee,ann%d(at)example.com,\"Head of sales, EMEA\"\n", i, i)
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "contacts.csv"), []byte(b.String()), 0o600))
	imp := importer.New(phases.New(db, nil))
	run, err := imp.Plan(ctx, importer.RunSpec{Tenant: "acme", Source: "canonical", Input: dir, BatchSize: 100})
	require.NoError(t, err)
	_, err = imp.Execute(ctx, run.ID)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
INSERT INTO record_failures (migration_id, task_id, kind, source_id, file, line, reason, reason_class, raw)
SELECT f.migration_id, f.task_id, f.kind, 'more-' || n.i || '-' || f.source_id, f.file, f.line + 10 * n.i, f.reason, f.reason_class, f.raw
FROM record_failures f CROSS JOIN n WHERE f.migration_id = 1`, n/10-1)
	require.NoError(t, err)
	var got int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM record_failures WHERE migration_id = 1`).Scan(&got))
	require.Equal(t, n, got)
	return dir
}

// peakHeap runs f and tells the most heap it took above what was live
// before, read every millisecond (runtime/metrics), with the garbage
// collector kept close behind (GOGC=10) so that what is counted is what f
// holds. The tests that call it do not run in parallel: the heap is the
// process's.
func peakHeap(f func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	base := read()
	var peak atomic.Uint64
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if v := read(); v > peak.Load() {
					peak.Store(v)
				}
			}
		}
	}()
	f()
	close(done)
	<-stopped
	if v := read(); v > peak.Load() {
		peak.Store(v)
	}
	if peak.Load() < base {
		return 0
	}
	return peak.Load() - base
}

// TestAFixFolderStreams: issue 23 item 15. `rejects RUN --as-export`
// (fixfile.Write) and `rejects RUN` (report.Rejects) hold a row of the
// run's failures at a time, not all of them: a run of 60,000 failed rows
// is written in a few MiB of heap (before, every failure was read into
// memory first: 718 MiB for 400,000). The folder holds every row, and its
// manifest lists each once.
func TestAFixFolderStreams(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		const n = 60000
		manyFailures(t, db, n)
		out := filepath.Join(t.TempDir(), "fix")
		var res fixfile.Result
		var err error
		heap := peakHeap(func() { res, err = fixfile.Write(context.Background(), db, 1, out) })
		require.NoError(t, err)
		t.Logf("fix folder of %d failed rows: peak heap %.1f MiB", n, float64(heap)/(1<<20))
		require.Less(t, heap, uint64(16<<20), "the fix folder of %d rows is written a row at a time", n)
		require.Equal(t, []fixfile.Written{{Name: "contacts.csv", Kind: "contact", Rows: n}}, res.Files)
		require.Equal(t, n, res.Reasons)
		man, err := fixmanifest.Read(out)
		require.NoError(t, err)
		require.Len(t, man.Files, 1)
		require.Len(t, man.Files[0].Failures, n)
		require.Len(t, man.Files[0].IDs, n)
		require.Len(t, man.Files[0].Lines, n)
		require.Equal(t, 2, man.Files[0].Lines[0])
		require.Equal(t, n+1, man.Files[0].Lines[n-1], "one line a row, after the header")
		b, err := os.ReadFile(filepath.Join(out, "contacts.csv"))
		require.NoError(t, err)
		require.Equal(t, n+1, strings.Count(string(b), "\n"))

		var rejects int
		heap = peakHeap(func() { rejects, err = report.Rejects(context.Background(), db, 1, discard{}) })
		require.NoError(t, err)
		require.Equal(t, n, rejects)
		t.Logf("rejects of %d failed rows: peak heap %.1f MiB", n, float64(heap)/(1<<20))
		require.Less(t, heap, uint64(16<<20), "rejects of %d rows are written a row at a time", n)
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

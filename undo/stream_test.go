package undo_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"crmimport/fixtures/gen"
	"crmimport/importer"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store"
	"crmimport/store/storetest"
	"crmimport/undo"
)

// TestUndoPlanIsTheSameInAnyPages (issue 23 item 18): the plan is walked a
// page of slots at a time, in the order of the ledger's key, and never
// held whole; walked in pages of 7 slots, of 1,000, or all at once, it is
// the same plan — the same digest over every item, counts, parts and
// dependents — and the undo it commits takes back what its dry run said.
func TestUndoPlanIsTheSameInAnyPages(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		imp := importer.New(phases.New(db, nil))
		dir := filepath.Join(t.TempDir(), "export")
		_, err := gen.Write(dir, gen.Config{Contacts: 400, Seed: 3, Shape: "realistic"})
		require.NoError(t, err)
		var runs []phases.Run
		for _, only := range [][]ledger.Kind{{ledger.Company}, nil} {
			r, err := imp.Plan(ctx, importer.RunSpec{Tenant: tenant, Source: "canonical", Input: dir, Only: only})
			require.NoError(t, err)
			r, err = imp.Execute(ctx, r.ID)
			require.NoError(t, err)
			runs = append(runs, r)
		}
		whole, err := undo.BuildPaged(ctx, db, imp.Engine, runs[0].ID, true, 1<<20)
		require.NoError(t, err)
		require.Greater(t, whole.Total(), 1000, "enough items for many pages")
		require.NotEmpty(t, whole.Dependents)
		for _, page := range []int{7, 1000} {
			p, err := undo.BuildPaged(ctx, db, imp.Engine, runs[0].ID, true, page)
			require.NoError(t, err)
			require.Equal(t, whole.Digest, p.Digest, "pages of %d", page)
			require.Equal(t, whole.Counts, p.Counts)
			require.Equal(t, whole.Parts, p.Parts)
			require.Equal(t, whole.Dependents, p.Dependents)
		}
		u, p, err := undo.StartWith(ctx, imp.Engine, undo.Options{Undo: runs[0].ID, Cascade: true, Plan: whole.Digest})
		require.NoError(t, err)
		require.Equal(t, whole.Total(), p.Total())
		u, err = imp.Engine.Execute(ctx, u.ID, undo.Open(imp.Engine.DB))
		require.NoError(t, err)
		require.Equal(t, phases.RunSucceeded, u.Status)
		require.Equal(t, whole.Counts, u.Stats)
	})
}

// TestUndoPlansInBoundedMemory (issue 23 item 18): planning an undo holds
// a bit per row id and a page of slots, not the plan: the Go heap it grows
// by, sampled while it plans, stays below what a plan held whole took (270
// bytes an item and more), for a dry run and for the undo's own plan,
// which writes its items as it walks them. Not parallel: the heap is the
// process's.
func TestUndoPlansInBoundedMemory(t *testing.T) {
	db := storetest.OpenDB(t)
	ctx := context.Background()
	imp := importer.New(phases.New(db, nil))
	dir := filepath.Join(t.TempDir(), "export")
	_, err := gen.Write(dir, gen.Config{Contacts: 40000, Seed: 1})
	require.NoError(t, err)
	r, err := imp.Plan(ctx, importer.RunSpec{Tenant: tenant, Source: "canonical", Input: dir})
	require.NoError(t, err)
	r, err = imp.Execute(ctx, r.ID)
	require.NoError(t, err)

	var p *undo.Plan
	grew := heapGrowth(t, func() {
		p, err = undo.Build(ctx, db, imp.Engine, r.ID, false)
		require.NoError(t, err)
	})
	items := p.Total()
	require.Greater(t, items, 100000)
	// What planning holds (a page of slots, a bit per row id) and the
	// database's page cache, which the heap holds too and which the undo's
	// write transaction fills again: a plan held whole took 270 bytes an
	// item and more, 31 MiB here.
	const bound = 8<<20 + store.CacheKiB<<10
	t.Logf("a dry run of %d items grew the heap by %d KiB (%.1f bytes an item)", items, grew>>10, float64(grew)/float64(items))
	require.Less(t, grew, uint64(bound), "planning %d items grew the heap by %d bytes", items, grew)
	grew = heapGrowth(t, func() {
		_, _, err = undo.StartWith(ctx, imp.Engine, undo.Options{Undo: r.ID, Plan: p.Digest})
		require.NoError(t, err)
	})
	t.Logf("the undo's plan of %d items, written, grew the heap by %d KiB", items, grew>>10)
	require.Less(t, grew, uint64(bound), "planning and writing %d items grew the heap by %d bytes", items, grew)
}

// heapGrowth runs f while sampling the live heap — collected, then
// measured, every few milliseconds, so that garbage not yet collected does
// not count — and returns how far it rose above the lowest it was, before
// f or during it (a cache that f's first statements let go does not hide
// what f holds).
func heapGrowth(t *testing.T, f func()) uint64 {
	t.Helper()
	live := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	runtime.GC() // what sync.Pools keep through one collection goes at the second
	base := live()
	stop, rise := make(chan struct{}), make(chan uint64)
	go func() {
		low, high := base, base
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				rise <- high - low
				return
			case <-tick.C:
				l := live()
				low, high = min(low, l), max(high, l)
			}
		}
	}()
	f()
	close(stop)
	return <-rise
}

package main

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The heap's soft limit stays memoryLimit while the live heap is what a
// run at four times the seed's scale holds (132 to 153 MB), follows a
// larger live heap with as much room as the collector's own pace gives,
// less the slack, and stops at maxMemoryLimit (issue 28).
func TestTheMemoryLimitFollowsTheLiveHeap(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live uint64
		want int64
	}{
		{0, memoryLimit},
		{60 * mib, memoryLimit},  // the seed's scale
		{132 * mib, memoryLimit}, // four times it: the tightest memory goal, 256 MiB
		{153 * mib, memoryLimit}, // the clean export at four times it
		{160 * mib, memoryLimit},
		{161 * mib, memoryLimit + 2*mib},
		{400 * mib, 656 * mib}, // sixteen times it
		{480 * mib, maxMemoryLimit},
		{4096 * mib, maxMemoryLimit},
	} {
		require.Equal(t, c.want, limitFor(c.live), "live heap %d MiB", c.live/mib)
	}
}

// followLiveHeap sets the limit from the live heap the last collection
// found: a process holding 300 MiB gets room above it, where memoryLimit
// would have the collector run without pause.
func TestFollowingTheLiveHeapRaisesTheLimit(t *testing.T) {
	was := debug.SetMemoryLimit(memoryLimit)
	t.Cleanup(func() { debug.SetMemoryLimit(was) })
	held := make([]byte, 300<<20)
	for i := range held {
		held[i] = byte(i)
	}
	runtime.GC()
	tick := make(chan time.Time, 1)
	tick <- time.Now()
	close(tick)
	followLiveHeap(tick)
	got := debug.SetMemoryLimit(-1)
	runtime.KeepAlive(held)
	require.GreaterOrEqual(t, got, int64(2*300<<20-memorySlack), "the limit with 300 MiB live (it was %d MiB)", memoryLimit>>20)
	require.LessOrEqual(t, got, int64(maxMemoryLimit))
}

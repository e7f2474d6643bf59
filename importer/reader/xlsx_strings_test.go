package reader

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSharedStringsArena: strings come back as they went in, an empty one,
// one across two chunks and one longer than a chunk included; only the
// first chunk is smaller than sstChunk, and none is ever fuller.
func TestSharedStringsArena(t *testing.T) {
	t.Parallel()
	var want []string
	for i := range 3000 {
		want = append(want, strings.Repeat(string(rune('a'+i%26)), (i*131)%1500))
	}
	want = append(want, "", strings.Repeat("z", 3*sstChunk+7), "tail")
	var tab sharedStrings
	for _, s := range want {
		tab.add([]byte(s))
	}
	for i, s := range want {
		got, ok := tab.get(i)
		require.True(t, ok, i)
		require.Equal(t, s, got, i)
	}
	_, ok := tab.get(len(want))
	require.False(t, ok)
	_, ok = tab.get(-1)
	require.False(t, ok)
	var size int64
	for i, c := range tab.text {
		require.LessOrEqual(t, len(c), sstChunk)
		if i > 0 {
			require.Equal(t, sstChunk, cap(c), "chunk %d", i)
		}
		if i < len(tab.text)-1 {
			require.Equal(t, sstChunk, len(c), "chunk %d is full", i)
		}
		size += int64(len(c))
	}
	require.Equal(t, tab.size, size)
	require.Equal(t, len(want)+1, tab.n)

	var empty sharedStrings
	_, ok = empty.get(0)
	require.False(t, ok)
}

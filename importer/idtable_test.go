package importer

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIDTable(t *testing.T) {
	t.Parallel()
	tb := newIDTable[int64](0)
	_, ok := tb.get("x")
	require.False(t, ok)
	want := map[string]int64{}
	for i := range 100_000 {
		id := fmt.Sprintf("ct-%06d", i)
		tb.put(id, int64(i))
		want[id] = int64(i)
	}
	tb.put("", -1) // an empty key is a key like another
	want[""] = -1
	tb.put("ct-000007", 70) // overwrite
	want["ct-000007"] = 70
	require.Equal(t, len(want), tb.len())
	for id, v := range want {
		got, ok := tb.get(id)
		require.True(t, ok, id)
		require.Equal(t, v, got, id)
	}
	for _, absent := range []string{"ct-100000", "ct-00000", "ct-0000001", "CT-000001", "x"} {
		_, ok := tb.get(absent)
		require.False(t, ok, absent)
	}
	var nilTable *idTable[int64]
	_, ok = nilTable.get("x")
	require.False(t, ok)
}

func BenchmarkIDTable(b *testing.B) {
	ids := make([]string, 1_000_000)
	for i := range ids {
		ids[i] = fmt.Sprintf("0035g00000%08dAAA", i)
	}
	for b.Loop() {
		tb := newIDTable[int64](0)
		for i, id := range ids {
			tb.put(id, int64(i))
		}
		for _, id := range ids {
			if _, ok := tb.get(id); !ok {
				b.Fatal(id)
			}
		}
	}
}

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// CRMIMPORT_CPUPROFILE=FILE writes a CPU profile of the command (gzipped
// protocol buffers, as `go tool pprof` reads them) and keeps its exit code.
func TestProfiledWritesACPUProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.prof")
	require.Equal(t, 7, profiled(path, func() int {
		n := 0
		for i := range 20_000_000 {
			n += i % 7
		}
		return 7 + n*0
	}))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Greater(t, len(b), 2)
	require.Equal(t, []byte{0x1f, 0x8b}, b[:2], "a gzipped profile")

	require.Equal(t, 3, profiled("", func() int { return 3 }), "without it, the command alone")
}

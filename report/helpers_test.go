package report_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// writeDump writes files (a dump's tables, or an export) into a new
// folder, and returns it.
func writeDump(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600))
	}
	return dir
}

// loadTime is when the tests' dumps are loaded.
var loadTime = time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)

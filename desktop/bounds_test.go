package desktop

import (
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTheBatchSizeBoundOnThePage (issue 23 item 21): the page's import
// refuses a batch size over the bound as the command line does (exit 2),
// before any run exists.
func TestTheBatchSizeBoundOnThePage(t *testing.T) {
	t.Parallel()
	s := testServer(t, filepath.Join(t.TempDir(), "crm.db"))
	for _, n := range []int{-1, 50001} {
		w := s.post(t, "/api/imports", map[string]any{"path": "../fixtures/demo", "tenant": "acme", "source": "canonical", "batch_size": n})
		require.Equal(t, http.StatusBadRequest, w.Code, w.Body.String())
		require.Contains(t, w.Body.String(), "the batch size must be between 1 and 50000 records")
		require.Contains(t, w.Body.String(), `"exit_code": 2`)
	}
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM migrations`), "no run was made")
}

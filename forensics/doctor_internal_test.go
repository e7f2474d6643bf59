package forensics

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store"
)

// TestKindPhaseIsThePlan: the phase doctor expects of a task's kind in SQL
// is phases.Phase, the plan's, for every kind.
func TestKindPhaseIsThePlan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "crm.db"))
	require.NoError(t, err)
	defer db.Close()
	for _, k := range ledger.Kinds() {
		var got int
		require.NoError(t, db.QueryRowContext(ctx, `SELECT `+kindPhase+` FROM (SELECT ? AS kind) t`, string(k)).Scan(&got))
		require.Equal(t, phases.Phase(k), got, "%s", k)
	}
}

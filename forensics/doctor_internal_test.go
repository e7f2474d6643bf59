package forensics

import (
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/phases"
	"crmimport/store/storetest"
)

// TestKindPhaseIsThePlan: the phase doctor expects of a task's kind in SQL
// is phases.Phase, the plan's, for every kind.
func TestKindPhaseIsThePlan(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		for _, k := range canon.Kinds() {
			var got int
			require.NoError(t, db.QueryRow(`SELECT `+kindPhase+` FROM (SELECT ? AS kind) t`, string(k)).Scan(&got))
			require.Equal(t, phases.Phase(k), got, "%s", k)
		}
	})
}

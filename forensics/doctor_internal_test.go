package forensics

import (
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/canon/canontest"
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

// TestKindOrderIsThePlan: doctor orders rows by kind in plan order
// (canon.Kinds), every kind in its place.
func TestKindOrderIsThePlan(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		for i, k := range canon.Kinds() {
			var got int
			require.NoError(t, db.QueryRow(`SELECT `+kindOrder+` FROM (SELECT ? AS kind) r`, string(k)).Scan(&got))
			require.Equal(t, i+1, got, "%s", k)
		}
	})
}

// TestKindCasesOfANewKind: a kind added to canon's table in this test
// alone has its phase and its place in the SQL that the table generates,
// on each engine.
func TestKindCasesOfANewKind(t *testing.T) {
	t.Parallel()
	tbl := canontest.WithKind(t, canontest.Ticket())
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		var phase, order int
		require.NoError(t, db.QueryRow(`SELECT `+tbl.PhaseCase("t.kind")+` FROM (SELECT ? AS kind) t`, "ticket").Scan(&phase))
		require.NoError(t, db.QueryRow(`SELECT `+tbl.OrderCase("r.kind")+` FROM (SELECT ? AS kind) r`, "ticket").Scan(&order))
		require.Equal(t, 3, phase)
		require.Equal(t, 6, order, "after users, companies, contacts, leads and deals")
	})
}

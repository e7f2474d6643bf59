package ledger_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/ledger"
	"crmimport/store"
	"crmimport/store/pgtest"
)

// TestClaimTableOnPostgres: the claim table of R1-R3 on a real PostgreSQL
// server, each cell in a ledger of its own (a schema per cell), through the
// claim's PostgreSQL text. (Until storetest runs every Run test on both
// dialects, issue 17.)
func TestClaimTableOnPostgres(t *testing.T) {
	ctx := context.Background()
	c, err := pgtest.Start(ctx, "")
	require.NoError(t, err, "start a throwaway PostgreSQL cluster")
	t.Cleanup(func() { require.NoError(t, c.Stop()) })
	existing := []ledger.Action{"", ledger.Skipped, ledger.Created, ledger.Matched}
	incoming := []ledger.Action{ledger.Created, ledger.Matched, ledger.Skipped}
	n := 0
	for _, have := range existing {
		for _, in := range incoming {
			n++
			t.Run(fmt.Sprintf("Existing%s/Incoming%s", title(have), title(in)), func(t *testing.T) {
				db, err := store.OpenPostgres(ctx, c.DSN()+fmt.Sprintf("&search_path=cell%d", n))
				require.NoError(t, err)
				t.Cleanup(func() { db.Close() })
				require.Equal(t, store.Postgres, store.DialectOf(db))
				claimCase(t, db, have, in)
			})
		}
	}
}

package storetest_test

import (
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/store"
	"crmimport/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// TestRun: one subtest per dialect, named after it, each on an empty
// database; Reopen sees the same database, OpenDialect another one.
func TestRun(t *testing.T) {
	t.Parallel()
	var ran []string
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ran = append(ran, t.Name())
		var n int
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM migrations`).Scan(&n))
		require.Equal(t, 0, n, "a new, empty database")
		_, err := db.Exec(`INSERT INTO companies (tenant_id, name, imported_at) VALUES ('acme', 'Acme', 'now')`)
		require.NoError(t, err)

		require.NoError(t, storetest.Reopen(t, db).QueryRow(`SELECT count(*) FROM companies`).Scan(&n))
		require.Equal(t, 1, n, "another handle on the same database")
		require.NoError(t, storetest.OpenDialect(t, store.DialectOf(db)).QueryRow(`SELECT count(*) FROM companies`).Scan(&n))
		require.Equal(t, 0, n, "another database")
	})
	require.Equal(t, []string{"TestRun/sqlite", "TestRun/postgres"}, ran, "the subtests ran within the test")
}

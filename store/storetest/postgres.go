package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/store"
	"crmimport/store/pgtest"
)

// The PostgreSQL backend: one throwaway cluster per test binary, started
// when a test first asks for it and stopped by Main when the tests end,
// and a schema of its own for every database a test asks for.
var pg struct {
	main    atomic.Bool // Main runs the tests: the cluster will be stopped
	once    sync.Once
	cluster *pgtest.Cluster
	err     error
	n       atomic.Int64
	dsns    sync.Map // *sql.DB → its address, for Reopen
}

// Main runs a package's tests and stops the PostgreSQL cluster they
// started, however they ended; a package whose tests use Run calls it
// from its TestMain:
//
//	func TestMain(m *testing.M) { storetest.Main(m) }
func Main(m *testing.M) { os.Exit(Tests(m)) }

// Tests is Main for a TestMain that does more: it runs the tests, stops
// the cluster and returns the exit code.
func Tests(m *testing.M) int {
	if path := os.Getenv(lockProbe); path != "" {
		return probeMain(path) // ProbeLocks's second process
	}
	pg.main.Store(true)
	code := m.Run()
	if pg.cluster != nil {
		if err := pg.cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "storetest:", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// Cluster is the test binary's PostgreSQL cluster, started on first use;
// without PostgreSQL the test fails, saying how to install it.
func Cluster(t testing.TB) *pgtest.Cluster {
	t.Helper()
	if !pg.main.Load() {
		t.Fatal("storetest: this package's tests need a PostgreSQL cluster, stopped when they end: " +
			"add `func TestMain(m *testing.M) { storetest.Main(m) }`")
	}
	pg.once.Do(func() { pg.cluster, pg.err = pgtest.Start(context.Background(), "") })
	require.NoError(t, pg.err, "start a throwaway PostgreSQL cluster")
	return pg.cluster
}

// PostgresDSN is the address of a new, empty schema of the cluster, for
// a database that a test (or a process it starts) opens itself.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	return fmt.Sprintf("%s&search_path=t%d", Cluster(t).DSN(), pg.n.Add(1))
}

// openPG opens a new, empty database: a schema of its own in the cluster.
func openPG(t testing.TB) *sql.DB {
	t.Helper()
	return OpenPostgres(t, PostgresDSN(t))
}

// OpenPostgres opens the database at dsn through store.OpenPostgres,
// which makes its schema when absent; it is closed when the test ends.
func OpenPostgres(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db, err := store.OpenPostgres(context.Background(), dsn)
	require.NoError(t, err)
	pg.dsns.Store(db, dsn)
	t.Cleanup(func() { pg.dsns.Delete(db); db.Close() })
	return db
}

// reopenPG opens another handle on db's schema.
func reopenPG(t testing.TB, db *sql.DB) *sql.DB {
	t.Helper()
	dsn, ok := pg.dsns.Load(db)
	require.True(t, ok, "storetest: a PostgreSQL database not opened by storetest")
	return OpenPostgres(t, dsn.(string))
}

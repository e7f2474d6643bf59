package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"crmimport/store/pgtest"
)

// A postgres:// address in place of a path: OpenExisting refuses a schema
// that holds no crmimport database and makes none, Open makes it,
// OpenReader reads it and cannot write, and a dry run's throwaway copy
// holds the original's rows, takes new ids past them, and goes with its
// cleanup, the original untouched. The password never appears in a
// message.
func TestAPostgresAddressOpensAsAPathDoes(t *testing.T) {
	ctx := context.Background()
	c, err := pgtest.Start(ctx, "")
	require.NoError(t, err, "start a throwaway PostgreSQL cluster")
	t.Cleanup(func() { require.NoError(t, c.Stop()) })
	addr := c.DSN() + "&search_path=acme"
	require.True(t, IsAddress(addr))
	require.False(t, IsAddress("crm.db"))

	_, err = OpenExisting(ctx, addr)
	require.ErrorIs(t, err, ErrNoDatabase)
	secret := "postgres://postgres:s3cret@/postgres?host=/nowhere&search_path=x"
	_, err = OpenExisting(ctx, secret)
	require.Error(t, err)
	require.NotContains(t, err.Error(), "s3cret")
	require.Equal(t, "postgres://postgres:xxxxx@/postgres?host=/nowhere&search_path=x", Name(secret))
	require.Equal(t, "postgres://postgres@/postgres?host=/nowhere&search_path=x", CommandName(secret))
	inQuery := "postgres://u@h/db?password=s3cret&search_path=x"
	require.NotContains(t, Name(inQuery), "s3cret")
	require.NotContains(t, CommandName(inQuery), "s3cret")
	require.Equal(t, "crm.db", Name("crm.db"))
	require.Equal(t, "crm.db", CommandName("crm.db"))

	other := c.DSN() + "&search_path=theirs"
	theirs, err := Open(ctx, other)
	require.NoError(t, err, "a new schema is made")
	_, err = theirs.ExecContext(ctx, `CREATE TABLE theirs.invoices (id bigint); DROP TABLE theirs.crmimport_schema_version`)
	require.NoError(t, err)
	require.NoError(t, theirs.Close())
	_, err = Open(ctx, other)
	require.ErrorContains(t, err, "schema theirs holds", "a schema of another application's tables is refused")

	db, err := Open(ctx, addr)
	require.NoError(t, err)
	defer db.Close()
	require.Equal(t, Postgres, DialectOf(db))
	_, err = db.ExecContext(ctx, `INSERT INTO companies (tenant_id, name, imported_at) VALUES ('acme', 'One', 'now'), ('acme', 'Two', 'now')`)
	require.NoError(t, err)
	again, err := OpenExisting(ctx, addr)
	require.NoError(t, err)
	require.NoError(t, again.Close())

	ro, err := OpenReader(ctx, addr)
	require.NoError(t, err)
	defer ro.Close()
	var n int
	require.NoError(t, ro.QueryRowContext(ctx, `SELECT count(*) FROM companies`).Scan(&n))
	require.Equal(t, 2, n)
	_, err = ro.ExecContext(ctx, `DELETE FROM companies`)
	require.ErrorContains(t, err, "read-only", "the reader cannot write")

	cp, cleanup, err := Throwaway(ctx, addr)
	require.NoError(t, err)
	require.NotEqual(t, addr, cp)
	dry, err := OpenExisting(ctx, cp)
	require.NoError(t, err)
	var id int64
	require.NoError(t, dry.QueryRowContext(ctx, `INSERT INTO companies (tenant_id, name, imported_at) VALUES ('acme', 'Three', 'now') RETURNING id`).Scan(&id))
	require.Equal(t, int64(3), id, "the copy's ids go on past the rows copied")
	require.NoError(t, dry.QueryRowContext(ctx, `SELECT count(*) FROM companies`).Scan(&n))
	require.Equal(t, 3, n)
	require.NoError(t, dry.Close())
	require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM companies`).Scan(&n))
	require.Equal(t, 2, n, "the original is untouched")
	require.NoError(t, cleanup())
	_, err = OpenExisting(ctx, cp)
	require.ErrorIs(t, err, ErrNoDatabase, "the copy is gone")
}

// Analyze refreshes the statistics of the tables that more than doubled
// since they were last analyzed, and of no other: a rerun at once after a
// first run is planned on them, and a rerun that adds less to a table
// leaves it alone.
func TestAnalyzeRefreshesWhatChanged(t *testing.T) {
	ctx := context.Background()
	c, err := pgtest.Start(ctx, "")
	require.NoError(t, err, "start a throwaway PostgreSQL cluster")
	t.Cleanup(func() { require.NoError(t, c.Stop()) })
	db, err := Open(ctx, c.DSN()+"&search_path=acme")
	require.NoError(t, err)
	defer db.Close()
	add := func(first, last int) {
		t.Helper()
		conn, err := db.Conn(ctx)
		require.NoError(t, err)
		_, err = conn.ExecContext(ctx, `INSERT INTO companies (tenant_id, name, imported_at) SELECT 'acme', 'co ' || n, 'now' FROM generate_series($1::int, $2::int) n`, first, last)
		require.NoError(t, err)
		_, err = conn.ExecContext(ctx, `SELECT pg_stat_force_next_flush()`)
		require.NoError(t, err)
		_, err = conn.ExecContext(ctx, `SELECT 1`) // the flush happens as the statement before ends
		require.NoError(t, err)
		require.NoError(t, conn.Close())
	}
	analyzed := func(table string) (n int) {
		t.Helper()
		require.NoError(t, db.QueryRowContext(ctx, `SELECT analyze_count FROM pg_stat_user_tables WHERE schemaname = 'acme' AND relname = $1`, table).Scan(&n))
		return n
	}
	add(1, 1000)
	require.NoError(t, Analyze(ctx, db))
	require.Equal(t, 1, analyzed("companies"), "1,000 new companies: analyzed")
	require.Equal(t, 0, analyzed("contacts"), "no contact changed: left alone")
	// A tenth of the default sample (analyzeSampleSQL): at most 11 bounds in
	// a histogram where the server's target makes 101; the table's size
	// exact all the same.
	var bounds int
	var rows float64
	require.NoError(t, db.QueryRowContext(ctx, `SELECT cardinality(histogram_bounds::text::text[]), c.reltuples FROM pg_stats s
JOIN pg_class c ON c.relname = s.tablename AND c.relnamespace = 'acme'::regnamespace
WHERE s.schemaname = 'acme' AND s.tablename = 'companies' AND s.attname = 'name'`).Scan(&bounds, &rows))
	require.LessOrEqual(t, bounds, 11, "the names' histogram, of 1,000 names")
	require.Equal(t, float64(1000), rows)

	add(1001, 1900)
	require.NoError(t, Analyze(ctx, db))
	require.Equal(t, 1, analyzed("companies"), "900 more companies, short of doubling the 1,000: left alone")
	add(1901, 2200)
	require.NoError(t, Analyze(ctx, db))
	require.Equal(t, 2, analyzed("companies"), "1,200 more companies than the 1,000 analyzed: analyzed again")

	// Changes the server has not counted yet: a connection flushes its
	// counts at most once a second, so the rows written right after its
	// first statement (which flushed) are not in pg_stat_user_tables when
	// Analyze looks, as a run's last phase was not when the run ended.
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, `SELECT 1`)
	require.NoError(t, err)
	_, err = conn.ExecContext(ctx, `INSERT INTO contacts (tenant_id, first_name, imported_at) SELECT 'acme', 'contact ' || n, 'now' FROM generate_series(1, 5000) n`)
	require.NoError(t, err)
	var counted int64
	require.NoError(t, db.QueryRowContext(ctx, `SELECT n_mod_since_analyze FROM pg_stat_user_tables WHERE schemaname = 'acme' AND relname = 'contacts'`).Scan(&counted))
	require.NoError(t, Analyze(ctx, db))
	require.Equal(t, 1, analyzed("contacts"), "5,000 new contacts the server had counted %d of: analyzed, by the size of the table's file", counted)
}

// Processes that open one new schema at the same instant all open it: one
// makes and upgrades it, the others find it upgraded when their turn at
// the write lock comes (the version read on the server's current
// catalog, not on one taken before the lock was theirs).
func TestOpeningANewSchemaAtOnce(t *testing.T) {
	ctx := context.Background()
	c, err := pgtest.Start(ctx, "")
	require.NoError(t, err, "start a throwaway PostgreSQL cluster")
	t.Cleanup(func() { require.NoError(t, c.Stop()) })
	for round := range 30 {
		addr := fmt.Sprintf("%s&search_path=at_once_%d", c.DSN(), round)
		errs := make(chan error, 8)
		start := make(chan struct{})
		for i := range 8 {
			go func() {
				<-start
				time.Sleep(time.Duration(i) * time.Duration(round%5) * time.Millisecond) // some meet the upgrade half-way
				db, err := Open(ctx, addr)
				if err == nil {
					err = db.Close()
				}
				errs <- err
			}()
		}
		close(start)
		for range 8 {
			require.NoError(t, <-errs, "round %d", round)
		}
	}
}

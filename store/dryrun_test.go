package store

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"crmimport/store/pgtest"
)

// issue 23 item 22: a dry run on PostgreSQL killed before its cleanup left
// its copy of the customer's data in a crmimport_dry_run_… schema that
// nothing mentioned. A copy is owned (its dry run's session holds its
// lock) and says whose it is; LeftCopies names the copies of a schema that
// no live dry run owns, and the next dry run of the schema removes them —
// never a live one's, nor another schema's.
func TestADryRunsCopyIsOwnedAndRemovedWhenLeftBehind(t *testing.T) {
	ctx := context.Background()
	c, err := pgtest.Start(ctx, "")
	require.NoError(t, err, "start a throwaway PostgreSQL cluster")
	t.Cleanup(func() { require.NoError(t, c.Stop()) })
	addr := c.DSN() + "&search_path=acme"
	db, err := Open(ctx, addr)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.ExecContext(ctx, `INSERT INTO companies (tenant_id, name, imported_at) VALUES ('acme', 'One', 'now')`)
	require.NoError(t, err)
	schemas := func() string {
		t.Helper()
		var s sql.NullString
		require.NoError(t, db.QueryRowContext(ctx, `SELECT string_agg(nspname, ' ' ORDER BY nspname) FROM pg_namespace WHERE nspname LIKE 'crmimport_dry_run_%'`).Scan(&s))
		return s.String
	}

	// A live dry run of acme, working on its copy.
	live, liveCleanup, err := Throwaway(ctx, addr)
	require.NoError(t, err)
	liveName := strings.SplitN(live[strings.Index(live, "search_path=")+len("search_path="):], "&", 2)[0]
	require.True(t, strings.HasPrefix(liveName, dryRunPrefix), live)
	require.Contains(t, schemas(), liveName)

	// What a dry run killed leaves: its copy, whose owner's session is
	// gone.
	killed := func(of string) string {
		t.Helper()
		a, err := parsePostgres(c.DSN() + "&search_path=" + of)
		require.NoError(t, err)
		name := dryRunPrefix + strings.Repeat(of[:1], 12)
		o, err := a.ownCopy(ctx, name)
		require.NoError(t, err)
		require.NoError(t, o.release()) // SIGKILL: the session ends, the schema stays
		return name
	}
	mine, others := killed("acme"), killed("other")
	_, err = db.ExecContext(ctx, `CREATE SCHEMA crmimport_dry_run_0123456789ab`) // made by a crmimport of before
	require.NoError(t, err)

	// The server ends a closed session's backend, and frees its lock,
	// a moment after the client has gone: a copy is left behind from then.
	var left []DryRunCopy
	require.Eventually(t, func() bool {
		left, err = LeftCopies(ctx, db)
		require.NoError(t, err)
		return len(left) == 2
	}, 10*time.Second, 50*time.Millisecond, "acme's copy left behind, and the one that does not say whose it is: %v", left)
	require.Equal(t, "crmimport_dry_run_0123456789ab", left[0].Schema)
	require.Equal(t, "", left[0].Of)
	require.Contains(t, left[0].String(), "a copy made by a dry run of a crmimport older than this one")
	require.Equal(t, mine, left[1].Schema)
	require.Equal(t, "acme", left[1].Of)
	require.Regexp(t, `^pid \d+ on .+$`, left[1].By)
	require.NotEmpty(t, left[1].Made)
	require.Contains(t, left[1].String(), "a copy of schema acme made by a dry run on ")
	require.Equal(t, `DROP SCHEMA "`+mine+`" CASCADE`, left[1].Drop())

	// The next dry run removes what was left, and says so; the live one's
	// copy and the other schema's stay.
	var told []string
	next, nextCleanup, err := Throwaway(WithNotice(ctx, func(m string) { told = append(told, m) }), addr)
	require.NoError(t, err)
	require.Len(t, told, 2, "%q", told)
	require.Contains(t, told[0], "dry run: removed schema crmimport_dry_run_0123456789ab")
	require.Contains(t, told[1], "dry run: removed schema "+mine+", a copy of schema acme")
	got := schemas()
	require.NotContains(t, got, mine)
	require.NotContains(t, got, "crmimport_dry_run_0123456789ab")
	require.Contains(t, got, liveName, "a live dry run's copy is never removed")
	require.Contains(t, got, others, "another schema's copy is its dry runs' to remove")

	// The live dry run still works on its copy.
	dry, err := OpenExisting(ctx, live)
	require.NoError(t, err)
	var n int
	require.NoError(t, dry.QueryRowContext(ctx, `SELECT count(*) FROM companies`).Scan(&n))
	require.Equal(t, 1, n)
	require.NoError(t, dry.Close())
	left, err = LeftCopies(ctx, db)
	require.NoError(t, err)
	require.Empty(t, left, "live copies are no one's to remove")
	require.NoError(t, liveCleanup())
	dry, err = OpenExisting(ctx, next)
	require.NoError(t, err)
	require.NoError(t, dry.Close())
	require.NoError(t, nextCleanup())
	require.Equal(t, others, schemas())

	// A dry run of a schema that holds no database yet works on a new one,
	// as a dry run on a new file does; one of another application's tables
	// is refused, and nothing is made.
	fresh, freshCleanup, err := Throwaway(ctx, c.DSN()+"&search_path=fresh")
	require.NoError(t, err)
	dry, err = OpenExisting(ctx, fresh)
	require.NoError(t, err)
	require.NoError(t, dry.Close())
	require.NoError(t, freshCleanup())
	_, err = db.ExecContext(ctx, `CREATE SCHEMA shop; CREATE TABLE shop.orders (id bigint)`)
	require.NoError(t, err)
	_, _, err = Throwaway(ctx, c.DSN()+"&search_path=shop")
	require.ErrorContains(t, err, "schema shop holds 1 tables and no crmimport database")
	require.Equal(t, others, schemas())
}

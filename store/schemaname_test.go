package store

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/store/pgtest"
)

// issue 23 item 2: PostgreSQL folds a schema name written without double
// quotes to lower case, so ?search_path=Shop names the schema shop. The
// foreign-schema refusal (ours) was checked against "Shop" while the
// tables went into shop, another application's schema, beside its own
// tables. An unquoted name that the server would read otherwise is
// refused before anything is sent, a quoted one is its own schema, and an
// open that is refused or fails leaves nothing behind, not even an empty
// schema.
func TestAMixedCaseSearchPathNeverReachesAnotherSchema(t *testing.T) {
	ctx := context.Background()
	c, err := pgtest.Start(ctx, "")
	require.NoError(t, err, "start a throwaway PostgreSQL cluster")
	t.Cleanup(func() { require.NoError(t, c.Stop()) })
	admin, err := PostgresDB(c.DSN())
	require.NoError(t, err)
	defer admin.Close()
	_, err = admin.ExecContext(ctx, `CREATE SCHEMA shop; CREATE TABLE shop.orders (id bigint PRIMARY KEY, total numeric)`)
	require.NoError(t, err, "another application's schema")

	// What the cluster holds, to compare before and after each open.
	state := func() string {
		t.Helper()
		var s string
		require.NoError(t, admin.QueryRowContext(ctx, `SELECT string_agg(n.nspname || '.' || coalesce(c.relname, ''), ' ' ORDER BY n.nspname, c.relname)
FROM pg_namespace n LEFT JOIN pg_class c ON c.relnamespace = n.oid AND c.relkind = 'r'
WHERE n.nspname NOT LIKE 'pg\_%' AND n.nspname <> 'information_schema'`).Scan(&s))
		return s
	}
	before := state()
	require.Equal(t, "public. shop.orders", before)

	for _, sp := range []string{"Shop", "SHOP", "Shop,public", " Shop"} {
		_, err := Open(ctx, c.DSN()+"&search_path="+strings.ReplaceAll(sp, " ", "%20"))
		require.Equal(t, before, state(), "a refused open (search_path=%s) leaves the cluster as it was", sp)
		require.Error(t, err, "search_path=%s names schema shop to the server: it must be refused", sp)
		require.ErrorContains(t, err, "shop", "the message names the schema the server would read")
		require.ErrorContains(t, err, `"`+strings.TrimSpace(strings.Split(sp, ",")[0])+`"`, "and how to name the mixed-case one")
		_, err = OpenExisting(ctx, c.DSN()+"&search_path="+strings.ReplaceAll(sp, " ", "%20"))
		require.Error(t, err)
		_, err = OpenReader(ctx, c.DSN()+"&search_path="+strings.ReplaceAll(sp, " ", "%20"))
		require.Error(t, err)
	}

	// The lower-case name is the application's schema: refused, as before,
	// and nothing made.
	_, err = Open(ctx, c.DSN()+"&search_path=shop")
	require.ErrorContains(t, err, "schema shop holds 1 tables and no crmimport database")
	require.Equal(t, before, state())

	// A name in double quotes is the schema of that name, capitals and all:
	// crmimport's tables go there, and the application's schema is left as
	// it was.
	quoted := c.DSN() + "&search_path=%22Shop%22"
	db, err := Open(ctx, quoted)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `INSERT INTO companies (tenant_id, name, imported_at) VALUES ('acme', 'One', 'now')`)
	require.NoError(t, err)
	var n int
	require.NoError(t, admin.QueryRowContext(ctx, `SELECT count(*) FROM "Shop".companies`).Scan(&n))
	require.Equal(t, 1, n, "the row is in schema Shop")
	require.NoError(t, admin.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema = 'shop'`).Scan(&n))
	require.Equal(t, 1, n, "schema shop holds its one table still")
	require.NoError(t, db.Close())
	again, err := OpenExisting(ctx, quoted)
	require.NoError(t, err, "the quoted name opens again")
	require.NoError(t, again.Close())
	p, err := PsqlOf(quoted)
	require.NoError(t, err)
	require.Equal(t, `SET search_path TO "Shop"`, p.SearchPath)

	// An open that fails half-way through making a new schema leaves no
	// empty schema behind: the schema is made in the transaction of the
	// first schema step, which a refusal of the server rolls back whole.
	_, err = admin.ExecContext(ctx, `CREATE FUNCTION refuse_tables() RETURNS event_trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'no new tables today'; END $$;
CREATE EVENT TRIGGER refuse_tables ON ddl_command_start WHEN TAG IN ('CREATE TABLE') EXECUTE FUNCTION refuse_tables()`)
	require.NoError(t, err)
	before = state()
	_, err = Open(ctx, c.DSN()+"&search_path=fresh")
	require.ErrorContains(t, err, "no new tables today")
	require.Equal(t, before, state(), "no schema fresh left behind")
	_, err = admin.ExecContext(ctx, `DROP EVENT TRIGGER refuse_tables`)
	require.NoError(t, err)
}

// schemaOf reads a search_path as PostgreSQL does (SplitIdentifierString)
// and takes its first name; it refuses a name the server would read
// otherwise than it is written, and a list the server would refuse.
func TestSchemaOfReadsASearchPathAsTheServerDoes(t *testing.T) {
	for _, tc := range []struct {
		searchPath, schema, refused string
	}{
		{"", DefaultPostgresSchema, ""},
		{"  ", DefaultPostgresSchema, ""},
		{"acme", "acme", ""},
		{" acme , public", "acme", ""},
		{"acme_trial_2", "acme_trial_2", ""},
		{"über", "über", ""}, // the server folds ASCII letters only
		{`"Shop"`, "Shop", ""},
		{`"Shop", public`, "Shop", ""},
		{`"My Schema"`, "My Schema", ""},
		{`"it's ""x"""`, `it's "x"`, ""},
		{`"a,b"`, "a,b", ""},
		{"Shop", "", `names schema shop to PostgreSQL`},
		{"shop,Public", "shop", ""}, // only the first name is crmimport's
		{"ACME", "", `write search_path=acme for that schema, or search_path="ACME"`},
		{"my schema", "", `"schema" follows the name my`},
		{`"Shop`, "", "a double quote is not closed"},
		{`""`, "", "an empty name"},
		{",acme", "", "an empty name"},
		{`"Shop"x`, "", `"x" follows the name Shop`},
		{"$user", "", "name the schema of crmimport's tables itself"},
		{`"$user", acme`, "", "name the schema of crmimport's tables itself"},
		{"pg_temp", "", "name the schema of crmimport's tables itself"},
		{strings.Repeat("a", 63), strings.Repeat("a", 63), ""},
		{strings.Repeat("a", 64), "", "at most 63 bytes"},
	} {
		got, err := schemaOf(tc.searchPath)
		if tc.refused != "" {
			require.ErrorContains(t, err, tc.refused, "search_path=%s", tc.searchPath)
			continue
		}
		require.NoError(t, err, "search_path=%s", tc.searchPath)
		require.Equal(t, tc.schema, got, "search_path=%s", tc.searchPath)
	}
}

// An address's parameters are read as pgx and libpq read them — each
// percent-decoded, a '+' being a '+' — where Go's url.Values reads a '+'
// as a space: search_path=%22My%20Schema%22 was checked as "My Schema"
// and given back to the server as "My+Schema", another schema.
func TestAnAddressIsReadAsTheServerReadsIt(t *testing.T) {
	ctx := context.Background()
	c, err := pgtest.Start(ctx, "")
	require.NoError(t, err, "start a throwaway PostgreSQL cluster")
	t.Cleanup(func() { require.NoError(t, c.Stop()) })
	for _, tc := range []struct{ searchPath, schema string }{
		{"%22My%20Schema%22", "My Schema"},
		{"a+b", "a+b"},
		{"%22a+b%22", "a+b"},
	} {
		db, err := Open(ctx, c.DSN()+"&search_path="+tc.searchPath)
		require.NoError(t, err, "search_path=%s", tc.searchPath)
		var where string
		require.NoError(t, db.QueryRowContext(ctx, `SELECT table_schema FROM information_schema.tables WHERE table_name = 'migrations' AND table_schema = current_schema()`).Scan(&where))
		require.Equal(t, tc.schema, where, "search_path=%s", tc.searchPath)
		require.NoError(t, db.Close())
	}
	var n int
	admin, err := PostgresDB(c.DSN())
	require.NoError(t, err)
	defer admin.Close()
	require.NoError(t, admin.QueryRowContext(ctx, `SELECT count(*) FROM pg_namespace WHERE nspname IN ('My+Schema', 'a b')`).Scan(&n))
	require.Zero(t, n, "no schema of another reading")
	_, err = Open(ctx, c.DSN()+"&search_path=My+Schema")
	require.ErrorContains(t, err, "search_path=My+Schema names schema my+schema to PostgreSQL")
}

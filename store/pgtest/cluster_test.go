package pgtest

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"
)

// A cluster starts, serves on its socket and on no TCP port, and leaves
// nothing once stopped. Without PostgreSQL the test fails, saying how to
// install it: it never skips.
func TestClusterStartsServesAndGoes(t *testing.T) {
	ctx := context.Background()
	c, err := Start(ctx, "") // under root, postgres must reach the folder: not t.TempDir (0700, root's)
	require.NoError(t, err, "start a throwaway PostgreSQL cluster")
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = c.Stop()
		}
	})
	db, err := sql.Open("pgx", c.DSN())
	require.NoError(t, err)
	var v string
	require.NoError(t, db.QueryRowContext(ctx, `SHOW server_version`).Scan(&v))
	require.NotEmpty(t, v)
	var listen string
	require.NoError(t, db.QueryRowContext(ctx, `SHOW listen_addresses`).Scan(&listen))
	require.Equal(t, "", listen, "no TCP port")
	require.NoError(t, db.Close())

	_, err = os.Stat(filepath.Join(c.socket, ".s.PGSQL.5432"))
	require.NoError(t, err, "its socket is in its private folder")
	require.NoError(t, c.Stop())
	stopped = true
	_, err = os.Stat(c.dir)
	require.True(t, os.IsNotExist(err), "the cluster's folder is gone")
}

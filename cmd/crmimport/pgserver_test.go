package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"crmimport/store"
	"crmimport/store/storetest"
)

// issue 23 item 22: a run on a server whose schema's write lock another
// writer holds waits for it, and after a short wait says on stderr whose
// lock it waits for (store.WithNotice), where it waited without a word.
func TestARunThatWaitsForTheWriteLockSaysWhose(t *testing.T) {
	addr := storetest.PostgresDSN(t)
	db := storetest.Open(t, addr)
	ctx := context.Background()
	tx, err := store.Begin(ctx, db) // another writer of the schema, in the middle of its batch
	require.NoError(t, err)
	defer tx.Rollback()
	var pid int64
	require.NoError(t, tx.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid))

	c := startChild(t, nil, "--db", addr, "run", "--tenant", "demo", "--source", "canonical", demo)
	time.Sleep(store.LockNotice + 3*time.Second)
	require.Nil(t, c.cmd.ProcessState, "the run ended while another writer held the lock")
	require.NoError(t, tx.Commit())
	require.Equal(t, exitPartial, c.wait(t), "the demo is partial by design: %s", c.stderr.String())
	require.Contains(t, c.stderr.String(), "notice: waiting for the write lock of schema t")
	require.Contains(t, c.stderr.String(), fmt.Sprintf("held by server process %d (", pid))
}

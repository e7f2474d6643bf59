package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"crmimport/store/pgtest"
)

// issue 23 item 22: every writer of a database took one advisory lock, so
// the writers of two schemas — two ledgers, as two files are — waited for
// each other, batch by batch (a dry run's copy held up the runs on its
// original), and a writer that waited said nothing of it. The write lock
// is the schema's; a writer that waits for it says, after LockNotice,
// whose lock it waits for; and a crmimport of before, which takes one lock
// for the whole database, still takes turns with this one.
func TestTheWriteLockIsTheSchemas(t *testing.T) {
	ctx := context.Background()
	c, err := pgtest.Start(ctx, "")
	require.NoError(t, err, "start a throwaway PostgreSQL cluster")
	t.Cleanup(func() { require.NoError(t, c.Stop()) })
	open := func(schema string) *sql.DB {
		t.Helper()
		db, err := Open(ctx, c.DSN()+"&search_path="+schema)
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		return db
	}
	a, b, a2 := open("a"), open("b"), open("a")
	insert := func(tx *sql.Tx, name string) {
		t.Helper()
		_, err := tx.ExecContext(ctx, `INSERT INTO companies (tenant_id, name, imported_at) VALUES ('acme', ?, 'now')`, name)
		require.NoError(t, err)
	}

	t.Run("TwoSchemasNeverWaitForEachOther", func(t *testing.T) {
		txA, err := Begin(ctx, a)
		require.NoError(t, err)
		defer txA.Rollback()
		insert(txA, "a's")
		soon, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		txB, err := Begin(soon, b)
		require.NoError(t, err, "a writer of schema b waited for the writer of schema a")
		insert(txB, "b's")
		require.NoError(t, txB.Commit())
		require.NoError(t, txA.Commit())
	})

	t.Run("AWriterThatWaitsSaysWhoseLockItIs", func(t *testing.T) {
		tx1, err := Begin(ctx, a)
		require.NoError(t, err)
		defer tx1.Rollback()
		var pid int64
		require.NoError(t, tx1.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid))
		notices := make(chan string, 4)
		began := make(chan error, 1)
		start := time.Now()
		go func() {
			tx2, err := Begin(WithNotice(ctx, func(m string) { notices <- m }), a2)
			if err == nil {
				insert(tx2, "second")
				err = tx2.Commit()
			}
			began <- err
		}()
		select {
		case m := <-notices:
			require.GreaterOrEqual(t, time.Since(start), LockNotice-100*time.Millisecond, "not before a short wait")
			require.Contains(t, m, "waiting for the write lock of schema a")
			require.Contains(t, m, fmt.Sprintf("server process %d (crmimport pid %d on ", pid, os.Getpid()), "it names the holder")
			require.Contains(t, m, fmt.Sprintf("pg_stat_activity WHERE pid IN (%d)", pid))
		case err := <-began:
			t.Fatalf("the second writer began while the first held the lock: %v", err)
		case <-time.After(LockNotice + 5*time.Second):
			t.Fatal("the second writer waited without a word")
		}
		select {
		case err := <-began:
			t.Fatalf("the second writer began while the first held the lock: %v", err)
		default:
		}
		require.NoError(t, tx1.Commit())
		require.NoError(t, <-began, "it goes on when the lock is let go of")
	})

	t.Run("ACrmimportOfBeforeStillTakesTurns", func(t *testing.T) {
		// A crmimport of before takes one lock for the whole database,
		// exclusively, in each write transaction.
		old, err := PostgresDB(c.DSN() + "&search_path=a")
		require.NoError(t, err)
		defer old.Close()
		oldTx, err := old.BeginTx(ctx, nil)
		require.NoError(t, err)
		defer oldTx.Rollback()
		_, err = oldTx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(?)`, int64(0x63726d696d706f72))
		require.NoError(t, err)
		notices := make(chan string, 4)
		began := make(chan error, 1)
		go func() {
			tx, err := Begin(WithNotice(ctx, func(m string) { notices <- m }), b)
			if err == nil {
				err = tx.Commit()
			}
			began <- err
		}()
		select {
		case m := <-notices:
			require.Contains(t, m, "the write lock of the whole database that a crmimport older than this one takes")
		case err := <-began:
			t.Fatalf("a writer began while a crmimport of before wrote: %v", err)
		case <-time.After(LockNotice + 5*time.Second):
			t.Fatal("the writer waited without a word")
		}
		require.NoError(t, oldTx.Commit())
		require.NoError(t, <-began)

		// And the other way round: while this one writes, the old one's
		// lock is not free.
		tx, err := Begin(ctx, a)
		require.NoError(t, err)
		defer tx.Rollback()
		var free bool
		require.NoError(t, old.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(?)`, int64(0x63726d696d706f72)).Scan(&free))
		require.False(t, free, "a crmimport of before would write beside this one")
	})
}

package importer

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store"
	"crmimport/store/storetest"
)

// The final slots of the kind a run's next task reads are read beside the
// writer while the task before it works (loadAhead, issue 25 item 8): on
// a connection of their own, never waiting for the writer's transaction,
// and reading what the last commit left (R12), never what a batch in
// flight wrote. finalsOf then takes them without a statement; a reading
// beside that failed is read again through the writer.
func TestFinalsReadAheadBesideTheWriter(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		importDir(t, New(phases.New(db, nil)), export(t, map[string]string{
			"companies.csv": "id,name\nco1,A\nco2,B\n",
			"contacts.csv": "id,first_name,last_name,email,company_id\n" +
				"ct1,Ann,Lee,ann@example.com,co1\nct2,Bo,Ng,bo@example.com,co2\nct3,Cy,Oh,cy@example.com,co1\n",
		}), 10)
		var committed int64
		require.NoError(t, db.QueryRow(`SELECT digest FROM migration_records WHERE source_id = 'ct1'`).Scan(&committed))
		require.NotZero(t, committed)

		beside, done, err := store.Beside(ctx, db)
		require.NoError(t, err)
		defer done()
		if store.DialectOf(db) == store.Postgres {
			// None on a server: the run reads each kind's slots as its
			// task opens, through the writer.
			require.Nil(t, beside)
			x := newRunIndex("acme", "canonical")
			x.loadAhead(ctx, beside, ledger.Contact)
			require.Empty(t, x.ahead)
			_, err = x.finalsOf(ctx, noQueries{}, ledger.Contact)
			require.ErrorIs(t, err, errNeedsDB)
			return
		}
		require.NotNil(t, beside, "a database in a file has a reading beside")

		// A batch in flight in the writer's transaction (on SQLite, the
		// pool's one connection) has changed a slot, not committed.
		tx, err := store.Begin(ctx, db)
		require.NoError(t, err)
		_, err = tx.ExecContext(ctx, `UPDATE migration_records SET digest = 7 WHERE source_id = 'ct1'`)
		require.NoError(t, err)
		x := newRunIndex("acme", "canonical")
		x.loadAhead(ctx, beside, ledger.Contact)
		f, err := x.finalsOf(ctx, noQueries{}, ledger.Contact) // noQueries reads nothing: taken from what was read ahead
		require.NoError(t, err)
		require.Equal(t, 3, f.loaded.len())
		e, ok := f.entry("ct1")
		require.True(t, ok)
		require.Equal(t, committed, e.digest, "what the last commit left, not the batch in flight")
		require.Empty(t, x.ahead, "taken once")
		require.NoError(t, tx.Rollback())

		// What it read is what the writer reads.
		w, err := newRunIndex("acme", "canonical").finalsOf(ctx, db, ledger.Contact)
		require.NoError(t, err)
		require.Equal(t, w.loaded.len(), f.loaded.len())
		for _, id := range []string{"ct1", "ct2", "ct3"} {
			a, _ := f.entry(id)
			b, _ := w.entry(id)
			require.Equal(t, b, a, id)
		}

		// A reading beside that failed (here, stopped before it began) is
		// read again through the writer's querier.
		stopped, cancel := context.WithCancel(ctx)
		cancel()
		y := newRunIndex("acme", "canonical")
		y.loadAhead(stopped, beside, ledger.Contact)
		_, err = y.finalsOf(ctx, noQueries{}, ledger.Contact)
		require.ErrorIs(t, err, errNeedsDB, "read again through the querier given")
		z := newRunIndex("acme", "canonical")
		z.loadAhead(stopped, beside, ledger.Contact)
		g, err := z.finalsOf(ctx, db, ledger.Contact)
		require.NoError(t, err)
		require.Equal(t, 3, g.loaded.len())
	})
}

// The kind read ahead is that of the next task to run of another kind, in
// the order tasks run (phases.LoadTasks: by phase, then id).
func TestNextKindIsTheNextTaskToRun(t *testing.T) {
	t.Parallel()
	tasks := []phases.Task{
		{ID: 1, Kind: ledger.Company, Status: phases.TaskSucceeded},
		{ID: 4, Kind: ledger.Contact, Status: phases.TaskRunning},
		{ID: 2, Kind: ledger.Contact, Status: phases.TaskPending}, // a second file of contacts
		{ID: 5, Kind: ledger.Deal, Status: phases.TaskSucceeded},
		{ID: 3, Kind: ledger.Note, Status: phases.TaskPending},
	}
	k, ok := nextKind(tasks[1], tasks)
	require.True(t, ok)
	require.Equal(t, ledger.Note, k)
	_, ok = nextKind(tasks[4], tasks)
	require.False(t, ok, "the last task has none")
}

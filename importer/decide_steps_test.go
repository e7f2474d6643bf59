package importer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/failpoint"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store/storetest"
)

// TestUnreadableRowFailsWhateverItsID: SPEC §4 step 0 (issue 11 item 22).
// A row that cannot be read as a record fails with its own reason, whatever
// its id says: an id already imported does not make it unchanged, an id
// used earlier does not make it a duplicate, and its id is not remembered,
// so that a good row with that id later in the file imports.
func TestUnreadableRowFailsWhateverItsID(t *testing.T) {
	t.Parallel()
	db := storetest.OpenDB(t)
	importDir(t, New(phases.New(db, nil)), export(t, map[string]string{"contacts.csv": "id,first_name\nc1,Ann\n"}), 10)

	run := importDir(t, New(phases.New(db, nil)), export(t, map[string]string{"contacts.csv": "id,first_name\n" +
		"c1,Ann,ragged\n" + // line 2: already imported, but this row is broken
		"c8,Hal\n" + //        line 3
		"c8,Hal,ragged\n" + // line 4: a repeat of c8, but broken
		"c9,Ivy,ragged\n" + // line 5: broken, its id not to be trusted
		"c9,Ivy\n"}), 10) //   line 6: the first c9 that can be read
	require.Equal(t, phases.Counts{Imported: 2, Failed: 3}, run.Stats[ledger.Contact])
	rows, err := db.Query(`SELECT source_id, line, reason FROM record_failures WHERE migration_id = ? ORDER BY line`, run.ID)
	require.NoError(t, err)
	defer rows.Close()
	var got []string
	for rows.Next() {
		var id, reason string
		var line int
		require.NoError(t, rows.Scan(&id, &line, &reason))
		require.NotContains(t, reason, "duplicate", "line %d", line)
		require.Contains(t, reason, "fields", "line %d: the row's own fault", line)
		got = append(got, id)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"c1", "c8", "c9"}, got)
	var n int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM migration_records WHERE source_id IN ('c8', 'c9') AND migration_id = ?`, run.ID).Scan(&n))
	require.Equal(t, 2, n, "c8 and c9 imported from their good rows")
}

// TestAmountsStoredExactly: issue 11 item 6. A deal's amount is stored as
// the decimal text it was validated as: no digit rounded away, no Inf.
func TestAmountsStoredExactly(t *testing.T) {
	t.Parallel()
	db := storetest.OpenDB(t)
	long := strings.Repeat("9", 400) + ".01"
	run := importDir(t, New(phases.New(db, nil)), export(t, map[string]string{"deals.csv": "id,name,amount\n" +
		"d1,Big,12345678901234567.89\n" +
		"d2,Huge," + long + "\n" +
		"d3,Small,-0.50\n" +
		"d4,Refused,1e309\n"}), 10)
	require.Equal(t, phases.Counts{Imported: 3, Failed: 1}, run.Stats[ledger.Deal])
	for id, want := range map[string]string{"d1": "12345678901234567.89", "d2": long, "d3": "-0.50"} {
		var got, typ string
		require.NoError(t, db.QueryRow(`SELECT d.amount, typeof(d.amount) FROM deals d JOIN migration_records m
			ON m.kind = 'deal' AND m.record_id = d.id WHERE m.source_id = ?`, id).Scan(&got, &typ))
		require.Equal(t, want, got, id)
		require.Equal(t, "text", typ, id)
	}
	require.Contains(t, failureReasons(t, db, run.ID)["d4"], "is not a number")
}

// TestLongIDs: issue 11 item 7. An id over MaxIDBytes fails alone with a
// reason; the in-memory index takes ids of any length, so that a ledger
// holding one (a dump may) never panics a later run, in a new process or
// on a resume.
func TestLongIDs(t *testing.T) {
	t.Parallel()
	db := storetest.OpenDB(t)
	tooLong := "c" + strings.Repeat("x", MaxIDBytes)
	justRight := strings.Repeat("y", MaxIDBytes)
	dir := export(t, map[string]string{"contacts.csv": "id,first_name\n" + tooLong + ",Ann\n" + justRight + ",Bob\nc3,Cy\n"})
	run := importDir(t, New(phases.New(db, nil)), dir, 10)
	require.Equal(t, phases.Counts{Imported: 2, Failed: 1}, run.Stats[ledger.Contact])
	require.Contains(t, failureReasons(t, db, run.ID)[tooLong], "longer than the 4096 bytes an id may have")

	// A slot with an id of 70,000 bytes, as a dump may bring one.
	huge := strings.Repeat("z", 70_000)
	_, err := db.Exec(`INSERT INTO contacts (id, tenant_id, first_name, imported_at) VALUES (900, 'acme', 'Dumped', 'then')`)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO migration_records (tenant_id, source, kind, source_id, id, migration_id, record_type,
		record_id, action, created_at) VALUES ('acme', 'canonical', 'contact', ?, 900, 1, 'contacts', 900, 'created', 'then')`, huge)
	require.NoError(t, err)
	notes := export(t, map[string]string{"notes.csv": "id,body,contact_id\nn1,hello," + huge + "\nn2,again," + justRight + "\n"})
	run = importDir(t, New(phases.New(db, nil)), notes, 10)
	require.Equal(t, phases.Counts{Imported: 2}, run.Stats[ledger.Note], "links resolve through a long id")
	run = importDir(t, New(phases.New(db, nil)), dir, 10)
	require.Equal(t, phases.Counts{Unchanged: 2, Failed: 1}, run.Stats[ledger.Contact])

	tb := newIDTable[int64](0)
	tb.put(huge, 1)
	tb.put("short", 2)
	tb.put(huge, 3)
	for id, want := range map[string]int64{huge: 3, "short": 2} {
		got, ok := tb.get(id)
		require.True(t, ok)
		require.Equal(t, want, got)
	}
	require.Equal(t, 2, tb.len())
	_, ok := tb.get(huge + "!")
	require.False(t, ok)
}

// TestResumeFailsWhenEarlierIDsCannotBeReread: issue 11 item 21. A resume
// in a new process re-reads the ids that earlier tasks of the kind read
// before their checkpoints (SPEC §4 step 2 across a resume). A file that
// ends early now fails the task naming the file, instead of leaving those
// ids unseen (a duplicate then passed as unchanged).
func TestResumeFailsWhenEarlierIDsCannotBeReread(t *testing.T) {
	t.Parallel()
	db := storetest.OpenDB(t)
	dir := export(t, map[string]string{
		"contacts.csv":   "id,first_name\nc1,A\nc2,B\nc3,C\n",
		"contacts.jsonl": `{"id":"c4","first_name":"D"}` + "\n" + `{"id":"c1","first_name":"A"}` + "\n",
	})
	fps, err := failpoint.Parse("batch:contact:2=error", canon.ParseKind)
	require.NoError(t, err)
	ctx := context.Background()
	imp := New(phases.New(db, fps))
	run, err := imp.Plan(ctx, RunSpec{Tenant: "acme", Source: "canonical", Input: dir, BatchSize: 4})
	require.NoError(t, err)
	run, err = imp.Execute(ctx, run.ID)
	require.NoError(t, err)
	tasks, err := phases.LoadTasks(ctx, db, run.ID)
	require.NoError(t, err)
	require.Equal(t, phases.TaskSucceeded, tasks[0].Status, "contacts.csv: one batch of 3, done")
	require.Equal(t, phases.TaskFailed, tasks[1].Status, "contacts.jsonl: its first batch failed by the failpoint")

	// contacts.csv is cut short behind the run's back: its records before
	// the checkpoint cannot all be read again.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "contacts.csv"), []byte("id,first_name\nc2,B\n"), 0o600))
	fresh := New(phases.New(db, nil))
	run, _, err = fresh.Resume(ctx, run.ID)
	require.NoError(t, err, "the re-armed task's own file is unchanged")
	run, err = fresh.Execute(ctx, run.ID)
	require.NoError(t, err)
	tasks, err = phases.LoadTasks(ctx, db, run.ID)
	require.NoError(t, err)
	require.Equal(t, phases.TaskFailed, tasks[1].Status)
	require.Contains(t, tasks[1].LastError, "re-read the ids of contacts.csv")
	require.Contains(t, tasks[1].LastError, "checkpoint is at record 3")
	var n int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM migration_records WHERE source_id = 'c4'`).Scan(&n))
	require.Equal(t, 0, n, "nothing of the task was decided without its run's ids")
}

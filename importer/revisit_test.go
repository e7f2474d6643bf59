package importer

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/failpoint"
	"crmimport/fixtures/gen"
	"crmimport/importer/input"
	"crmimport/ledger/ledgertest"
	"crmimport/phases"
	"crmimport/store/storetest"
	"crmimport/undo"
)

const revisited = "failed, skipped or found changed at the source read again"

// twins are two databases with one history: every run goes to both, and a
// rerun revisits in one (the default) and reads every file in the other
// (--reread), which must end alike.
type twins struct {
	t               *testing.T
	revisit, reread *sql.DB
	last            *Importer // the revisit's of the last rerun
}

func newTwins(t *testing.T) *twins {
	return &twins{t: t, revisit: storetest.OpenDB(t), reread: storetest.OpenDB(t)}
}

// importer is an importer of db at a fixed time, so that the two
// databases' slots and rows compare exactly (ledgertest.DumpExact).
func fixedImporter(db *sql.DB, fps *failpoint.Set) *Importer {
	e := phases.New(db, fps)
	e.Now = func() time.Time { return time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC) }
	return New(e)
}

func runOn(t *testing.T, imp *Importer, dir string, reread bool) phases.Run {
	t.Helper()
	ctx := context.Background()
	run, err := imp.Plan(ctx, RunSpec{Tenant: "acme", Source: "canonical", Input: dir, BatchSize: 50, Reread: reread})
	require.NoError(t, err)
	run, err = imp.Execute(ctx, run.ID)
	require.NoError(t, err)
	return run
}

// both runs dir in both databases, read whole in each.
func (w *twins) both(dir string) {
	w.t.Helper()
	a := runOn(w.t, fixedImporter(w.revisit, nil), dir, true)
	b := runOn(w.t, fixedImporter(w.reread, nil), dir, true)
	require.Equal(w.t, a.Stats, b.Stats)
}

// failures are a run's record_failures as a rerun must write them (R4).
func failures(t *testing.T, db *sql.DB, runID int64) []string {
	t.Helper()
	rows, err := db.Query(`SELECT kind, coalesce(source_id, '<none>'), file, line, reason, coalesce(raw, '')
		FROM record_failures WHERE migration_id = ? ORDER BY kind, line`, runID)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var kind, id, file, reason, raw string
		var line int
		require.NoError(t, rows.Scan(&kind, &id, &file, &line, &reason, &raw))
		out = append(out, fmt.Sprintf("%s %s %s:%d %s %s", kind, id, file, line, reason, raw))
	}
	require.NoError(t, rows.Err())
	return out
}

// revisitedFiles are the files a run revisited, by its log.
func revisitedFiles(t *testing.T, db *sql.DB, run phases.Run) map[string]bool {
	t.Helper()
	tasks, err := phases.LoadTasks(context.Background(), db, run.ID)
	require.NoError(t, err)
	out := map[string]bool{}
	for _, task := range tasks {
		var n int
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM run_log WHERE migration_id = ? AND message LIKE ?`,
			run.ID, fmt.Sprintf("task %d: %%%s%%", task.ID, revisited)).Scan(&n))
		if n >= 1 {
			out[input.Name(task.File)] = true
		}
	}
	return out
}

// rerun reruns dir in both databases, revisiting in one (through imp, so
// that a test may set failpoints) and reading whole in the other, and
// compares what they come to: status, counts per kind and per task, the
// slots (owners, actions, reasons, details), the rows, and the failures
// written for the run. It returns the files the revisit revisited.
func (w *twins) rerun(dir string, fail string) map[string]bool {
	w.t.Helper()
	ctx := context.Background()
	var fps *failpoint.Set
	if fail != "" {
		var err error
		fps, err = failpoint.Parse(fail, canon.ParseKind)
		require.NoError(w.t, err)
	}
	w.last = fixedImporter(w.revisit, fps)
	a := runOn(w.t, w.last, dir, false)
	if fail != "" {
		require.Equal(w.t, phases.RunPartial, a.Status, "the failpoint fires")
		imp := fixedImporter(w.revisit, nil)
		_, _, err := imp.Resume(ctx, a.ID)
		require.NoError(w.t, err)
		a, err = imp.Execute(ctx, a.ID)
		require.NoError(w.t, err)
	}
	b := runOn(w.t, fixedImporter(w.reread, nil), dir, true)
	require.Equal(w.t, a.ID, b.ID)
	require.Equal(w.t, b.Status, a.Status)
	require.Equal(w.t, b.Stats, a.Stats)
	ta, err := phases.LoadTasks(ctx, w.revisit, a.ID)
	require.NoError(w.t, err)
	tb, err := phases.LoadTasks(ctx, w.reread, b.ID)
	require.NoError(w.t, err)
	require.Len(w.t, ta, len(tb))
	for i := range ta {
		require.Equal(w.t, tb[i].Counts, ta[i].Counts, ta[i].File)
		require.Equal(w.t, tb[i].Checkpoint, ta[i].Checkpoint, ta[i].File)
	}
	da, err := ledgertest.DumpExact(ctx, w.revisit, "acme")
	require.NoError(w.t, err)
	db, err := ledgertest.DumpExact(ctx, w.reread, "acme")
	require.NoError(w.t, err)
	require.Equal(w.t, db, da)
	require.Equal(w.t, failures(w.t, w.reread, b.ID), failures(w.t, w.revisit, a.ID))
	return revisitedFiles(w.t, w.revisit, a)
}

// withDefects is a file for each of the cases a revisit must read as a
// full reading does: a BOM, CRLF, a blank line, a quoted line break, a
// ragged row, a bad quote, a missing id, an invalid value, duplicates of
// records imported, failed and skipped, deleted records, notes with no
// parent and with an empty body.
func withDefects(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"companies.csv": "id,name,domain\nco1,Acme,acme.test\nco2,,globex.test\nco3,Initech,initech.test\n",
		"contacts.csv": "\xEF\xBB\xBFid,first_name,last_name,email,company_id\r\n" +
			"c1,Ann,Lee,ann@acme.test,co1\r\n" +
			"c2,Bob,,not-an-email,co1\r\n" +
			"\r\n" +
			"c3,\"Cy\r\nJr\",Doe,cy@acme.test,co2\r\n" +
			"c4,Di,Ragged\r\n" +
			"c5,E\"d,Bad,ed@acme.test,co1\r\n" +
			",NoId,Person,noid@acme.test,co1\r\n" +
			"c1,Ann,Again,ann2@acme.test,co1\r\n" +
			"c2,Bob,Again,bob@acme.test,co1\r\n" +
			"c6,Flo,Gone,flo@acme.test,co3\r\n",
		"notes.csv": "id,body,contact_id,deleted\n" +
			"n1,hello,c1,\n" +
			"n2,orphan,c404,\n" +
			"n3,,c1,\n" +
			"n4,gone,c1,true\n" +
			"n2,orphan again,c404,\n" +
			"n5,\"multi\nline\",c2,\n" +
			"n6,on a failed contact,c4,\n" +
			"n1,dup of an imported one,c1,\n",
	}
	for name, text := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600))
	}
	return dir
}

// A rerun of an unchanged export revisits, in each CSV file with records
// failed or skipped, those records alone, and ends as a rerun that reads
// every file (--reread): the same counts, slots, rows and failures; and a
// rerun after it does again. Files with nothing to revisit are not read.
func TestRevisitRerunMatchesReread(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		dir  func(t *testing.T) string
		want map[string]bool
	}{
		{"Defects", withDefects, map[string]bool{"companies.csv": true, "contacts.csv": true, "notes.csv": true}},
		{"Generated", func(t *testing.T) string {
			dir := t.TempDir()
			_, err := gen.Write(dir, gen.Config{Contacts: 600, Seed: 7, Dirty: true})
			require.NoError(t, err)
			return dir
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := tc.dir(t)
			w := newTwins(t)
			w.both(dir)
			got := w.rerun(dir, "")
			if tc.want != nil {
				require.Equal(t, tc.want, got)
			} else {
				require.NotEmpty(t, got)
			}
			require.Equal(t, got, w.rerun(dir, ""), "a revisit keeps the places for the next")
		})
	}
}

// A revisit stopped after its first batch (the second fails) is resumed
// from its checkpoint and ends as a full rerun does (R12).
func TestRevisitResumesAtItsCheckpoint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	exp, err := gen.Write(dir, gen.Config{Contacts: 2000, Seed: 11, Dirty: true})
	require.NoError(t, err)
	require.Greater(t, exp.First["note"].Skipped+exp.First["note"].Failed, 100, "more than two batches of notes to revisit")
	w := newTwins(t)
	w.both(dir)
	require.True(t, w.rerun(dir, "batch:note:2=error")["notes.csv"])
}

// Notes skipped for want of a parent are created by a rerun once their
// parent has been imported by another export (R3: a skip is a
// placeholder), as a full rerun creates them.
func TestRevisitAfterTheParentArrived(t *testing.T) {
	t.Parallel()
	dir := withDefects(t)
	w := newTwins(t)
	w.both(dir)
	parents := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(parents, "contacts.csv"), []byte("id,first_name,email\nc404,Found,found@acme.test\n"), 0o600))
	w.both(parents)
	require.True(t, w.rerun(dir, "")["notes.csv"])
	var n int
	require.NoError(t, w.revisit.QueryRow(`SELECT count(*) FROM migration_records WHERE kind = 'note' AND source_id = 'n2' AND action = 'created'`).Scan(&n))
	require.Equal(t, 1, n, "the note once skipped is created")
}

// Once a final slot of the tenant and source is removed (an undo of
// another run), no earlier task vouches for its records: the rerun reads
// every file, and still ends as --reread does.
func TestRevisitNotAfterTheEpochMoved(t *testing.T) {
	t.Parallel()
	dir := withDefects(t)
	w := newTwins(t)
	w.both(dir)
	other := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(other, "contacts.csv"), []byte("id,first_name,email\nx1,Xavier,x@acme.test\n"), 0o600))
	w.both(other)
	ctx := context.Background()
	for _, db := range []*sql.DB{w.revisit, w.reread} {
		imp := fixedImporter(db, nil)
		runs, err := phases.ListRuns(ctx, db, "acme")
		require.NoError(t, err)
		u, _, err := undo.Start(ctx, imp.Engine, runs[0].ID, false)
		require.NoError(t, err)
		u, err = imp.Engine.Execute(ctx, u.ID, undo.Open(imp.Engine.DB))
		require.NoError(t, err)
		require.Equal(t, phases.RunSucceeded, u.Status, u.Message)
	}
	require.Empty(t, w.rerun(dir, ""))
	require.NotEmpty(t, w.rerun(dir, ""), "the rerun after it revisits again")
}

// A rerun after a fix of one file reads that file whole (its bytes
// changed) and revisits the others.
func TestRevisitAfterOneFileChanged(t *testing.T) {
	t.Parallel()
	dir := withDefects(t)
	w := newTwins(t)
	w.both(dir)
	p := filepath.Join(dir, "contacts.csv")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), "not-an-email", "bob@acme.test", 1)), 0o600))
	require.Equal(t, map[string]bool{"companies.csv": true, "notes.csv": true}, w.rerun(dir, ""))
}

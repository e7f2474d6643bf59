package importer

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/fixtures/gen"
	"crmimport/importer/input"
	"crmimport/importer/profile"
	"crmimport/importer/reader"
	"crmimport/importer/runopts"
	"crmimport/ledger"
	"crmimport/ledger/ledgertest"
	"crmimport/phases"
	"crmimport/store/storetest"
)

const notReadAgain = "counted unchanged without reading it again"

// runSpec plans and executes spec with the tenant and source of these tests.
func runSpec(t *testing.T, imp *Importer, spec RunSpec) phases.Run {
	t.Helper()
	ctx := context.Background()
	spec.Tenant, spec.Source = "acme", "canonical"
	run, err := imp.Plan(ctx, spec)
	require.NoError(t, err)
	run, err = imp.Execute(ctx, run.ID)
	require.NoError(t, err)
	return run
}

// taskCounts are the counts of a run's tasks by file, and which tasks the
// run log says were not read.
func taskCounts(t *testing.T, db *sql.DB, runID int64) (map[string]phases.Counts, map[string]bool) {
	t.Helper()
	tasks, err := phases.LoadTasks(context.Background(), db, runID)
	require.NoError(t, err)
	counts, unread := map[string]phases.Counts{}, map[string]bool{}
	for _, task := range tasks {
		name := input.Name(task.File)
		counts[name] = task.Counts
		var n int
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM run_log WHERE migration_id = ? AND message LIKE ?`,
			runID, "task "+strconv.FormatInt(task.ID, 10)+": "+name+" %"+notReadAgain+"%").Scan(&n))
		unread[name] = n == 1
	}
	return counts, unread
}

func dump(t *testing.T, db *sql.DB) string {
	t.Helper()
	d, err := ledgertest.Dump(context.Background(), db, "acme")
	require.NoError(t, err)
	return d
}

// A rerun of an export the ledger has taken whole reads none of its files
// and reports what reading them reports (--reread): every record unchanged,
// nothing written. The export's place does not matter, its bytes do.
func TestRerunOfTheSameBytesIsNotReadAgain(t *testing.T) {
	t.Parallel()
	db := storetest.OpenDB(t)
	imp := New(phases.New(db, nil))
	dir := t.TempDir()
	exp, err := gen.Write(dir, gen.Config{Contacts: 300, Seed: 7})
	require.NoError(t, err)

	first := runSpec(t, imp, RunSpec{Input: dir, BatchSize: 100})
	require.Equal(t, phases.RunSucceeded, first.Status)
	before := dump(t, db)

	second := runSpec(t, imp, RunSpec{Input: dir, BatchSize: 100})
	require.Equal(t, phases.RunSucceeded, second.Status)
	counts, unread := taskCounts(t, db, second.ID)
	require.Len(t, counts, len(exp.Records))
	for _, k := range canon.Kinds() {
		if _, written := exp.Records[string(k)]; !written {
			continue // a kind the generator writes no file of (users)
		}
		name := gen.FileBase(string(k)) + ".csv"
		require.True(t, unread[name], "%s was read again", name)
		require.Equal(t, phases.Counts{Unchanged: int64(exp.Records[string(k)])}, counts[name], name)
	}

	reread := runSpec(t, imp, RunSpec{Input: dir, BatchSize: 100, Reread: true})
	require.Equal(t, phases.RunSucceeded, reread.Status)
	readCounts, readUnread := taskCounts(t, db, reread.ID)
	require.Equal(t, counts, readCounts, "reading the files again tells the same")
	for name, u := range readUnread {
		require.False(t, u, "--reread read %s", name)
	}
	require.Equal(t, reread.Stats, second.Stats)
	require.Equal(t, before, dump(t, db), "R2: nothing written")

	// The same bytes elsewhere are the same export.
	moved := filepath.Join(t.TempDir(), "copy")
	require.NoError(t, os.CopyFS(moved, os.DirFS(dir)))
	third := runSpec(t, imp, RunSpec{Input: moved, BatchSize: 100})
	_, unread = taskCounts(t, db, third.ID)
	for name, u := range unread {
		require.True(t, u, "%s at another place was read again", name)
	}
	require.Equal(t, second.Stats, third.Stats)
}

// What a run could not vouch for is read: a final slot freed by hand (the
// repair doctor suggests), records an earlier run skipped, a file that
// changed.
func TestRerunReadsWhatTheLedgerDoesNotVouchFor(t *testing.T) {
	t.Parallel()
	db := storetest.OpenDB(t)
	imp := New(phases.New(db, nil))
	dir := t.TempDir()
	exp, err := gen.Write(dir, gen.Config{Contacts: 200, Seed: 8})
	require.NoError(t, err)
	n := func(k ledger.Kind) int64 { return int64(exp.Records[string(k)]) }

	// Notes alone: their parents are not there, every note is skipped.
	notesFirst := runSpec(t, imp, RunSpec{Input: dir, Only: []ledger.Kind{ledger.Note}})
	require.Equal(t, phases.Counts{Skipped: n(ledger.Note)}, notesFirst.Stats[ledger.Note])
	all := runSpec(t, imp, RunSpec{Input: dir})
	require.Equal(t, phases.RunSucceeded, all.Status)
	counts, unread := taskCounts(t, db, all.ID)
	require.False(t, unread["notes.csv"], "the notes were skipped: they are judged again")
	require.Equal(t, phases.Counts{Imported: n(ledger.Note)}, counts["notes.csv"])

	// A contact's slot freed by hand: that contact is read and matched by
	// its email (R5) — and every task that began before is read again.
	var freed string
	require.NoError(t, db.QueryRow(`SELECT source_id FROM migration_records WHERE kind = 'contact' ORDER BY source_id LIMIT 1`).Scan(&freed))
	_, err = db.Exec(`DELETE FROM migration_records WHERE kind = 'contact' AND source_id = ?`, freed)
	require.NoError(t, err)
	again := runSpec(t, imp, RunSpec{Input: dir})
	counts, unread = taskCounts(t, db, again.ID)
	for name, u := range unread {
		require.False(t, u, "%s: a final slot went away since it was read", name)
	}
	require.Equal(t, phases.Counts{Imported: 1, Matched: 1, Unchanged: n(ledger.Contact) - 1}, counts["contacts.csv"])
	var action string
	require.NoError(t, db.QueryRow(`SELECT action FROM migration_records WHERE kind = 'contact' AND source_id = ?`, freed).Scan(&action))
	require.Equal(t, "matched", action)

	// A changed file is read; the others, vouched for by the run above, are not.
	f, err := os.OpenFile(filepath.Join(dir, "companies.csv"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	header, err := os.ReadFile(filepath.Join(dir, "companies.csv"))
	require.NoError(t, err)
	cols := strings.Count(strings.SplitN(string(header), "\n", 2)[0], ",")
	_, err = f.WriteString("co-new,New Co" + strings.Repeat(",", cols-1) + "\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	changed := runSpec(t, imp, RunSpec{Input: dir})
	counts, unread = taskCounts(t, db, changed.ID)
	require.False(t, unread["companies.csv"])
	require.Equal(t, phases.Counts{Imported: 1, Unchanged: n(ledger.Company)}, counts["companies.csv"])
	for _, name := range []string{"contacts.csv", "deals.csv", "notes.csv", "activities.csv", "emails.csv"} {
		require.True(t, unread[name], name)
	}
}

// A kind read from two files is read whole: the ids of a file not read are
// not known, and the other file may repeat them (a duplicate, not unchanged).
func TestRerunReadsAKindOfSeveralFiles(t *testing.T) {
	t.Parallel()
	db := storetest.OpenDB(t)
	imp := New(phases.New(db, nil))
	dir := export(t, map[string]string{"companies.csv": "id,name\nco1,Acme\nco2,Globex\n"})
	first := runSpec(t, imp, RunSpec{Input: dir})
	require.Equal(t, phases.Counts{Imported: 2}, first.Stats[ledger.Company])

	require.NoError(t, os.WriteFile(filepath.Join(dir, "companies.jsonl"), []byte(`{"id":"co1","name":"Acme"}`+"\n"), 0o600))
	second := runSpec(t, imp, RunSpec{Input: dir})
	counts, unread := taskCounts(t, db, second.ID)
	require.False(t, unread["companies.csv"])
	require.Equal(t, phases.Counts{Unchanged: 2}, counts["companies.csv"])
	require.Equal(t, phases.Counts{Failed: 1, Duplicate: 1}, counts["companies.jsonl"], "co1 twice in one run")
}

// The key of an input changes with each thing that decides its records,
// and with nothing else.
func TestInputKey(t *testing.T) {
	t.Parallel()
	p, err := ProfileByName("canonical")
	require.NoError(t, err)
	custom, err := profile.Load("mine.yaml", append(p.Text(), []byte("\n# changed\n")...))
	require.NoError(t, err)
	f := inputFile{Path: "/a/export/contacts.csv", Kind: ledger.Contact, Format: reader.FormatCSV, Encoding: "utf-8",
		Info: input.FileInfo{Fingerprint: "crc32c:0badf00d:10"}}
	opts := runopts.Options{SideFiles: []profile.SideFile{{Role: "bodies:x", File: "/a/export/x", Fingerprint: "f1"}}}
	base := inputKey(p, f, opts)
	require.True(t, strings.HasPrefix(base, "sha256:"))

	moved := f
	moved.Path = "/b/elsewhere/contacts.csv"
	movedOpts := runopts.Options{SideFiles: []profile.SideFile{{Role: "bodies:x", File: "/b/elsewhere/x", Fingerprint: "f1"}}, Input: "/b"}
	require.Equal(t, base, inputKey(p, moved, movedOpts), "the place of an export is not what it holds")

	for name, key := range map[string]string{
		"content":        inputKey(p, func() inputFile { g := f; g.Info.Fingerprint = "crc32c:0badf00e:10"; return g }(), opts),
		"name":           inputKey(p, func() inputFile { g := f; g.Path = "/a/export/contacts.jsonl"; return g }(), opts),
		"format":         inputKey(p, func() inputFile { g := f; g.Format = reader.FormatJSON; return g }(), opts),
		"encoding":       inputKey(p, func() inputFile { g := f; g.Encoding = "windows-1252"; return g }(), opts),
		"asked encoding": inputKey(p, f, runopts.Options{SideFiles: opts.SideFiles, Encoding: "windows-1252"}),
		"profile":        inputKey(custom, f, opts),
		"beside":         inputKey(p, f, runopts.Options{SideFiles: []profile.SideFile{{Role: "bodies:x", File: "/a/export/x", Fingerprint: "f2"}}}),
		"nothing beside": inputKey(p, f, runopts.Options{}),
	} {
		require.NotEqual(t, base, key, name)
	}
}

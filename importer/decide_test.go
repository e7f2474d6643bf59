package importer

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/failpoint"
	"crmimport/fixtures/gen"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store"
	"crmimport/store/storetest"
)

func export(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600))
	}
	return dir
}

// importDir plans and executes one run of dir for tenant acme.
func importDir(t *testing.T, imp *Importer, dir string, batch int) phases.Run {
	t.Helper()
	ctx := context.Background()
	run, err := imp.Plan(ctx, RunSpec{Tenant: "acme", Source: "canonical", Input: dir, BatchSize: batch})
	require.NoError(t, err)
	run, err = imp.Execute(ctx, run.ID)
	require.NoError(t, err)
	return run
}

func failureReasons(t *testing.T, db *sql.DB, runID int64) map[string]string {
	t.Helper()
	rows, err := db.Query(`SELECT coalesce(source_id, ''), reason FROM record_failures WHERE migration_id = ?`, runID)
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, reason string
		require.NoError(t, rows.Scan(&id, &reason))
		out[id] = reason
	}
	return out
}

// TestOrderOfDecisions: SPEC §4's order, where it matters: a duplicate is
// judged before "already there"; an imported record is unchanged before it
// is validated again; deleted comes before invalid.
func TestOrderOfDecisions(t *testing.T) {
	t.Parallel()
	db := storetest.OpenDB(t)
	first := export(t, map[string]string{"contacts.csv": "id,first_name,email\n" +
		"c1,Ann,ann@example.com\n" +
		"c2,Bob,bob@example.com\n"})
	run1 := importDir(t, New(phases.New(db, nil)), first, 100)
	require.Equal(t, int64(2), run1.Stats[ledger.Contact].Imported)

	second := export(t, map[string]string{"contacts.csv": "id,first_name,email,deleted\n" +
		"c1,,not-an-address,\n" + // 3 before 5: unchanged (outdated, R17: changed at the source), not failed
		"c2,Bob,bob@example.com,\n" +
		"c2,Bob,bob@example.com,\n" + // 2 before 3: a duplicate, not unchanged
		"c3,,not-an-address,yes\n" + // 4 before 5: deleted, not invalid
		"c4,,,\n" + // 5: neither a name nor an email
		",Nobody,nobody@example.com,\n"}) // 1: no id
	run2 := importDir(t, New(phases.New(db, nil)), second, 100)
	c := run2.Stats[ledger.Contact]
	require.Equal(t, phases.Counts{Unchanged: 2, Skipped: 1, Failed: 3, Duplicate: 1, Outdated: 1}, c)
	require.Equal(t, map[string]string{
		"c2": "duplicate source_id, first at contacts.csv:3",
		"c4": "contact has neither a name nor an email",
		"":   "missing id",
	}, failureReasons(t, db, run2.ID))
	var reason string
	require.NoError(t, db.QueryRow(`SELECT reason FROM migration_records WHERE source_id = 'c3'`).Scan(&reason))
	require.Equal(t, ledger.ReasonDeleted, reason)
}

// TestLinksAndMatches: R5 and R6 through the importer.
func TestLinksAndMatches(t *testing.T) {
	t.Parallel()
	db := storetest.OpenDB(t)
	dir := export(t, map[string]string{
		"companies.csv": "id,name,domain\nco1,Acme,acme.example\nco2,Acme Again,https://www.ACME.example/about\nco3,Other,\nco4,Blank,\n",
		"contacts.csv": "id,first_name,email,company_id\n" +
			"c1,Ann,ann@acme.example,co2\n" + // linked through a matched slot
			"c2,Ann,  ANN@acme.example ,co9\n" + // matched by email; co9 unknown
			"c3,Cy,,co9\n", // created, unlinked, value kept in extra
		"notes.csv": "id,body,contact_id,deal_id\n" +
			"n1,Hello,c2,d9\n" + // resolves through the matched contact; d9 is unlinked
			"n2,Orphan,c9,\n" + // nothing resolves: skipped with detail
			"n3,No links at all,,\n",
	})
	run := importDir(t, New(phases.New(db, nil)), dir, 2)
	require.Equal(t, phases.Counts{Imported: 4, Matched: 1}, run.Stats[ledger.Company])
	require.Equal(t, phases.Counts{Imported: 3, Matched: 1, Unlinked: 2}, run.Stats[ledger.Contact])
	require.Equal(t, phases.Counts{Imported: 1, Skipped: 2, Unlinked: 1}, run.Stats[ledger.Note])

	var acme int64
	require.NoError(t, db.QueryRow(`SELECT id FROM companies WHERE name = 'Acme'`).Scan(&acme))
	var n int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM companies WHERE name = 'Acme Again'`).Scan(&n))
	require.Equal(t, 0, n, "R5: matched means found, not made")
	var companyOfAnn sql.NullInt64
	var extra sql.NullString
	require.NoError(t, db.QueryRow(`SELECT company_id FROM contacts WHERE first_name = 'Ann'`).Scan(&companyOfAnn))
	require.Equal(t, acme, companyOfAnn.Int64, "a link to a matched company resolves to the row it matched")
	require.NoError(t, db.QueryRow(`SELECT company_id, extra FROM contacts WHERE first_name = 'Cy'`).Scan(&companyOfAnn, &extra))
	require.False(t, companyOfAnn.Valid)
	require.JSONEq(t, `{"company_id":"co9"}`, extra.String, "the unresolved link value is kept in extra")

	var detail sql.NullString
	require.NoError(t, db.QueryRow(`SELECT detail FROM migration_records WHERE source_id = 'n2'`).Scan(&detail))
	require.JSONEq(t, `{"contact_id":"c9"}`, detail.String)
	require.NoError(t, db.QueryRow(`SELECT detail FROM migration_records WHERE source_id = 'n3'`).Scan(&detail))
	require.False(t, detail.Valid, "no link value at all: nothing to keep")
	require.NoError(t, db.QueryRow(`SELECT extra FROM notes`).Scan(&extra))
	require.JSONEq(t, `{"deal_id":"d9"}`, extra.String)
}

// TestRolledBackBatchLeavesNothingInTheIndex: the index of ids seen in this
// run learns a batch only once it commits (R12): after a failed batch it
// holds exactly the committed batches' ids.
func TestRolledBackBatchLeavesNothingInTheIndex(t *testing.T) {
	t.Parallel()
	db := storetest.OpenDB(t)
	dir := export(t, map[string]string{"contacts.csv": "id,first_name\nc1,A\nc2,B\nc3,C\nc4,D\nc5,E\n"})
	fps, err := failpoint.Parse("batch:contact:2=error", canon.ParseKind)
	require.NoError(t, err)
	imp := New(phases.New(db, fps))
	run := importDir(t, imp, dir, 2)
	require.Equal(t, phases.RunPartial, run.Status)
	seen := imp.runs[run.ID].seen[ledger.Contact]
	require.Equal(t, 2, seen.len())
	for id, want := range map[string]bool{"c1": true, "c2": true, "c3": false} {
		_, ok := seen.get(id)
		require.Equal(t, want, ok, "%s: the rolled-back batch must leave nothing behind", id)
	}
}

// TestExtraKeepsUnmappedColumns: nothing in the export is dropped silently.
func TestExtraKeepsUnmappedColumns(t *testing.T) {
	t.Parallel()
	db := storetest.OpenDB(t)
	dir := export(t, map[string]string{"companies.csv": "ID,Name,Lead Source,Lead Source,notes,empty\nco1,Acme,Fair,Web,\"a, b\",\n"})
	importDir(t, New(phases.New(db, nil)), dir, 10)
	var extra string
	require.NoError(t, db.QueryRow(`SELECT extra FROM companies`).Scan(&extra))
	require.JSONEq(t, `{"Lead Source":"Fair","Lead Source#2":"Web","notes":"a, b"}`, extra)
}

// TestOneImporterManyRuns: "earlier in this run" means this run: an
// importer that runs an export twice finds it unchanged, not duplicated.
func TestOneImporterManyRuns(t *testing.T) {
	t.Parallel()
	db := storetest.OpenDB(t)
	dir := export(t, map[string]string{"contacts.csv": "id,first_name\nc1,A\nc2,B\n"})
	imp := New(phases.New(db, nil))
	importDir(t, imp, dir, 10)
	run := importDir(t, imp, dir, 10)
	require.Equal(t, phases.RunSucceeded, run.Status)
	require.Equal(t, phases.Counts{Unchanged: 2}, run.Stats[ledger.Contact])
}

// TestChunkRedoneRecordByRecord: when one row of a chunk breaks a
// constraint (here a foreign key to a company row deleted by hand behind
// the ledger's back), the chunk is taken back and redone record by record:
// that record fails alone (R4), its neighbours import, and the failure
// claims nothing.
func TestChunkRedoneRecordByRecord(t *testing.T) {
	t.Parallel()
	db := storetest.OpenDB(t)
	imp := New(phases.New(db, nil))
	importDir(t, imp, export(t, map[string]string{"companies.csv": "id,name\nco1,Acme\nco2,Gone\n"}), 10)
	_, err := db.Exec(`DELETE FROM companies WHERE name = 'Gone'`)
	require.NoError(t, err)

	run := importDir(t, New(phases.New(db, nil)), export(t, map[string]string{"contacts.csv": "id,first_name,company_id\n" +
		"c1,Ann,co1\nc2,Bob,co2\nc3,Cy,co1\nc4,Di,\n"}), 10)
	require.Equal(t, phases.Counts{Imported: 3, Failed: 1}, run.Stats[ledger.Contact])
	reasons := failureReasons(t, db, run.ID)
	require.Contains(t, reasons["c2"], "the database refused the row")
	require.Contains(t, reasons["c2"], "FOREIGN KEY")
	var n int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM migration_records WHERE kind = 'contact'`).Scan(&n))
	require.Equal(t, 3, n, "the failed record claimed nothing")
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM contacts`).Scan(&n))
	require.Equal(t, 3, n)
}

// TestCopiedChunkRedoneRecordByRecord (issue 28): a chunk large enough to
// go by COPY on PostgreSQL (store.CopyMin), claims and rows, in which one
// row breaks a foreign key: the COPY fails whole, and the chunk is redone
// record by record as a chunk of statements is — that record fails alone
// (R4), claiming nothing, and its neighbours import.
func TestCopiedChunkRedoneRecordByRecord(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		const n = 3 * store.CopyMin
		var companies, contacts strings.Builder
		companies.WriteString("id,name\n")
		contacts.WriteString("id,first_name,company_id\n")
		for i := range n {
			fmt.Fprintf(&companies, "co%d,Company %d\n", i, i)
			fmt.Fprintf(&contacts, "c%d,Person %d,co%d\n", i, i, i)
		}
		importDir(t, New(phases.New(db, nil)), export(t, map[string]string{"companies.csv": companies.String()}), 1000)
		_, err := db.Exec(`DELETE FROM companies WHERE name = 'Company 7'`)
		require.NoError(t, err)

		run := importDir(t, New(phases.New(db, nil)), export(t, map[string]string{"contacts.csv": contacts.String()}), 1000)
		require.Equal(t, phases.Counts{Imported: n - 1, Failed: 1}, run.Stats[ledger.Contact])
		reasons := failureReasons(t, db, run.ID)
		require.Len(t, reasons, 1)
		require.Contains(t, reasons["c7"], "the database refused the row")
		var slots, rows int
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM migration_records WHERE kind = 'contact'`).Scan(&slots))
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM contacts`).Scan(&rows))
		require.Equal(t, []int{n - 1, n - 1}, []int{slots, rows}, "the failed record claimed nothing")
	})
}

// TestRefusedClaimCountsUnchanged: the claim is the authority. A final slot
// that appears behind the importer's back (between two batches) refuses
// the record's claim; it is counted unchanged and writes nothing, and the
// rest of its chunk imports.
func TestRefusedClaimCountsUnchanged(t *testing.T) {
	t.Parallel()
	db := storetest.OpenDB(t)
	imp := New(phases.New(db, nil))
	once := false
	imp.Progress = func(phases.Task, int64, int64) {
		if once {
			return
		}
		once = true
		_, err := db.Exec(`INSERT INTO migration_records (tenant_id, source, kind, source_id, id, migration_id, record_type,
			record_id, action, created_at) VALUES ('acme', 'canonical', 'company', 'co4', 999, 99, 'companies', NULL, 'created', 'x')`)
		require.NoError(t, err)
	}
	run := importDir(t, imp, export(t, map[string]string{"companies.csv": "id,name\nco1,A\nco2,B\nco3,C\nco4,D\nco5,E\n"}), 3)
	require.Equal(t, phases.Counts{Imported: 4, Unchanged: 1}, run.Stats[ledger.Company])
	var n int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM companies`).Scan(&n))
	require.Equal(t, 4, n, "no row for the refused claim")
	var rid sql.NullInt64
	require.NoError(t, db.QueryRow(`SELECT record_id FROM migration_records WHERE source_id = 'co4'`).Scan(&rid))
	require.False(t, rid.Valid, "the final slot was left as it was (R2)")
}

// TestGeneratedExportOutcomes: the engine and fixtures/gen's model of the
// rules agree on every outcome of a dirty export, for a first run and a
// rerun, in CSV and in JSON Lines.
func TestGeneratedExportOutcomes(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"csv", "jsonl"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			exp, err := gen.Write(dir, gen.Config{Contacts: 1500, Seed: 7, Dirty: true, Format: format})
			require.NoError(t, err)
			db := storetest.OpenDB(t)
			for _, pass := range []struct {
				want   map[string]gen.Outcome
				status string
			}{{exp.First, exp.Status.First}, {exp.Rerun, exp.Status.Rerun}} {
				run := importDir(t, New(phases.New(db, nil)), dir, 500)
				require.Equal(t, pass.status, string(run.Status))
				for kind, want := range pass.want {
					got := run.Stats[ledger.Kind(kind)]
					require.Equal(t, want, gen.Outcome{Imported: int(got.Imported), Unchanged: int(got.Unchanged),
						Skipped: int(got.Skipped), Failed: int(got.Failed), Matched: int(got.Matched),
						Unlinked: int(got.Unlinked), Duplicate: int(got.Duplicate)}, kind)
				}
			}
		})
	}
}

// TestJSONLinesResumeAfterBrokenLines: broken lines of JSON Lines fail
// alone (R4, with their line and the id read of them) and are counted as
// records read, so that a resume at a checkpoint after them lands on the
// right record (R12) and later failures keep their lines: the run ends as
// an uninterrupted one.
func TestJSONLinesResumeAfterBrokenLines(t *testing.T) {
	t.Parallel()
	dir := export(t, map[string]string{"contacts.jsonl": `{"id": "c1", "first_name": "Ann"}
{"id": "c2", "first_name": "Bob"
{"id": "c3", "first_name": "Cy"}
garbage

{"id": "c4", "first_name": "Di"}
{"id": "c5", "first_name": "Ed"} x
{"id": "c6", "first_name": "Flo"}
{"id": "c7", "first_name": "Gus"}
`})
	outcome := func(db *sql.DB, runID int64) ([]string, []string) {
		var failures, slots []string
		rows, err := db.Query(`SELECT coalesce(source_id, ''), line, reason FROM record_failures WHERE migration_id = ? ORDER BY line`, runID)
		require.NoError(t, err)
		defer rows.Close()
		for rows.Next() {
			var id, reason string
			var line int
			require.NoError(t, rows.Scan(&id, &line, &reason))
			failures = append(failures, fmt.Sprintf("%s|%d|%s", id, line, reason))
		}
		require.NoError(t, rows.Err())
		srows, err := db.Query(`SELECT m.source_id, c.first_name FROM migration_records m JOIN contacts c ON c.id = m.record_id ORDER BY m.source_id`)
		require.NoError(t, err)
		defer srows.Close()
		for srows.Next() {
			var id, name string
			require.NoError(t, srows.Scan(&id, &name))
			slots = append(slots, id+"|"+name)
		}
		require.NoError(t, srows.Err())
		return failures, slots
	}
	wantFailures := []string{
		"c2|2|the line ends inside its record (cut short? a line of JSON Lines holds one whole record)",
		"|4|invalid JSON: invalid character 'g' looking for beginning of value",
		`c5|7|unexpected data after the record ("x"): a line of JSON Lines holds one record`,
	}
	wantSlots := []string{"c1|Ann", "c3|Cy", "c4|Di", "c6|Flo", "c7|Gus"}

	ctx := context.Background()
	db := storetest.OpenDB(t)
	fps, err := failpoint.Parse("batch:contact:3=error", canon.ParseKind)
	require.NoError(t, err)
	run := importDir(t, New(phases.New(db, fps)), dir, 2)
	require.Equal(t, phases.RunPartial, run.Status)
	tasks, err := phases.LoadTasks(ctx, db, run.ID)
	require.NoError(t, err)
	require.Equal(t, phases.Checkpoint{Rows: 4, Line: 4}, tasks[0].Checkpoint, "two batches of two: lines 1-4, two of them broken")
	_, _, err = New(phases.New(db, nil)).Resume(ctx, run.ID)
	require.NoError(t, err)
	run, err = New(phases.New(db, nil)).Execute(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, phases.RunPartial, run.Status)
	require.Equal(t, phases.Counts{Imported: 5, Failed: 3}, run.Stats[ledger.Contact])
	failures, slots := outcome(db, run.ID)
	require.Equal(t, wantFailures, failures)
	require.Equal(t, wantSlots, slots)

	whole := storetest.OpenDB(t)
	run = importDir(t, New(phases.New(whole, nil)), dir, 2)
	require.Equal(t, phases.Counts{Imported: 5, Failed: 3}, run.Stats[ledger.Contact])
	failures, slots = outcome(whole, run.ID)
	require.Equal(t, wantFailures, failures, "uninterrupted")
	require.Equal(t, wantSlots, slots, "uninterrupted")
}

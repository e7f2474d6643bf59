package importer

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/failpoint"
	"crmimport/importer/input"
	"crmimport/importer/reader/readertest"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store/storetest"
)

// TestWorkbookSheets: each sheet of a workbook has its own header, judged
// as the reader reaches it (issue 15 item 1): a sheet with no column of
// the kind (a cover sheet, before or after the records) is left unread
// and said so; a sheet of the kind without an id column fails the task,
// naming the sheet and its header's row; a profile may name the one sheet
// to read; a workbook with no sheet of the kind fails, listing its sheets.
func TestWorkbookSheets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cover := readertest.Table{Sheet: "Read me", Rows: [][]string{{"Exported by", "On"}, {"Ann", "2024-08-27"}}}
	people := readertest.Table{Sheet: "People", Rows: [][]string{{"id", "first_name", "email"}, {"c1", "Ann", "ann@example.com"}, {"c2", "Bob", "bob@example.com"}}}
	noID := readertest.Table{Sheet: "Left", Rows: [][]string{{"first_name", "email"}, {"Cy", "cy@example.com"}}}
	back := readertest.Table{Sheet: "Pivot", Rows: [][]string{{"Region", "Count"}, {"EMEA", "2"}}}
	more := readertest.Table{Sheet: "More", Rows: [][]string{{"email", "id"}, {"dee@example.com", "c3"}}}

	write := func(tables ...readertest.Table) string {
		dir := t.TempDir()
		wb := readertest.MultiSheet(tables...)
		require.NoError(t, wb.WriteFile(filepath.Join(dir, "contacts.xlsx")))
		return dir
	}
	t.Run("CoverSheetsLeftUnread", func(t *testing.T) {
		t.Parallel()
		db := storetest.OpenDB(t)
		run := importDir(t, New(phases.New(db, nil)), write(cover, people, more, back), 0)
		require.Equal(t, phases.RunSucceeded, run.Status, column(t, db, `SELECT message FROM run_log`))
		require.Equal(t, int64(3), run.Stats[ledger.Contact].Imported)
		require.Equal(t, []string{
			`contacts.xlsx!Read me: not read: none of its columns ("Exported by", "On", header at row 1) is one the canonical profile reads for contacts`,
			`contacts.xlsx!Pivot: not read: none of its columns ("Region", "Count", header at row 1) is one the canonical profile reads for contacts`,
		}, column(t, db, `SELECT message FROM run_log WHERE message LIKE '%not read:%' ORDER BY id`))
		require.Equal(t, []string{"c1|Ann", "c2|Bob", "c3|"}, column(t, db,
			`SELECT k.source_id || '|' || coalesce(c.first_name, '') FROM migration_records k JOIN contacts c ON c.id = k.record_id ORDER BY k.source_id`))
	})
	t.Run("SheetWithoutID", func(t *testing.T) {
		t.Parallel()
		db := storetest.OpenDB(t)
		run := importDir(t, New(phases.New(db, nil)), write(people, noID, more), 0)
		require.Equal(t, phases.RunFailed, run.Status)
		msg := column(t, db, `SELECT message FROM run_log WHERE level = 'error' AND message LIKE '%no id column%' LIMIT 1`)
		require.Len(t, msg, 1)
		require.Contains(t, msg[0], `: batch 1 of contacts: contacts.xlsx!Left:1: no id column: the header has 2 columns ("first_name", "email") and none of them is "id"`)
		require.Empty(t, column(t, db, `SELECT source_id FROM migration_records`), "the batch that reached the sheet is rolled back whole (R12)")
	})
	t.Run("ProfileNamesTheSheet", func(t *testing.T) {
		t.Parallel()
		dir := write(people, noID, more)
		prof := filepath.Join(t.TempDir(), "one-sheet.yaml")
		require.NoError(t, os.WriteFile(prof, []byte("name: one-sheet\nkinds:\n  contact:\n    files: [{file: contacts.xlsx, sheet: More}]\n"+
			"    fields: {id: id, email: email, first_name: first_name}\n"), 0o600))
		db := storetest.OpenDB(t)
		imp := New(phases.New(db, nil))
		run, err := imp.Plan(ctx, RunSpec{Tenant: "acme", Source: "crm", Profile: prof, Input: dir})
		require.NoError(t, err)
		run, err = imp.Execute(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, phases.RunSucceeded, run.Status)
		require.Equal(t, []string{"c3"}, column(t, db, `SELECT source_id FROM migration_records`))
	})
	t.Run("NoSheetOfTheKind", func(t *testing.T) {
		t.Parallel()
		db := storetest.OpenDB(t)
		run := importDir(t, New(phases.New(db, nil)), write(cover), 0)
		require.Equal(t, phases.RunFailed, run.Status)
		msg := column(t, db, `SELECT message FROM run_log WHERE level = 'error' AND message LIKE '%no sheet holds%' LIMIT 1`)
		require.Len(t, msg, 1)
		require.Contains(t, msg[0], `contacts.xlsx: no sheet holds contacts the profile reads: sheet "Read me" (header at row 1: "Exported by", "On"); name the sheet to read in the profile`)
	})
}

// TestWorkbookResumesAtItsCheckpoint: a run stopped in the middle of a
// workbook's second sheet resumes at its checkpoint (R12) onto the right
// row of the right sheet: the same rows, failures and lines as a run that
// was never stopped.
func TestWorkbookResumesAtItsCheckpoint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	wb, err := os.ReadFile(filepath.Join(readertest.XLSXFixtureDir(t), "contacts.xlsx"))
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "contacts.xlsx"), wb, 0o600))

	whole := storetest.OpenDB(t)
	importDir(t, New(phases.New(whole, nil)), dir, 2)

	db := storetest.OpenDB(t)
	fps, err := failpoint.Parse("batch:contact:4=error", canon.ParseKind)
	require.NoError(t, err)
	imp := New(phases.New(db, fps))
	run, err := imp.Plan(ctx, RunSpec{Tenant: "acme", Source: "canonical", Input: dir, BatchSize: 2})
	require.NoError(t, err)
	run, err = imp.Execute(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, phases.RunPartial, run.Status)
	tasks, err := phases.LoadTasks(ctx, db, run.ID)
	require.NoError(t, err)
	require.Equal(t, phases.Checkpoint{Rows: 6, Line: 8}, tasks[0].Checkpoint, "six rows of the Contacts sheet read: the last at its row 8")

	imp = New(phases.New(db, nil))
	_, _, err = imp.Resume(ctx, run.ID)
	require.NoError(t, err)
	run, err = imp.Execute(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, phases.Counts{Imported: 6, Failed: 3, Unlinked: 1}, run.Stats[ledger.Contact])
	for _, q := range []string{
		`SELECT first_name || '|' || coalesce(email, '') || '|' || coalesce(created_at, '') FROM contacts ORDER BY id`,
		`SELECT source_id || '|' || file || '|' || line || '|' || reason FROM record_failures ORDER BY line`,
	} {
		require.Equal(t, column(t, whole, q), column(t, db, q), q)
	}
	require.Equal(t, []string{"Ann", "Bob", "Fay", "Ann", "Gus", "Hal"}, column(t, db, `SELECT first_name FROM contacts ORDER BY id`))
	require.Equal(t, []string{"contacts.xlsx!Contacts|5", "contacts.xlsx!Contacts|6", "contacts.xlsx!Contacts|7"},
		column(t, db, `SELECT file || '|' || line FROM record_failures ORDER BY line`))
}

// TestWorkbookHeaderCellAtXFD: one stray header cell at column XFD, the
// last of a sheet, does not give each row 16,384 columns (issue 23 item
// 19: 55 times slower, 650 MiB): a row holds the header's named columns
// and the cells it holds. What it holds is imported as without the stray
// cell — the column's value kept in extra — and a failure's raw row holds
// those columns, not 16,384.
func TestWorkbookHeaderCellAtXFD(t *testing.T) {
	t.Parallel()
	str := func(ref, s string) string { return `<c r="` + ref + `" t="inlineStr"><is><t>` + s + `</t></is></c>` }
	dir := t.TempDir()
	wb := readertest.Workbook{Sheets: []readertest.Sheet{{Name: "Contacts", Rows: `<row r="1">` + str("A1", "id") + str("B1", "first_name") +
		str("C1", "email") + str("XFD1", "checked") + `</row>` +
		`<row r="2">` + str("A2", "c1") + str("B2", "Ann") + str("C2", "ann@example.com") + `</row>` +
		`<row r="3">` + str("A3", "c2") + str("B3", "Bob") + str("C3", "bob at example.com") + `</row>` +
		`<row r="4">` + str("A4", "c3") + str("B4", "Cy") + str("XFD4", "yes") + `</row>`}}}
	require.NoError(t, wb.WriteFile(filepath.Join(dir, "contacts.xlsx")))
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		run := importDir(t, New(phases.New(db, nil)), dir, 0)
		require.Equal(t, phases.RunPartial, run.Status)
		require.Equal(t, phases.Counts{Imported: 2, Failed: 1}, run.Stats[ledger.Contact])
		require.Equal(t, []string{`c2|contacts.xlsx!Contacts|3|{"id":"c2","first_name":"Bob","email":"bob at example.com","checked":""}`},
			column(t, db, `SELECT source_id || '|' || file || '|' || line || '|' || raw FROM record_failures`))
		require.Equal(t, []string{"c1|Ann|", `c3|Cy|{"checked":"yes"}`}, column(t, db,
			`SELECT k.source_id || '|' || c.first_name || '|' || coalesce(c.extra, '') FROM migration_records k JOIN contacts c ON c.id = k.record_id ORDER BY k.source_id`))
	})
}

// TestAWorkbookBombIsRefusedBeforeTheRun: a workbook whose part inflates
// past the zip limits is refused while the run is planned, as an export's
// zip bomb is — a task's file, or a file a task reads beside its own (a
// joined OpportunityContactRole.xlsx) — with an *input.Error naming the
// part, and no run row (issue 23 item 20: the reader refused it only once
// its task opened it, in a run that failed).
func TestAWorkbookBombIsRefusedBeforeTheRun(t *testing.T) {
	t.Parallel()
	bomb := readertest.BadWorkbooks()["canonical/49-workbook-bomb/contacts.xlsx"]
	for name, c := range map[string]struct {
		source, file string
		copies       []string // files of fixtures/salesforce beside it
	}{
		"TaskFile":       {"canonical", "contacts.xlsx", nil},
		"JoinedSideFile": {"salesforce", "OpportunityContactRole.xlsx", []string{"Account.csv", "Contact.csv", "Opportunity.csv"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			require.NoError(t, bomb.WriteFile(filepath.Join(dir, c.file)))
			for _, f := range c.copies {
				b, err := os.ReadFile(filepath.Join("..", "fixtures", "salesforce", f))
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o600))
			}
			storetest.Run(t, func(t *testing.T, db *sql.DB) {
				_, err := New(phases.New(db, nil)).Plan(context.Background(), RunSpec{Tenant: "acme", Source: c.source, Input: dir})
				var ie *input.Error
				require.ErrorAs(t, err, &ie)
				require.Equal(t, filepath.Join(dir, c.file), ie.Path)
				require.Equal(t, "part xl/worksheets/sheet1.xml: uncompresses to 4.0 MiB from 4.6 KiB (889:1, over the limit of 200:1): refused as a possible zip bomb", ie.Reason)
				require.Equal(t, []string{"0"}, column(t, db, `SELECT count(*) FROM migrations`), "no run row")
			})
		})
	}
}

package grid_test

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

	"crmimport/fixfile"
	"crmimport/grid"
	"crmimport/importer"
	"crmimport/phases"
	"crmimport/report"
	"crmimport/store/storetest"
)

// failedRun imports an export whose deals all fail (n of them: every
// third for its close date written day first, the others for an amount
// with a thousands separator) and a contact that fails for its email, and
// returns the run.
func failedRun(t *testing.T, db *sql.DB, n int) int64 {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	var deals strings.Builder
	deals.WriteString("id,name,amount,close_date\n")
	for i := 1; i <= n; i++ {
		if i%3 == 0 {
			fmt.Fprintf(&deals, "d-%03d,Deal %d,%d.00,%02d/%02d/2024\n", i, i, i, 1+i%28, 1+i%12)
		} else {
			fmt.Fprintf(&deals, "d-%03d,Deal %d,\"%d,000.00\",2024-03-01\n", i, i, i)
		}
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "deals.csv"), []byte(deals.String()), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "contacts.csv"), []byte("id,first_name,email\nc-1,Ann,ann(at)example.com\n"), 0o600))
	imp := importer.New(phases.New(db, nil))
	run, err := imp.Plan(ctx, importer.RunSpec{Tenant: "acme", Source: "canonical", Input: dir, BatchSize: 50})
	require.NoError(t, err)
	_, err = imp.Execute(ctx, run.ID)
	require.NoError(t, err)
	return run.ID
}

// TestGridPages: the grid's pages are the database's — one file at a
// time with its columns, counted per file, kind and class; the first and
// the last page by offset; a reason class, a source id, a value and a
// column filter; sorts by reason and by a column, both ways; each row's
// failing cell. Both engines.
func TestGridPages(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		run := failedRun(t, db, 30)
		p, err := grid.Page(ctx, db, run, grid.Query{Limit: 7})
		require.NoError(t, err)
		require.Equal(t, []grid.FileCount{{File: "contacts.csv", Count: 1}, {File: "deals.csv", Count: 30}}, p.Files)
		require.Equal(t, "contacts.csv", p.File, "the first file by name")
		require.Equal(t, []string{"id", "first_name", "email"}, p.Columns)
		require.Len(t, p.Rows, 1)
		require.Equal(t, "email", p.Rows[0].Failing)

		p, err = grid.Page(ctx, db, run, grid.Query{File: "deals.csv", Limit: 7})
		require.NoError(t, err)
		require.Equal(t, int64(30), p.Total)
		require.Equal(t, []string{"id", "name", "amount", "close_date"}, p.Columns)
		require.Len(t, p.Rows, 7)
		require.Equal(t, "d-001", p.Rows[0].SourceID)
		require.Equal(t, "amount", p.Rows[0].Failing)
		require.Equal(t, "close_date", p.Rows[2].Failing)
		require.Equal(t, []report.KindCount{{Kind: "deal", Count: 30}}, p.Kinds)
		require.Len(t, p.Classes, 2)
		require.Equal(t, int64(20), p.Classes[0].Count, "the largest class first: amounts")

		last, err := grid.Page(ctx, db, run, grid.Query{File: "deals.csv", Limit: 7, Offset: 28})
		require.NoError(t, err)
		require.Equal(t, []string{"d-029", "d-030"}, sourceIDs(last.Rows), "the last page")

		dates, err := grid.Page(ctx, db, run, grid.Query{File: "deals.csv", Class: p.Classes[1].Class})
		require.NoError(t, err)
		require.Equal(t, int64(10), dates.Total)
		require.Equal(t, "d-003", dates.Rows[0].SourceID)

		one, err := grid.Page(ctx, db, run, grid.Query{File: "deals.csv", SourceID: "d-017"})
		require.NoError(t, err)
		require.Equal(t, []string{"d-017"}, sourceIDs(one.Rows))

		found, err := grid.Page(ctx, db, run, grid.Query{File: "deals.csv", Value: "DEAL 2"})
		require.NoError(t, err)
		require.Equal(t, int64(11), found.Total, "Deal 2 and Deal 20 to 29, any case")

		col, err := grid.Page(ctx, db, run, grid.Query{File: "deals.csv", Column: "close_date", Has: "/2024"})
		require.NoError(t, err)
		require.Equal(t, int64(10), col.Total)

		byAmount, err := grid.Page(ctx, db, run, grid.Query{File: "deals.csv", Sort: grid.SortColumn, By: "amount", Limit: 3})
		require.NoError(t, err)
		require.Equal(t, []string{"d-001", "d-010", "d-011"}, sourceIDs(byAmount.Rows), "as text: 1,000.00 then 10,000.00")
		down, err := grid.Page(ctx, db, run, grid.Query{File: "deals.csv", Sort: grid.SortColumn, By: "amount", Desc: true, Limit: 1})
		require.NoError(t, err)
		require.Equal(t, []string{"d-009"}, sourceIDs(down.Rows), "9.00, the largest text")
		byReason, err := grid.Page(ctx, db, run, grid.Query{File: "deals.csv", Sort: grid.SortReason, Limit: 1})
		require.NoError(t, err)
		require.Equal(t, "amount", byReason.Rows[0].Failing)

		_, err = grid.Page(ctx, db, run, grid.Query{File: "deals.csv", Sort: grid.SortColumn})
		require.ErrorIs(t, err, grid.ErrBadQuery)
		_, err = grid.Page(ctx, db, run, grid.Query{File: "deals.csv", Limit: grid.MaxPage + 1})
		require.ErrorIs(t, err, grid.ErrBadQuery)
	})
}

func sourceIDs(rows []grid.Row) []string {
	out := []string{}
	for _, r := range rows {
		out = append(out, r.SourceID)
	}
	return out
}

// TestBulkPreviewIsWhatIsSaved: each bulk operation's preview — its count
// and examples — is what saving it writes, cell for cell (read back as
// edits), over more rows than one chunk of the pass; a date in a format no
// profile accepts is refused; an encoding changes nothing and says what
// to do. Both engines.
func TestBulkPreviewIsWhatIsSaved(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		run := failedRun(t, db, 1500)
		now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		q := grid.Query{File: "deals.csv"}
		for _, op := range []grid.Op{
			{Op: grid.OpReplace, Column: "amount", Find: ",", Replace: ""},
			{Op: grid.OpDate, Column: "close_date", Format: "DD/MM/YYYY"},
			{Op: grid.OpFill, Column: "name", Value: "Renewal", From: 0},
		} {
			preview, err := grid.Bulk(ctx, db, nil, run, q, op, now)
			require.NoError(t, err, op.Op)
			require.False(t, preview.Saved)
			require.NotZero(t, preview.Count, op.Op)
			require.Len(t, preview.Examples, grid.MaxExamples)
			saved, err := grid.Bulk(ctx, db, db, run, q, op, now)
			require.NoError(t, err, op.Op)
			require.True(t, saved.Saved)
			saved.Saved = false
			require.Equal(t, preview, saved, "%s: the preview is what the save did", op.Op)
			var n int64
			require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM record_edits WHERE migration_id = ? AND column_name = ?`, run, op.Column).Scan(&n))
			require.Equal(t, preview.Count, n, "%s: one edit per cell the preview counted", op.Op)
			for _, ex := range preview.Examples {
				edits, err := grid.Edits(ctx, db, []int64{ex.Failure})
				require.NoError(t, err)
				var got string
				for _, e := range edits[ex.Failure] {
					if e.Column == op.Column {
						got = e.Value
					}
				}
				require.Equal(t, ex.After, got, "%s of %s", op.Op, ex.SourceID)
			}
			again, err := grid.Bulk(ctx, db, nil, run, q, op, now)
			require.NoError(t, err)
			require.Zero(t, again.Count, "%s: done, nothing left to change", op.Op)
		}
		require.Equal(t, "1000.00", exampleAfter(t, db, run, "d-001", "amount"))
		require.Equal(t, "2024-04-04", exampleAfter(t, db, run, "d-003", "close_date"))

		_, err := grid.Bulk(ctx, db, nil, run, q, grid.Op{Op: grid.OpDate, Column: "close_date", Format: "QQ/YYYY"}, now)
		require.ErrorIs(t, err, grid.ErrBadQuery)
		enc, err := grid.Bulk(ctx, db, db, run, q, grid.Op{Op: grid.OpEncoding, Encoding: "windows-1252"}, now)
		require.NoError(t, err)
		require.Zero(t, enc.Count)
		require.Contains(t, enc.Instead, "cannot be decoded again as windows-1252 here, and nothing was changed")
	})
}

func exampleAfter(t *testing.T, db *sql.DB, run int64, sourceID, column string) string {
	t.Helper()
	p, err := grid.Page(context.Background(), db, run, grid.Query{File: "deals.csv", SourceID: sourceID})
	require.NoError(t, err)
	require.Len(t, p.Rows, 1)
	return p.Rows[0].Edits[column]
}

// TestEditsOutliveARestart: an edit saved is in the database — a new
// handle (a restarted server) reads it on the row, pending, and counts
// its file's rows that wait; a cell given back its value as read loses
// its edit; MarkSent takes them out of the waiting ones. Both engines.
func TestEditsOutliveARestart(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		run := failedRun(t, db, 3)
		p, err := grid.Page(ctx, db, run, grid.Query{File: "deals.csv"})
		require.NoError(t, err)
		first, second := p.Rows[0].ID, p.Rows[1].ID
		n, err := grid.SaveEdits(ctx, db, run, []fixfile.EditedRow{
			{Failure: first, Cells: []report.RawCell{{Name: "amount", Value: "1000.00"}, {Name: "name", Value: "Deal 1"}}},
			{Failure: second, Cells: []report.RawCell{{Name: "amount", Value: "2000.00"}}},
		}, time.Now())
		require.NoError(t, err)
		require.Equal(t, 3, n)
		_, err = grid.SaveEdits(ctx, db, run, []fixfile.EditedRow{{Failure: 999999, Cells: []report.RawCell{{Name: "amount", Value: "1"}}}}, time.Now())
		require.ErrorIs(t, err, grid.ErrBadQuery)

		again := storetest.Reopen(t, db)
		p, err = grid.Page(ctx, again, run, grid.Query{File: "deals.csv"})
		require.NoError(t, err)
		require.Equal(t, map[string]string{"amount": "1000.00"}, p.Rows[0].Edits, "the name given back as read has no edit")
		require.True(t, p.Rows[0].Pending)
		require.Equal(t, []grid.FileCount{{File: "deals.csv", Count: 2}}, p.Pending)
		rows, err := grid.Pending(ctx, again, run, "deals.csv")
		require.NoError(t, err)
		require.Len(t, rows, 2)
		require.NoError(t, grid.MarkSent(ctx, again, run, run, rows[:1]))
		p, err = grid.Page(ctx, again, run, grid.Query{File: "deals.csv"})
		require.NoError(t, err)
		require.False(t, p.Rows[0].Pending)
		require.Equal(t, run, p.Rows[0].FixRun)
		require.Equal(t, []grid.FileCount{{File: "deals.csv", Count: 1}}, p.Pending)
	})
}

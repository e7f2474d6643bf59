package importer

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/importer/reader/readertest"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store/storetest"
)

// TestXLSXTwinsImportAsTheirCSV: an export per built-in profile with its
// CSV files replaced by their twin workbooks (fixtures/xlsx/PROFILE, as
// Excel writes them: numeric ids, dates, formulas, an error cell, an empty
// row, a cover sheet) imports with the outcomes of the CSV export (issue
// 15 item 1): the same counts per kind, the same slots, the same rows and
// the same failures — named by the sheet's row instead of the file's line.
func TestXLSXTwinsImportAsTheirCSV(t *testing.T) {
	t.Parallel()
	root := filepath.Dir(readertest.XLSXFixtureDir(t))
	for profile, folder := range readertest.TwinFolders {
		t.Run(profile, func(t *testing.T) {
			t.Parallel()
			csvDir := filepath.Join(t.TempDir(), folder)
			require.NoError(t, os.CopyFS(csvDir, os.DirFS(filepath.Join(root, folder))))
			xlsxDir := filepath.Join(t.TempDir(), folder)
			require.NoError(t, os.CopyFS(xlsxDir, os.DirFS(filepath.Join(root, folder))))
			twins, err := filepath.Glob(filepath.Join(root, "xlsx", profile, "*.xlsx"))
			require.NoError(t, err)
			require.NotEmpty(t, twins)
			for _, tw := range twins {
				name := strings.TrimSuffix(filepath.Base(tw), ".xlsx")
				require.NoError(t, os.Remove(filepath.Join(xlsxDir, name+".csv")))
				b, err := os.ReadFile(tw)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(xlsxDir, name+".xlsx"), b, 0o600))
			}
			left, err := filepath.Glob(filepath.Join(xlsxDir, "*.csv"))
			require.NoError(t, err)
			require.Empty(t, left, "every CSV file has its twin")

			csvDB, xlsxDB := storetest.OpenDB(t), storetest.OpenDB(t)
			csvRun := importAs(t, csvDB, profile, csvDir)
			xlsxRun := importAs(t, xlsxDB, profile, xlsxDir)
			require.Equal(t, csvRun.Status, xlsxRun.Status)
			require.Equal(t, csvRun.Stats, xlsxRun.Stats)
			total := 0
			for _, c := range csvRun.Stats {
				total += int(c.Imported)
			}
			require.NotZero(t, total)
			for _, q := range twinQueries(t, csvDB) {
				require.Equal(t, sameShape(column(t, csvDB, q)), sameShape(column(t, xlsxDB, q)), q)
			}
			// Failures name the sheet's row: contacts.xlsx!contacts:5.
			for _, w := range column(t, xlsxDB, `SELECT file || ':' || line FROM record_failures WHERE file NOT LIKE '%.json'`) {
				require.Regexp(t, `^[^!]+\.xlsx![^:]+:[0-9]+$`, w)
			}
			notices := column(t, xlsxDB, `SELECT message FROM run_log WHERE message LIKE '%!Export info: not read%'`)
			require.Len(t, notices, 1, "the cover sheet of the contacts twin is said to be left unread")
			require.Contains(t, notices[0], `none of its columns ("Exported by", "Exported at", "Records", header at row 1) is one the `+profile+` profile reads for contacts`)
		})
	}
}

func importAs(t *testing.T, db *sql.DB, source, dir string) phases.Run {
	t.Helper()
	ctx := context.Background()
	imp := New(phases.New(db, nil))
	run, err := imp.Plan(ctx, RunSpec{Tenant: "acme", Source: source, Input: dir})
	require.NoError(t, err)
	run, err = imp.Execute(ctx, run.ID)
	require.NoError(t, err)
	return run
}

// twinQueries are the slots, the rows of the six target tables (every
// column but when they were imported), and the failures, each row as one
// text.
func twinQueries(t *testing.T, db *sql.DB) []string {
	qs := []string{
		`SELECT kind || '|' || source_id || '|' || action || '|' || coalesce(reason, '') || '|' || coalesce(record_id, '') || '|' || coalesce(detail, '') FROM migration_records ORDER BY kind, source_id`,
		`SELECT kind || '|' || coalesce(source_id, '') || '|' || reason FROM record_failures ORDER BY kind, source_id, reason`,
	}
	for _, table := range []string{"companies", "contacts", "deals", "notes", "activities", "emails"} {
		rows, err := db.Query(`SELECT name FROM pragma_table_info(?) WHERE name <> 'imported_at' ORDER BY cid`, table)
		require.NoError(t, err)
		var cols []string
		for rows.Next() {
			var c string
			require.NoError(t, rows.Scan(&c))
			cols = append(cols, `coalesce(quote("`+c+`"), '')`)
		}
		require.NoError(t, rows.Err())
		rows.Close()
		qs = append(qs, `SELECT `+strings.Join(cols, " || '|' || ")+` FROM `+table+` ORDER BY id`)
	}
	return qs
}

var (
	fileLine = regexp.MustCompile(`[^ "]+\.(csv|xlsx)(![^:"]+)?:[0-9]+`)
	dateTime = regexp.MustCompile(`([0-9]{4}-[0-9]{2}-[0-9]{2})[ T]([0-9]{2}:[0-9]{2})(:[0-9]{2})?`)
)

// sameShape takes out of texts what a workbook gives otherwise than its
// CSV twin: where a row is (the file's line, the sheet's row), and how a
// date-time is written ("2024-08-27 09:30" is 2024-08-27T09:30:00).
func sameShape(texts []string) []string {
	out := make([]string, len(texts))
	for i, s := range texts {
		s = fileLine.ReplaceAllString(s, "FILE:LINE")
		s = dateTime.ReplaceAllStringFunc(s, func(m string) string {
			p := dateTime.FindStringSubmatch(m)
			if p[3] == "" {
				p[3] = ":00"
			}
			return p[1] + "T" + p[2] + p[3]
		})
		out[i] = s
	}
	return out
}

// TestPipedrivePlainXLSX (issue 26 item 6): Pipedrive's list views as
// XLSX — plain headers (ID, Title, Organization ID), each file a workbook
// of one sheet, the people's with a cover sheet before it — import with
// the built-in profile as their CSV files do, naming no sheet.
func TestPipedrivePlainXLSX(t *testing.T) {
	t.Parallel()
	root := filepath.Join(filepath.Dir(readertest.XLSXFixtureDir(t)), "pipedrive-plain")
	xlsxDir := t.TempDir()
	files, err := filepath.Glob(filepath.Join(root, "*.csv"))
	require.NoError(t, err)
	require.Len(t, files, 5)
	for _, f := range files {
		text, err := os.ReadFile(f)
		require.NoError(t, err)
		name := strings.TrimSuffix(filepath.Base(f), ".csv")
		tbl, err := readertest.TableOfCSV(name, text)
		require.NoError(t, err)
		tw := readertest.Twin{}
		if strings.HasPrefix(name, "people") {
			tw.Cover = [][]string{{"Exported by", "Exported at", "Records"}, {"Pipedrive", "2026-01-15 10:00", strconv.Itoa(len(tbl.Rows) - 1)}}
		}
		require.NoError(t, readertest.TwinWorkbook(tbl, tw).WriteFile(filepath.Join(xlsxDir, name+".xlsx")))
	}
	csvDB, xlsxDB := storetest.OpenDB(t), storetest.OpenDB(t)
	csvRun, xlsxRun := importAs(t, csvDB, "pipedrive", root), importAs(t, xlsxDB, "pipedrive", xlsxDir)
	require.Equal(t, csvRun.Status, xlsxRun.Status, xlsxRun.Message)
	require.Equal(t, csvRun.Stats, xlsxRun.Stats)
	require.Equal(t, int64(4), xlsxRun.Stats[ledger.Deal].Imported)
	for _, q := range twinQueries(t, csvDB) {
		require.Equal(t, sameShape(column(t, csvDB, q)), sameShape(column(t, xlsxDB, q)), q)
	}
}

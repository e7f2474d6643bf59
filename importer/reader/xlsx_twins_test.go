package reader_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/importer/reader"
	"crmimport/importer/reader/readertest"
)

// TestXLSXTwins: every CSV fixture of a built-in profile has its twin
// workbook in fixtures/xlsx/PROFILE/ (-update writes them), and the twin
// reads back as its CSV does (issue 15 item 1): the same header, and each
// row's values as the CSV holds them — but for a date-time, which a
// workbook gives in ISO 8601 ("2024-08-27T09:30:00" for "2024-08-27
// 09:30"), and the error cell, empty in both. Rows are the sheet's rows:
// after the empty row, one past the CSV's line.
func TestXLSXTwins(t *testing.T) {
	dir := readertest.XLSXFixtureDir(t)
	twins := readertest.Twins(t)
	require.Len(t, twins, 5+7+5+13, "the CSV files of demo, hubspot, pipedrive and salesforce")
	dateTime := regexp.MustCompile(`^([0-9]{4}-[0-9]{2}-[0-9]{2})[ T]([0-9]{2}:[0-9]{2})(:[0-9]{2})?$`)
	errorCells := map[string]int{}
	for name, wb := range twins {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, wb.WriteFile(p))
			}
			got, err := os.ReadFile(p)
			require.NoError(t, err)
			require.Equal(t, xlsxParts(t, wb.Bytes(t)), xlsxParts(t, got), "run go test ./importer/reader -run TestXLSXTwins -update")

			profile, base, _ := strings.Cut(name, "/")
			csvName := strings.TrimSuffix(base, ".xlsx") + ".csv"
			text, err := os.ReadFile(filepath.Join(filepath.Dir(dir), readertest.TwinFolders[profile], csvName))
			require.NoError(t, err)
			want, err := reader.NewRowReader(bytes.NewReader(text), reader.ReadOptions{Name: csvName, Format: reader.FormatCSV})
			require.NoError(t, err)
			rr, err := reader.NewXLSXReader(bytes.NewReader(got), int64(len(got)), reader.ReadOptions{Name: base})
			require.NoError(t, err)
			require.Equal(t, want.Header(), rr.Header())
			rr.CheckHeaders(func(h []string) error {
				if h[0] == "Exported by" {
					return reader.ErrSkipSheet // the cover sheet
				}
				return nil
			})
			for n := 1; ; n++ {
				w, werr := want.Next()
				g, gerr := rr.Next()
				if errors.Is(werr, io.EOF) {
					require.ErrorIs(t, gerr, io.EOF, "row %d", n)
					break
				}
				require.NoError(t, werr)
				require.NoError(t, gerr)
				require.Nil(t, g.Err, "row %d", n)
				require.Equal(t, readertest.SheetName(csvName), g.Sheet)
				line := n + 1
				if n > 2 {
					line++ // past the empty row
				}
				require.Equal(t, line, g.Line, "the sheet's row number")
				require.Len(t, g.Cols, len(w.Cols), "row %d", n)
				for i, c := range w.Cols {
					v := c.Value
					if m := dateTime.FindStringSubmatch(v); m != nil {
						v = m[1] + "T" + m[2] + map[bool]string{true: m[3], false: ":00"}[m[3] != ""]
					}
					require.Equal(t, c.Name, g.Cols[i].Name)
					if g.Cols[i].Value == "" && v != "" {
						t.Fatalf("row %d, %s: %q read as empty", n, c.Name, v)
					}
					require.Equal(t, v, g.Cols[i].Value, "row %d, %s", n, c.Name)
				}
			}
			cover := []string{}
			if len(wb.Sheets) == 2 {
				cover = []string{"Export info"}
			}
			require.Equal(t, cover, skippedNames(rr.SkippedSheets()), "a contacts twin's cover sheet is left unread")
			if n := strings.Count(wb.Sheets[0].Rows, "<row "); n > 1 {
				require.Contains(t, wb.Sheets[0].Rows, `<f>CONCATENATE(`, "a formula with its cached value")
			}
			if strings.Contains(wb.Sheets[0].Rows, `t="e"`) {
				errorCells[profile]++ // read empty, as the CSV's empty cell
			}
		})
	}
	for profile := range readertest.TwinFolders {
		require.NotZero(t, errorCells[profile], "%s: some twin has an error cell", profile)
	}
}

func skippedNames(s []reader.SkippedSheet) []string {
	out := []string{}
	for _, x := range s {
		out = append(out, x.Name)
	}
	return out
}

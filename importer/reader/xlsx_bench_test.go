package reader_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/importer/reader"
	"crmimport/importer/reader/readertest"
)

// bigWorkbook writes a workbook of one sheet of rows rows to a file in
// dir, streamed (never held whole): an id, two names from a thousand
// each and a unique email per row as shared strings (the table Excel
// writes: rows + 2,000 strings), a date-time, an amount, a boolean and an
// inline-string note.
func bigWorkbook(tb testing.TB, dir string, rows int) string {
	tb.Helper()
	strs := func(w io.Writer) error {
		for i := range 1000 {
			if _, err := fmt.Fprintf(w, "<si><t>First%d</t></si>", i); err != nil {
				return err
			}
		}
		for i := range 1000 {
			if _, err := fmt.Fprintf(w, "<si><t>Last%d</t></si>", i); err != nil {
				return err
			}
		}
		for i := range rows {
			if _, err := fmt.Fprintf(w, "<si><t>person%d@example.com</t></si>", i); err != nil {
				return err
			}
		}
		return nil
	}
	sheet := func(w io.Writer) error {
		if _, err := io.WriteString(w, `<row r="1" spans="1:8" x14ac:dyDescent="0.25"><c r="A1" t="inlineStr"><is><t>id</t></is></c>`+
			`<c r="B1" t="inlineStr"><is><t>first_name</t></is></c><c r="C1" t="inlineStr"><is><t>last_name</t></is></c>`+
			`<c r="D1" t="inlineStr"><is><t>email</t></is></c><c r="E1" t="inlineStr"><is><t>created_at</t></is></c>`+
			`<c r="F1" t="inlineStr"><is><t>amount</t></is></c><c r="G1" t="inlineStr"><is><t>vip</t></is></c>`+
			`<c r="H1" t="inlineStr"><is><t>note</t></is></c></row>`); err != nil {
			return err
		}
		for i := range rows {
			r := i + 2
			if _, err := fmt.Fprintf(w, `<row r="%d" spans="1:8" x14ac:dyDescent="0.25"><c r="A%d"><v>%d</v></c>`+
				`<c r="B%d" t="s"><v>%d</v></c><c r="C%d" t="s"><v>%d</v></c><c r="D%d" t="s"><v>%d</v></c>`+
				`<c r="E%d" s="1"><v>%.10f</v></c><c r="F%d"><v>%d.25</v></c><c r="G%d" t="b"><v>%d</v></c>`+
				`<c r="H%d" t="inlineStr"><is><t>Called on day %d about the renewal</t></is></c></row>`,
				r, r, 20676798568+i, r, i%1000, r, 1000+i%1000, r, 2000+i, r, 45292+float64(i)/1000, r, i%100000, r, i%2, r, i); err != nil {
				return err
			}
		}
		return nil
	}
	p := filepath.Join(dir, "contacts.xlsx")
	wb := readertest.Workbook{WriteStrings: strs, CellXfs: []int{0, 22}, Sheets: []readertest.Sheet{{Name: "Contacts", WriteRows: sheet}}}
	require.NoError(tb, wb.WriteFile(p))
	return p
}

// BenchmarkReadXLSX500k reads a sheet of 500,000 rows and reports the
// peak heap in use while it reads (runtime.MemStats.HeapInuse, sampled
// every 5,000 rows), against the memory goal of 256 MiB (SPEC §4):
//
//	go test ./importer/reader -run '^$' -bench ReadXLSX500k -benchtime 1x
func BenchmarkReadXLSX500k(b *testing.B) {
	const rows = 500_000
	p := bigWorkbook(b, b.TempDir(), rows)
	st, err := os.Stat(p)
	require.NoError(b, err)
	b.ResetTimer()
	for range b.N {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base, peak := ms.HeapInuse, ms.HeapInuse
		f, err := os.Open(p)
		require.NoError(b, err)
		rr, err := reader.NewXLSXReader(f, st.Size(), reader.ReadOptions{Name: "contacts.xlsx"})
		require.NoError(b, err)
		n := 0
		for {
			row, err := rr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(b, err)
			require.Nil(b, row.Err)
			if n++; n%5000 == 0 {
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
			}
			if n == rows {
				require.Equal(b, fmt.Sprintf("person%d@example.com", rows-1), row.Cols[3].Value)
				require.Equal(b, "2025-05-14T23:58:33.6", row.Cols[4].Value)
			}
		}
		require.NoError(b, f.Close())
		require.Equal(b, rows, n)
		b.ReportMetric(float64(st.Size())/(1<<20), "file-MiB")
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		b.ReportMetric(float64(peak-base)/(1<<20), "peak-heap-growth-MiB")
		require.Less(b, peak, uint64(256<<20), "over the memory goal")
	}
}

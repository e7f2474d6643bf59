package profile

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/fixtures/gen"
	"crmimport/importer/reader"
	"crmimport/ledger"
)

// benchExport writes (once per benchmark) a clean generated export.
func benchExport(b *testing.B, contacts int) (string, gen.Expected) {
	b.Helper()
	dir := b.TempDir()
	exp, err := gen.Write(dir, gen.Config{Contacts: contacts, Seed: 1})
	require.NoError(b, err)
	return dir, exp
}

// BenchmarkReadAndMap is the reading layer alone: parse the notes file (the
// largest, with multi-line bodies), map each row and validate it.
func BenchmarkReadAndMap(b *testing.B) {
	dir, exp := benchExport(b, 5000)
	path := filepath.Join(dir, "notes.csv")
	p := Canonical()
	for b.Loop() {
		f, err := os.Open(path)
		require.NoError(b, err)
		rr, err := reader.NewRowReader(bufio.NewReaderSize(f, 1<<16), reader.ReadOptions{Name: "notes.csv", Format: reader.FormatCSV})
		require.NoError(b, err)
		m := NewMapper(p, ledger.Note, "notes.csv")
		n := 0
		for {
			row, err := rr.Next()
			if err != nil {
				break
			}
			r := m.Map(row)
			r.Validate()
			n++
		}
		f.Close()
		require.Equal(b, exp.Records["note"], n)
	}
	b.ReportMetric(float64(exp.Records["note"]*b.N)/b.Elapsed().Seconds(), "records/s")
}

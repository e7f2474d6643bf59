package input

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/importer/reader/readertest"
)

// writeZip writes a zip of one entry, stored or deflated.
func writeZip(t *testing.T, p, name string, data []byte, method uint16) {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method})
	require.NoError(t, err)
	_, err = w.Write(data)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(p, b.Bytes(), 0o600))
}

// TestOpenAtReadsAWorkbookInPlace: a workbook is read in place — a file,
// or an entry stored uncompressed in an export's zip, as a section of the
// zip's file — and only a deflated or gzipped one is held in memory, up to
// its bound, beyond which it is refused saying how to pass it (issue 15
// item 1: nothing extracted to disk).
func TestOpenAtReadsAWorkbookInPlace(t *testing.T) {
	wb, err := os.ReadFile(filepath.Join(readertest.XLSXFixtureDir(t), "contacts.xlsx"))
	require.NoError(t, err)
	dir := t.TempDir()
	plain := filepath.Join(dir, "contacts.xlsx")
	require.NoError(t, os.WriteFile(plain, wb, 0o600))
	stored, deflated := filepath.Join(dir, "stored.zip"), filepath.Join(dir, "deflated.zip")
	writeZip(t, stored, "export/contacts.xlsx", wb, zip.Store)
	writeZip(t, deflated, "export/contacts.xlsx", wb, zip.Deflate)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, err = zw.Write(wb)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	gzipped := filepath.Join(dir, "contacts.xlsx.gz")
	require.NoError(t, os.WriteFile(gzipped, gz.Bytes(), 0o600))

	for name, c := range map[string]struct {
		ref      string
		inMemory bool
	}{
		"File":     {plain, false},
		"Stored":   {stored + "!/export/contacts.xlsx", false},
		"Deflated": {deflated + "!/export/contacts.xlsx", true},
		"Gzipped":  {gzipped, true},
	} {
		in, err := OpenAt(c.ref, DefaultLimits())
		require.NoError(t, err, name)
		require.Nil(t, in.Reader, name)
		require.Equal(t, int64(len(wb)), in.Size, name)
		got, err := io.ReadAll(io.NewSectionReader(in.At, 0, in.Size))
		require.NoError(t, err, name)
		require.Equal(t, wb, got, name)
		_, isMemory := in.At.(*bytes.Reader)
		require.Equal(t, c.inMemory, isMemory, "%s: read in place unless compressed in another archive", name)
		require.NoError(t, in.Close(), name)
	}

	defer func(n int64) { maxWorkbookInMemory = n }(maxWorkbookInMemory)
	maxWorkbookInMemory = int64(len(wb)) - 1
	_, err = OpenAt(deflated+"!/export/contacts.xlsx", DefaultLimits())
	require.ErrorContains(t, err, "deflated.zip!/export/contacts.xlsx: a workbook compressed in another archive is read in memory, and this one is over")
	require.ErrorContains(t, err, "extract the zip and pass the folder, or zip the workbook again stored (zip -0)")
	_, err = OpenAt(gzipped, DefaultLimits())
	require.ErrorContains(t, err, "gunzip it and pass the .xlsx file")
	in, err := OpenAt(stored+"!/export/contacts.xlsx", DefaultLimits())
	require.NoError(t, err, "a stored entry is read in place, whatever its size")
	require.NoError(t, in.Close())
}

// TestOpenInPlaceReadsWhereTheBytesLie: a file and a zip's entry stored
// uncompressed are read at any offset (a revisit reads its records where
// they stand, issue 16 goal 1); a deflated entry or a .gz is not, and is
// left to Open's forward read.
func TestOpenInPlaceReadsWhereTheBytesLie(t *testing.T) {
	data := []byte("id,first_name\nc1,Ann\nc2,Bob\n")
	dir := t.TempDir()
	plain := filepath.Join(dir, "contacts.csv")
	require.NoError(t, os.WriteFile(plain, data, 0o600))
	stored, deflated := filepath.Join(dir, "stored.zip"), filepath.Join(dir, "deflated.zip")
	writeZip(t, stored, "export/contacts.csv", data, zip.Store)
	writeZip(t, deflated, "export/contacts.csv", data, zip.Deflate)
	gzipped := filepath.Join(dir, "contacts.csv.gz")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, err := zw.Write(data)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(gzipped, gz.Bytes(), 0o600))
	for name, c := range map[string]struct {
		ref     string
		inPlace bool
	}{
		"File":     {plain, true},
		"Stored":   {stored + "!/export/contacts.csv", true},
		"Deflated": {deflated + "!/export/contacts.csv", false},
		"Gzipped":  {gzipped, false},
	} {
		in, ok, err := OpenInPlace(c.ref, DefaultLimits())
		require.NoError(t, err, name)
		require.Equal(t, c.inPlace, ok, name)
		if !ok {
			require.Nil(t, in, name)
			continue
		}
		require.Equal(t, int64(len(data)), in.Size, name)
		b := make([]byte, 6)
		n, err := in.At.ReadAt(b, 21) // "c2,Bob"
		require.NoError(t, err, name)
		require.Equal(t, "c2,Bob", string(b[:n]), name)
		require.NoError(t, in.Close(), name)
	}
	_, _, err = OpenInPlace(filepath.Join(dir, "missing.csv"), DefaultLimits())
	require.ErrorContains(t, err, "missing.csv: cannot open")
}

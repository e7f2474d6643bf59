// Package inputtest is what the tests of the importer's packages share
// about inputs: zips written as a test needs them. Non-test code never
// imports it.
package inputtest

import (
	"archive/zip"
	"bytes"
	"hash/crc32"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// WriteZip writes a zip of the given entries (name, content; deflated, in
// order).
func WriteZip(t *testing.T, path string, entries ...[2]string) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	zw := zip.NewWriter(f)
	for _, e := range entries {
		w, err := zw.Create(e[0])
		require.NoError(t, err)
		_, err = w.Write([]byte(e[1]))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	require.NoError(t, f.Close())
}

// RawEntry is an entry of WriteRawZip.
type RawEntry struct {
	Name, Data string
	Encrypted  bool
}

// WriteRawZip writes a zip of the given entries, each as written: names
// kept exactly (backslashes, repeated names: zip.Writer refuses neither),
// and an entry marked encrypted when asked, as zip -e writes one (flag bit
// 0, a 12-byte encryption header before the data; not really encrypted
// here: crmimport refuses the entry by its flag, before reading it).
func WriteRawZip(t *testing.T, path string, entries ...RawEntry) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	zw := zip.NewWriter(f)
	for _, e := range entries {
		if !e.Encrypted {
			w, err := zw.Create(e.Name)
			require.NoError(t, err)
			_, err = w.Write([]byte(e.Data))
			require.NoError(t, err)
			continue
		}
		w, err := zw.CreateRaw(&zip.FileHeader{Name: e.Name, Method: zip.Store, Flags: 0x1,
			CRC32: crc32.ChecksumIEEE([]byte(e.Data)), CompressedSize64: uint64(12 + len(e.Data)), UncompressedSize64: uint64(len(e.Data))})
		require.NoError(t, err)
		_, err = w.Write(append(bytes.Repeat([]byte{0xA5}, 12), e.Data...))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	require.NoError(t, f.Close())
}

package fixmanifest_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/importer/fixmanifest"
)

// rows gives the rows of a file, and counts the passes over them.
func rows(passes *int, rs ...fixmanifest.Row) func(func(fixmanifest.Row) error) error {
	return func(yield func(fixmanifest.Row) error) error {
		*passes++
		for _, r := range rs {
			if err := yield(r); err != nil {
				return err
			}
		}
		return nil
	}
}

// TestWriteReadsBack: what Write streams, a pass over the rows per list,
// Read gives back whole — the kinds of a file only where it feeds several;
// a file whose rows are not as many as it says refuses the manifest.
func TestWriteReadsBack(t *testing.T) {
	t.Parallel()
	m := fixmanifest.Manifest{Format: fixmanifest.Format, Run: 7, Tenant: "acme", Source: "hubspot", Profile: "hubspot",
		Inputs: []string{"/in/export"}, Files: []fixmanifest.File{
			{Name: "contacts.csv", Kind: "contact", Rows: 2, From: []string{"/in/export/contacts.csv"}},
			{Name: "leads.csv", Kind: "contact", Rows: 1, From: []string{"/in/export/leads.csv"}, ReadAs: []string{"contact", "note"}},
		}}
	var one, two int
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	require.NoError(t, fixmanifest.Write(w, m, []fixmanifest.Rows{
		{Each: rows(&one, fixmanifest.Row{Failure: 3, SourceID: "c-1", Line: 2, Kind: "contact"}, fixmanifest.Row{Failure: 5, SourceID: "c-2", Line: 3, Kind: "contact"})},
		{Each: rows(&two, fixmanifest.Row{Failure: 9, SourceID: "l-1", Line: 2, Kind: "note"}), Several: true},
	}))
	require.NoError(t, w.Flush())
	require.Equal(t, 3, one, "failures, source ids and lines: a pass each")
	require.Equal(t, 4, two, "and the kinds, where the file feeds several")

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, fixmanifest.Name), b.Bytes(), 0o600))
	got, err := fixmanifest.Read(dir)
	require.NoError(t, err)
	want := m
	want.Files = []fixmanifest.File{
		{Name: "contacts.csv", Kind: "contact", Rows: 2, From: []string{"/in/export/contacts.csv"},
			Failures: []int64{3, 5}, IDs: []string{"c-1", "c-2"}, Lines: []int{2, 3}},
		{Name: "leads.csv", Kind: "contact", Rows: 1, From: []string{"/in/export/leads.csv"}, ReadAs: []string{"contact", "note"},
			Failures: []int64{9}, IDs: []string{"l-1"}, Lines: []int{2}, Kinds: []string{"note"}},
	}
	want.SideFiles = got.SideFiles
	require.Empty(t, got.SideFiles)
	require.Equal(t, &want, got)

	m.Files[0].Rows = 3
	err = fixmanifest.Write(bufio.NewWriter(&bytes.Buffer{}), m, []fixmanifest.Rows{
		{Each: rows(&one, fixmanifest.Row{Failure: 3, SourceID: "c-1", Line: 2})}, {Each: rows(&two)},
	})
	require.EqualError(t, err, "manifest of run 7: contacts.csv holds 3 rows, but its failed records now give 1: write the fix folder again once the run has ended")
}

// Package readertest is what the tests of the importer's packages share
// about reading: the files of fixtures/ that seed their fuzz targets (the
// hand-made exports and the bad-input corpus). Non-test code never imports
// it.
package readertest

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/importer/reader"
)

// fixtureFiles are the files of fixtures/ that seed the fuzz targets, with
// the profile each was made for ("canonical" for the canonical and
// generated ones).
func fixtureFiles(tb testing.TB) map[string]string {
	tb.Helper()
	_, self, _, ok := runtime.Caller(0)
	require.True(tb, ok)
	root := filepath.Join(filepath.Dir(self), "..", "..", "..", "fixtures")
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if _, ok := formatOf(p); !ok {
			return nil
		}
		if info, err := d.Info(); err != nil || info.Size() > 128<<10 {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		profile := "canonical"
		switch {
		case len(parts) > 2 && parts[0] == "bad":
			profile = parts[1]
		case len(parts) > 1 && parts[0] != "demo" && parts[0] != "gen":
			profile = parts[0]
		}
		out[p] = profile
		return nil
	})
	require.NoError(tb, err)
	require.NotEmpty(tb, out)
	return out
}

// formatOf is the format of a fixture file by its name, as a profile
// matches it: lower-cased, a .gz suffix left out.
func formatOf(p string) (reader.Format, bool) {
	return reader.FormatOf(strings.TrimSuffix(strings.ToLower(filepath.Base(p)), ".gz"))
}

// FixtureSeeds adds the fixture files of a format to a fuzz target, telling
// add the profile each was made for. JSON takes JSON Lines files too (add
// is told which).
func FixtureSeeds(f *testing.F, format reader.Format, add func(data []byte, profile string, ff reader.Format)) {
	for p, profile := range fixtureFiles(f) {
		ff, _ := formatOf(p)
		if ff != format && !(format == reader.FormatJSON && ff == reader.FormatJSONL) {
			continue
		}
		data, err := os.ReadFile(p)
		require.NoError(f, err)
		add(data, profile, ff)
	}
}

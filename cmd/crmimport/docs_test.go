package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/importer"
	"crmimport/store/storetest"
)

// TestREADMEAndHelpSayWhatTheCodeDoes: issue 11 item 23. The README's
// --batch-size default is the code's; the help offers the report formats
// that exist, and only those.
func TestREADMEAndHelpSayWhatTheCodeDoes(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	m := regexp.MustCompile("`--batch-size N` \\(records per committed batch; default ([0-9,]+)\\)").FindSubmatch(readme)
	require.NotNil(t, m, "the README states --batch-size's default")
	n, err := strconv.Atoi(strings.ReplaceAll(string(m[1]), ",", ""))
	require.NoError(t, err)
	require.Equal(t, importer.DefaultBatchSize, n, "the README's default is the code's")

	help := crm(t, nil, "run", "--help")
	require.Equal(t, exitOK, help.code)
	require.Contains(t, help.stdout, "(default: "+strconv.Itoa(importer.DefaultBatchSize)+")")

	help = crm(t, nil, "report", "--help")
	require.Equal(t, exitOK, help.code)
	require.Contains(t, help.stdout, "text, json or html", "the help offers the formats that exist")
	r := crm(t, nil, "--db", filepath.Join(t.TempDir(), "crm.db"), "report", "1", "--format", "pdf")
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Contains(t, strings.ToLower(r.stderr), "use text, json or html")
}

// TestEmptyPathIsAUsageError: issue 11 item 11. An empty PATH ("$EXPORT"
// unset) is a usage error (exit 2) naming what is wrong, not an import of
// the current folder; nothing is planned.
func TestEmptyPathIsAUsageError(t *testing.T) {
	t.Parallel()
	dir := writeExport(t, map[string]string{"companies.csv": storyCompanies})
	for name, paths := range map[string][]string{"Empty": {""}, "Blank": {"  "}, "SecondEmpty": {dir, ""}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			storetest.RunAddress(t, func(t *testing.T, path string) {
				args := append([]string{"--db", path, "run", "--tenant", "acme", "--source", "canonical"}, paths...)
				r := crm(t, nil, args...)
				require.Equal(t, exitUsage, r.code, r.stderr)
				require.Contains(t, r.stderr, "PATH is empty")
				_, err := os.Stat(path)
				require.ErrorIs(t, err, os.ErrNotExist, "no database made, no run planned")
			})
		})
	}
}

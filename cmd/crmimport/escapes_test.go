package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/visible"
)

// The hostile text of fixtures/dumps/terminal-escapes, as stored.
const (
	escTenant  = "acme\x1b]0;pwned\x07\u202e"
	escSource  = "canonical\x1b[2J"
	escMessage = "\x1b[2J\x1b[Hall good \u2066txt.exe\u2069 \u009b31mred\x7f"
	escError   = "contacts.csv: \x1b]8;;https://evil.example/\x07click here\x1b]8;;\x07 \u202eredro"
	escContact = "c-\x1b[31m1"
	escNote    = "n-\u202e1\x7f"
)

// requireVisible: s holds no character a terminal would act on (C0 but
// newline and tab, DEL, C1, bidi controls, bytes that are not UTF-8), and
// holds each of want, written visibly.
func requireVisible(t *testing.T, s string, want ...string) {
	t.Helper()
	require.Equal(t, visible.String(s), s, "a control character reaches the terminal raw:\n%q", s)
	for _, w := range want {
		require.Contains(t, s, visible.String(w), "%q", s)
	}
}

// TestTerminalSeesNoControlCharacters: a dump whose tenant, source, run
// message, task error and source ids hold terminal escapes, C1 and bidi
// controls and DEL (issue 11 item 13) — every command's human text shows
// them as visible escapes, never raw, on stdout and stderr alike, and in
// the text report written with --out; the JSON documents carry the very
// values, with no raw control character either; the database keeps them as
// they are.
func TestTerminalSeesNoControlCharacters(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "crm.db")
	dumpDir := filepath.Join(dumps, "terminal-escapes")

	human := func(name string, args []string, code int, want ...string) {
		t.Run(name, func(t *testing.T) {
			r := crm(t, nil, append([]string{"--db", path}, args...)...)
			require.Equal(t, code, r.code, r.stderr)
			requireVisible(t, r.stderr)
			requireVisible(t, r.stdout, want...)
		})
	}
	human("LedgerLoad", []string{"ledger", "load", dumpDir}, exitOK, escTenant)
	human("Runs", []string{"runs"}, exitOK, escTenant, escSource)
	human("Report", []string{"report", "1"}, exitOK, escTenant, escSource, escMessage, escError)
	human("Doctor", []string{"doctor"}, exitFindings, escTenant, escSource, escNote)
	human("LedgerWhy", []string{"ledger", "why", "--tenant", escTenant}, exitOK, escTenant, escSource)
	human("LedgerWhySourceID", []string{"ledger", "why", "--tenant", escTenant, "--kind", "notes", "--source-id", escNote},
		exitOK, escTenant, escSource, escNote, escContact)
	human("LedgerWhyContact", []string{"ledger", "why", "--tenant", escTenant, "--source-id", escContact},
		exitOK, escContact)

	t.Run("ReportOut", func(t *testing.T) {
		out := filepath.Join(dir, "report-1.txt")
		r := crm(t, nil, "--db", path, "report", "1", "--out", out)
		require.Equal(t, exitOK, r.code, r.stderr)
		b, err := os.ReadFile(out)
		require.NoError(t, err)
		requireVisible(t, string(b), escTenant, escMessage, escError)
	})

	t.Run("Errors", func(t *testing.T) {
		// An error naming what the user typed: the message is human text.
		r := crm(t, nil, "--db", path, "run", "--tenant", escTenant, "--source", "canonical", filepath.Join(dir, "no such\x1b[2J"))
		require.Equal(t, exitError, r.code)
		requireVisible(t, r.stderr, "no such\x1b[2J")
		r = crm(t, nil, "--db", path, "--json", "run", "--tenant", escTenant, "--source", "canonical", filepath.Join(dir, "no such\u202e"))
		require.Equal(t, exitError, r.code)
		requireVisible(t, r.stdout)
		var doc struct{ Error string }
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc))
		require.Contains(t, doc.Error, "no such\u202e", "the JSON error keeps the value")
	})

	t.Run("JSONKeepsTheValues", func(t *testing.T) {
		r := crm(t, nil, "--db", path, "--json", "runs")
		require.Equal(t, exitOK, r.code, r.stderr)
		requireVisible(t, r.stdout)
		var runs struct {
			Runs []struct{ Tenant, Source string } `json:"runs"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &runs))
		require.Len(t, runs.Runs, 2)
		require.Equal(t, escTenant, runs.Runs[0].Tenant)
		require.Equal(t, escSource, runs.Runs[0].Source)

		for _, args := range [][]string{{"report", "1", "--format", "json"}, {"--json", "report", "1"}} {
			r = crm(t, nil, append([]string{"--db", path}, args...)...)
			require.Equal(t, exitOK, r.code, r.stderr)
			requireVisible(t, r.stdout)
			var full struct {
				Tenant string
				Tasks  []struct {
					LastError string `json:"last_error"`
				}
			}
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &full))
			require.Equal(t, escTenant, full.Tenant)
			require.Equal(t, escError, full.Tasks[0].LastError)
		}

		r = crm(t, nil, "--db", path, "--json", "doctor")
		require.Equal(t, exitFindings, r.code)
		requireVisible(t, r.stdout)
		d, _ := doctorJSON(t, path)
		require.Equal(t, []string{"note " + escNote}, d.Findings[0].Examples)
	})

	require.Equal(t, []string{escTenant + "|" + escMessage}, query(t, path, `SELECT tenant_id, message FROM migrations WHERE id = 1`),
		"the database keeps the values as they are")
}

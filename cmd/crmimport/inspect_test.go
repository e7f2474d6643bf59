package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/importer"
	"crmimport/store/storetest"
)

// requireNoDatabase: inspect made no file where the database would be.
func requireNoDatabase(t *testing.T, path string) {
	t.Helper()
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		_, err := os.Stat(p)
		require.ErrorIs(t, err, os.ErrNotExist, "inspect made %s", p)
	}
}

// TestInspectCommand: issue 13 item 4. inspect shows the plan, each file's
// columns and first rows, and the problems, as text and as one JSON
// document; flags stand before or after PATH; it opens no database, by
// --db or by $CRMIMPORT_DB, and makes none.
func TestInspectCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "crm.db")
	envPath := filepath.Join(dir, "env.db")
	env := map[string]string{"CRMIMPORT_DB": envPath}

	r := crm(t, env, "inspect", "--source", "canonical", demo)
	require.Equal(t, exitOK, r.code, r.stderr)
	for _, want := range []string{
		"inspect · source canonical · profile canonical · 6 tasks planned · nothing written",
		"Plan:\n  phase  kind        file            format  encoding  size      fingerprint\n  1      companies   companies.csv   csv",
		"Left out:\n  README.md      not a file of the canonical profile",
		"\ncontacts.csv — contacts, phase 2\n  read as: csv, delimiter \",\"",
		"  encoding: utf-8 — it is valid UTF-8\n",
		"  link: company_id → companies\n",
		"    company_id    → company_id  link → companies\n",
		"    linkedin_url  → extra\n",
		"  First 5 rows, as they would be mapped:\n    line 2 · \"con-001\" · valid\n      first_name \"Hannah\" · last_name \"Okafor\"",
		"      extra: \"linkedin_url\" \"https://www.linkedin.example/in/hannah-okafor\"\n",
		"\nProblems: none — a run would start, and every task would open its file.\n",
	} {
		require.Contains(t, r.stdout, want)
	}
	for _, line := range strings.Split(r.stdout, "\n") {
		require.Equal(t, strings.TrimRight(line, " "), line, "no trailing blanks")
	}
	requireNoDatabase(t, envPath)

	r = crm(t, env, "--db", path, "inspect", demo, "--json", "--source", "canonical", "--rows", "2")
	require.Equal(t, exitOK, r.code, r.stderr)
	var ins importer.Inspection
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &ins), r.stdout)
	require.Len(t, ins.Files, 6)
	require.Equal(t, "companies.csv", ins.Files[0].Name)
	require.Len(t, ins.Files[0].Rows, 2, "--rows")
	require.Empty(t, ins.Problems)
	requireNoDatabase(t, path)
	requireNoDatabase(t, envPath)

	r = crm(t, nil, "--db", path, "inspect", "--source", "canonical", "--only", "notes", demo)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "1 task planned")
	require.Contains(t, r.stdout, "only: note\n")
	require.Contains(t, r.stdout, "  contacts.csv    a contact file: --only does not ask for contacts\n")
	requireNoDatabase(t, path)
}

// TestInspectExitCodes: 0 when a run would start and every file opens; 3
// when a file's task would fail (the run would end partial or failed),
// with the inspection written all the same; 1 when the run would be
// refused, as run exits; 2 for a usage error. No database either way.
func TestInspectExitCodes(t *testing.T) {
	t.Parallel()
	problem := writeExport(t, map[string]string{"companies.csv": storyCompanies, "contacts.csv": "name,email\nAnn,ann@acme.example\n"})
	storetest.RunAddress(t, func(t *testing.T, path string) {
		r := crm(t, nil, "--db", path, "inspect", "--source", "canonical", problem)
		require.Equal(t, exitProblems, r.code, r.stderr)
		require.Equal(t, 3, exitProblems)
		require.Contains(t, r.stdout, "  PROBLEM: its task would fail: contacts.csv:1: no id column")
		require.Contains(t, r.stdout, "\nProblems: 1 task would fail (the run would end partial or failed; exit 3):\n"+
			`  - contacts.csv (contacts): contacts.csv:1: no id column: the header has 2 columns ("name", "email") and none of them is "id"`)
		require.Contains(t, r.stdout, "line 2 · \"co-1\" · valid", "the other file inspected")
		require.Empty(t, r.stderr)

		r = crm(t, nil, "--db", path, "--json", "inspect", "--source", "canonical", problem)
		require.Equal(t, exitProblems, r.code, r.stderr)
		var ins importer.Inspection
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &ins), r.stdout)
		require.Len(t, ins.Problems, 1)
		require.Equal(t, "contacts.csv", ins.Problems[0].File)

		for _, c := range []struct {
			name string
			args []string
			code int
			want string
		}{
			{"NoSuchPath", []string{"--source", "canonical", filepath.Join(problem, "nope")}, exitError, "nope: no such file or folder"},
			{"NoFileMatches", []string{"--source", "canonical", t.TempDir()}, exitError, "no file matches a kind of the canonical profile"},
			{"UnknownProfile", []string{"--source", "zoho", problem}, exitUsage, `unknown profile "zoho"`},
			{"NoSource", []string{problem}, exitUsage, "inspect needs --source"},
			{"NoPath", []string{"--source", "canonical"}, exitUsage, "inspect takes one PATH"},
			{"EmptyPath", []string{"--source", "canonical", " "}, exitUsage, "inspect: PATH is empty"},
			{"UnknownKind", []string{"--source", "canonical", "--only", "tickets", problem}, exitUsage, "--only: "},
			{"NoRows", []string{"--source", "canonical", "--rows", "0", problem}, exitUsage, "--rows must be between 1 and 1000, got 0"},
		} {
			t.Run(c.name, func(t *testing.T) {
				r := crm(t, nil, append([]string{"--db", path, "--json", "inspect"}, c.args...)...)
				require.Equal(t, c.code, r.code, r.stderr)
				require.Contains(t, r.stderr, c.want)
				var doc map[string]any
				require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), r.stdout)
				require.Contains(t, doc["error"], c.want)
				require.Equal(t, float64(c.code), doc["exit_code"])
				if c.name == "NoSuchPath" || c.name == "NoFileMatches" {
					run := crm(t, nil, "--db", filepath.Join(t.TempDir(), "run.db"), "run", "--tenant", "acme", c.args[0], c.args[1], c.args[2])
					require.Equal(t, c.code, run.code, "the exit code run gives")
				}
			})
		}
		requireNoDatabase(t, path)
	})
}

// TestInspectEscapesText: a column name and a value holding terminal
// escapes show as visible escapes in the text, and as they are in the JSON
// document (which escapes them the JSON way).
func TestInspectEscapesText(t *testing.T) {
	t.Parallel()
	const name, value = "Lead\x1b]0;pwned\x07Source", "Web\x1b[2J\u202e"
	dir := writeExport(t, map[string]string{"companies.csv": "id,name," + name + "\nco-1,Acme," + value + "\n"})
	r := crm(t, nil, "inspect", "--source", "canonical", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	requireVisible(t, r.stdout, name)
	require.Contains(t, r.stdout, `Lead\x1b]0;pwned\x07Source  → extra`)
	require.NotContains(t, r.stdout, "\x1b")

	r = crm(t, nil, "--json", "inspect", "--source", "canonical", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.NotContains(t, r.stdout, "\x1b")
	var ins importer.Inspection
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &ins))
	require.Equal(t, name, ins.Files[0].Columns[2].Name, "the JSON keeps the name as it is")
	require.Equal(t, value, ins.Files[0].Rows[0].Extra[name])
}

// TestInspectHelp: the help says what inspect does, its exit codes, and
// shows examples; the command list names it.
func TestInspectHelp(t *testing.T) {
	t.Parallel()
	r := crm(t, nil, "inspect", "--help")
	require.Equal(t, exitOK, r.code, r.stderr)
	for _, want := range []string{"no database (--db is not read, nor made)", "Exit code 0 when a run would start and every file opens; 3 when a run would",
		"start but a file's task would fail (as a partial run); 1 when the run would",
		"crmimport inspect --source canonical ./export", "--rows value"} {
		require.Contains(t, r.stdout, want)
	}
	r = crm(t, nil, "--help")
	require.Contains(t, r.stdout, "inspect")
}

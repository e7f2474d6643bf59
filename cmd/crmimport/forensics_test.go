package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const dumps = "../../fixtures/dumps"

// diagnosis is doctor's JSON document.
type diagnosis struct {
	Clean    bool `json:"clean"`
	Findings []struct {
		Name     string   `json:"name"`
		Rule     string   `json:"rule"`
		Count    int64    `json:"count"`
		Examples []string `json:"examples"`
		Repair   []string `json:"repair"`
	} `json:"findings"`
	Incidents []struct {
		Name string `json:"name"`
	} `json:"incidents"`
}

func (d diagnosis) names() []string {
	var out []string
	for _, f := range d.Findings {
		out = append(out, f.Name)
	}
	return out
}

func doctorJSON(t *testing.T, path string) (diagnosis, result) {
	t.Helper()
	r := crm(t, nil, "--db", path, "--json", "doctor")
	var d diagnosis
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &d), r.stdout+r.stderr)
	return d, r
}

// suggested is the command a repair suggests, with PATH given: the words
// before its explanation, without the leading "crmimport".
func suggested(t *testing.T, repair, path string) []string {
	t.Helper()
	if i := strings.Index(repair, "crmimport "); i > 0 {
		repair = repair[i:] // "once their parents are imported: crmimport run …"
	}
	cmd, _, _ := strings.Cut(repair, "   (")
	words := strings.Fields(cmd)
	require.Equal(t, "crmimport", words[0], repair)
	for i, w := range words {
		if w == "PATH" {
			words[i] = path
		}
	}
	return words[1:]
}

// TestIncidentsEndToEnd: from the dump of each incident of write-up 000,
// doctor names the incident (exit 3); the command it suggests, run against
// a small export of the records production left behind, leaves doctor clean
// (exit 0).
func TestIncidentsEndToEnd(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		dump     string
		findings []string
		incident string
		repairOf string // the finding whose repair is run
	}{
		{"poisoned-ledger", []string{"uniform-skip", "stale-skips", "ready-to-take-over"}, "poisoned-ledger", "ready-to-take-over"},
		{"stranded-retry", []string{"stranded-work", "false-success"}, "stranded-retry", "false-success"},
	} {
		t.Run(tc.dump, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "crm.db")
			dumpDir := filepath.Join(dumps, tc.dump)
			r := crm(t, nil, "--db", path, "ledger", "load", dumpDir)
			require.Equal(t, exitOK, r.code, r.stderr)
			require.Contains(t, r.stdout, "placeholders:")

			r = crm(t, nil, "--db", path, "doctor")
			require.Equal(t, exitFindings, r.code, r.stderr)
			require.Contains(t, r.stdout, "incident "+tc.incident)
			d, r := doctorJSON(t, path)
			require.Equal(t, exitFindings, r.code)
			require.False(t, d.Clean)
			require.Equal(t, tc.findings, d.names())
			require.Len(t, d.Incidents, 1)
			require.Equal(t, tc.incident, d.Incidents[0].Name)

			var repair string
			for _, f := range d.Findings {
				if f.Name == tc.repairOf {
					require.Len(t, f.Repair, 1)
					repair = f.Repair[0]
				}
			}
			args := suggested(t, repair, filepath.Join(dumpDir, "export"))
			r = crm(t, nil, append([]string{"--db", path, "--json"}, args...)...)
			require.Equal(t, exitOK, r.code, "%s: %s", strings.Join(args, " "), r.stderr)
			require.Equal(t, "succeeded", r.summary(t).Status)

			d, r = doctorJSON(t, path)
			require.Equal(t, exitOK, r.code, r.stdout)
			require.True(t, d.Clean)
			require.Empty(t, d.Findings)
			r = crm(t, nil, "--db", path, "doctor")
			require.Equal(t, exitOK, r.code)
			require.Contains(t, r.stdout, "nothing found")
		})
	}
}

// TestForensicsCommandsTakeFlagsInAnyOrder: flags before or after the
// arguments, global flags after the command, one JSON document on stdout
// (SPEC §5), for ledger load and why, doctor, rejects and resume --from.
func TestForensicsCommandsTakeFlagsInAnyOrder(t *testing.T) {
	t.Parallel()
	dumpDir := filepath.Join(dumps, "stranded-retry")
	export := filepath.Join(dumpDir, "export")
	var loads []string
	for i, args := range [][]string{
		{"--json", "ledger", "load", dumpDir},
		{"ledger", "load", dumpDir, "--json"},
		{"ledger", "--json", "load", dumpDir},
	} {
		path := filepath.Join(t.TempDir(), "crm.db")
		r := crm(t, nil, append([]string{"--db", path}, args...)...)
		require.Equal(t, exitOK, r.code, "%d: %s", i, r.stderr)
		var doc map[string]any
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), r.stdout)
		loads = append(loads, r.stdout)
		require.Equal(t, []any{float64(1)}, doc["runs"])
	}
	require.Equal(t, loads[0], loads[1])
	require.Equal(t, loads[0], loads[2])

	path := filepath.Join(t.TempDir(), "crm.db")
	require.Equal(t, exitOK, crm(t, nil, "--db", path, "ledger", "load", dumpDir).code)
	same := func(a, b []string) string {
		ra := crm(t, nil, append([]string{"--db", path}, a...)...)
		rb := crm(t, nil, append([]string{"--db", path}, b...)...)
		require.Equal(t, ra.code, rb.code, "%v: %s / %v: %s", a, ra.stderr, b, rb.stderr)
		require.Equal(t, ra.stdout, rb.stdout)
		return ra.stdout
	}
	out := same([]string{"ledger", "why", "--tenant", "globex", "--kind", "deals", "--json"},
		[]string{"--json", "ledger", "why", "--kind", "deal", "--tenant", "globex"})
	var g struct {
		Total int64 `json:"total"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &g))
	require.Equal(t, int64(3), g.Total)
	same([]string{"ledger", "why", "--source-id", "d-1", "--tenant", "globex"}, []string{"ledger", "why", "--tenant", "globex", "--source-id", "d-1"})
	out = same([]string{"doctor", "--tenant", "globex", "--json"}, []string{"--json", "doctor", "--tenant=globex"})
	require.Contains(t, out, `"stranded-work"`)
	same([]string{"rejects", "1"}, []string{"rejects", "--", "1"})

	r := crm(t, nil, "--db", path, "resume", "--from", export, "1", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Equal(t, "succeeded", r.summary(t).Status)
	require.Contains(t, r.stderr, "run 1 resumed: 1 tasks planned over")
	other := filepath.Join(t.TempDir(), "crm.db")
	require.Equal(t, exitOK, crm(t, nil, "--db", other, "ledger", "load", dumpDir).code)
	r = crm(t, nil, "resume", "1", "--from", export, "--db", other)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Equal(t, dump(t, path, "globex"), dump(t, other, "globex"))
}

// TestForensicsUsageErrors: command lines that cannot be right exit 2,
// with one JSON document under --json.
func TestForensicsUsageErrors(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "crm.db")
	for _, args := range [][]string{
		{"ledger"},
		{"ledger", "frob"},
		{"ledger", "load"},
		{"ledger", "load", "a", "b"},
		{"ledger", "why"},
		{"ledger", "why", "--tenant", "acme", "extra"},
		{"ledger", "why", "--tenant", "acme", "--kind", "leads"},
		{"ledger", "why", "--tenant", "acme", "--run", "1", "--source-id", "n-1"},
		{"ledger", "why", "--tenant", "acme", "--nope"},
		{"doctor", "extra"},
		{"doctor", "--nope"},
		{"rejects"},
		{"rejects", "x"},
		{"resume", "1", "--from"},
		{"resume", "1", "--from="},
	} {
		r := crm(t, nil, append([]string{"--db", path, "--json"}, args...)...)
		require.Equal(t, exitUsage, r.code, "%v: %s", args, r.stderr)
		var doc map[string]any
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), "%v: %s", args, r.stdout)
		require.NotEmpty(t, doc["error"])
	}
}

// TestLoadedRunsAreNeverResumedByAccident: a plain resume of a loaded run
// refuses and says how to use --from (exit 2); --from on a run planned
// here refuses too; loading the same dump twice is refused, naming the ids.
func TestLoadedRunsAreNeverResumedByAccident(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "crm.db")
	require.Equal(t, exitOK, crm(t, nil, "--db", path, "ledger", "load", filepath.Join(dumps, "unfinalized")).code)
	r := crm(t, nil, "--db", path, "runs")
	require.Equal(t, exitOK, r.code)
	require.Contains(t, r.stdout, "interrupted", "a dump's running run has no owner here")
	r = crm(t, nil, "--db", path, "--json", "resume", "2")
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, "run 2 was loaded from a dump")
	require.Contains(t, r.stderr, "`crmimport resume 2 --from PATH`")
	require.Contains(t, r.stdout, `"error"`)
	require.Equal(t, []string{"running"}, query(t, path, `SELECT status FROM migrations WHERE id = 2`))

	r = crm(t, nil, "--db", path, "ledger", "load", filepath.Join(dumps, "unfinalized"))
	require.Equal(t, exitError, r.code)
	require.Contains(t, r.stderr, "refused, nothing was loaded: the database already holds runs 1–2; tasks 1–3")

	local := filepath.Join(t.TempDir(), "local.db")
	r = crm(t, nil, "--db", local, "run", "--tenant", "demo", "--source", "canonical", "--only", "companies", demo)
	require.Equal(t, exitPartial, r.code, r.stderr)
	r = crm(t, nil, "--db", local, "resume", "1", "--from", demo)
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, "run 1 was planned here and reads its own files")
}

// TestResumeFromPhasesTasksByKind: a dump whose contacts task sits in
// phase 1 beside the companies (task 1, so it would run first). ledger
// load warns of it, in text and in --json; doctor names it
// (misphased-tasks); the resume --from it suggests re-arms the contacts in
// phase 2, their kind's (R7), says so in the run log, and every contact's
// company link is set: none is lost for good behind a created slot.
// doctor is clean after.
func TestResumeFromPhasesTasksByKind(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "crm.db")
	dumpDir := filepath.Join(dumps, "misphased-tasks")
	r := crm(t, nil, "--db", path, "--json", "ledger", "load", dumpDir)
	require.Equal(t, exitOK, r.code, r.stderr)
	var sum struct {
		Warnings []string `json:"warnings"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &sum), r.stdout)
	require.Len(t, sum.Warnings, 1)
	require.Contains(t, sum.Warnings[0], "1 task is in another phase than its kind's in crmimport's plan")
	require.Contains(t, sum.Warnings[0], "task 1 of run 1 (contacts) in phase 1 instead of 2")
	text := crm(t, nil, "--db", filepath.Join(t.TempDir(), "text.db"), "ledger", "load", dumpDir)
	require.Equal(t, exitOK, text.code, text.stderr)
	require.Contains(t, text.stdout, "  warning: 1 task is in another phase than its kind's")

	d, r := doctorJSON(t, path)
	require.Equal(t, exitFindings, r.code, r.stderr)
	require.Equal(t, []string{"misphased-tasks"}, d.names())
	f := d.Findings[0]
	require.Equal(t, "R7", f.Rule)
	require.Equal(t, int64(1), f.Count)
	require.Equal(t, []string{"task 1"}, f.Examples)
	require.Len(t, f.Repair, 1)
	args := suggested(t, f.Repair[0], filepath.Join(dumpDir, "export"))
	require.Equal(t, []string{"resume", "1", "--from", filepath.Join(dumpDir, "export")}, args)

	r = crm(t, nil, append([]string{"--db", path, "--json"}, args...)...)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Equal(t, "succeeded", r.summary(t).Status)
	require.Equal(t, []string{"c-1 co-1", "c-2 co-2", "c-3 co-2"}, query(t, path, `SELECT s.source_id || ' ' || coalesce(p.source_id, 'unlinked')
		FROM contacts c JOIN migration_records s ON s.kind = 'contact' AND s.record_id = c.id
		LEFT JOIN migration_records p ON p.kind = 'company' AND p.record_id = c.company_id ORDER BY s.source_id`),
		"R6, R7: the companies imported before the contacts that link to them")
	require.Contains(t, r.stderr, "task 1 (contacts): phase 1 in the dump, phase 2 by its kind")
	require.Equal(t, []string{"1 contact 2", "2 company 1"}, query(t, path, `SELECT id || ' ' || kind || ' ' || phase FROM migration_tasks ORDER BY id`))
	require.Equal(t, []string{"1 warning"}, query(t, path, `SELECT count(*) || ' ' || level FROM run_log
		WHERE message LIKE '%phase 1 in the dump, phase 2 by its kind%'`), "the run log keeps the dump's phase beside the new one")

	d, r = doctorJSON(t, path)
	require.Equal(t, exitOK, r.code, r.stdout)
	require.True(t, d.Clean)
}

// TestRejectsCommand: the failed records of the demo run, to stdout or to
// a file, and in one JSON document under --json.
func TestRejectsCommand(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "crm.db")
	r := crm(t, nil, "--db", path, "run", "--tenant", "demo", "--source", "canonical", demo)
	require.Equal(t, exitPartial, r.code, r.stderr)
	failed := query(t, path, `SELECT count(*) FROM record_failures WHERE migration_id = 1`)[0]

	r = crm(t, nil, "--db", path, "rejects", "1")
	require.Equal(t, exitOK, r.code, r.stderr)
	recs, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	require.NoError(t, err)
	require.Equal(t, []string{"run", "kind", "source_id", "file", "line", "reason"}, recs[0][:6])
	require.Contains(t, recs[0], "linkedin_url", "the raw rows' own columns follow")
	require.Equal(t, failed, strings.TrimSpace(itoa(len(recs)-1)))

	out := filepath.Join(t.TempDir(), "rejects.csv")
	r = crm(t, nil, "--db", path, "rejects", "--out", out, "1")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "failed records of run 1 written to "+out)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	st, err := os.Stat(out)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "it holds customer data")
	r = crm(t, nil, "--db", path, "--json", "rejects", "1")
	require.Equal(t, exitOK, r.code)
	var doc struct {
		Run    int64  `json:"run"`
		Failed int    `json:"failed"`
		CSV    string `json:"csv"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc))
	require.Equal(t, string(b), doc.CSV)
	require.Equal(t, len(recs)-1, doc.Failed)

	r = crm(t, nil, "--db", path, "rejects", "9")
	require.Equal(t, exitError, r.code)
	require.Contains(t, r.stderr, "run 9: no such run")
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestForensicsHelp: each command's help, with its examples; a command with
// subcommands lists them, whichever side of the command --help stands on.
func TestForensicsHelp(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"ledger", "--help"}, []string{"COMMANDS:", "load  load a production dump", "why   the ledger grouped", "Examples:"}},
		{[]string{"--help", "ledger"}, []string{"COMMANDS:", "load  load a production dump"}},
		{[]string{"ledger", "why", "--help"}, []string{"crmimport ledger why -", "--source-id", "Examples:"}},
		{[]string{"ledger", "load", "-h"}, []string{"crmimport ledger load -", `\copy (SELECT * FROM migrations`, "Examples:"}},
		{[]string{"doctor", "--help"}, []string{"uniform-skip", "orphan-slots", "Exit code 0 when it finds nothing, 3", "Examples:"}},
		{[]string{"rejects", "--help"}, []string{"leading '", "Examples:"}},
		{[]string{"resume", "--help"}, []string{"--from", "loaded from a dump"}},
		{[]string{"--help"}, []string{"ledger load ./dump", "doctor"}},
	} {
		r := crm(t, nil, tc.args...)
		require.Equal(t, exitOK, r.code, "%v: %s", tc.args, r.stderr)
		for _, w := range tc.want {
			require.Contains(t, r.stdout, w, "%v", tc.args)
		}
	}
}

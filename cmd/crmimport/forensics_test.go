package main

import (
	"encoding/csv"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/store"
	"crmimport/store/storetest"
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

// fakeProgram is crmimport, sqlite3 and psql for a shell that pastes a repair:
// each records its name and arguments (NUL-separated, after their count)
// in $CRMIMPORT_TEST_RECORD and does nothing else.
const fakeProgram = `#!/bin/sh
{ printf '%s\0' "${0##*/}" "$#"; [ "$#" -gt 0 ] && printf '%s\0' "$@"; } >> "$CRMIMPORT_TEST_RECORD"
`

// pasted runs a repair line of doctor's through a real POSIX shell, as a
// user pasting it would — with its word PATH replaced by path, quoted, and
// its comment kept — in a folder of its own, with crmimport, sqlite3 and
// psql that only record their arguments. It returns what each program was given
// (name first), and fails if the line made any file appear (a $(touch X)
// that ran).
func pasted(t *testing.T, line, path string) [][]string {
	t.Helper()
	bin, cwd := t.TempDir(), t.TempDir()
	for _, name := range []string{"crmimport", "sqlite3", "psql"} {
		require.NoError(t, os.WriteFile(filepath.Join(bin, name), []byte(fakeProgram), 0o700))
	}
	record := filepath.Join(bin, "record")
	cmd, note, _ := strings.Cut(line, "   # ")
	if p, ok := strings.CutSuffix(cmd, " PATH"); ok {
		cmd = p + " '" + strings.ReplaceAll(path, "'", `'\''`) + "'"
	}
	sh := exec.Command("sh", "-c", cmd+"   # "+note)
	sh.Dir = cwd
	sh.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "CRMIMPORT_TEST_RECORD="+record)
	out, err := sh.CombinedOutput()
	require.NoError(t, err, "%s\n%s", line, out)
	require.Empty(t, string(out), line)
	left, err := os.ReadDir(cwd)
	require.NoError(t, err)
	require.Empty(t, left, "pasting %s made files appear", line)
	b, err := os.ReadFile(record)
	require.NoError(t, err, "%s ran no program", line)
	fields := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
	var calls [][]string
	for len(fields) >= 2 {
		n, err := strconv.Atoi(fields[1])
		require.NoError(t, err)
		calls = append(calls, append([]string{fields[0]}, fields[2:2+n]...))
		fields = fields[2+n:]
	}
	require.Empty(t, fields)
	return calls
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
			storetest.RunAddress(t, func(t *testing.T, path string) {
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
				export, err := filepath.Abs(filepath.Join(dumpDir, "export"))
				require.NoError(t, err)
				calls := pasted(t, repair, export)
				require.Len(t, calls, 1, repair)
				require.Equal(t, []string{"crmimport", "--db", path}, calls[0][:3], "the repair names the database doctor read")
				r = crm(t, nil, append(calls[0][1:], "--json")...)
				require.Equal(t, exitOK, r.code, "%s: %s", repair, r.stderr)
				require.Equal(t, "succeeded", r.summary(t).Status)

				d, r = doctorJSON(t, path)
				require.Equal(t, exitOK, r.code, r.stdout)
				require.True(t, d.Clean)
				require.Empty(t, d.Findings)
				r = crm(t, nil, "--db", path, "doctor")
				require.Equal(t, exitOK, r.code)
				require.Contains(t, r.stdout, "nothing found")
			})
		})
	}
}

// The hostile names of fixtures/dumps/shell-quotes.
const (
	quoteTenant = `it's "Acme" $(touch X) ` + "`touch X`" + ` & co`
	quoteSource = `crm "one" 's' $(touch X)`
	quoteOrphan = "c-`touch X`-2 it's"
	quoteDBDir  = `it's "db" $(touch X) ` + "`touch X`" + ` dir`
)

// TestDoctorRepairsArePastable (issue 11 item 14): on a database in a
// folder (on PostgreSQL, at an address) whose name, and a ledger whose tenant,
// source and ids, hold ', ", $(…), backticks and spaces, every repair
// doctor prints — and the load
// summary's next commands — pasted into a real POSIX shell, runs exactly
// the program and arguments meant and nothing else (no file X appears);
// run in that order they do what doctor says: the orphan's slot is freed
// and imported again, the interrupted run is cancelled, the skipped note
// is taken over, and doctor is left with the finding that needs a person.
func TestDoctorRepairsArePastable(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, path string) {
		path = hostileDB(t, path)
		dumpDir := filepath.Join(dumps, "shell-quotes")
		export, err := filepath.Abs(filepath.Join(dumpDir, "export"))
		require.NoError(t, err)

		r := crm(t, nil, "--db", path, "ledger", "load", dumpDir)
		require.Equal(t, exitOK, r.code, r.stderr)
		_, next, ok := strings.Cut(strings.TrimSpace(r.stdout), "\nNext: ")
		require.True(t, ok, r.stdout)
		var nexts [][]string
		for _, line := range strings.Split(next, " · ") {
			nexts = append(nexts, pasted(t, line, export)...)
		}
		require.Equal(t, [][]string{{"crmimport", "doctor", "--tenant", quoteTenant},
			{"crmimport", "ledger", "why", "--tenant", quoteTenant}, {"crmimport", "runs"}}, nexts)
		sqlText, err := os.ReadFile(filepath.Join(dumpDir, "after-load.sql"))
		require.NoError(t, err)
		_, err = storetest.Open(t, path).Exec(string(sqlText))
		require.NoError(t, err)

		d, _ := doctorJSON(t, path)
		require.Equal(t, []string{"uniform-skip", "ready-to-take-over", "unfinalized", "orphan-slots"}, d.names())
		text := crm(t, nil, "--db", path, "doctor")
		require.Equal(t, exitFindings, text.code)
		var printed []string
		for _, l := range strings.Split(text.stdout, "\n") {
			if r, ok := strings.CutPrefix(l, "  repair: "); ok {
				printed = append(printed, r)
			}
		}
		var lines []string
		for _, f := range d.Findings {
			lines = append(lines, f.Repair...)
		}
		require.Equal(t, lines, printed, "the text prints the very lines of --json")
		require.NotContains(t, text.stdout, "hunter2", "the repairs name the database without its password")

		sql := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
		db := []string{"crmimport", "--db", store.CommandName(path)}
		want := [][]string{
			append(db, "ledger", "why", "--tenant", quoteTenant, "--kind", "deals", "--run", "3"),
			append(db, "run", "--tenant", quoteTenant, "--source", quoteSource, "--profile", "canonical", "--only", "notes", export),
			append(db, "resume", "4", "--from", export),
			append(db, "stop", "4"),
			freeSlots(t, path, "DELETE FROM migration_records WHERE tenant_id = "+sql(quoteTenant)+" AND source = "+sql(quoteSource)+
				" AND kind = 'contact' AND source_id IN ("+sql(quoteOrphan)+")"),
			append(db, "run", "--tenant", quoteTenant, "--source", quoteSource, "--profile", "canonical", "--only", "contacts", export),
		}
		var got [][]string
		for _, line := range lines {
			calls := pasted(t, line, export)
			require.Len(t, calls, 1, "one program per line: %s", line)
			got = append(got, calls[0])
		}
		require.Equal(t, want, got)

		// What they do, in the order a user would take: look, free the slot,
		// cancel the interrupted run (its tenant can run again), take the
		// skipped note over, import the orphan again.
		r = crm(t, nil, got[0][1:]...)
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Contains(t, r.stdout, "deleted in source")
		if got[4][0] == "psql" {
			out, err := exec.Command(got[4][0], got[4][1:]...).CombinedOutput()
			require.NoError(t, err, "%s", out)
		} else {
			_, err = storetest.OpenFile(t, got[4][1]).Exec(got[4][2]) // as sqlite3 would
			require.NoError(t, err)
		}
		require.Equal(t, []string{"0"}, query(t, path, `SELECT count(*) FROM migration_records WHERE source_id = ?`, quoteOrphan))
		for _, call := range [][]string{got[3], got[1], got[5]} {
			r = crm(t, nil, call[1:]...)
			require.Equal(t, exitOK, r.code, "%q: %s", call, r.stderr)
		}
		require.Equal(t, []string{"cancelled"}, query(t, path, `SELECT status FROM migrations WHERE id = 4`))
		require.Equal(t, []string{"note|created", "contact|created"}, query(t, path,
			`SELECT kind, action FROM migration_records WHERE migration_id > 4 ORDER BY id`))
		d, _ = doctorJSON(t, path)
		require.Equal(t, []string{"uniform-skip"}, d.names(), "what is left needs a person: 20 deals deleted in source")
	})
}

// hostileDB is the database at addr named so that its name holds
// quoteDBDir: a file in a folder of that name, or the server's address
// with it as the connection's application_name (and a password, which the
// test cluster does not ask for and the repairs leave out).
func hostileDB(t *testing.T, addr string) string {
	t.Helper()
	if !store.IsAddress(addr) {
		dir := filepath.Join(t.TempDir(), quoteDBDir)
		require.NoError(t, os.Mkdir(dir, 0o700))
		return filepath.Join(dir, "crm.db")
	}
	u, err := url.Parse(addr)
	require.NoError(t, err)
	q := u.Query()
	q.Set("application_name", quoteDBDir)
	u.RawQuery = q.Encode()
	u.User = url.UserPassword(u.User.Username(), "hunter2")
	return u.String()
}

// freeSlots is the program and arguments of doctor's repair that runs stmt
// on the database at addr: sqlite3 with the file, or psql with the
// server's address (store.PsqlOf).
func freeSlots(t *testing.T, addr, stmt string) []string {
	t.Helper()
	if !store.IsAddress(addr) {
		return []string{"sqlite3", addr, stmt}
	}
	p, err := store.PsqlOf(addr)
	require.NoError(t, err)
	return []string{"psql", p.Address, "-c", p.SearchPath, "-c", stmt}
}

// TestForensicsCommandsTakeFlagsInAnyOrder: flags before or after the
// arguments, global flags after the command, one JSON document on stdout
// (SPEC §5), for ledger load and why, doctor, rejects and resume --from.
func TestForensicsCommandsTakeFlagsInAnyOrder(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		dumpDir := filepath.Join(dumps, "stranded-retry")
		export := filepath.Join(dumpDir, "export")
		var loads []string
		for i, args := range [][]string{
			{"--json", "ledger", "load", dumpDir},
			{"ledger", "load", dumpDir, "--json"},
			{"ledger", "--json", "load", dumpDir},
		} {
			path := sibling(t, addr)
			r := crm(t, nil, append([]string{"--db", path}, args...)...)
			require.Equal(t, exitOK, r.code, "%d: %s", i, r.stderr)
			var doc map[string]any
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), r.stdout)
			loads = append(loads, r.stdout)
			require.Equal(t, []any{float64(1)}, doc["runs"])
		}
		require.Equal(t, loads[0], loads[1])
		require.Equal(t, loads[0], loads[2])

		path := addr
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
		other := sibling(t, addr)
		require.Equal(t, exitOK, crm(t, nil, "--db", other, "ledger", "load", dumpDir).code)
		r = crm(t, nil, "resume", "1", "--from", export, "--db", other)
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Equal(t, dump(t, path, "globex"), dump(t, other, "globex"))
	})
}

// sibling is the address of a new database of addr's dialect, which
// nothing has made yet.
func sibling(t *testing.T, addr string) string {
	t.Helper()
	if store.IsAddress(addr) {
		return storetest.PostgresDSN(t)
	}
	return filepath.Join(t.TempDir(), "crm.db")
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
		{"ledger", "why", "--tenant", "acme", "--kind", "tickets"},
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
	storetest.RunAddress(t, func(t *testing.T, path string) {
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

		local := sibling(t, path)
		r = crm(t, nil, "--db", local, "run", "--tenant", "demo", "--source", "canonical", "--only", "companies", demo)
		require.Equal(t, exitPartial, r.code, r.stderr)
		r = crm(t, nil, "--db", local, "resume", "1", "--from", demo)
		require.Equal(t, exitUsage, r.code)
		require.Contains(t, r.stderr, "run 1 was planned here and reads its own files")
	})
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
	storetest.RunAddress(t, func(t *testing.T, path string) {
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
		text := crm(t, nil, "--db", sibling(t, path), "ledger", "load", dumpDir)
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
		export, err := filepath.Abs(filepath.Join(dumpDir, "export"))
		require.NoError(t, err)
		calls := pasted(t, f.Repair[0], export)
		require.Len(t, calls, 1, f.Repair[0])
		require.Equal(t, []string{"crmimport", "--db", path, "resume", "1", "--from", export}, calls[0])

		r = crm(t, nil, append(calls[0][1:], "--json")...)
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Equal(t, "succeeded", r.summary(t).Status)
		require.Equal(t, []string{"c-1 co-1", "c-2 co-2", "c-3 co-2"}, query(t, path, `SELECT s.source_id || ' ' || coalesce(p.source_id, 'unlinked')
		FROM contacts c JOIN migration_records s ON s.kind = 'contact' AND s.record_id = c.id
		LEFT JOIN migration_records p ON p.kind = 'company' AND p.record_id = c.company_id ORDER BY s.source_id`),
			"R6, R7: the companies imported before the contacts that link to them")
		require.Contains(t, r.stderr, "task 1 (contacts): phase 1 in the dump, phase 2 by its kind")
		require.Equal(t, []string{"1 contact 2", "2 company 1"}, query(t, path, `SELECT id || ' ' || kind || ' ' || phase FROM migration_tasks ORDER BY id`))
		require.Equal(t, []string{"1 warning"}, query(t, path, `SELECT count(*) || ' ' || level FROM run_log
		WHERE message LIKE '%phase 1 in the dump, phase 2 by its kind%' GROUP BY level`), "the run log keeps the dump's phase beside the new one")

		d, r = doctorJSON(t, path)
		require.Equal(t, exitOK, r.code, r.stdout)
		require.True(t, d.Clean)
	})
}

// TestRejectsCommand: the failed records of the demo run, to stdout or to
// a file, and in one JSON document under --json.
func TestRejectsCommand(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, path string) {
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
	})
}

// TestRejectsOfALoadedRun: issue 23 item 16 — a run loaded from a dump
// counted failed records whose rows the dump does not carry: `rejects`
// says so (not "has no failed records"), and the report's advice points at no `rejects` that has nothing to list.
func TestRejectsOfALoadedRun(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, path string) {
		r := crm(t, nil, "--db", path, "ledger", "load", "../../fixtures/dumps/poisoned-ledger")
		require.Equal(t, exitOK, r.code, r.stderr)
		r = crm(t, nil, "--db", path, "rejects", "1")
		require.Equal(t, exitOK, r.code, r.stderr)
		require.NotContains(t, r.stderr, "has no failed records")
		require.Contains(t, r.stderr, "12 failed records (8 contacts, 4 deals) were counted where run 1 ran, before it was loaded from a dump: the dump carries no failed rows")
		r = crm(t, nil, "--db", path, "report", "1")
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Contains(t, r.stdout, "the dump carries no failed rows")
		require.NotContains(t, r.stdout, "crmimport rejects 1")
	})
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

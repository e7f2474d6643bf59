package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/fixfile"
	"crmimport/importer/fixmanifest"
	"crmimport/phases"
	"crmimport/store/storetest"
)

// One file that a profile gives to several kinds (SPEC §4 as amended,
// issue 23 item 9): an Odoo crm.lead export gives contacts and their notes;
// an Odoo res.partner export gives companies and contacts, told apart by
// is_company. Each kind is its own task over the file; a row that is not a
// record of a kind is excluded from its task, counted, never failed; a row
// no kind takes is a warning; a flag that cannot be read fails its row
// once; a kind's extra holds only the columns no kind that takes the row
// maps.

var (
	odooLeadsProfile    = filepath.Join(fixtureRoot, "odoo", "crm-lead.yaml")
	odooPartnersProfile = filepath.Join(fixtureRoot, "odoo", "res-partner.yaml")
)

var odooLeadsFixture = badCase{
	name: "OdooLeads", root: fixtureRoot, dir: "odoo/crm-lead", source: "odoo", flags: []string{"--profile", odooLeadsProfile},
	code: exitPartial, status: "partial",
	kinds: map[string]phases.Counts{
		"contact": {Imported: 3, Skipped: 1, Failed: 3},
		"note":    {Imported: 2, Skipped: 4, Failed: 1},
	},
	stderr: []string{"crm.lead.csv feeds contacts and notes", "2 tasks: 2 contacts (crm.lead.csv), 4 notes (crm.lead.csv)"},
	failures: []string{
		`contact|__export__.crm_lead_14_9be0d215|crm.lead.csv|5|contact has neither a name nor an email`,
		`contact|__export__.crm_lead_16_71b0f4c2|crm.lead.csv|7|email "sara.ek(at)ek-advokat.example.com"`,
		`contact|__export__.crm_lead_17_d09a3b55|crm.lead.csv|8|created_at`,
		`note|__export__.crm_lead_17_d09a3b55|crm.lead.csv|8|created_at`,
	},
	stored: []storedRows{
		// Each note is linked to the contact made of the same row.
		{q: `SELECT m.source_id, substr(n.body, 1, 24), c.last_name FROM notes n
			JOIN migration_records m ON m.kind = 'note' AND m.record_id = n.id JOIN contacts c ON c.id = n.contact_id ORDER BY m.source_id`,
			want: []string{
				"__export__.crm_lead_11_5f2a9c1e|<p>Wants two deck ovens |Anna Lindqvist",
				"__export__.crm_lead_12_a7d3e0b4|<p>Pilot on 12 trucks, t|Tomas Berg"}},
		{q: `SELECT kind, source_id, reason, coalesce(detail, '') FROM migration_records WHERE action = 'skipped' ORDER BY kind, source_id`,
			want: []string{
				"contact|__export__.crm_lead_15_2f6c8a91|deleted in source|",
				"note|__export__.crm_lead_13_c41e77f0|empty body|",
				`note|__export__.crm_lead_14_9be0d215|not linked to any record|{"contact_id":"__export__.crm_lead_14_9be0d215"}`,
				"note|__export__.crm_lead_15_2f6c8a91|deleted in source|",
				`note|__export__.crm_lead_16_71b0f4c2|not linked to any record|{"contact_id":"__export__.crm_lead_16_71b0f4c2"}`}},
		// A kind's extra holds only the columns no kind of the file maps:
		// the description is the note's, the email the contact's; the
		// columns nobody maps are kept with each.
		{q: `SELECT c.last_name, json_extract(c.extra, '$.description'), json_extract(c.extra, '$.stage_id'),
				json_extract(c.extra, '$.partner_name') FROM contacts c ORDER BY c.id`,
			want: []string{
				"Anna Lindqvist|<null>|Qualified|Lindqvist Bakery AB", "Tomas Berg|<null>|New|Harbor Freight Cooperative",
				"Maja Holm|<null>|New|<null>"}},
		{q: `SELECT json_extract(n.extra, '$.email_from'), json_extract(n.extra, '$.contact_name'), json_extract(n.extra, '$.function'),
				json_extract(n.extra, '$.stage_id') FROM notes n ORDER BY n.id`,
			want: []string{"<null>|<null>|<null>|Qualified", "<null>|<null>|<null>|New"}},
		// One task per kind over the one file, each in its kind's phase.
		{q: `SELECT kind, phase, status, file LIKE '%crm.lead.csv' FROM migration_tasks ORDER BY id`,
			want: []string{"contact|2|succeeded|1", "note|4|succeeded|1"}},
	},
}

var odooPartnersFixture = badCase{
	name: "OdooPartners", root: fixtureRoot, dir: "odoo/res-partner", source: "odoo", flags: []string{"--profile", odooPartnersProfile},
	code: exitPartial, status: "partial",
	kinds: map[string]phases.Counts{
		// The row whose is_company cannot be read fails once, in the
		// first task of the file; the other excludes it.
		"company": {Imported: 2, Failed: 1, Excluded: 4},
		"contact": {Imported: 2, Skipped: 1, Excluded: 4},
	},
	failures: []string{
		`company|__export__.res_partner_12_7b8c9d0e|res.partner.csv|7|is_company "Company" is neither true nor false`,
	},
	warnings: []string{`res.partner.csv: 1 row is a record of no kind of the odoo-partners profile`},
	stored: []storedRows{
		// A company row keeps its email in extra: no kind that takes the
		// row maps it (the contacts' email is another row's).
		{q: `SELECT name, domain_key, json_extract(extra, '$.email'), json_extract(extra, '$.is_company') FROM companies ORDER BY id`,
			want: []string{
				"Lindqvist Bakery AB|lindqvist-bakery.example.com|info@lindqvist-bakery.example.com|True",
				"Harbor Freight Cooperative|harbor-freight.example.com|office@harbor-freight.example.com|True"}},
		{q: `SELECT c.last_name, c.title, co.name, json_extract(c.extra, '$.website') FROM contacts c JOIN companies co ON co.id = c.company_id ORDER BY c.id`,
			want: []string{"Anna Lindqvist|Owner|Lindqvist Bakery AB|<null>", "Tomas Berg|Fleet manager|Harbor Freight Cooperative|<null>"}},
		{q: `SELECT kind, phase, status FROM migration_tasks ORDER BY id`, want: []string{"company|1|succeeded", "contact|2|succeeded"}},
	},
}

func TestOneFileFeedsEachKindItIsGiven(t *testing.T) {
	t.Parallel()
	for _, c := range []badCase{odooLeadsFixture, odooPartnersFixture} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			runBadCase(t, c)
		})
	}
}

// TestExcludedIsInTheSummary: `excluded` is a field of every planned kind
// in the --json summary, zeros included (SPEC §11), and a rerun of the same
// files counts the same rows excluded, whether it reads them again or
// counts its records unchanged without reading (R2's same-input shortcut).
func TestExcludedIsInTheSummary(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, path string) {
		for i := range 2 {
			r := crm(t, nil, "--db", path, "--json", "run", "--tenant", "acme", "--source", "odoo", "--profile", odooLeadsProfile,
				filepath.Join(fixtureRoot, "odoo", "crm-lead"))
			require.Equal(t, exitPartial, r.code, r.stderr)
			for _, k := range []string{"contact", "note"} {
				require.Contains(t, kindsOf(t, r)[k], "excluded", "run %d: %s", i+1, k)
			}
		}
		for i, want := range []map[string]phases.Counts{
			{"company": {Imported: 2, Failed: 1, Excluded: 4}, "contact": {Imported: 2, Skipped: 1, Excluded: 4}},
			{"company": {Unchanged: 2, Failed: 1, Excluded: 4}, "contact": {Unchanged: 2, Skipped: 1, Excluded: 4}},
		} {
			r := crm(t, nil, "--db", path, "--json", "run", "--tenant", "partners", "--source", "odoo", "--profile", odooPartnersProfile,
				filepath.Join(fixtureRoot, "odoo", "res-partner"))
			require.Equal(t, exitPartial, r.code, r.stderr)
			s := r.summary(t)
			require.Equal(t, want, s.Kinds, "run %d", i+1)
			require.Len(t, s.Warnings, 1, "the row no kind takes, on every run: %q", s.Warnings)
		}
	})

	// Without the rows that fail or are skipped, a rerun counts the
	// records unchanged without reading the file again (R2's same-input
	// shortcut): the same rows excluded, the same warning.
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join(fixtureRoot, "odoo", "res-partner", "res.partner.csv"))
	require.NoError(t, err)
	var keep []string
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if !strings.Contains(line, `"Company"`) && !strings.Contains(line, "Per Olsson") {
			keep = append(keep, line)
		}
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "res.partner.csv"), []byte(strings.Join(keep, "")), 0o600))
	storetest.RunAddress(t, func(t *testing.T, path string) {
		want := map[string]phases.Counts{"company": {Imported: 2, Excluded: 3}, "contact": {Imported: 2, Excluded: 3}}
		for i := range 2 {
			r := crm(t, nil, "--db", path, "--json", "run", "--tenant", "clean", "--source", "odoo", "--profile", odooPartnersProfile, dir)
			require.Equal(t, exitOK, r.code, r.stderr)
			s := r.summary(t)
			require.Equal(t, want, s.Kinds, "run %d", i+1)
			require.Len(t, s.Warnings, 1, "run %d: %q", i+1, s.Warnings)
			want = unchangedOf(want)
		}
		require.Equal(t, []string{"2"}, query(t, path, `SELECT count(*) FROM run_log WHERE message LIKE '%counted unchanged without reading it again%'`),
			"the rerun read neither task's file")
	})
}

// TestFixFolderHoldsEachFailingLineOnce: a line that two tasks of its file
// failed (the contact and the note of one lead) is one row of the fix
// folder, with both reasons; a run over the folder reads it as both kinds.
func TestFixFolderHoldsEachFailingLineOnce(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, db string) {
		r := crm(t, nil, "--db", db, "--json", "--quiet", "run", "--tenant", "acme", "--source", "odoo", "--profile", odooLeadsProfile,
			filepath.Join(fixtureRoot, "odoo", "crm-lead"))
		require.Equal(t, exitPartial, r.code, r.stderr)

		fix := filepath.Join(t.TempDir(), "fix-1")
		r = crm(t, nil, "--db", db, "--json", "rejects", "1", "--out", fix, "--as-export")
		require.Equal(t, 0, r.code, r.stderr)
		var res fixfile.Result
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &res))
		require.Len(t, res.Files, 1)
		require.Equal(t, "crm.lead.csv", res.Files[0].Name)
		require.Equal(t, 3, res.Files[0].Rows, "lines 5, 7 and 8, each once")
		require.Equal(t, 4, res.Reasons, "every failed record has its reason")

		rows := readCSV(t, filepath.Join(fix, "crm.lead.csv"))
		var ids []string
		for _, row := range rows[1:] {
			ids = append(ids, row[0])
		}
		require.Equal(t, []string{"__export__.crm_lead_14_9be0d215", "__export__.crm_lead_16_71b0f4c2", "__export__.crm_lead_17_d09a3b55"}, ids)
		reasons := readCSV(t, filepath.Join(fix, fixmanifest.ReasonsName))
		var lines []string
		for _, row := range reasons[1:] {
			lines = append(lines, row[0]+":"+row[1])
		}
		require.Equal(t, []string{"crm.lead.csv:2", "crm.lead.csv:3", "crm.lead.csv:4", "crm.lead.csv:4"}, lines)
		man, err := fixmanifest.Read(fix)
		require.NoError(t, err)
		require.Equal(t, []int{2, 3, 4}, man.Files[0].Lines)

		// The date fixed: the lead's contact and its note import; the
		// others fail again as they did.
		fixCSV(t, filepath.Join(fix, "crm.lead.csv"), resave{comma: ',', changed: func(row map[string]string) {
			if row["id"] == "__export__.crm_lead_17_d09a3b55" {
				row["create_date"] = "2024-02-28 09:00:00"
			}
		}})
		r = crm(t, nil, "--db", db, "--json", "run", "--tenant", "acme", "--source", "odoo", "--profile", odooLeadsProfile, fix)
		require.Equal(t, exitPartial, r.code, r.stderr)
		s := r.summary(t)
		require.Equal(t, phases.Counts{Imported: 1, Failed: 2}, s.Kinds["contact"])
		require.Equal(t, phases.Counts{Imported: 1, Skipped: 2}, s.Kinds["note"], "its notes wait for the contacts still failing")
		require.Empty(t, s.Warnings, "read as the kinds its run read it as: no warning of a kind changed")
	})
}

func readCSV(t *testing.T, name string) [][]string {
	t.Helper()
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	rows, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(string(b), "\ufeff"))).ReadAll()
	require.NoError(t, err)
	return rows
}

// TestProfilesCheckSaysWhichKindsShareAFile: `profiles check` says which
// patterns feed several kinds, and which rows each kind takes (where).
func TestProfilesCheckSaysWhichKindsShareAFile(t *testing.T) {
	t.Parallel()
	r := crm(t, nil, "profiles", "check", odooLeadsProfile)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "crm.lead*.csv feeds contacts and notes: each kind is its own task over the file")

	r = crm(t, nil, "profiles", "check", odooPartnersProfile)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, `companies  res.partner*.csv (the rows whose is_company is true)`)
	require.Contains(t, r.stdout, `contacts   res.partner*.csv (the rows whose is_company is false and type is "contact")`)
	require.Contains(t, r.stdout, "res.partner*.csv feeds companies and contacts")
}

// TestSeveralKindsOfAFileResumeAfterAKill: R12 for a file that feeds two
// kinds. Each kind's task over the file has its own checkpoint: a process
// killed in the middle of either, and resumed, ends in the database of an
// uninterrupted run, with the same counts.
func TestSeveralKindsOfAFileResumeAfterAKill(t *testing.T) {
	t.Parallel()
	args := func(path string) []string {
		return []string{"--db", path, "--json", "--quiet", "run", "--tenant", "acme", "--source", "odoo", "--profile", odooLeadsProfile,
			"--batch-size", "2", filepath.Join(fixtureRoot, "odoo", "crm-lead")}
	}
	ref := filepath.Join(t.TempDir(), "reference.db")
	r := crm(t, nil, args(ref)...)
	require.Equal(t, exitPartial, r.code, r.stderr)
	want := r.summary(t).Kinds
	for _, point := range []string{"batch:contact:2", "batch:note:2"} {
		t.Run(point, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "crm.db")
			c := startChild(t, map[string]string{"CRMIMPORT_FAILPOINTS": point + "=exit"}, args(path)...)
			require.Equal(t, -1, c.wait(t), "killed by its own SIGKILL: %s", c.stderr.String())
			r := crm(t, nil, "--db", path, "--json", "resume", "1")
			require.Equal(t, exitPartial, r.code, r.stderr)
			require.Equal(t, want, r.summary(t).Kinds)
			require.Equal(t, dump(t, ref, "acme"), dump(t, path, "acme"))
		})
	}
}

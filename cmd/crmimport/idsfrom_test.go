package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/phases"
	"crmimport/store/storetest"
)

// Ids made of columns (SPEC §4, issue 26 item 4): an Odoo res.partner
// export by German labels has no id column; its profile makes a company's
// id of its Name and a person's of Name and E-Mail, splits the rows by
// "Ist ein Unternehmen" and links each person to their company by its
// name ("Zugehöriges Unternehmen").

var odooPartnerLabelsProfile = filepath.Join(fixtureRoot, "odoo", "res-partner-labels.yaml")

var odooPartnerLabelsFixture = badCase{
	name: "OdooPartnersByLabels", root: fixtureRoot, dir: "odoo/res-partner-labels", source: "odoo",
	flags: []string{"--profile", odooPartnerLabelsProfile},
	code:  exitPartial, status: "partial",
	kinds: map[string]phases.Counts{
		"company": {Imported: 3, Excluded: 7},
		// Ingrid Sand's company is not in the export: unlinked, its name
		// kept. The row with neither a name nor an e-mail has no id.
		"contact": {Imported: 5, Failed: 1, Unlinked: 1, Excluded: 4},
	},
	failures: []string{`contact||res.partner.csv|11|missing id`},
	warnings: []string{`res.partner.csv: 1 row is a record of no kind of the odoo-partners-labels profile`},
	stored: []storedRows{
		// Each id is the digest of its columns, behind a readable prefix.
		{q: `SELECT m.source_id, co.name FROM companies co JOIN migration_records m ON m.kind = 'company' AND m.record_id = co.id ORDER BY co.id`,
			want: []string{
				"lindqvist-bakery-ab.9092753680edbbe31b5bc3067671617f|Lindqvist Bakery AB",
				"harbor-freight-cooperati.806665e72ceac46cc7acc9f399f9a657|Harbor Freight Cooperative",
				"nystrom-tra.61adda8d4e17bd6608d1d868e30531ea|Nyström Trä"}},
		// Linked by the company's name, whose id is made of columns.
		{q: `SELECT m.source_id, c.last_name, coalesce(c.email, ''), coalesce(co.name, ''), coalesce(json_extract(c.extra, '$.company_id'), '')
			FROM contacts c JOIN migration_records m ON m.kind = 'contact' AND m.record_id = c.id
			LEFT JOIN companies co ON co.id = c.company_id ORDER BY c.id`,
			want: []string{
				"anna-lindqvist.3c5c706f108e7439a764a7941a43bf7d|Anna Lindqvist|anna.lindqvist@lindqvist-bakery.example.com|Lindqvist Bakery AB|",
				"tomas-berg.49ee9ee81187e35e601d80a75df63560|Tomas Berg|tomas.berg@harbor-freight.example.com|Harbor Freight Cooperative|",
				"sofia-nystrom.f4e19496a9c5c469dc654946910a8e0c|Sofia Nyström||Nyström Trä|",
				"erik-holm.816426f57019e45d0551f616f8bbac1a|Erik Holm|erik.holm@example.com||",
				"ingrid-sand.065dd6072c9b96ab8ed83408b406e7d4|Ingrid Sand|ingrid@sand-soner.example.com||Sand & Söner"}},
		// The columns no field maps are kept; a company keeps its e-mail.
		{q: `SELECT co.name, json_extract(co.extra, '$.E-Mail'), json_extract(co.extra, '$.Stadt') FROM companies co ORDER BY co.id`,
			want: []string{
				"Lindqvist Bakery AB|info@lindqvist-bakery.example.com|Stockholm",
				"Harbor Freight Cooperative|office@harbor-freight.example.com|Göteborg",
				"Nyström Trä|order@nystrom-tra.example.com|Växjö"}},
		{q: `SELECT kind, phase, status FROM migration_tasks ORDER BY id`, want: []string{"company|1|succeeded", "contact|2|succeeded"}},
	},
}

// TestIDsFromColumnsOdooByLabels imports the export by labels on each
// engine: outcomes per kind, ids, links by name, extra.
func TestIDsFromColumnsOdooByLabels(t *testing.T) {
	t.Parallel()
	runBadCase(t, odooPartnerLabelsFixture)
}

// TestIDsFromColumnsPairVanishedWithNew: a rerun of the export is all
// unchanged, and pairs nothing; a later export in which a person's e-mail
// and another's name were edited, one person left and one came, imports
// the edited ones as new records (their ids are made of those columns) and
// the summary pairs each record no longer in the export with the new one
// that looks like it — not the one that left with the one that came.
func TestIDsFromColumnsPairVanishedWithNew(t *testing.T) {
	t.Parallel()
	edited := editedPartnersByLabels(t)
	storetest.RunAddress(t, func(t *testing.T, path string) {
		run := func(dir string) result {
			r := crm(t, nil, "--db", path, "--json", "run", "--tenant", "acme", "--source", "odoo", "--profile", odooPartnerLabelsProfile, dir)
			require.Equal(t, exitPartial, r.code, r.stderr)
			return r
		}
		first := filepath.Join(fixtureRoot, "odoo", "res-partner-labels")
		run(first)
		s := run(first).summary(t)
		require.Equal(t, map[string]phases.Counts{
			"company": {Unchanged: 3, Excluded: 7},
			"contact": {Unchanged: 5, Failed: 1, Excluded: 4},
		}, s.Kinds, "a rerun is all unchanged")
		require.Len(t, s.Warnings, 1, "only the row of no kind: %q", s.Warnings)

		// A dry run says it as the run will.
		r := crm(t, nil, "--db", path, "--json", "run", "--dry-run", "--tenant", "acme", "--source", "odoo", "--profile", odooPartnerLabelsProfile, edited)
		require.Equal(t, exitPartial, r.code, r.stderr)
		require.Len(t, r.summary(t).Warnings, 2, "%q", r.summary(t).Warnings)
		require.Contains(t, r.summary(t).Warnings[1], `ids made of columns: 2 contacts no longer in the export look like new ones in it`)

		s = run(edited).summary(t)
		require.Equal(t, map[string]phases.Counts{
			"company": {Unchanged: 3, Excluded: 8},
			// Anna, Lena and the other Sofia created; Tomas matched by his
			// e-mail (R5).
			"contact": {Imported: 4, Matched: 1, Unchanged: 2, Failed: 1, Excluded: 4},
		}, s.Kinds)
		require.Len(t, s.Warnings, 2, "%q", s.Warnings)
		w := s.Warnings[1]
		require.Contains(t, w, `ids made of columns: 2 contacts no longer in the export look like new ones in it (id from Name, E-Mail): `+
			`contact "Anna Lindqvist" (was anna-lindqvist.3c5c706f108e7439a764a7941a43bf7d, now anna-lindqvist.`)
		require.Contains(t, w, `): its E-Mail differs; contact "Tomas Berg" (was tomas-berg.49ee9ee81187e35e601d80a75df63560, now tomas-bergstrom.`)
		require.Contains(t, w, `): its Name differs, and it was matched to the old one's row (R5) — if it is the same contact, its id columns were edited in the CRM`)
		require.Contains(t, w, "`crmimport ledger why --tenant acme --kind contact --source-id ID` tells each one's story")
		require.NotContains(t, w, "Erik", "one who left looks like nobody new")
		require.NotContains(t, w, "Lena", "one who came looks like nobody gone")
		require.NotContains(t, w, "Sofia", "a namesake of one still in the export is no look-alike")

		// The report says it too, and nothing is deleted or counted deleted.
		rep := crm(t, nil, "--db", path, "--json", "report", "3")
		require.Equal(t, exitOK, rep.code, rep.stderr)
		require.Contains(t, rep.stdout, `ids made of columns: 2 contacts no longer in the export`)
		require.Equal(t, []string{"8"}, query(t, path, `SELECT count(*) FROM contacts`), "5, then Anna, Sofia and Lena")
		require.Equal(t, []string{"0"}, query(t, path, `SELECT count(*) FROM migration_tasks WHERE deleted_since > 0`))

		// Said once: the run after finds the same records gone, and nothing
		// new that looks like them.
		s = run(edited).summary(t)
		require.Len(t, s.Warnings, 1, "%q", s.Warnings)
	})
}

// TestIDsFromColumnsFixFolderPairsNothing: a fix folder holds only the
// lines that failed, so the records it does not hold are not gone from the
// export: a run over it pairs nothing, even when a fixed line looks like a
// record imported before.
func TestIDsFromColumnsFixFolderPairsNothing(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, path string) {
		r := crm(t, nil, "--db", path, "--json", "run", "--tenant", "acme", "--source", "odoo", "--profile", odooPartnerLabelsProfile,
			filepath.Join(fixtureRoot, "odoo", "res-partner-labels"))
		require.Equal(t, exitPartial, r.code, r.stderr)
		fix := filepath.Join(t.TempDir(), "fix-1")
		r = crm(t, nil, "--db", path, "--json", "rejects", "1", "--out", fix, "--as-export")
		require.Equal(t, exitOK, r.code, r.stderr)
		// The line without name and e-mail, given a namesake of Tomas Berg.
		fixCSV(t, filepath.Join(fix, "res.partner.csv"), resave{comma: ',', changed: func(row map[string]string) {
			row["Name"], row["E-Mail"] = "Tomas Berg", "t.berg@harbor-freight.example.com"
		}})
		r = crm(t, nil, "--db", path, "--json", "run", "--tenant", "acme", "--source", "odoo", "--profile", odooPartnerLabelsProfile, fix)
		require.Equal(t, exitOK, r.code, r.stderr)
		s := r.summary(t)
		require.Equal(t, phases.Counts{Imported: 1}, s.Kinds["contact"])
		require.Empty(t, s.Warnings, "the fix folder is not the export: nothing is gone from it")
	})
}

// editedPartnersByLabels writes a later export of the partners by labels:
// Anna's e-mail and Tomas's name edited, Erik gone, a namesake of Sofia
// Nyström (who is still there) and Lena Ek new. It returns its folder.
func editedPartnersByLabels(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureRoot, "odoo", "res-partner-labels", "res.partner.csv"))
	require.NoError(t, err)
	var lines []string
	for _, line := range strings.SplitAfter(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, `"Erik Holm"`):
			continue // left
		case strings.HasPrefix(line, `"Anna Lindqvist"`):
			line = strings.Replace(line, "anna.lindqvist@", "anna@", 1)
		case strings.HasPrefix(line, `"Tomas Berg"`):
			line = strings.Replace(line, `"Tomas Berg"`, `"Tomas Bergström"`, 1)
		}
		lines = append(lines, line)
	}
	// A namesake of Sofia Nyström, who is still in the export: new, and
	// like no record gone.
	lines = append(lines, `"Sofia Nyström","False","Kontakt","","sofia.nystrom@example.com","","","","","","","Schweden","2024-04-02 09:30:00"`+"\n")
	lines = append(lines, `"Lena Ek","False","Kontakt","Lindqvist Bakery AB","lena.ek@lindqvist-bakery.example.com","","","","","","","Schweden","2024-04-02 09:00:00"`+"\n")
	edited := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(edited, "res.partner.csv"), []byte(strings.Join(lines, "")), 0o600))

	return edited
}

// TestIDsFromColumnsPairAcrossAResume: the pairing holds when the run that
// imports the edited export fails midway and is resumed in a new process:
// the new records its first batches imported and the ids they read count
// as in one go (R8, R12).
func TestIDsFromColumnsPairAcrossAResume(t *testing.T) {
	t.Parallel()
	edited := editedPartnersByLabels(t)
	storetest.RunAddress(t, func(t *testing.T, path string) {
		r := crm(t, nil, "--db", path, "--json", "run", "--tenant", "acme", "--source", "odoo", "--profile", odooPartnerLabelsProfile,
			filepath.Join(fixtureRoot, "odoo", "res-partner-labels"))
		require.Equal(t, exitPartial, r.code, r.stderr)
		// Batches of 2 rows: the first imports Anna anew, the second
		// matches Tomas by e-mail; the third fails.
		r = crm(t, map[string]string{"CRMIMPORT_FAILPOINTS": "batch:contact:3=error"}, "--db", path, "--json", "run", "--tenant", "acme",
			"--source", "odoo", "--profile", odooPartnerLabelsProfile, "--batch-size", "2", edited)
		require.NotEqual(t, exitOK, r.code, r.stderr)
		require.Empty(t, query(t, path, `SELECT message FROM run_log WHERE migration_id = 2 AND message LIKE 'ids made of columns:%'`),
			"nothing paired before the file is read to its end")
		require.Equal(t, []string{"2"}, query(t, path, `SELECT count(*) FROM migration_records WHERE migration_id = 2 AND kind = 'contact'`),
			"Anna's and Tomas's new records, before the failure")

		r = crm(t, nil, "--db", path, "--json", "resume", "2")
		require.Equal(t, exitPartial, r.code, r.stderr)
		s := r.summary(t)
		require.Equal(t, phases.Counts{Imported: 4, Matched: 1, Unchanged: 2, Failed: 1, Excluded: 4}, s.Kinds["contact"])
		require.Len(t, s.Warnings, 2, "%q", s.Warnings)
		require.Contains(t, s.Warnings[1], `ids made of columns: 2 contacts no longer in the export look like new ones in it (id from Name, E-Mail): `+
			`contact "Anna Lindqvist" (was anna-lindqvist.3c5c706f108e7439a764a7941a43bf7d, now anna-lindqvist.`)
		require.Contains(t, s.Warnings[1], `contact "Tomas Berg" (was tomas-berg.49ee9ee81187e35e601d80a75df63560`)
	})
}

// TestIDsFromColumnsProfilesCheck: profiles check and inspect say what
// editing the columns of an id made of them does.
func TestIDsFromColumnsProfilesCheck(t *testing.T) {
	t.Parallel()
	r := crm(t, nil, "profiles", "check", odooPartnerLabelsProfile)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "id made of Name and E-Mail: a record whose Name or E-Mail is edited in the CRM is a new record to crmimport")
	r = crm(t, nil, "--json", "profiles", "check", odooPartnerLabelsProfile)
	require.Equal(t, exitOK, r.code, r.stderr)
	var info struct {
		IDsFrom map[string][]string `json:"ids_from"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &info), r.stdout)
	require.Equal(t, map[string][]string{"company": {"Name"}, "contact": {"Name", "E-Mail"}}, info.IDsFrom)

	r = crm(t, nil, "inspect", "--source", "odoo", "--profile", odooPartnerLabelsProfile, "--only", "contacts", filepath.Join(fixtureRoot, "odoo", "res-partner-labels"))
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Regexp(t, `E-Mail +→ email +part of the id \(made of Name, E-Mail\): an edit of it makes a new record`, r.stdout)
}

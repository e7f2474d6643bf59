package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/store/storetest"
)

// TestProfilesCommand: `crmimport profiles` lists the built-in profiles,
// `profiles show NAME` prints one as written (a starting point for one of
// your own), `profiles check FILE` says what is wrong with a file.
func TestProfilesCommand(t *testing.T) {
	t.Parallel()
	r := crm(t, nil, "profiles")
	require.Equal(t, exitOK, r.code, r.stderr)
	for _, want := range []string{"canonical — crmimport's own layout", "salesforce — Salesforce Data Export",
		"hubspot — HubSpot CSV exports", "pipedrive — Pipedrive CSV exports", "activities task.csv, event.csv", "profiles show NAME"} {
		require.Contains(t, r.stdout, want)
	}

	r = crm(t, nil, "--json", "profiles")
	require.Equal(t, exitOK, r.code, r.stderr)
	var list []profileInfo
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &list))
	require.Len(t, list, 4)
	require.Equal(t, "canonical", list[0].Name)
	require.Equal(t, []string{"account.csv", "account.json", "accounts.json"}, list[3].Kinds["company"])

	r = crm(t, nil, "profiles", "show", "salesforce")
	require.Equal(t, exitOK, r.code, r.stderr)
	b, err := os.ReadFile("../../importer/profile/profiles/salesforce.yaml")
	require.NoError(t, err)
	require.Equal(t, string(b), r.stdout, "printed as written, comments included")

	r = crm(t, nil, "--json", "profiles", "show", "pipedrive")
	require.Equal(t, exitOK, r.code, r.stderr)
	var shown struct {
		Name string
		Text string
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &shown))
	require.Equal(t, "pipedrive", shown.Name)
	require.Contains(t, shown.Text, "by: name")

	dir := t.TempDir()
	bad := filepath.Join(dir, "zoho.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("name: zoho\nkinds:\n  contact:\n    files: [Contacts.csv]\n    fields: {id: Id, emial: Email}\n    links:\n      - {column: Deal, kind: deal}\n"), 0o600))
	r = crm(t, nil, "profiles", "check", bad)
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, "zoho.yaml:5: kinds.contact.fields.emial: unknown field of contact")
	require.Contains(t, r.stderr, "zoho.yaml:7: kinds.contact.links[0].kind: a contact cannot link to a deal")

	r = crm(t, nil, "--json", "profiles", "show", "nope")
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stdout, `unknown profile \"nope\" (built-in: canonical, hubspot, pipedrive, salesforce`)

	r = crm(t, nil, "profiles", "frobnicate")
	require.Equal(t, exitUsage, r.code)
}

// zohoProfile is a profile for a CRM nobody shipped: its own file names,
// columns, date format and spellings of true.
const zohoProfile = `# Zoho CRM, as exported by one customer
name: zoho
description: Zoho CRM module exports
match: [email]
dates: ["DD/MM/YYYY HH:mm", "DD/MM/YYYY"]
booleans: {true: ["Ja"], false: ["Nein"]}
kinds:
  company:
    files: ["Accounts_*.csv"]
    fields:
      id: Record Id
      name: Account Name
      domain: Website
      created_at: Created Time
  contact:
    files: ["Contacts_*.csv"]
    fields:
      id: Record Id
      first_name: First Name
      last_name: Last Name
      email: Email
      created_at: Created Time
      deleted: Gelöscht
    links:
      - {column: Account Name.id, kind: company}
`

// TestCustomProfile: --profile FILE reads an export of a CRM nobody
// shipped. The profile is kept with the run, so that a resume maps the
// files as the run began, whatever became of the file since (R10).
func TestCustomProfile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	profile := filepath.Join(dir, "zoho.yaml")
	require.NoError(t, os.WriteFile(profile, []byte(zohoProfile), 0o600))
	export := writeExport(t, map[string]string{
		"Accounts_2024_08_27.csv": "Record Id,Account Name,Website,Created Time,Rating\nzcrm_1,Brightwater Bakery,brightwater-bakery.example.com,04/03/2021 08:00,Hot\n",
		"Contacts_2024_08_27.csv": "Record Id,First Name,Last Name,Email,Account Name.id,Created Time,Gelöscht\n" +
			"zcrm_11,Hannah,Okafor,hannah.okafor@brightwater-bakery.example.com,zcrm_1,14/03/2022 10:00,Nein\n" +
			"zcrm_12,Grace,Lindqvist,,,19/01/2023,Nein\nzcrm_13,Old,Contact,,zcrm_1,01/01/2019,Ja\n",
		"Leads_2024_08_27.csv": "Record Id,Last Name\nzcrm_99,Lead\n",
	})
	storetest.RunAddress(t, func(t *testing.T, path string) {
		require.NoError(t, os.WriteFile(profile, []byte(zohoProfile), 0o600)) // the run before broke it
		r := crm(t, nil, "--db", path, "--json", "run", "--tenant", "acme", "--source", "zoho", export)
		require.Equal(t, exitUsage, r.code, "no built-in profile is named zoho")
		require.Contains(t, r.stderr, `unknown profile "zoho": no built-in profile is named like --source zoho`)
		require.Contains(t, r.stderr, "pass --profile NAME or --profile FILE.yaml")

		env := map[string]string{"CRMIMPORT_FAILPOINTS": "batch:contact:1=error"}
		r = crm(t, env, "--db", path, "--json", "run", "--tenant", "acme", "--source", "zoho", "--profile", profile, "--batch-size", "2", export)
		require.Equal(t, exitPartial, r.code, r.stderr)
		require.Contains(t, r.stderr, "ignored 1 file not of the zoho profile: Leads_2024_08_27.csv")
		opts := query(t, path, `SELECT options FROM migrations`)[0]
		require.Contains(t, opts, `"profile":"zoho"`)
		require.Contains(t, opts, `"profile_file":"`+profile+`"`)
		require.Contains(t, opts, `"profile_text":"# Zoho CRM`)

		// The file breaks; the resume still maps as the run began.
		require.NoError(t, os.WriteFile(profile, []byte("name: [broken"), 0o600))
		r = crm(t, nil, "--db", path, "--json", "resume", "1")
		require.Equal(t, exitOK, r.code, r.stderr)
		s := r.summary(t)
		require.Equal(t, int64(1), s.Kinds["company"].Imported)
		require.Equal(t, int64(2), s.Kinds["contact"].Imported)
		require.Equal(t, int64(1), s.Kinds["contact"].Skipped, "Gelöscht = Ja: deleted in source")
		require.Equal(t, []string{
			"Brightwater Bakery|2021-03-04T08:00:00|{\"Rating\":\"Hot\"}",
		}, query(t, path, `SELECT name, created_at, extra FROM companies`))
		require.Equal(t, []string{"Hannah|2022-03-14T10:00:00|Brightwater Bakery", "Grace|2023-01-19|"},
			query(t, path, `SELECT c.first_name, c.created_at, coalesce(co.name, '') FROM contacts c LEFT JOIN companies co ON co.id = c.company_id ORDER BY c.id`))

		r = crm(t, nil, "--db", path, "run", "--tenant", "acme", "--source", "zoho", "--profile", profile, export)
		require.Equal(t, exitUsage, r.code, "a broken profile file: usage, naming what is wrong")
		require.True(t, strings.HasPrefix(r.stderr, "crmimport: profile file "+profile+": zoho.yaml: not YAML or JSON"), r.stderr)
	})
}

// TestReadmeProfileExample: the custom profile README.md shows is valid.
func TestReadmeProfileExample(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	text := string(b)
	start := strings.Index(text, "```yaml\nname: zoho")
	require.GreaterOrEqual(t, start, 0, "README.md shows a custom profile")
	body := text[start+len("```yaml\n"):]
	body = body[:strings.Index(body, "```")]
	file := filepath.Join(t.TempDir(), "zoho.yaml")
	require.NoError(t, os.WriteFile(file, []byte(body), 0o600))
	r := crm(t, nil, "profiles", "check", file)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "a valid profile")
}

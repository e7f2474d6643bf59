package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/phases"
	"crmimport/store/storetest"
)

// The hand-made export of each built-in profile (fixtures/<profile>/, in
// the shapes of FORMATS.md; each README.md says which record does what),
// imported with exact outcomes per kind, its links and what lands in
// extra.
const fixtureRoot = "../../fixtures"

var salesforceFixture = badCase{
	name: "Salesforce", root: fixtureRoot, dir: "salesforce", source: "salesforce",
	code: exitOK, status: "succeeded",
	kinds: map[string]phases.Counts{
		// User.csv: every object's OwnerId names its one active user.
		"user":    {Imported: 2},
		"company": {Imported: 3, Skipped: 1}, "contact": {Imported: 4, Skipped: 1, Unlinked: 1}, "deal": {Imported: 3, Skipped: 1},
		// Lead.csv: one deleted; two owned by a user the export lacks.
		"lead": {Imported: 4, Skipped: 1, Unowned: 2},
		// ContentVersion.csv's PDF and older version are files, not notes:
		// read, excluded, and records of no kind (a warning, SPEC §4).
		"note": {Imported: 4, Skipped: 2, Excluded: 2}, "activity": {Imported: 4, Skipped: 1}, "email": {Imported: 2, Skipped: 1},
	},
	warnings: []string{`ContentVersion.csv: 2 rows are records of no kind of the salesforce profile (notes read the rows whose FileType is "SNOTE" and IsLatest is "1")`},
	stderr:   []string{"ignored 1 file not of the salesforce profile: Attachment.csv"},
	stored: []storedRows{
		// Two accounts share a website: nothing is matched (R5).
		{q: `SELECT name, domain_key, json_extract(extra, '$.CustomerPriority__c') FROM companies ORDER BY id`, want: []string{
			"Brightwater Bakery|brightwater-bakery.example.com|High", "Harbor Logistics|harbor-logistics.example.com|Medium",
			"Harbor Logistics (EMEA)|harbor-logistics.example.com|<null>"}},
		// A 15-character AccountId links; 000000000000000AAA is no link; an
		// account not in the export leaves the contact unlinked, its id in extra.
		{q: `SELECT c.first_name, co.name, json_extract(c.extra, '$.company_id'), json_extract(c.extra, '$.Languages__c') FROM contacts c
			LEFT JOIN companies co ON co.id = c.company_id ORDER BY c.id`, want: []string{
			"Hannah|Brightwater Bakery|<null>|English;Yoruba", "Grace|Harbor Logistics|<null>|English;Swedish", "Tomasz|<null>|<null>|<null>",
			"Nadia|<null>|0015g00000BwTzZAAV|Arabic;French"}},
		// A deal's contact is its primary contact role; close dates are dates.
		{q: `SELECT d.name, d.amount, d.close_date, co.name, c.first_name FROM deals d JOIN companies co ON co.id = d.company_id
			LEFT JOIN contacts c ON c.id = d.contact_id ORDER BY d.id`, want: []string{
			"Wholesale bread contract|48000|2024-04-30|Brightwater Bakery|Hannah", "Fleet tracking|125000.50|2023-12-15|Harbor Logistics|Grace",
			"EMEA expansion|<null>|2024-09-30|Harbor Logistics (EMEA)|<null>"}},
		// Enhanced notes (bodies from ContentVersion/, links through
		// ContentDocumentLink, users ignored) and classic notes (ParentId by prefix).
		{q: `SELECT m.source_id, substr(n.body, 1, 30), c.first_name, co.name, d.name FROM notes n
			JOIN migration_records m ON m.kind = 'note' AND m.record_id = n.id
			LEFT JOIN contacts c ON c.id = n.contact_id LEFT JOIN companies co ON co.id = n.company_id LEFT JOIN deals d ON d.id = n.deal_id
			ORDER BY m.source_id`, want: []string{
			"0025g00000Nt001AAB|Met Hannah at the trade fair.\n|Hannah|Brightwater Bakery|<null>",
			"0025g00000Nt002AAB|Quoted 1.20 USD per loaf at 40|<null>|Brightwater Bakery|Wholesale bread contract",
			"0685g00000Cv001AAB|<p>Grace asked for a <b>fleet |Grace|<null>|<null>",
			"0685g00000Cv004AAB|<p>Fleet tracking: signed, 40 |<null>|<null>|Fleet tracking"}},
		{q: `SELECT kind, source_id, reason, coalesce(detail, '') FROM migration_records WHERE action = 'skipped' AND reason != 'deleted in source' ORDER BY kind, source_id`,
			want: []string{
				// R6b: a case alone: nothing a run of the export gives,
				// and the reason says so.
				`activity|00U5g00000Ev002EAB|linked only to a case, which the salesforce profile does not import|{"WhatId":"5005g00000Cs001AAB"}`,
				"note|0025g00000Nt003AAB|linked only to a user (its owner or another): a user never anchors a note, activity or email|",
				"note|0025g00000Nt004AAB|empty body|"}},
		// Task and Event: WhoId and WhatId by prefix, the type from the
		// subtype or the file, done from IsClosed; a WhoId of a lead (00Q)
		// links to the lead, alone or beside an account.
		{q: `SELECT a.type, a.subject, a.due_at, a.done, c.first_name, l.last_name, co.name, d.name, json_extract(a.extra, '$.WhoId') FROM activities a
			LEFT JOIN contacts c ON c.id = a.contact_id LEFT JOIN leads l ON l.id = a.lead_id LEFT JOIN companies co ON co.id = a.company_id
			LEFT JOIN deals d ON d.id = a.deal_id ORDER BY a.subject`, want: []string{
			"Call|Call Hannah about the contract|2024-03-05|1|Hannah|<null>|Brightwater Bakery|Wholesale bread contract|<null>",
			"event|Fleet demo|2024-03-07T10:00:00|0|Grace|<null>|Harbor Logistics|<null>|<null>",
			"Task|Qualify the lead|2024-03-14|0|<null>|de Vries|<null>|<null>|<null>",
			"Task|Send the EMEA brochure|2024-03-12|0|<null>|de Vries|Harbor Logistics|<null>|<null>"}},
		// Leads: a converted one linked to the contact it became; an owner
		// the export lacks kept in extra (unowned, R6a).
		{q: `SELECT l.first_name, l.last_name, l.company_name, l.status, coalesce(l.lead_source, ''), coalesce(c.first_name, ''),
			coalesce(u.name, ''), coalesce(json_extract(l.extra, '$.owner_id'), '') FROM leads l
			LEFT JOIN contacts c ON c.id = l.converted_contact_id LEFT JOIN users u ON u.id = l.owner_id ORDER BY l.id`, want: []string{
			"Pieter|de Vries|Harbor Logistics (EMEA)|Working - Contacted|Web||Morgan Reyes|",
			"Hannah|Okafor|Brightwater Bakery|Closed - Converted|Trade Show|Hannah|Morgan Reyes|",
			"Sara|Ek|Ek Advokatbyrå|Open - Not Contacted|Web|||0055g00000AbCdGAAV",
			"<null>|[not provided]|Quayside Ropes|Open - Not Contacted|Web|||0055g00000AbCdGAAV"}},
		{q: `SELECT e.subject, e.body, e."from", e.sent_at, c.first_name, d.name FROM emails e
			LEFT JOIN contacts c ON c.id = e.contact_id LEFT JOIN deals d ON d.id = e.deal_id ORDER BY e.sent_at`, want: []string{
			"Signed order form|Grace,\n\nattached the signed order form.\n\nRegards|sales@crmimport-demo.example.com|2023-12-15T16:00:00|<null>|Fleet tracking",
			"Thank you|<p>Hannah, thanks for your time at the fair.</p>|sales@crmimport-demo.example.com|2024-01-11T08:00:00|Hannah|<null>"}},
	},
}

var hubspotFixture = badCase{
	name: "HubSpot", root: fixtureRoot, dir: "hubspot", source: "hubspot",
	code: exitPartial, status: "partial",
	kinds: map[string]phases.Counts{
		// Owners are named ("Jane Admin") and the export has no users:
		// unowned, the name kept (a users file completes them, R6a).
		"company": {Imported: 4, Matched: 1, Unowned: 4}, "contact": {Imported: 4, Skipped: 1, Failed: 1, Unowned: 3}, "deal": {Imported: 3, Unowned: 3},
		"note": {Imported: 2, Skipped: 1, Failed: 1}, "activity": {Imported: 4}, "email": {Imported: 1},
	},
	failures: []string{
		"contact|2.00000E+10|hubspot-crm-exports-all-contacts-2024-08-27.csv|5|" + excelID,
		"note|40000000003|hubspot-crm-exports-notes-2024-08-27.csv|5|Associated Contact IDs \"2.00000E+10\" " + excelID,
	},
	stored: []storedRows{
		// A BOM and CRLF (Excel's CSV UTF-8); null is empty; the EU company
		// has its parent's domain: matched (R5), no second row.
		{q: `SELECT m.source_id, m.action, t.name, coalesce(t.domain, ''), t.phone FROM migration_records m JOIN companies t ON t.id = m.record_id
			WHERE m.kind = 'company' ORDER BY m.source_id`, want: []string{
			"10000000001|created|Brightwater Bakery|brightwater-bakery.example.com|+1 503 555 0101",
			"10000000002|created|Harbor Logistics|harbor-logistics.example.com|+1 206 555 0102",
			"10000000003|matched|Harbor Logistics|harbor-logistics.example.com|+1 206 555 0102",
			"10000000004|created|Pérez, Hijos y Cía||+34 91 555 0104"}},
		// Repeated headers: the contact's own first, the company's in extra
		// as "#2"; leading-space phones trimmed; null title empty; a ;-list
		// kept whole in extra; the API dump's properties and associations.
		{q: `SELECT m.source_id, t.first_name, coalesce(t.email, ''), t.phone, coalesce(t.title, ''), coalesce(co.name, ''), t.created_at,
				coalesce(json_extract(t.extra, '$."Phone Number#2"'), ''), coalesce(json_extract(t.extra, '$."Associated Company IDs"'), '')
			FROM contacts t JOIN migration_records m ON m.kind = 'contact' AND m.record_id = t.id LEFT JOIN companies co ON co.id = t.company_id
			ORDER BY m.source_id`, want: []string{
			"20000000001|Hannah|hannah.okafor@brightwater-bakery.example.com|+1 503 555 0110|Owner|Brightwater Bakery|2022-03-14T10:00:00| +1 503 555 0101|",
			"20000000002|Grace|grace.lindqvist@harbor-logistics.example.com|+1 206 555 0111|Operations Manager|Harbor Logistics|2023-01-19T16:45:00| +1 206 555 0102|10000000002;10000000003",
			"20000000003|Tomasz||+48 22 555 0112|||2023-05-02T08:30:00||",
			"20000000006|Ana|ana.garcia@perez-hijos.example.com|+34 91 555 0113|Head of Sales, EMEA|Pérez, Hijos y Cía|2023-02-15T09:00:00Z||"}},
		{q: `SELECT source_id, reason FROM migration_records WHERE action = 'skipped' ORDER BY source_id`,
			want: []string{"20000000007|deleted in source", "40000000004|empty body"}},
		// (Primary) first, then the ;-lists with spaces; an unknown id in a
		// list does not unlink a deal whose other id resolves.
		{q: `SELECT d.name, coalesce(d.amount, ''), d.close_date, co.name, coalesce(c.first_name, '') FROM deals d JOIN companies co ON co.id = d.company_id
			LEFT JOIN contacts c ON c.id = d.contact_id ORDER BY d.id`, want: []string{
			"Wholesale bread contract|48000|2024-04-30|Brightwater Bakery|Hannah", "Fleet tracking|125000.5|2023-12-15|Harbor Logistics|Grace",
			"EU expansion||2024-09-30|Harbor Logistics|"}},
		// Calls, tasks (status mapped to done) and an API dump of meetings.
		{q: `SELECT a.type, a.subject, a.due_at, a.done, coalesce(c.first_name, ''), coalesce(co.name, ''), coalesce(d.name, '') FROM activities a
			LEFT JOIN contacts c ON c.id = a.contact_id LEFT JOIN companies co ON co.id = a.company_id LEFT JOIN deals d ON d.id = a.deal_id
			ORDER BY a.subject`, want: []string{
			"call|Call Hannah about the contract|2024-03-05T09:00:00|0|Hannah||Wholesale bread contract",
			"meeting|Fleet demo|2024-03-07T18:00:00Z|0|Grace|Harbor Logistics|",
			"task|Quote for Pérez|2024-03-12T12:00:00|0||Pérez, Hijos y Cía|",
			"EMAIL|Send the signed order form|2023-12-15T16:00:00|1|Grace|Harbor Logistics|"}},
		{q: `SELECT substr(n.body, 1, 29), coalesce(c.first_name, ''), coalesce(co.name, ''), coalesce(d.name, '') FROM notes n
			LEFT JOIN contacts c ON c.id = n.contact_id LEFT JOIN companies co ON co.id = n.company_id LEFT JOIN deals d ON d.id = n.deal_id
			ORDER BY n.id`, want: []string{
			"Met Hannah at the trade fair.|Hannah|Brightwater Bakery|", "Grace signed: 40 trucks, go-l||Harbor Logistics|Fleet tracking"}},
		{q: `SELECT e.subject, e."to", c.first_name, d.name FROM emails e JOIN contacts c ON c.id = e.contact_id JOIN deals d ON d.id = e.deal_id`,
			want: []string{"Signed order form|grace.lindqvist@harbor-logistics.example.com|Grace|Fleet tracking"}},
	},
}

var pipedriveFixture = badCase{
	name: "Pipedrive", root: fixtureRoot, dir: "pipedrive", source: "pipedrive",
	code: exitOK, status: "succeeded",
	kinds: map[string]phases.Counts{
		// Owners are named (Organization - Owner, Note - User) and the
		// export has no users: unowned, the name kept.
		"company": {Imported: 4, Unowned: 4}, "contact": {Imported: 4, Unlinked: 1}, "deal": {Imported: 4, Unlinked: 1},
		"note": {Imported: 2, Skipped: 1, Unowned: 2}, "activity": {Imported: 2, Skipped: 1, Unlinked: 1},
	},
	// Two organizations are called Harbor Logistics: every link by that
	// name is reported and left unlinked, never guessed.
	stderr: []string{
		`warning: people-4321-20240827.csv:3: Person - Organization "Harbor Logistics" names 2 companies of the export (organizations-4321-20240827.csv:3, organizations-4321-20240827.csv:4): left unlinked, not guessed`,
		`warning: deals-4321-20240827.csv:5: Deal - Organization "Harbor Logistics" names 2 companies`,
		`warning: notes-4321-20240827.csv:5: Note - Organization "Harbor Logistics" names 2 companies`,
		`warning: activities-4321-20240827.csv:3: Activity - Organization "Harbor Logistics" names 2 companies`,
	},
	stderrNot: []string{"deals-4321-20240827.csv:3:"}, // its Organization ID says which
	stored: []storedRows{
		// ", "-joined multi-values: the first is the field's, all are kept.
		{q: `SELECT c.first_name, c.last_name, coalesce(c.email, ''), c.phone, coalesce(co.name, ''), coalesce(json_extract(c.extra, '$.company_id'), ''),
				coalesce(json_extract(c.extra, '$."Person - Email - Work"'), '')
			FROM contacts c LEFT JOIN companies co ON co.id = c.company_id ORDER BY c.id`, want: []string{
			"Hannah|Okafor|hannah.okafor@brightwater-bakery.example.com|+1 503 555 0110|Brightwater Bakery||hannah.okafor@brightwater-bakery.example.com, hannah@brightwater-bakery.example.com",
			"Grace|Lindqvist|grace.lindqvist@harbor-logistics.example.com|+1 206 555 0111||Harbor Logistics|",
			"Ana|García|ana.garcia@perez-hijos.example.com|+34 91 555 0113|Pérez, Hijos y Cía||",
			"Tomasz|Nowicki||+48 22 555 0112|||"}},
		// Links by name, and by id where the export has the id.
		{q: `SELECT d.name, d.amount, d.currency, coalesce(co.name, ''), coalesce(json_extract(co.extra, '$."Organization - Address"'), ''),
				coalesce(c.first_name, ''), coalesce(json_extract(d.extra, '$.company_id'), '')
			FROM deals d LEFT JOIN companies co ON co.id = d.company_id LEFT JOIN contacts c ON c.id = d.contact_id ORDER BY d.id`, want: []string{
			"Wholesale bread contract|48000|USD|Brightwater Bakery|14 Mill Lane, Portland|Hannah|",
			"Fleet tracking|125000.50|USD|Harbor Logistics|Pier 9, Seattle|Grace|",
			"Olive oil supply 2024|12000.50|EUR|Pérez, Hijos y Cía|Calle Mayor 1, Madrid|Ana|",
			"Rotterdam warehouse|30000|EUR||||Harbor Logistics"}},
		{q: `SELECT a.type, a.subject, a.due_at, a.done, coalesce(c.first_name, ''), coalesce(co.name, ''), coalesce(d.name, '') FROM activities a
			LEFT JOIN contacts c ON c.id = a.contact_id LEFT JOIN companies co ON co.id = a.company_id LEFT JOIN deals d ON d.id = a.deal_id
			ORDER BY a.id`, want: []string{
			"call|Call Hannah about the contract|2024-03-05|1|Hannah|Brightwater Bakery|Wholesale bread contract",
			"meeting|Warehouse visit|2024-03-12|0|Grace||"}},
		{q: `SELECT source_id, reason, detail FROM migration_records WHERE action = 'skipped' ORDER BY kind, source_id`, want: []string{
			`33|not linked to any record|{"contact_id":"Nobody Known"}`, `43|not linked to any record|{"company_id":"Harbor Logistics"}`}},
		{q: `SELECT count(*) FROM run_log WHERE level = 'warning' AND message LIKE '%names 2 companies%'`, want: []string{"4"}},
	},
}

// pipedrivePlainFixture is the Pipedrive export as Pipedrive writes a list
// view of one entity's columns today (FORMATS.md): the headers without the
// "Entity - " prefix (ID, Title, Organization ID, Email - Work). The same
// records as pipedriveFixture, with the same outcomes, links and warnings
// (issue 26 item 6).
var pipedrivePlainFixture = badCase{
	name: "PipedrivePlain", root: fixtureRoot, dir: "pipedrive-plain", source: "pipedrive",
	code: exitOK, status: "succeeded",
	kinds: map[string]phases.Counts{
		"company": {Imported: 4, Unowned: 4}, "contact": {Imported: 4, Unlinked: 1}, "deal": {Imported: 4, Unlinked: 1},
		"note": {Imported: 2, Skipped: 1, Unowned: 2}, "activity": {Imported: 2, Skipped: 1, Unlinked: 1},
	},
	stderr: []string{
		`warning: people-7788-20260115.csv:3: Organization "Harbor Logistics" names 2 companies of the export (organizations-7788-20260115.csv:3, organizations-7788-20260115.csv:4): left unlinked, not guessed`,
		`warning: deals-7788-20260115.csv:5: Organization "Harbor Logistics" names 2 companies`,
	},
	stderrNot: []string{"deals-7788-20260115.csv:3:"}, // its Organization ID says which
	stored: []storedRows{
		{q: `SELECT c.first_name, c.last_name, coalesce(c.email, ''), c.phone, coalesce(co.name, ''), coalesce(json_extract(c.extra, '$."Email - Work"'), '')
			FROM contacts c LEFT JOIN companies co ON co.id = c.company_id ORDER BY c.id`, want: []string{
			"Hannah|Okafor|hannah.okafor@brightwater-bakery.example.com|+1 503 555 0110|Brightwater Bakery|hannah.okafor@brightwater-bakery.example.com, hannah@brightwater-bakery.example.com",
			"Grace|Lindqvist|grace.lindqvist@harbor-logistics.example.com|+1 206 555 0111||",
			"Ana|García|ana.garcia@perez-hijos.example.com|+34 91 555 0113|Pérez, Hijos y Cía|",
			"Tomasz|Nowicki||+48 22 555 0112||"}},
		{q: `SELECT d.name, d.amount, d.currency, d.status, d.pipeline, coalesce(co.name, ''), coalesce(c.first_name, '')
			FROM deals d LEFT JOIN companies co ON co.id = d.company_id LEFT JOIN contacts c ON c.id = d.contact_id ORDER BY d.id`, want: []string{
			"Wholesale bread contract|48000|USD|open|Pipeline|Brightwater Bakery|Hannah",
			"Fleet tracking|125000.50|USD|won|Pipeline|Harbor Logistics|Grace",
			"Olive oil supply 2024|12000.50|EUR|open|Pipeline|Pérez, Hijos y Cía|Ana",
			"Rotterdam warehouse|30000|EUR|open|Pipeline||"}},
		{q: `SELECT source_id, reason, detail FROM migration_records WHERE action = 'skipped' ORDER BY kind, source_id`, want: []string{
			`33|not linked to any record|{"contact_id":"Nobody Known"}`, `43|not linked to any record|{"company_id":"Harbor Logistics"}`}},
	},
}

// TestProfileFixtures imports each profile's hand-made export, then again:
// the rerun finds everything imported unchanged, and the skips skipped again.
func TestProfileFixtures(t *testing.T) {
	t.Parallel()
	for _, c := range []badCase{salesforceFixture, hubspotFixture, pipedriveFixture, pipedrivePlainFixture} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			runBadCase(t, c)
		})
	}
}

// TestProfileFixturesRerun: a second run of each fixture export imports
// nothing twice.
func TestProfileFixturesRerun(t *testing.T) {
	t.Parallel()
	for _, c := range []badCase{salesforceFixture, hubspotFixture, pipedriveFixture, pipedrivePlainFixture} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			storetest.RunAddress(t, func(t *testing.T, path string) {
				args := []string{"--db", path, "--json", "run", "--tenant", "acme", "--source", c.source, filepath.Join(c.root, c.dir)}
				r := crm(t, nil, args...)
				require.Equal(t, c.code, r.code, r.stderr)
				r = crm(t, nil, args...)
				require.Equal(t, c.code, r.code, r.stderr)
				for k, first := range c.kinds {
					got := r.summary(t).Kinds[k]
					require.Equal(t, first.Imported, got.Unchanged, "%s: imported then unchanged", k)
					require.Zero(t, got.Imported, k)
					require.Equal(t, first.Skipped, got.Skipped, "%s: skipped again", k)
					require.Equal(t, first.Failed, got.Failed, "%s: failed again", k)
				}
			})
		})
	}
}

// TestSalesforceFixtureZipped: the same export zipped (read in place,
// ContentVersion/ bodies included) gives the same outcomes.
func TestSalesforceFixtureZipped(t *testing.T) {
	t.Parallel()
	c := salesforceFixture
	c.stderr = []string{"ignored 1 file not of the salesforce profile: WE_00D5g000004AbCdEAM_1.ZIP!/Attachment.csv",
		"1 companies (WE_00D5g000004AbCdEAM_1.ZIP!/Account.csv)"}
	c.input = func(t *testing.T) []string {
		src := filepath.Join(fixtureRoot, "salesforce")
		var names []string
		require.NoError(t, filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && filepath.Base(p) != "README.md" {
				rel, _ := filepath.Rel(src, p)
				names = append(names, filepath.ToSlash(rel))
			}
			return err
		}))
		z := filepath.Join(t.TempDir(), "WE_00D5g000004AbCdEAM_1.ZIP")
		zipFiles(t, z, src, names)
		return []string{z}
	}
	runBadCase(t, c)
}

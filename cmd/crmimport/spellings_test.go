package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/store/storetest"
)

// Issue 15 item 4: spellings of columns that real exports carry (FORMATS.md)
// and that a built-in profile left in extra. Each export below is written
// by hand as the CRM writes it and imported end to end.

// hubspotCSV is a HubSpot CSV export as Excel re-saves it: a UTF-8 BOM and
// CRLF rows.
func hubspotCSV(lines ...string) string {
	out := "\ufeff"
	for _, l := range lines {
		out += l + "\r\n"
	}
	return out
}

const hubspotCompanies = "hubspot-crm-exports-all-companies-2024-08-27.csv"

// hubspotThreeCompanies: one Brightwater Bakery, two companies called
// Harbor Logistics (a branch).
var hubspotThreeCompanies = hubspotCSV(
	"Record ID,Company name,Company Domain Name,Phone Number,Industry,Create Date",
	"10000000001,Brightwater Bakery,brightwater-bakery.example.com, +1 503 555 0101,Food & Beverages,2021-03-04 08:00",
	"10000000002,Harbor Logistics,harbor-logistics.example.com, +1 206 555 0102,Logistics and Supply Chain,2021-06-10 12:00",
	"10000000003,Harbor Logistics,harbor-logistics-eu.example.com, +31 10 555 0103,Logistics and Supply Chain,2022-01-20 09:30",
)

// TestHubSpotDealsWithAssociatedRecordIDs: a deals export with associated
// records names the deal's contact and company `Record ID - Contact` and
// `Record ID - Company` (FORMATS.md, "HubSpot": exports with associated
// records). They are the deal's links; before, both landed in extra and
// the deal imported with no company and no contact.
func TestHubSpotDealsWithAssociatedRecordIDs(t *testing.T) {
	t.Parallel()
	export := writeExport(t, map[string]string{
		hubspotCompanies: hubspotThreeCompanies,
		"hubspot-crm-exports-all-contacts-2024-08-27.csv": hubspotCSV(
			"Record ID,First Name,Last Name,Email,Phone Number,Create Date",
			"20000000001,Hannah,Okafor,hannah.okafor@brightwater-bakery.example.com, +1 503 555 0110,2022-03-14 10:00",
			"20000000002,Grace,Lindqvist,grace.lindqvist@harbor-logistics.example.com, +1 206 555 0111,2023-01-19 16:45",
		),
		"hubspot-crm-exports-all-deals-2024-08-27.csv": hubspotCSV(
			"Record ID - Deal,Deal Name,Deal Stage,Close Date,Amount,Pipeline,Create Date,Record ID - Contact,First Name,Last Name,Create Date,Record ID - Company,Company name,Create Date",
			"30000000001,Wholesale bread contract,closedwon,2024-04-30,48000,Sales Pipeline,2024-01-08 11:00,20000000001,Hannah,Okafor,2022-03-14 10:00,10000000001,Brightwater Bakery,2021-03-04 08:00",
			"30000000002,EU expansion,appointmentscheduled,2024-09-30,,Sales Pipeline,2024-02-01 09:00,,,,,10000000003,Harbor Logistics,2022-01-20 09:30",
			"30000000003,Fleet tracking,contractsent,2023-12-15,125000.50,Sales Pipeline,2023-10-02 15:00,20000000002,Grace,Lindqvist,2023-01-19 16:45,,,",
		),
	})
	storetest.RunAddress(t, func(t *testing.T, path string) {
		r := crm(t, nil, "--db", path, "--json", "run", "--tenant", "acme", "--source", "hubspot", export)
		require.Equal(t, exitOK, r.code, r.stderr)
		s := r.summary(t)
		require.Equal(t, int64(3), s.Kinds["deal"].Imported)
		require.Zero(t, s.Kinds["deal"].Unlinked)
		require.Equal(t, []string{
			"30000000001|Wholesale bread contract|10000000001|20000000001|Hannah|Okafor|Brightwater Bakery",
			"30000000002|EU expansion|10000000003|NULL|NULL|NULL|Harbor Logistics",
			"30000000003|Fleet tracking|NULL|20000000002|Grace|Lindqvist|NULL",
		}, query(t, path, `SELECT m.source_id, d.name, mco.source_id, mc.source_id,
			json_extract(d.extra, '$."First Name"'), json_extract(d.extra, '$."Last Name"'), json_extract(d.extra, '$."Company name"')
		FROM deals d JOIN migration_records m ON m.kind = 'deal' AND m.record_id = d.id
		LEFT JOIN migration_records mco ON mco.kind = 'company' AND mco.record_id = d.company_id
		LEFT JOIN migration_records mc ON mc.kind = 'contact' AND mc.record_id = d.contact_id
		ORDER BY m.source_id`), "the associated records' ids are links; their other columns stay in extra")
		require.Equal(t, []string{"0"}, query(t, path,
			`SELECT count(*) FROM deals WHERE json_extract(extra, '$."Record ID - Contact"') IS NOT NULL OR json_extract(extra, '$."Record ID - Company"') IS NOT NULL`),
			"a link column is not also extra")
	})
}

// TestHubSpotContactsAssociatedCompanyByName: a contacts export carries
// `Primary Associated Company ID` and `Associated Company`, the company's
// name (FORMATS.md, "HubSpot", contacts). The id links where there is one;
// where there is none the name links, exactly and only when one company of
// the export has it (the pipedrive profile's rule for names). Before, the
// name landed in extra and the contact imported with no company.
func TestHubSpotContactsAssociatedCompanyByName(t *testing.T) {
	t.Parallel()
	export := writeExport(t, map[string]string{
		hubspotCompanies: hubspotThreeCompanies,
		"hubspot-crm-exports-all-contacts-2024-08-27.csv": hubspotCSV(
			"Record ID,First Name,Last Name,Email,Phone Number,Contact owner,Primary Associated Company ID,Associated Company,Create Date",
			"20000000001,Hannah,Okafor,hannah.okafor@brightwater-bakery.example.com, +1 503 555 0110,Sam Rivera,,Brightwater Bakery,2022-03-14 10:00",
			"20000000002,Grace,Lindqvist,grace.lindqvist@harbor-logistics.example.com, +1 206 555 0111,Sam Rivera,10000000003,Harbor Logistics,2023-01-19 16:45",
			"20000000003,Tomasz,Nowicki,tomasz@harbor-logistics.example.com, +48 22 555 0112,Sam Rivera,,Harbor Logistics,2023-05-02 08:30",
			"20000000004,Ana,García,ana.garcia@perez-hijos.example.com, +34 91 555 0113,Sam Rivera,,,2023-02-15 09:00",
		),
	})
	storetest.RunAddress(t, func(t *testing.T, path string) {
		r := crm(t, nil, "--db", path, "--json", "run", "--tenant", "acme", "--source", "hubspot", export)
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Contains(t, r.stderr, `warning: hubspot-crm-exports-all-contacts-2024-08-27.csv:4: Associated Company "Harbor Logistics" names 2 companies of the export`)
		require.NotContains(t, r.stderr, "hubspot-crm-exports-all-contacts-2024-08-27.csv:3:", "Grace's company id says which Harbor Logistics")
		s := r.summary(t)
		require.Equal(t, int64(4), s.Kinds["contact"].Imported)
		require.Equal(t, []string{
			"20000000001|Hannah|10000000001|NULL",
			"20000000002|Grace|10000000003|NULL",
			"20000000003|Tomasz|NULL|Harbor Logistics",
			"20000000004|Ana|NULL|NULL",
		}, query(t, path, `SELECT m.source_id, c.first_name, mco.source_id, json_extract(c.extra, '$.company_id')
		FROM contacts c JOIN migration_records m ON m.kind = 'contact' AND m.record_id = c.id
		LEFT JOIN migration_records mco ON mco.kind = 'company' AND mco.record_id = c.company_id
		ORDER BY m.source_id`), "by id first, else by a name one company has; an ambiguous name kept, unlinked")
	})
}

// TestHubSpotContactsPrimaryCompanyIDs: `(Primary)` variants of the
// `Associated <Object> IDs` columns give the single link (FORMATS.md,
// "HubSpot", associations): a contact's `Associated Company IDs (Primary)`
// is its company, whatever the order of its `;`-list. Before, the column
// was extra and the list's first id was taken.
func TestHubSpotContactsPrimaryCompanyIDs(t *testing.T) {
	t.Parallel()
	export := writeExport(t, map[string]string{
		hubspotCompanies: hubspotThreeCompanies,
		"hubspot-crm-exports-all-contacts-2024-08-27.csv": hubspotCSV(
			"Record ID,First Name,Last Name,Email,Associated Company IDs (Primary),Associated Company IDs,Create Date",
			"20000000002,Grace,Lindqvist,grace.lindqvist@harbor-logistics.example.com,10000000003,10000000002; 10000000003,2023-01-19 16:45",
			"20000000001,Hannah,Okafor,hannah.okafor@brightwater-bakery.example.com,,10000000001,2022-03-14 10:00",
		),
	})
	storetest.RunAddress(t, func(t *testing.T, path string) {
		r := crm(t, nil, "--db", path, "--json", "run", "--tenant", "acme", "--source", "hubspot", export)
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Equal(t, []string{
			"20000000001|Hannah|10000000001|NULL",
			"20000000002|Grace|10000000003|10000000002; 10000000003",
		}, query(t, path, `SELECT m.source_id, c.first_name, mco.source_id, json_extract(c.extra, '$."Associated Company IDs"')
		FROM contacts c JOIN migration_records m ON m.kind = 'contact' AND m.record_id = c.id
		LEFT JOIN migration_records mco ON mco.kind = 'company' AND mco.record_id = c.company_id
		ORDER BY m.source_id`), "the primary company, the whole list kept")
	})
}

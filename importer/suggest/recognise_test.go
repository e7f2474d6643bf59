package suggest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRecogniseFixtures (issue 27 item 4): each built-in profile's
// fixtures, CSV and workbook twins, are recognised as its export, with
// the evidence in a line; a Salesforce Data Loader extract (extract.csv,
// which no file name of the profile names) by its ids; exports of CRMs no
// built-in profile reads (Zoho, Odoo) are not recognised as any, though
// a file or two of them resembles one (a Zoho deals file reads as
// HubSpot's, an Odoo crm.lead.csv as Pipedrive's leads).
func TestRecogniseFixtures(t *testing.T) {
	for _, tc := range []struct {
		fixture, profile, why string
	}{
		{"salesforce", "salesforce", "Account.csv, Contact.csv, Lead.csv and 6 more with 001/003/00Q ids: a Salesforce export"},
		{"xlsx/salesforce", "salesforce", "Account.xlsx, Contact.xlsx, Lead.xlsx and 6 more with 001/003/00Q ids: a Salesforce export"},
		{"suggest/dataloader", "salesforce", "extract.csv, extract (1).csv and extract (2).csv with 001/003/006 ids: a Salesforce export"},
		{"hubspot", "hubspot", "and 6 more with HubSpot's headers (77 of their 90 columns spelled as the hubspot profile spells them): a HubSpot export"},
		{"xlsx/hubspot", "hubspot", "a HubSpot export"},
		{"pipedrive", "pipedrive", "organizations-4321-20240827.csv, people-4321-20240827.csv, deals-4321-20240827.csv and 2 more with Pipedrive's headers"},
		{"pipedrive-plain", "pipedrive", "a Pipedrive export"},
		{"xlsx/pipedrive", "pipedrive", "a Pipedrive export"},
		{"suggest/pipedrive-counts", "pipedrive", "a Pipedrive export"},
		{"demo", "canonical", "companies.csv, contacts.csv, deals.csv and 3 more with the canonical headers (56 of their 59 columns spelled as the canonical profile spells them): crmimport's canonical layout"},
		{"demo-later", "canonical", "contacts.csv with the canonical headers (6 of its 6 columns spelled as the canonical profile spells them)"},
		{"xlsx/canonical", "canonical", "crmimport's canonical layout"},
		{"suggest/zoho", "", "the closest, hubspot, reads 1 of the 2 files that hold records, and 4 of the 10 columns of that file"},
		{"odoo/crm-lead", "", "the closest, pipedrive, reads crm.lead.csv, but spells only 0 of the 2 columns it reads as the export does: they are another CRM's headers"},
		{"odoo/res-partner", "", "none of the canonical, hubspot, pipedrive and salesforce profiles reads res.partner.csv"},
		{"suggest/odoo-de", "", "none of the canonical, hubspot, pipedrive and salesforce profiles reads Kontakt (res.partner).csv"},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			r, err := Recognise(context.Background(), []string{fixture(tc.fixture)}, Options{})
			require.NoError(t, err)
			require.Equal(t, tc.profile, r.Profile, r.Why)
			require.Contains(t, r.Why, tc.why)
			if tc.profile == "" {
				return
			}
			require.Equal(t, tc.profile, r.Candidates[0].Profile)
			read := 0
			for _, f := range r.Files {
				if f.Read {
					read++
					require.NotEmpty(t, f.Kind, "%s: read as a kind", f.Name)
				}
			}
			require.Equal(t, r.Candidates[0].Files, read, "each file the profile reads is marked so")
		})
	}
}

// TestRecogniseNeedsTheProfile: with the profile of an export hidden, no
// other built-in profile is proposed for it — a recognition is the
// evidence of the profile that reads it, not the best of the rest.
func TestRecogniseNeedsTheProfile(t *testing.T) {
	for _, tc := range []struct{ fixture, profile string }{
		{"salesforce", "salesforce"}, {"hubspot", "hubspot"}, {"pipedrive", "pipedrive"}, {"demo", "canonical"},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			r, err := Recognise(context.Background(), []string{fixture(tc.fixture)}, Options{Hide: []string{tc.profile}})
			require.NoError(t, err)
			require.Empty(t, r.Profile, r.Why)
		})
	}
}

// TestRecogniseTooFewColumns: a file whose only columns a profile spells
// are its id and one more is no evidence of the CRM.
func TestRecogniseTooFewColumns(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "users.csv"), []byte("id,email\nu-1,ann@example.com\n"), 0o600))
	r, err := Recognise(context.Background(), []string{dir}, Options{})
	require.NoError(t, err)
	require.Empty(t, r.Profile)
	require.Equal(t, "the closest, canonical, reads users.csv, but only 2 of its columns as it spells them: too few to tell", r.Why)
}

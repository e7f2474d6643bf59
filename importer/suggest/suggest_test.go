package suggest

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/importer/input"
	"crmimport/importer/profile"
	"crmimport/importer/reader"
	"crmimport/ledger"
)

func fixture(name string) string { return filepath.Join("..", "..", "fixtures", name) }

func TestSuggestHubSpotLoads(t *testing.T) {
	d, err := Suggest(context.Background(), []string{fixture("hubspot")}, Options{Name: "hs-draft", Hide: []string{"hubspot"}})
	require.NoError(t, err)
	require.NoError(t, d.Check())
	kinds := map[string]ledger.Kind{}
	for _, f := range d.Files {
		kinds[f.Name] = f.Kind
	}
	require.Equal(t, ledger.Contact, kinds["hubspot-crm-exports-all-contacts-2024-08-27.csv"])
	require.Equal(t, ledger.Activity, kinds["meetings-api-2024-08-27.json"])
	p, err := profile.Load("hs-draft.yaml", d.YAML())
	require.NoError(t, err)
	require.Equal(t, "hs-draft", p.Name)
}

// builtinColumns reads a file as the built-in profile's mapper describes
// it: what each column gives.
func builtinColumns(t *testing.T, p *profile.Profile, k ledger.Kind, f *File) []profile.Column {
	t.Helper()
	rr, in, err := input.OpenRows(f.Ref, reader.ReadOptions{Name: f.Name, Format: f.Format}, input.DefaultLimits())
	require.NoError(t, err)
	defer in.Close()
	header, sheet := rr.Header(), rr.Sheet()
	var rows []reader.Row
	for {
		row, err := rr.Next()
		if errors.Is(err, io.EOF) || err == nil && row.Sheet != sheet {
			break // a workbook: its first sheet, as the draft reads it
		}
		require.NoError(t, err)
		rows = append(rows, row)
	}
	return profile.NewMapper(p, k, f.Name).Columns(header, rows)
}

// TestSuggestPlacesBuiltinFixtures drafts a profile for each built-in
// profile's own fixtures with that profile hidden: the kind and id column
// of every file it reads are right, and at least 80% of the columns it
// maps are placed as it places them.
func TestSuggestPlacesBuiltinFixtures(t *testing.T) {
	for _, tc := range []struct{ profile, fixture string }{
		{"hubspot", "hubspot"}, {"pipedrive", "pipedrive"}, {"salesforce", "salesforce"}, {"canonical", "demo"},
		// Their twin workbooks (fixtures/xlsx), as Excel writes them.
		{"hubspot", "xlsx/hubspot"}, {"pipedrive", "xlsx/pipedrive"}, {"salesforce", "xlsx/salesforce"}, {"canonical", "xlsx/canonical"},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			builtin, err := profile.Builtin(tc.profile)
			require.NoError(t, err)
			d, err := Suggest(context.Background(), []string{fixture(tc.fixture)}, Options{Hide: []string{tc.profile}})
			require.NoError(t, err)
			mapped, same, files := 0, 0, 0
			for _, f := range d.Files {
				ks, _, ok := builtin.FileKinds(f.Name)
				if !ok {
					continue
				}
				require.Len(t, ks, 1, "%s: a built-in profile gives each of its fixtures' files one kind", f.Name)
				k := ks[0]
				cols := builtinColumns(t, builtin, k, f)
				where := false
				for _, c := range cols {
					where = where || len(c.Where) > 0
				}
				if where {
					// The profile reads some rows of it only (a where), and
					// their bodies from side files: no draft guesses that.
					t.Logf("%s: read by %s for some of its rows only (where): not counted", f.Name, tc.profile)
					continue
				}
				files++
				require.Equal(t, k, f.Kind, "%s: kind (%s)", f.Name, f.KindWhy)
				require.Len(t, f.Columns, len(cols), f.Name)
				var ids []string
				draftID := ""
				for i, c := range cols {
					if c.Field == "id" {
						ids = append(ids, c.Name)
					}
					if f.Columns[i].Field == "id" {
						draftID = f.Columns[i].Name
					}
				}
				require.Contains(t, ids, draftID, "%s: id column", f.Name)
				for i, c := range cols {
					if c.Field == profile.ColumnExtra {
						continue
					}
					mapped++
					got := f.Columns[i].Field
					ok := got == c.Field
					if c.Field == "" && c.Link != nil { // a link by id prefix: right when it links to one of its kinds
						for _, p := range c.Link.Prefixes {
							ok = ok || (p.Kind != "" && got == string(p.Kind)+"_id")
						}
					}
					if ok {
						same++
					} else {
						t.Logf("%s: %q: %s gives %q, the draft %q (%s)", f.Name, c.Name, tc.profile, c.Field, got, f.Columns[i].Why)
					}
				}
			}
			require.NotZero(t, files)
			share := float64(same) / float64(mapped)
			t.Logf("%s: %d of %d mapped columns placed as the %s profile places them (%.1f%%), in %d files", tc.fixture, same, mapped, tc.profile, 100*share, files)
			require.GreaterOrEqual(t, share, 0.8)
		})
	}
}

// TestDraftDeterministicAndChecked: the same export gives the same bytes;
// Check names a kind without an id column, a field given twice, and lets
// a kind read from two files pass.
func TestDraftDeterministicAndChecked(t *testing.T) {
	a, err := Suggest(context.Background(), []string{fixture("hubspot")}, Options{Hide: []string{"hubspot"}})
	require.NoError(t, err)
	b, err := Suggest(context.Background(), []string{fixture("hubspot")}, Options{Hide: []string{"hubspot"}})
	require.NoError(t, err)
	require.Equal(t, string(a.YAML()), string(b.YAML()))
	require.NoError(t, a.Check(), "activities read from three files")

	var contacts *File
	for _, f := range a.Files {
		if f.Name == "hubspot-crm-exports-all-contacts-2024-08-27.csv" {
			contacts = f
		}
	}
	require.NotNil(t, contacts)
	for _, c := range contacts.Columns {
		switch c.Name {
		case "Record ID - Contact":
			c.Field = ""
		case "Job Title":
			c.Field = "email"
		}
	}
	err = a.Check()
	require.ErrorContains(t, err, `hubspot-crm-exports-all-contacts-2024-08-27.csv: a contact file needs an id column`)
	require.ErrorContains(t, err, `columns "Email" and "Job Title" both give email`)
	_, err = profile.Load("draft.yaml", a.YAML())
	require.NoError(t, err, "YAML leaves out what Check refuses")
}

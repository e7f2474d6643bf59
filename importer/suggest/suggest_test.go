package suggest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/importer/profile"
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

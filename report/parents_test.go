package report_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/report"
)

// TestParentsFoundNamesEveryLink: the SQL that finds a skip's parents
// knows every link field of the table of kinds, as canon spells it
// (canon.Table.LinkKindCase) — a kind that becomes a parent is taught
// there.
func TestParentsFoundNamesEveryLink(t *testing.T) {
	t.Parallel()
	c := canon.KindTable().LinkKindCase("j.key")
	require.Contains(t, report.ParentsFoundSQL, c)
	require.Contains(t, report.ParentsFoundPG, c)
	for _, k := range []ledger.Kind{ledger.Company, ledger.Contact, ledger.Deal} {
		require.Contains(t, c, "'"+canon.LinkField(k)+"'")
	}
}

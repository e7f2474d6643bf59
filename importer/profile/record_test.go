package profile

import (
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/importer/reader"
	"crmimport/ledger"
)

// TestExtraThatCannotBeJSONFailsTheRecord: issue 11 item 21. Extra columns
// that cannot be written as JSON fail their record (nothing is dropped
// silently); before, the record imported without them.
func TestExtraThatCannotBeJSONFailsTheRecord(t *testing.T) {
	t.Parallel()
	fs := canon.FieldsOf(ledger.Contact)
	r := Record{Kind: ledger.Contact, ID: "c1", fields: fs, vals: make([]string, len(fs.Names))}
	r.vals[fs.Index["id"]], r.vals[fs.Index["first_name"]] = "c1", "Ann"
	r.addExtra("nested", reader.Col{Name: "nested", Value: `{"broken":`, Nested: true})
	r.Validate()
	require.Contains(t, r.invalid, "extra columns cannot be kept as JSON")
}

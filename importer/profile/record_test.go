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
	fields := canon.FieldsOf(ledger.Contact)
	r := Record{Kind: ledger.Contact, ID: "c1", fields: fields, vals: make([]string, len(fields.Names))}
	r.vals[fields.Index["id"]], r.vals[fields.Index["first_name"]] = "c1", "Ann"
	r.addExtra("nested", reader.Col{Name: "nested", Value: `{"broken":`, Nested: true})
	r.Validate()
	require.Contains(t, r.invalid, "extra columns cannot be kept as JSON")
}

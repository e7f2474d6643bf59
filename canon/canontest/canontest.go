// Package canontest helps tests see what a new kind would do: a copy of
// canon's table of kinds with one more row, which a test hands to the
// functions that derive from the table (canon.Table's methods, and each
// package's own that takes a Table). Non-test code never imports it.
package canontest

import (
	"testing"

	"crmimport/canon"
)

// WithKind is canon's table of kinds with row d added: a table in the
// test alone, the production table unchanged. It fails t if the table
// with d is not a table of kinds (canon.Table.Check).
func WithKind(t testing.TB, d canon.Def) canon.Table {
	t.Helper()
	tbl := append(canon.KindTable(), d)
	if err := tbl.Check(); err != nil {
		t.Fatalf("canon's table of kinds with %s: %v", d.Kind, err)
	}
	return tbl
}

// Ticket is a kind that canon does not have, as a row: a support case in
// phase 3 beside deals, linked to a company and a contact, matched on
// nothing. A test adds it with WithKind.
func Ticket() canon.Def {
	return canon.Def{Kind: "ticket", Phase: 3, Label: "subject",
		Fields: []string{"id", "subject", "company_id", "contact_id", "created_at", "deleted"},
		Links:  []canon.Link{{Field: "company_id", Kind: "company"}, {Field: "contact_id", Kind: "contact"}}}
}

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

// Lead is a kind that canon does not have, as a row: in phase 2 beside
// contacts, linked to a company, matched on its email. A test adds it
// with WithKind.
func Lead() canon.Def {
	return canon.Def{Kind: "lead", Phase: 2, Label: "name", Key: "email",
		Fields: []string{"id", "name", "email", "company_id", "created_at", "deleted"},
		Links:  []canon.Link{{Field: "company_id", Kind: "company"}}}
}

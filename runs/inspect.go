package runs

import (
	"context"

	"crmimport/importer"
)

// InspectSpec is what `inspect` and the import page's Preview ask: what a
// run of an export would plan and find, with nothing written.
type InspectSpec = importer.InspectSpec

// Inspection is what they answer (importer.Inspection), FileInspection
// one file of it, and RowInspection one row as a run would map it.
type (
	Inspection     = importer.Inspection
	FileInspection = importer.FileInspection
	RowInspection  = importer.RowInspection
)

// How many rows an inspection maps per file by default, and at most.
const (
	DefaultInspectRows = importer.DefaultInspectRows
	MaxInspectRows     = importer.MaxInspectRows
)

// What an inspected row is to the tenant's ledger (R17).
const (
	RowNew          = importer.RowNew
	RowUnchanged    = importer.RowUnchanged
	RowOutdated     = importer.RowOutdated
	RowConflict     = importer.RowConflict
	RowDeletedSince = importer.RowDeletedSince
)

// Inspect is what a run of spec's export would plan and find, writing to
// no database (with spec.Ledger, reading the tenant's): both faces'
// preview of a run.
func Inspect(ctx context.Context, spec InspectSpec) (Inspection, error) {
	return importer.Inspect(ctx, spec)
}

package desktop

import (
	"encoding/json"
	"fmt"

	"crmimport/canon"
)

// undoKind is a kind as the undo dialog names it.
type undoKind struct {
	Kind   string `json:"kind"`
	Plural string `json:"plural"`
}

// undoKinds is the JSON of the kinds of table t in the order an undo takes
// them back (canon.Table.ChildrenFirst, R16), each with its plural: the
// undo dialog lists a plan's counts in that order (the run page's
// data-kinds), and keeps no list of kinds of its own.
func undoKinds(t canon.Table) (string, error) {
	var out []undoKind
	for _, k := range t.ChildrenFirst() {
		out = append(out, undoKind{Kind: string(k), Plural: k.Plural()})
	}
	b, err := json.Marshal(out)
	if err != nil {
		return "", fmt.Errorf("the kinds children first: %w", err)
	}
	return string(b), nil
}

// planKinds is the JSON of the kinds in plan order (canon.Kinds), each
// with its plural: New import lists a dry run's counts in that order, as
// the run page does.
func planKinds() (string, error) {
	var out []undoKind
	for _, k := range canon.Kinds() {
		out = append(out, undoKind{Kind: string(k), Plural: k.Plural()})
	}
	b, err := json.Marshal(out)
	if err != nil {
		return "", fmt.Errorf("the kinds in plan order: %w", err)
	}
	return string(b), nil
}

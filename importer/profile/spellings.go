package profile

// The columns a profile reads, listed for a suggestion to learn from
// (package suggest): per kind and field, the spellings of the header, and
// the link columns with their parent kind and list separator.

import (
	"crmimport/canon"
	"crmimport/ledger"
)

// Spelling is one column a profile reads for a kind: a field's, or a
// link's.
type Spelling struct {
	Kind ledger.Kind `json:"kind"`
	// Field is the canonical field the column gives (a link field,
	// company_id, for a link to one kind); "" for a link by id prefix.
	Field  string `json:"field"`
	Column string `json:"column"`
	// Norm is Column as headers are compared (case, spaces, _ and -
	// ignored).
	Norm string `json:"norm"`
	// Link: the column is one of the kind's links beyond its fields
	// (links:), of Parent's kind, a List of ids when List is not "", by
	// the parent's name when ByName.
	Link   bool        `json:"link,omitempty"`
	Parent ledger.Kind `json:"parent,omitempty"`
	List   string      `json:"list,omitempty"`
	ByName bool        `json:"by_name,omitempty"`
	// Multi is a field's multi-value separator, or "".
	Multi string `json:"multi,omitempty"`
	// Rank is the column's place among the field's alternates (0: the
	// first the profile names).
	Rank int `json:"rank"`
}

// Spellings lists the columns the profile reads, kind by kind in plan
// order, field by field in canonical order, then the kind's links.
func (p *Profile) Spellings() []Spelling {
	var out []Spelling
	for _, k := range p.Kinds() {
		spec := p.kinds[k]
		for _, f := range canon.Fields(k) {
			fs := spec.fields[f]
			if fs == nil {
				continue
			}
			parent, _ := canon.KindOfLinkField(f)
			for rank, c := range fs.columns {
				out = append(out, Spelling{Kind: k, Field: f, Column: c, Norm: normaliseHeader(c), Parent: parent, Multi: fs.multi, Rank: rank})
			}
		}
		for _, ls := range spec.links {
			field := ""
			if ls.kind != "" {
				field = canon.LinkField(ls.kind)
			}
			for rank, c := range ls.columns {
				out = append(out, Spelling{Kind: k, Field: field, Column: c, Norm: normaliseHeader(c), Link: true,
					Parent: ls.kind, List: ls.list, ByName: ls.byName, Rank: rank})
			}
		}
	}
	return out
}

// NormaliseHeader is a header name as profiles compare it: "First Name",
// "first_name" and "FIRST-NAME" are one name.
func NormaliseHeader(h string) string { return normaliseHeader(h) }

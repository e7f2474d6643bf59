package profile

// What a mapper does with a file, told to a person before any row is
// imported (crmimport inspect, the desktop's New import page): what each
// column gives, the links of the kind, the side files its task reads. It
// reads the layout the mapper maps rows with (layoutOf), so that what is
// told is what is done.

import (
	"fmt"

	"crmimport/canon"
	"crmimport/importer/reader"
	"crmimport/ledger"
)

// ColumnExtra is the Field of a column whose values are kept in a record's
// extra (SPEC §4: nothing is dropped silently).
const ColumnExtra = "extra"

// Column is what one column of a file gives, as its mapper maps it.
type Column struct {
	Name string `json:"name"` // as the file writes it (a JSON key: flattened, properties.email)
	// Field is the canonical field the column gives; ColumnExtra when its
	// values are kept in extra; "" for a link column whose field depends
	// on each value (by id prefix: Link says how).
	Field string `json:"field"`
	// ExtraName is the name its values take in extra when that is not Name
	// (a repeated header's second column: Phone#2).
	ExtraName string `json:"extra_name,omitempty"`
	// Alternate is the column's rank among the Alternates columns of the
	// file that may give Field (or hold Link): the first of them that
	// holds a value gives it, and the others are kept in extra.
	Alternate  int `json:"alternate,omitempty"`
	Alternates int `json:"alternates,omitempty"`
	// Multi is the separator of a column of several values: its first
	// value gives Field, and the column is kept in extra when it holds more.
	Multi string `json:"multi,omitempty"`
	// Link is the link of the kind the column holds (one of Mapper.Links),
	// or nil.
	Link *Link `json:"link,omitempty"`
	// Where are the values that make a row a record of the kind: a row
	// whose value here is none of them is read, and not imported. A flag's
	// is "true" or "false" (Flag), as the profile reads flags.
	Where []string `json:"where,omitempty"`
	Flag  bool     `json:"flag,omitempty"`
	// Outcome is "won" or "closed" for a flag a deal's status is read
	// from: won when the won flag is true, else lost when the closed one
	// is, else open.
	Outcome string `json:"outcome,omitempty"`
	// OtherKinds are the other kinds of the file that map the column: its
	// value is theirs, kept in this kind's extra only for a row none of
	// them takes (SPEC §4); OtherKindsTakeAll: they take every row (no
	// where), so it is never in this kind's extra.
	OtherKinds        []ledger.Kind `json:"other_kinds,omitempty"`
	OtherKindsTakeAll bool          `json:"other_kinds_take_all,omitempty"`
	// IDFrom are the columns the kind's id is made of (SPEC §4), when the
	// column is one of them: editing its value in the CRM makes a new
	// record.
	IDFrom []string `json:"id_from,omitempty"`
}

// Link is a link of a kind as a profile reads it (R6): a link field to one
// parent kind, or link values beyond the link fields — by id prefix, a
// list, a parent's name looked up in the export, the rows of a joined file.
type Link struct {
	// Field is the link field it gives (company_id), and Kind the parent
	// kind; both "" for a link by id prefix (Prefixes).
	Field string      `json:"field,omitempty"`
	Kind  ledger.Kind `json:"kind,omitempty"`
	// Columns are the columns that hold it, as the profile names them, in
	// order of preference (of the joined file, for a join).
	Columns []string `json:"columns"`
	// Prefixes: an id's prefix says which kind it links to, longest first;
	// a prefix of no kind is ignored (Salesforce's users, 005).
	Prefixes []Prefix `json:"prefixes,omitempty"`
	// List is the separator of a list of values ("json" for a JSON array):
	// the first that resolves gives the field.
	List string `json:"list,omitempty"`
	// ByName: the value is the parent's name, looked up among the parent
	// kind's records of the export (never guessed when several share it).
	ByName bool `json:"by_name,omitempty"`
	// Join is the pattern of the file whose rows, joined to each record,
	// hold the link.
	Join string `json:"join,omitempty"`
}

// Prefix is an id prefix of a link by prefix, and the kind it links to
// ("" for none: ignored).
type Prefix struct {
	Prefix string      `json:"prefix"`
	Kind   ledger.Kind `json:"kind,omitempty"`
	// NotImported names the object of the ids the profile does not import
	// (a case): kept, and waiting for nothing a run gives (R6b).
	NotImported string `json:"not_imported,omitempty"`
}

// Links are the links of the mapper's kind in its file, in the order a link
// is looked for: the link fields the profile maps (canon.Parents), then the
// kind's links beyond them, then those of the files joined to this one.
func (m *Mapper) Links() []Link {
	links, _ := m.links()
	return links
}

// links are Links, and how many of them are link fields (the first).
func (m *Mapper) links() (out []Link, fields int) {
	for _, l := range canon.Parents(m.kind) {
		if spec := m.kindSpec.fields[l.Field]; spec != nil {
			out = append(out, Link{Field: l.Field, Kind: l.Kind, Columns: append([]string(nil), spec.columns...)})
		}
	}
	fields = len(out)
	for _, ls := range m.kindSpec.links {
		out = append(out, describeLink(ls))
	}
	for _, js := range m.fileSpec.joins {
		for _, ls := range js.links {
			l := describeLink(ls)
			l.Join = js.file
			out = append(out, l)
		}
	}
	return out, fields
}

func describeLink(ls *linkSpec) Link {
	l := Link{Kind: ls.kind, Columns: append([]string(nil), ls.columns...), List: ls.list, ByName: ls.byName}
	if ls.kind != "" {
		l.Field = canon.LinkField(ls.kind)
	}
	for _, p := range ls.prefixes {
		l.Prefixes = append(l.Prefixes, Prefix{Prefix: p.prefix, Kind: p.kind, NotImported: p.object})
	}
	return l
}

// Columns tells what each column of a file gives: of a CSV file's header,
// or, for JSON (header nil), of the keys of rows in the order they first
// appear, flattened as Map flattens them.
func (m *Mapper) Columns(header []string, rows []reader.Row) []Column {
	var cols []reader.Col
	if header != nil {
		for _, h := range header {
			cols = append(cols, reader.Col{Name: h})
		}
	} else {
		seen := map[string]bool{}
		for _, row := range rows {
			rc := row.Cols
			if m.roots != nil {
				rc = flatten(rc, m.roots)
			}
			for _, c := range rc {
				if !seen[c.Name] {
					seen[c.Name] = true
					cols = append(cols, reader.Col{Name: c.Name})
				}
			}
		}
	}
	l := m.layoutOf(cols)
	out := make([]Column, len(cols))
	for i, c := range cols {
		out[i] = Column{Name: c.Name, Field: ColumnExtra}
		if l.extraName[i] != c.Name {
			out[i].ExtraName = l.extraName[i]
		}
		if f := l.field[i]; f >= 0 {
			out[i].Field = m.fields.Names[f]
		}
	}
	for _, g := range l.alts {
		for rank, at := range g.cols {
			out[at].Field, out[at].Alternate, out[at].Alternates = m.fields.Names[g.field], rank+1, len(g.cols)
		}
	}
	links, plain := m.links()
	for i := range out {
		if spec := m.kindSpec.fields[out[i].Field]; spec != nil && spec.multi != "" {
			out[i].Multi = spec.multi
		}
		for li := 0; li < plain; li++ {
			if out[i].Field == links[li].Field {
				out[i].Link = &links[li]
			}
		}
	}
	for li, at := range l.linkCols {
		link := &links[plain+li]
		for rank, i := range at {
			out[i].Link = link
			if l.field[i] == colPerRow && out[i].Alternate == 0 {
				out[i].Field = link.Field // "" by prefix
			}
			if len(at) > 1 {
				out[i].Alternate, out[i].Alternates = rank+1, len(at)
			}
		}
	}
	for fi, at := range l.outcomeAt {
		if at >= 0 {
			out[at].Field, out[at].Outcome = "status", [2]string{"won", "closed"}[fi]
		}
	}
	for wi, at := range l.whereAt[m.self] {
		if at < 0 {
			continue
		}
		w := m.fileSpec.where[wi]
		out[at].Where = append([]string(nil), w.values...)
		if w.isFlag {
			out[at].Where, out[at].Flag = []string{fmt.Sprint(w.flag)}, true
		}
	}
	for i, sibs := range l.sharedBy {
		for _, si := range sibs {
			out[i].OtherKinds = append(out[i].OtherKinds, m.siblings[si].kind)
			out[i].OtherKindsTakeAll = out[i].OtherKindsTakeAll || len(m.siblings[si].spec.where) == 0
		}
	}
	for i, c := range cols {
		for _, f := range m.idFrom {
			if normaliseHeader(f) == normaliseHeader(c.Name) {
				out[i].IDFrom = append([]string(nil), m.idFrom...)
			}
		}
	}
	return out
}

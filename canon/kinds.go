package canon

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"crmimport/ledger"
)

// Def is one row of the table of kinds: what a kind is. Everything else
// that depends on the kind — its phase, its place children-first, its
// parents, the SQL that orders by kind, the page's order — derives from
// these rows (KindTable).
type Def struct {
	Kind ledger.Kind
	// Phase is the kind's phase in the default plan (R7): later than the
	// phase of each of its parents. Kinds of one phase run side by side.
	Phase int
	// Fields are its canonical fields in order (SPEC §4).
	Fields []string
	// Links are its link fields and the parent kind each points to, in
	// the order a link is looked for (R6).
	Links []Link
	// NeedsParent: a record with no resolvable parent is skipped (R6);
	// without it, the record imports with the link empty.
	NeedsParent bool
	// Label is the text column of its target table that a placeholder row
	// loaded from a dump fills to say what it is.
	Label string
	// Key is the field of its natural key (R5), "" for none.
	Key string
	// Optional: a failed task of the kind does not stop the run (R7) —
	// what its records give the others are optional links (owners),
	// completed once they import (R6a).
	Optional bool
}

// Table is a table of kinds. Its order is the plan order once sorted by
// phase (Kinds).
type Table []Def

// kinds is the table of kinds (SPEC §4), the one list: read it through
// KindTable, never change it.
var kinds = Table{
	{Kind: ledger.User, Phase: 1, Label: "name", Key: "email", Optional: true,
		Fields: []string{"id", "email", "name", "active", "created_at", "deleted"}},
	{Kind: ledger.Company, Phase: 1, Label: "name", Key: "domain",
		Fields: []string{"id", "name", "domain", "phone", "industry", "owner_id", "created_at", "deleted"},
		Links:  []Link{{"owner_id", ledger.User}}},
	{Kind: ledger.Contact, Phase: 2, Label: "last_name", Key: "email",
		Fields: []string{"id", "first_name", "last_name", "email", "phone", "title", "company_id", "owner_id", "created_at", "deleted"},
		Links:  []Link{{"company_id", ledger.Company}, {"owner_id", ledger.User}}},
	{Kind: ledger.Lead, Phase: 2, Label: "last_name",
		Fields: []string{"id", "first_name", "last_name", "email", "phone", "title", "company_name", "status", "lead_source", "converted_contact_id", "owner_id", "created_at", "deleted"},
		Links:  []Link{{"converted_contact_id", ledger.Contact}, {"owner_id", ledger.User}}},
	{Kind: ledger.Deal, Phase: 3, Label: "name",
		Fields: []string{"id", "name", "amount", "currency", "stage", "status", "pipeline", "close_date", "company_id", "contact_id", "owner_id", "created_at", "deleted"},
		Links:  []Link{{"company_id", ledger.Company}, {"contact_id", ledger.Contact}, {"owner_id", ledger.User}}},
	{Kind: ledger.Note, Phase: 4, Label: "body", NeedsParent: true,
		Fields: []string{"id", "body", "contact_id", "lead_id", "company_id", "deal_id", "owner_id", "created_at", "deleted"},
		Links:  []Link{{"contact_id", ledger.Contact}, {"lead_id", ledger.Lead}, {"company_id", ledger.Company}, {"deal_id", ledger.Deal}, {"owner_id", ledger.User}}},
	{Kind: ledger.Activity, Phase: 5, Label: "subject", NeedsParent: true,
		Fields: []string{"id", "type", "subject", "body", "due_at", "done", "contact_id", "lead_id", "company_id", "deal_id", "owner_id", "created_at", "deleted"},
		Links:  []Link{{"contact_id", ledger.Contact}, {"lead_id", ledger.Lead}, {"company_id", ledger.Company}, {"deal_id", ledger.Deal}, {"owner_id", ledger.User}}},
	{Kind: ledger.Email, Phase: 5, Label: "subject", NeedsParent: true,
		Fields: []string{"id", "subject", "body", "from", "to", "sent_at", "contact_id", "lead_id", "company_id", "deal_id", "deleted"},
		Links:  []Link{{"contact_id", ledger.Contact}, {"lead_id", ledger.Lead}, {"company_id", ledger.Company}, {"deal_id", ledger.Deal}}},
}

// KindTable returns the table of kinds, a copy: what crmimport imports.
func KindTable() Table { return kinds.Clone() }

// Kinds returns every kind in plan order (companies first).
func Kinds() []ledger.Kind { return kinds.Kinds() }

// ParseKind accepts a kind in the singular or the plural, in any case.
func ParseKind(s string) (ledger.Kind, error) { return kinds.Parse(s) }

// ChildrenFirst is the order in which rows are taken back (SPEC §10, R16):
// every kind before the kinds it links to, so that every foreign key holds
// at every commit.
func ChildrenFirst() []ledger.Kind { return kinds.ChildrenFirst() }

// Phase is the phase of kind k in the default plan (R7).
func Phase(k ledger.Kind) int { return kinds.Def(k).Phase }

// UndoPhase is the phase of kind k in an undo: children first (SPEC §10).
func UndoPhase(k ledger.Kind) int { return kinds.UndoPhase(k) }

// PhasesInWords says the default plan phase by phase (Table.PhasesInWords).
func PhasesInWords() string { return kinds.PhasesInWords() }

// Label is the text column of kind k's target table that a placeholder
// row fills.
func Label(k ledger.Kind) string { return kinds.Def(k).Label }

// Clone is a copy of t that shares nothing with it.
func (t Table) Clone() Table {
	out := make(Table, len(t))
	for i, d := range t {
		d.Fields = slices.Clone(d.Fields)
		d.Links = slices.Clone(d.Links)
		out[i] = d
	}
	return out
}

// Def is the row of kind k. A kind that has none is a bug, not an input
// (every kind read is parsed by Parse, or held by a column whose CHECK
// admits the table's kinds alone): it panics naming it.
func (t Table) Def(k ledger.Kind) Def {
	for _, d := range t {
		if d.Kind == k {
			return d
		}
	}
	panic(fmt.Sprintf("canon: %q is not a kind of the table of kinds", string(k)))
}

// Has reports whether k has a row.
func (t Table) Has(k ledger.Kind) bool {
	return slices.ContainsFunc(t, func(d Def) bool { return d.Kind == k })
}

// Kinds are t's kinds in plan order: by phase, and in the table's order
// within a phase.
func (t Table) Kinds() []ledger.Kind {
	s := slices.Clone(t)
	slices.SortStableFunc(s, func(a, b Def) int { return a.Phase - b.Phase })
	out := make([]ledger.Kind, len(s))
	for i, d := range s {
		out[i] = d.Kind
	}
	return out
}

// ChildrenFirst are t's kinds latest phase first, each before its parents:
// within a phase, a kind whose parent shares it (a company and its owner,
// a user) comes before that parent; the others keep the table's order.
func (t Table) ChildrenFirst() []ledger.Kind {
	s := slices.Clone(t)
	slices.SortStableFunc(s, func(a, b Def) int {
		if a.Phase != b.Phase {
			return b.Phase - a.Phase
		}
		return t.samePhaseParents(b) - t.samePhaseParents(a)
	})
	out := make([]ledger.Kind, len(s))
	for i, d := range s {
		out[i] = d.Kind
	}
	return out
}

// samePhaseParents is how many kinds of d's own phase d descends from,
// through links within the phase.
func (t Table) samePhaseParents(d Def) int {
	n := 0
	for _, l := range d.Links {
		if t.Has(l.Kind) && t.Def(l.Kind).Phase == d.Phase {
			n += 1 + t.samePhaseParents(t.Def(l.Kind))
		}
	}
	return n
}

// PhasesInWords says t's plan phase by phase: "1 companies, 2 contacts,
// 3 deals, 4 notes, 5 activities and emails".
func (t Table) PhasesInWords() string {
	var phases []string
	var in []string
	kinds := t.Kinds()
	for i, k := range kinds {
		in = append(in, k.Plural())
		if i+1 < len(kinds) && t.Def(kinds[i+1]).Phase == t.Def(k).Phase {
			continue
		}
		words := in[0]
		if n := len(in); n > 1 {
			words = strings.Join(in[:n-1], ", ") + " and " + in[n-1]
		}
		phases = append(phases, fmt.Sprintf("%d %s", t.Def(k).Phase, words))
		in = nil
	}
	return strings.Join(phases, ", ")
}

// LastPhase is the latest phase of t's kinds.
func (t Table) LastPhase() int {
	n := 0
	for _, d := range t {
		n = max(n, d.Phase)
	}
	return n
}

// UndoPhase is the phase of kind k in an undo: the plan's phases walked
// back, so that children are taken back before their parents.
func (t Table) UndoPhase(k ledger.Kind) int { return t.LastPhase() + 1 - t.Def(k).Phase }

// Parse accepts one of t's kinds in the singular or the plural, in any
// case.
func (t Table) Parse(s string) (ledger.Kind, error) {
	w := strings.ToLower(strings.TrimSpace(s))
	var names []string
	for _, k := range t.Kinds() {
		if w == string(k) || w == k.Plural() {
			return k, nil
		}
		names = append(names, k.Plural())
	}
	return "", fmt.Errorf("unknown kind %q (one of: %s)", s, strings.Join(names, ", "))
}

// LinkKind is the parent kind that link field f points to: a field that a
// kind of t has as a link.
func (t Table) LinkKind(f string) (ledger.Kind, bool) {
	for _, l := range t.linkFields() {
		if l.Field == f {
			return l.Kind, true
		}
	}
	return "", false
}

// linkFields are the link fields of t's kinds, each once, in plan order
// of their parents and then of their first child: a parent's own field
// (LinkField) and any field that names a role (converted_contact_id).
func (t Table) linkFields() []Link {
	var out []Link
	for _, k := range t.Kinds() {
		for _, c := range t.Kinds() {
			for _, l := range t.Def(c).Links {
				if l.Kind == k && !slices.Contains(out, l) {
					out = append(out, l)
				}
			}
		}
	}
	return out
}

// Check reports the first way t is not a table of kinds: a kind twice or
// unnamed, a phase below 1, a kind without fields or label, a link to a
// kind that has no row, that is not in a phase before the child's, or
// whose field is not the child's field LinkField(parent) (or a role of it,
// IsLinkFieldOf).
func (t Table) Check() error {
	seen := map[ledger.Kind]bool{}
	for _, d := range t {
		switch {
		case d.Kind == "":
			return fmt.Errorf("a kind without a name")
		case seen[d.Kind]:
			return fmt.Errorf("kind %s: two rows", d.Kind)
		case d.Phase < 1:
			return fmt.Errorf("kind %s: phase %d", d.Kind, d.Phase)
		case len(d.Fields) == 0 || d.Label == "":
			return fmt.Errorf("kind %s: no fields or no label column", d.Kind)
		case d.Key != "" && !slices.Contains(d.Fields, d.Key):
			return fmt.Errorf("kind %s: its natural key %s is not one of its fields", d.Kind, d.Key)
		case d.NeedsParent && !slices.ContainsFunc(d.Links, func(l Link) bool { return Anchors(l.Kind) }):
			return fmt.Errorf("kind %s: needs a parent but links to none that anchors it", d.Kind)
		}
		seen[d.Kind] = true
	}
	for _, d := range t {
		for _, l := range d.Links {
			switch {
			case !t.Has(l.Kind):
				return fmt.Errorf("kind %s: links to %q, which is not a kind", d.Kind, l.Kind)
			case !t.before(l.Kind, d.Kind):
				return fmt.Errorf("kind %s (phase %d): its parent %s is not in an earlier phase (%d), nor before it in its own", d.Kind, d.Phase, l.Kind, t.Def(l.Kind).Phase)
			case !IsLinkFieldOf(l.Field, l.Kind) || !slices.Contains(d.Fields, l.Field):
				return fmt.Errorf("kind %s: link %s to %s is not its field %s", d.Kind, l.Field, l.Kind, LinkField(l.Kind))
			}
		}
	}
	return nil
}

// before reports whether kind a runs before kind b in t's plan: in an
// earlier phase, or earlier in the table within the same one (R7: within
// a phase, parents first, users before companies).
func (t Table) before(a, b ledger.Kind) bool {
	pa, pb := t.Def(a).Phase, t.Def(b).Phase
	if pa != pb {
		return pa < pb
	}
	ia := slices.IndexFunc(t, func(d Def) bool { return d.Kind == a })
	ib := slices.IndexFunc(t, func(d Def) bool { return d.Kind == b })
	return ia < ib
}

// PhaseCase is SQL that gives the phase of the kind held by column
// expression col (Phase): NULL for a kind that has no row, which the
// CHECK of every kind column refuses. col is the caller's constant text,
// never input.
func (t Table) PhaseCase(col string) string {
	return t.kindCase(col, func(d Def) string { return fmt.Sprint(d.Phase) })
}

// OrderCase is SQL that gives the place of the kind held by column
// expression col in plan order (Kinds), from 1: NULL for a kind that has
// no row. col is the caller's constant text, never input.
func (t Table) OrderCase(col string) string {
	order := t.Kinds()
	return t.kindCase(col, func(d Def) string { return fmt.Sprint(slices.Index(order, d.Kind) + 1) })
}

// LinkKindCase is SQL that gives the parent kind that the link field named
// by column expression col points to (LinkKind): NULL for a field that is
// no link. col is the caller's constant text, never input.
func (t Table) LinkKindCase(col string) string {
	c := "CASE " + col
	for _, l := range t.linkFields() {
		c += " WHEN " + sqlText(l.Field) + " THEN " + sqlText(string(l.Kind))
	}
	return c + " END"
}

// kindCase is a CASE over col with a WHEN per kind of t, in plan order.
func (t Table) kindCase(col string, then func(Def) string) string {
	c := "CASE " + col
	for _, k := range t.Kinds() {
		c += " WHEN " + sqlText(string(k)) + " THEN " + then(t.Def(k))
	}
	return c + " END"
}

// sqlText is s as an SQL string literal.
func sqlText(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// Link is a link field of a kind and the parent kind it points to (R6).
type Link struct {
	Field string
	Kind  ledger.Kind
}

// Parents lists the link fields of kind k, in the order a link is looked
// for (R6).
func Parents(k ledger.Kind) []Link { return slices.Clone(kinds.Def(k).Links) }

// ParentKinds are the kinds that kind k links to, in the order of its
// link fields (Parents).
func ParentKinds(k ledger.Kind) []ledger.Kind {
	var out []ledger.Kind
	for _, l := range kinds.Def(k).Links {
		out = append(out, l.Kind)
	}
	return out
}

// LinkField is the link field that points to parent kind k: the kind and
// "_id", but for a user, whom a record names as its owner (owner_id).
func LinkField(k ledger.Kind) string {
	if k == ledger.User {
		return "owner_id"
	}
	return string(k) + "_id"
}

// IsLinkFieldOf reports whether f may name a link to parent kind k: its
// field (LinkField), or that field after a role — a lead's
// converted_contact_id is a link to the contact it became.
func IsLinkFieldOf(f string, k ledger.Kind) bool {
	lf := LinkField(k)
	return f == lf || strings.HasSuffix(f, "_"+lf) && len(f) > len(lf)+1
}

// Anchors reports whether a link to parent kind k anchors a note, activity
// or email (R6): every parent but a user — an owner never anchors a record
// (R6a): one linked only to its owner is skipped.
func Anchors(k ledger.Kind) bool { return k != ledger.User }

// IsOwner reports whether link field f names a record's owner: its
// unresolved value counts unowned, never unlinked (R6a).
func IsOwner(f string) bool { return f == LinkField(ledger.User) }

// KindOfLinkField is the parent kind a link field points to. It is asked
// of every link of every record a run reads, so the table's answer is
// kept once (linkKinds) rather than walked each time.
func KindOfLinkField(f string) (ledger.Kind, bool) {
	k, ok := linkKinds()[f]
	return k, ok
}

// linkKinds is the package table's link fields and the kinds they name.
var linkKinds = sync.OnceValue(func() map[string]ledger.Kind {
	m := map[string]ledger.Kind{}
	for _, l := range kinds.linkFields() {
		m[l.Field] = l.Kind
	}
	return m
})

// IsParent reports whether kind child may link to kind parent.
func IsParent(child, parent ledger.Kind) bool {
	for _, l := range kinds.Def(child).Links {
		if l.Kind == parent {
			return true
		}
	}
	return false
}

// StopsRun reports whether a failed task of kind k stops the run at its
// phase (R7): every kind's but an optional one's (users).
func StopsRun(k ledger.Kind) bool { return !kinds.Def(k).Optional }

// NeedsParent: a note, activity or email with no resolvable parent is
// skipped (R6); a contact or deal imports with the link empty.
func NeedsParent(k ledger.Kind) bool { return kinds.Def(k).NeedsParent }

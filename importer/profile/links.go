package profile

// Link values beyond plain link fields: lists, ids by prefix, names looked
// up in the export, joined rows; and how a profile normalises ids.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"crmimport/canon"
	"crmimport/importer/reader"
)

// LinkValue is one value of a link column that is more than a plain link
// field: an element of a list, a polymorphic id, a name, a joined row's id.
type LinkValue struct {
	Field  string // the link field it may give ("contact_id"), or the column when no kind takes it
	Label  string // the column, for messages
	ID     string // the parent's source id to look up; "" when there is none (a lead, an unknown or ambiguous name)
	Shown  string // as the export wrote it: kept in extra or the slot's detail when it does not resolve
	ByName bool
	Note   string // why a name resolved to nothing, for the run log
	// Never names what the value links to when no kind of the profile
	// takes it ("a case": a prefix of an object the profile does not
	// import, or of none it names): it waits for nothing a run of the
	// export gives (R6b). "" for a link to a kind.
	Never string
	// Ignored: a value of an ignored prefix the profile names ({ignore:
	// user}): no link, kept nowhere, but what a record linked only to it
	// is linked to (Record.Ignored).
	Ignored bool
}

// hasIDFor reports whether links hold an id (not a name) for field.
func hasIDFor(links []LinkValue, field string) bool {
	for _, l := range links {
		if l.Field == field && !l.ByName && l.ID != "" {
			return true
		}
	}
	return false
}

// normID is an id or link value as the profile compares it.
func (m *Mapper) normID(v string) string {
	v = strings.TrimSpace(v)
	if emptySpelling(v) || m.p.empty[v] {
		return ""
	}
	if m.p.ids == idsSalesforce {
		return salesforceID(v)
	}
	return v
}

// linkValues reads one link column's value: the values of a list, each
// given its kind (by the link, or by id prefix) or looked up by name.
func (m *Mapper) linkValues(ls *linkSpec, c reader.Col, label string) []LinkValue {
	var raw []string
	switch {
	case ls.list == "json" || (ls.list != "" && c.Nested):
		raw = jsonListValues(c.Value)
	case ls.list != "":
		raw = strings.Split(c.Value, ls.list)
	default:
		raw = []string{c.Value}
	}
	var out []LinkValue
	for _, s := range raw {
		shown := strings.TrimSpace(s)
		if shown == "" || emptySpelling(shown) || m.p.empty[shown] {
			continue
		}
		if ls.byName {
			out = append(out, m.byName(ls, label, shown))
			continue
		}
		id := m.normID(shown)
		if id == "" {
			continue
		}
		if ls.kind != "" {
			out = append(out, LinkValue{Field: canon.LinkField(ls.kind), Label: label, ID: id, Shown: shown})
			continue
		}
		// A prefix no kind takes: kept as unresolved, naming what it is.
		v := LinkValue{Field: label, Label: label, Shown: shown, Never: m.otherObject(label, id)}
		ignore := false
		for _, pr := range ls.prefixes {
			if strings.HasPrefix(id, pr.prefix) {
				switch {
				case pr.ignore && pr.object != "":
					v.Never, v.Ignored = Article(pr.object), true
				case pr.ignore:
					ignore = true
				case pr.object != "":
					v.Never = Article(pr.object)
				default:
					v.Field, v.ID, v.Never = canon.LinkField(pr.kind), id, ""
				}
				break
			}
		}
		if !ignore {
			out = append(out, v)
		}
	}
	return out
}

// otherObject names the record an id links to when none of a link's
// prefixes takes it: a Salesforce id's object by its key prefix (the first
// three characters), else by the column alone.
func (m *Mapper) otherObject(label, id string) string {
	if m.p.ids == idsSalesforce && len(id) >= 3 {
		return fmt.Sprintf("a record of another object (%s %s…)", label, id[:3])
	}
	return fmt.Sprintf("a record of another object (%s)", label)
}

// byName looks a name up among the parent kind's records of the export:
// one record with that exact name is the link; none, or several, is no
// link (never a guess), with a note saying so when several.
func (m *Mapper) byName(ls *linkSpec, label, name string) LinkValue {
	v := LinkValue{Field: canon.LinkField(ls.kind), Label: label, Shown: name, ByName: true}
	if m.side == nil || m.side.names[ls] == nil {
		return v
	}
	refs := m.side.names[ls].refs[name]
	switch len(refs) {
	case 0:
	case 1:
		v.ID = refs[0].id
	default:
		var at []string
		for i, r := range refs {
			if i == 4 {
				at = append(at, "…")
				break
			}
			at = append(at, fmt.Sprintf("%s:%d", r.file, r.line))
		}
		v.Note = fmt.Sprintf("%s %q names %d %s of the export (%s): left unlinked, not guessed",
			label, name, len(refs), ls.kind.Plural(), strings.Join(at, ", "))
	}
	return v
}

// jsonListValues reads the values of a JSON array: each element's text,
// or an object's "id". Text that is not an array is one value.
func jsonListValues(s string) []string {
	var elems []json.RawMessage
	if err := json.Unmarshal([]byte(s), &elems); err != nil {
		return []string{s}
	}
	var out []string
	for _, e := range elems {
		var obj map[string]json.RawMessage
		if json.Unmarshal(e, &obj) == nil {
			if id, ok := obj["id"]; ok {
				e = id
			} else {
				continue
			}
		}
		var str string
		if json.Unmarshal(e, &str) == nil {
			out = append(out, str)
			continue
		}
		out = append(out, string(bytes.TrimSpace(e)))
	}
	return out
}

// salesforceID is a Salesforce id as it is compared: a 15-character id
// made 18 with its case checksum (the 15-character form is case-sensitive,
// the 18-character one is not ambiguous), 000000000000000AAA (an empty
// lookup) made empty, and a CLI tree JSON reference "@Ref" made "Ref".
func salesforceID(v string) string {
	v = strings.TrimSpace(v)
	switch {
	case v == "000000000000000AAA" || v == "000000000000000":
		return ""
	case strings.HasPrefix(v, "@"):
		return v[1:]
	case len(v) != 15:
		return v
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ012345"
	suffix := make([]byte, 3)
	for chunk := 0; chunk < 3; chunk++ {
		bits := 0
		for i := 0; i < 5; i++ {
			c := v[chunk*5+i]
			switch {
			case c >= 'A' && c <= 'Z':
				bits |= 1 << i
			case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			default:
				return v // not an id
			}
		}
		suffix[chunk] = alphabet[bits]
	}
	return v + string(suffix)
}

// MangledLink says why a link value of the record is an id a spreadsheet
// rewrote (9.91214E+15), which fails the record (SPEC §4 step 5), or "": a
// plain link field, or a link column's value (not a name).
func (r *Record) MangledLink() string {
	for _, l := range canon.Parents(r.Kind) {
		if why := canon.MangledID(l.Field, r.Get(l.Field)); why != "" {
			return why
		}
	}
	for _, l := range r.Links() {
		if why := canon.MangledID(l.Label, l.Shown); why != "" && !l.ByName {
			return why
		}
	}
	return ""
}

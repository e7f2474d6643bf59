package profile

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"crmimport/canon"
	"crmimport/ledger"
)

// WithUsersFile is p reading name (a file's base name) as users in the
// canonical layout (SPEC §4: the users file a consultant writes, given as
// run --users FILE): id, the owner as the export writes it; email; name;
// active; created_at; deleted. The profile's own user files and columns
// are kept; a profile without users gets the canonical ones. p is not
// changed. A name that another kind of p reads is refused: the file would
// be read as both.
func (p *Profile) WithUsersFile(name string) (*Profile, error) {
	base := strings.ToLower(matchName(name))
	for _, k := range canon.Kinds() {
		if k != ledger.User && p.fileSpec(k, base) != nil {
			return nil, fmt.Errorf("the users file %s is also a file of %s under the %s profile: rename it users.csv", name, k.Plural(), p.Name)
		}
	}
	q := *p
	q.kinds = maps.Clone(p.kinds)
	spec := &kindSpec{kind: ledger.User, fields: map[string]*fieldSpec{}}
	if old := p.kinds[ledger.User]; old != nil {
		spec.files, spec.links = slices.Clone(old.files), old.links
		maps.Copy(spec.fields, old.fields)
	}
	if p.fileSpec(ledger.User, base) == nil {
		spec.files = append(spec.files, &fileSpec{pattern: escapeGlob(base)})
	}
	for _, f := range canon.Fields(ledger.User) {
		fs := &fieldSpec{}
		if old := spec.fields[f]; old != nil {
			c := *old
			fs = &c
		}
		if !slices.ContainsFunc(fs.columns, func(c string) bool { return normaliseHeader(c) == normaliseHeader(f) }) {
			fs.columns = append(slices.Clone(fs.columns), f)
		}
		spec.fields[f] = fs
	}
	q.kinds[ledger.User] = spec
	return &q, nil
}

// escapeGlob is a file name as a pattern that matches it alone.
func escapeGlob(name string) string {
	var b strings.Builder
	for _, r := range name {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	s := b.String()
	if _, err := path.Match(s, name); err != nil {
		return name
	}
	return s
}

// KindOfIDs is the kind whose records have ids like id, by the profile's
// kinds_by_id_prefix (longest prefix first), and the prefix; false when the
// profile has none that fits, or the kind is not one it reads.
func (p *Profile) KindOfIDs(id string) (ledger.Kind, string, bool) {
	best := ""
	for pre := range p.kindPrefixes {
		if strings.HasPrefix(id, pre) && len(pre) > len(best) {
			best = pre
		}
	}
	if best == "" || p.kinds[p.kindPrefixes[best]] == nil {
		return "", "", false
	}
	return p.kindPrefixes[best], best, true
}

// ReadsKindsByIDs reports whether the profile tells a file's kind by its
// ids (kinds_by_id_prefix).
func (p *Profile) ReadsKindsByIDs() bool { return len(p.kindPrefixes) > 0 }

// IDColumns are the columns that may hold the id of a record of kind k,
// normalised as headers are compared.
func (p *Profile) IDColumns(k ledger.Kind) []string {
	spec := p.kinds[k]
	if spec == nil || spec.fields["id"] == nil {
		return nil
	}
	var out []string
	for _, c := range spec.fields["id"].columns {
		out = append(out, normaliseHeader(c))
	}
	return out
}

// NormaliseID is an id as the profile compares it (a Salesforce id of 15
// characters made 18).
func (p *Profile) NormaliseID(id string) string { return (&Mapper{p: p}).normID(id) }

// WithFileKind is p reading the file of base name name as kind k, beside
// the files its patterns match: a file told by its ids (KindOfIDs). p is
// not changed.
func (p *Profile) WithFileKind(name string, k ledger.Kind) *Profile {
	q := *p
	q.kinds = maps.Clone(p.kinds)
	spec := *p.kinds[k]
	spec.files = append(slices.Clone(spec.files), &fileSpec{pattern: escapeGlob(strings.ToLower(matchName(name)))})
	q.kinds[k] = &spec
	return &q
}

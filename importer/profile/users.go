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

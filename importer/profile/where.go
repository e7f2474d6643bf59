package profile

// Which kinds of a file take a row (SPEC §4): a profile may give one file
// to several kinds, each its own task over it, and a file pattern's where
// says which of its rows are records of the kind. A row that no kind takes
// is counted in a warning per file; a flag that cannot be read fails its
// row once, in the first planned kind that reads it, and is excluded from
// the others.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"crmimport/canon"
	"crmimport/importer/reader"
	"crmimport/ledger"
)

// take is whether a kind takes a row: yes, no, or it cannot tell (a flag
// that cannot be read).
type take int8

const (
	takeNo take = iota
	takeYes
	takeUnread
)

// takes tells, per sibling, whether it takes the row, and marks r for its
// own kind: excluded (a row it does not take, or one whose flag another
// kind fails), untaken (no kind takes it, said by the first planned kind
// only), or failed (a flag that cannot be read, in the first planned kind
// that reads it).
func (m *Mapper) takes(r *Record, cols []reader.Col, l *layout) []take {
	out := make([]take, len(m.siblings))
	first, why := -1, ""
	every := true // every kind of the file leaves the row
	for si := range m.siblings {
		var reason string
		out[si], reason = m.take(si, l.whereAt[si], cols)
		if out[si] == takeUnread && first < 0 && m.siblings[si].planned {
			first, why = si, reason
		}
		every = every && out[si] == takeNo
	}
	switch out[m.self] {
	case takeNo:
		r.Excluded = true
		r.Untaken = every && m.firstPlanned()
	case takeUnread:
		if first != m.self || r.Err != nil {
			r.Excluded = true
			break
		}
		r.Err = &reader.RowError{File: r.File, Line: r.Line, Reason: why}
	}
	return out
}

// firstPlanned reports whether the mapper's kind is the first of the file's
// planned kinds: the one that counts the rows no kind takes.
func (m *Mapper) firstPlanned() bool {
	for si, sib := range m.siblings {
		if sib.planned {
			return si == m.self
		}
	}
	return false
}

// take tells whether sibling si takes a row, its where's columns at at:
// every condition must hold; a row that one condition leaves out is not
// the kind's, whatever its flags; else a flag that cannot be read leaves
// it undecided, with the reason its row fails.
func (m *Mapper) take(si int, at []int, cols []reader.Col) (take, string) {
	why := ""
	for wi, w := range m.siblings[si].spec.where {
		v := ""
		if at[wi] >= 0 {
			v = strings.TrimSpace(cols[at[wi]].Value)
		}
		if !w.isFlag {
			if !slices.Contains(w.values, v) {
				return takeNo, ""
			}
			continue
		}
		b, ok := m.readFlag(v)
		switch {
		case !ok && why == "":
			why = fmt.Sprintf("%s %s is neither true nor false: the %s profile reads the row as %s by it",
				w.column, strconv.Quote(v), m.p.Name, m.readBy(w.column))
		case ok && b != w.flag:
			return takeNo, ""
		}
	}
	if why != "" {
		return takeUnread, why
	}
	return takeYes, ""
}

// readFlag reads a flag as the profile reads flags: its own spellings of
// true and false first, then canon's (empty is false).
func (m *Mapper) readFlag(v string) (bool, bool) {
	w := strings.ToLower(strings.TrimSpace(v))
	switch {
	case m.p.trueWords[w]:
		return true, true
	case m.p.falseWords[w]:
		return false, true
	}
	return canon.ParseBool(v)
}

// readBy names the kinds of the file whose where reads column as a flag:
// "a company or a contact".
func (m *Mapper) readBy(column string) string {
	var kinds []string
	for _, sib := range m.siblings {
		for _, w := range sib.spec.where {
			if w.isFlag && normaliseHeader(w.column) == normaliseHeader(column) {
				kinds = append(kinds, Article(string(sib.kind)))
				break
			}
		}
	}
	return strings.Join(kinds, " or ")
}

// sharedTaken reports whether a kind that maps a column (sibs) takes the
// row: then its value is that kind's, not extra of this one. Without any
// where (takes nil), every kind takes every row.
func sharedTaken(sibs []int, takes []take) bool {
	if takes == nil {
		return true
	}
	for _, s := range sibs {
		if takes[s] == takeYes {
			return true
		}
	}
	return false
}

// describe says a condition in words: is_company is true, FileType is
// "SNOTE", Status is "Open" or "Won".
func (w whereCond) describe() string {
	if w.isFlag {
		return fmt.Sprintf("%s is %t", w.column, w.flag)
	}
	return w.column + " is " + orList(w.values)
}

// describeWhere says which rows a pattern takes: "the rows whose
// is_company is false and type is "contact"", or "" for every row.
func (fsp *fileSpec) describeWhere() string {
	if len(fsp.where) == 0 {
		return ""
	}
	parts := make([]string, len(fsp.where))
	for i, w := range fsp.where {
		parts[i] = w.describe()
	}
	return "the rows whose " + strings.Join(parts, " and ")
}

// FilesDescribed lists kind k's file patterns as written (lower-cased),
// each with the rows it takes when it has a where: `res.partner*.csv (the
// rows whose is_company is true)`.
func (p *Profile) FilesDescribed(k ledger.Kind) []string {
	spec := p.kinds[k]
	if spec == nil {
		return nil
	}
	var out []string
	for _, f := range spec.files {
		s := f.pattern
		if w := f.describeWhere(); w != "" {
			s += " (" + w + ")"
		}
		out = append(out, s)
	}
	return out
}

// SharedPatterns are the file patterns that the profile gives several
// kinds, each with those kinds in plan order: a file they match feeds each
// of them, a task per kind.
func (p *Profile) SharedPatterns() []SharedPattern {
	var out []SharedPattern
	at := map[string]int{}
	for _, k := range p.Kinds() {
		seen := map[string]bool{}
		for _, f := range p.kinds[k].files {
			if seen[f.pattern] {
				continue
			}
			seen[f.pattern] = true
			i, ok := at[f.pattern]
			if !ok {
				i = len(out)
				at[f.pattern] = i
				out = append(out, SharedPattern{Pattern: f.pattern})
			}
			out[i].Kinds = append(out[i].Kinds, k)
			out[i].Split = out[i].Split || len(f.where) > 0
		}
	}
	return slices.DeleteFunc(out, func(s SharedPattern) bool { return len(s.Kinds) < 2 })
}

// SharedPattern is a file pattern that several kinds share.
type SharedPattern struct {
	Pattern string        `json:"pattern"`
	Kinds   []ledger.Kind `json:"kinds"`
	// Split: a where of one of them takes only some of its rows.
	Split bool `json:"split"`
}

// Article writes a word with its indefinite article, for messages: "a
// company", "an activity", "a user".
func Article(word string) string {
	vowel := func(i int) bool { return i < len(word) && strings.ContainsRune("aeiou", rune(word[i])) }
	switch {
	case word == "":
		return word
	case strings.HasPrefix(word, "u") && !vowel(1) && vowel(2), strings.HasPrefix(word, "eu"), strings.HasPrefix(word, "one"):
		return "a " + word // user, unit, European: a consonant sound
	case vowel(0):
		return "an " + word
	}
	return "a " + word
}

// Takers says which rows each kind of a file takes, for messages:
// "companies read the rows whose is_company is true; contacts the rows
// whose is_company is false and type is "contact"", or "" for a file of
// no kind.
func (p *Profile) Takers(name string) string {
	kfs, _ := p.fileKinds(name)
	var parts []string
	for i, kf := range kfs {
		rows := kf.spec.describeWhere()
		if rows == "" {
			rows = "every row"
		}
		if i == 0 {
			parts = append(parts, kf.kind.Plural()+" read "+rows)
			continue
		}
		parts = append(parts, kf.kind.Plural()+" "+rows)
	}
	return strings.Join(parts, "; ")
}

package suggest

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"crmimport/canon"
	"crmimport/importer/profile"
	"crmimport/importer/reader"
	"crmimport/ledger"
)

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// check says what is wrong with a draft, one sentence per problem.
func check(d *Draft) error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if !nameRE.MatchString(d.Name) {
		fail("the profile's name %q is not a profile name: use lower-case letters, digits, - and _ (zoho, my-crm)", d.Name)
	}
	read := 0
	for _, f := range d.Files {
		if f.Kind == "" {
			continue
		}
		k, err := canon.ParseKind(string(f.Kind))
		if err != nil || k != f.Kind {
			fail("%s: %q is not a kind: choose company, contact, deal, note, activity or email, or leave the file out", f.Name, f.Kind)
			continue
		}
		read++
		if f.Format == "" {
			fail("%s: crmimport cannot read this file as %s records: leave it out", f.Name, k.Plural())
		}
		switch m, err := path.Match(f.Pattern, matchName(f.Name)); {
		case f.Pattern == "":
			fail("%s: the file has no name pattern: give one, such as %s", f.Name, matchName(f.Name))
		case err != nil || strings.Contains(f.Pattern, "/"):
			fail("%s: %q is not a file name pattern (a name with * and ? as wildcards, no folder)", f.Name, f.Pattern)
		case !m:
			fail("%s: the pattern %q does not match the file's own name (%s)", f.Name, f.Pattern, matchName(f.Name))
		default:
			if _, ok := reader.FormatOf(f.Pattern); !ok {
				fail("%s: the pattern %q does not end in .csv, .json, .jsonl or .ndjson", f.Name, f.Pattern)
			}
		}
		for _, g := range d.Files {
			if g != f && g.Kind != f.Kind && g.Format != "" && f.Pattern != "" && !sameWorkbook(f, g) {
				if m, _ := path.Match(f.Pattern, matchName(g.Name)); m {
					fail("%s: its pattern %q also matches %s, which is %s: make the pattern narrower", f.Name, f.Pattern, g.Name, kindOrLeftOut(g.Kind))
				}
			}
		}
		given := map[string]string{}
		ids := 0
		for _, c := range f.Columns {
			if c.Field == "" {
				continue
			}
			if !canon.HasField(k, c.Field) {
				fail("%s: column %q gives %s, which is not a field of a %s (its fields: %s)", f.Name, c.Name, c.Field, k, strings.Join(canon.Fields(k), ", "))
				continue
			}
			if c.Field == "id" {
				ids++
			}
			if _, isLink := canon.KindOfLinkField(c.Field); isLink {
				if c.ByName && c.List != "" {
					fail("%s: column %q is a link by name and a list at once: choose one", f.Name, c.Name)
				}
				continue // several columns may hold a link: the first that resolves gives it
			}
			if c.List != "" || c.ByName {
				fail("%s: column %q gives %s, which is not a link: only company_id, contact_id and deal_id hold a list or a name", f.Name, c.Name, c.Field)
			}
			if other, ok := given[c.Field]; ok {
				fail("%s: columns %q and %q both give %s: keep one, and send the other to extra", f.Name, other, c.Name, c.Field)
				continue
			}
			given[c.Field] = c.Name
		}
		if ids == 0 {
			fail("%s: a %s file needs an id column: pick the column that holds each record's own id", f.Name, k)
		}
	}
	if read == 0 {
		fail("no file is read: give at least one file a kind")
	}
	if len(errs) == 0 {
		errs = append(errs, valueProblems(d)...)
	}
	return errors.Join(errs...)
}

// valueProblems says what a run would fail in most rows of a column, by
// its values as the draft, read back as a profile, reads them: a date
// column none of whose formats reads its values (every 08/03/2021 failing:
// issue 26 item 5), a status its map does not turn into open, won or lost.
// A draft the loader refuses is Preview's to tell.
func valueProblems(d *Draft) []error {
	prof, err := profile.Load(draftSource(d), d.YAML())
	if err != nil {
		return nil
	}
	var errs []error
	for _, f := range d.Files {
		if !f.writable() {
			continue
		}
		for _, c := range f.Columns {
			if c.Field == "" || !canon.HasField(f.Kind, c.Field) {
				continue
			}
			vals := c.Values
			if len(vals) == 0 {
				vals = c.Samples
			}
			vals = slices.DeleteFunc(slices.Clone(vals), func(v string) bool { return contains(d.Empty, strings.TrimSpace(v)) })
			bad, example := 0, ""
			for _, v := range vals {
				var p string
				switch {
				case canon.IsDateField(c.Field):
					p = prof.DateProblem(f.Kind, c.Field, v)
				case c.Field == "status" && f.Kind == ledger.Deal:
					p = canon.ValueProblem(f.Kind, c.Field, mapped(c.Map, v))
				}
				if p != "" {
					if bad == 0 {
						example = v
					}
					bad++
				}
			}
			switch {
			case bad < 2 || 2*bad < len(vals):
				// A few values its field cannot hold fail their rows
				// alone, as a run says: the column is not wrong.
			case canon.IsDateField(c.Field):
				errs = append(errs, fmt.Errorf("%s: column %q gives %s, but %d of its %d values shown are not dates the profile reads, such as %q: choose the column's date format",
					draftName(f), c.Name, c.Field, bad, len(vals), example))
			default:
				errs = append(errs, fmt.Errorf("%s: column %q gives %s, but %q is not open, won or lost: map the column's words to a status",
					draftName(f), c.Name, c.Field, example))
			}
		}
	}
	return errs
}

// mapped is v as a field's value map gives it (keys compared as the
// loader does: lower-cased, trimmed), or v.
func mapped(m map[string]string, v string) string {
	for from, to := range m {
		if strings.EqualFold(strings.TrimSpace(from), strings.TrimSpace(v)) {
			return to
		}
	}
	return v
}

func kindOrLeftOut(k ledger.Kind) string {
	if k == "" {
		return "left out"
	}
	return "a " + string(k) + " file"
}

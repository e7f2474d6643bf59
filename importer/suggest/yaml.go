package suggest

// The draft as a profile file (profile.Load reads it): every guess with a
// comment saying why and how sure, every column not placed listed.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"crmimport/canon"
	"crmimport/importer/profile"
	"crmimport/ledger"
)

// quote writes s as a YAML double-quoted scalar (JSON's escapes are
// YAML's).
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

func quoteList(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// oneLine makes text fit a comment line.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:199]) + "…"
	}
	return s
}

// writable is whether a file goes into the profile: it has a kind and an
// id column.
func (f *File) writable() bool {
	if f.Kind == "" || f.Pattern == "" {
		return false
	}
	for _, c := range f.Columns {
		if c.Field == "id" {
			return true
		}
	}
	return false
}

type fieldCol struct {
	col  *Column
	file *File
}

type linkEntry struct {
	col    *Column
	file   *File
	parent ledger.Kind
}

// writeYAML writes a draft as a profile's YAML, each guess with why and
// how sure, the files it does not read named in a comment.
func writeYAML(d *Draft) []byte {
	var b bytes.Buffer
	writeYAMLHead(&b, d)
	writeSpellings(&b, d)
	writeDatesAndHeaders(&b, d)
	writeKinds(&b, d)
	writeLeftOut(&b, d)
	return b.Bytes()
}

// writeYAMLHead writes what the draft is, how to check it, and its name
// and description.
func writeYAMLHead(b *bytes.Buffer, d *Draft) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	var read []string
	for _, f := range d.Files {
		if f.writable() {
			read = append(read, f.Name)
		}
	}
	w("# A draft profile suggested by `crmimport profiles suggest` from %d %s of an export.\n", len(d.Files), plural(len(d.Files), "file", "files"))
	w("# Each guess says why and how sure it is (sure, likely, guess): check the likely\n")
	w("# and guessed ones, and the columns kept in extra, then run\n")
	w("#   crmimport profiles check FILE\n")
	name := d.Name
	if name == "" {
		name = "custom"
	}
	w("name: %s\n", quote(name))
	w("description: %s\n", quote(fmt.Sprintf("drafted from %s", strings.Join(read, ", "))))
}

// writeSpellings writes the natural keys (R5) and the spellings of empty
// and of true and false.
func writeSpellings(b *bytes.Buffer, d *Draft) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	if len(d.Match) > 0 {
		w("\n# R5: %s\n", oneLine(d.MatchWhy))
	} else {
		w("\n# R5: no natural key matches existing records: every record is its own.\n")
	}
	w("match: %s\n", quoteList(nonNil(d.Match)))
	if d.IDs == "salesforce" {
		w("\n# The files hold Salesforce ids: 15-character ids become 18 before any comparison,\n")
		w("# and 000000000000000AAA is an empty lookup.\n")
		w("ids: salesforce\n")
	}
	if len(d.Empty) > 0 {
		w("\n# Spellings of empty seen repeatedly in the values: no value, in any column.\n")
		w("empty: %s\n", quoteList(d.Empty))
	}
	if len(d.True) > 0 || len(d.False) > 0 {
		w("\n# Spellings of true and false seen in the flag columns.\n")
		w("booleans:\n")
		if len(d.True) > 0 {
			w("  true: %s\n", quoteList(d.True))
		}
		if len(d.False) > 0 {
			w("  false: %s\n", quoteList(d.False))
		}
	}
}

// writeDatesAndHeaders writes the date formats seen beyond ISO 8601 and
// what a repeated header name does.
func writeDatesAndHeaders(b *bytes.Buffer, d *Draft) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	dates := d.dateFormats()
	repeated := false
	for _, f := range d.Files {
		if !f.writable() {
			continue
		}
		seen := map[string]bool{}
		for _, c := range f.Columns {
			n := profile.NormaliseHeader(c.Name)
			repeated = repeated || seen[n]
			seen[n] = true
		}
	}
	if len(dates) > 0 {
		w("\n# Date formats seen beyond ISO 8601 (YYYY-MM-DD), tried in this order.\n")
		if len(ordered(dates, true)) > 0 && len(ordered(dates, false)) > 0 {
			// A profile's list is the same for every file: each column's
			// own format goes with its field, tried before the list.
			w("# Some files write the day first and others the month first: each date column's own\n")
			w("# format is written with its field (dates:) and tried first; these are for the others.\n")
		}
		w("dates: %s\n", quoteList(dates))
	}
	if repeated {
		w("\n# A header name is repeated in a file: the first column gives the field, the others go to extra.\n")
		w("repeated_headers: first\n")
	} else {
		w("\n# A field given by two columns of one name fails the file: rename or remove one.\n")
		w("repeated_headers: fail\n")
	}
}

// dateFormats are the date formats seen in the files the profile reads,
// beyond ISO 8601: the profile's list.
func (d *Draft) dateFormats() []string {
	var dates []string
	for _, f := range d.Files {
		if f.writable() {
			for _, s := range f.DateFormats {
				dates = appendNew(dates, s)
			}
		}
	}
	return dates
}

// ownDates reports whether a column's date format is written with its
// field (dates: [DD/MM/YYYY]) rather than left to the profile's list
// (wide): when the list does not hold it (chosen in the editor), or holds
// others, which would read its 03/04/2021 first.
func ownDates(c *Column, wide []string) bool {
	if c.DateFormat == "" || !canon.IsDateField(c.Field) {
		return false
	}
	return !contains(wide, c.DateFormat) || len(wide) > 1
}

// writeKinds writes each kind's files, in plan order.
func writeKinds(b *bytes.Buffer, d *Draft) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("\nkinds:\n")
	for _, k := range canon.Kinds() {
		var files []*File
		for _, f := range d.Files {
			if f.Kind == k && f.writable() {
				files = append(files, f)
			}
		}
		if len(files) == 0 {
			continue
		}
		writeKind(b, k, files, d.dateFormats())
	}
}

// writeLeftOut names in a comment the files the draft does not read, and
// why.
func writeLeftOut(b *bytes.Buffer, d *Draft) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	var left []*File
	for _, f := range d.Files {
		if !f.writable() {
			left = append(left, f)
		}
	}
	if len(left) > 0 {
		w("\n# Files not read:\n")
		for _, f := range left {
			why := f.KindWhy
			if f.Kind != "" {
				why = fmt.Sprintf("a %s file with no id column: give one its id", f.Kind)
			}
			// The whole why, wrapped: what a file is and why it is not
			// read is the answer a consultant needs (ContentVersion's notes).
			for i, line := range wrap(draftName(f)+": "+why, 100) {
				if i == 0 {
					w("#   %s\n", line)
				} else {
					w("#     %s\n", line)
				}
			}
		}
	}
}

// draftName names a file of the draft in comments: its name, and a
// workbook's sheet when the draft reads its sheets one by one.
func draftName(f *File) string {
	if f.Sheet != "" {
		return f.Name + "!" + f.Sheet
	}
	return f.Name
}

// wrap cuts text into lines of at most width characters, at spaces.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && len([]rune(line))+1+len([]rune(word)) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func writeKind(b *bytes.Buffer, k ledger.Kind, files []*File, wide []string) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("  %s:\n", k)
	var patterns []string
	for _, f := range files {
		w("    # %s: %s (%s: %s)\n", oneLine(draftName(f)), k, f.KindSure, oneLine(f.KindWhy))
		entry := quote(f.Pattern)
		if f.Sheet != "" {
			entry = fmt.Sprintf("{file: %s, sheet: %s}", quote(f.Pattern), quote(f.Sheet))
		}
		patterns = appendNew(patterns, entry)
	}
	w("    files: [%s]\n", strings.Join(patterns, ", "))
	fields := map[string][]fieldCol{}
	gives := map[string]string{} // normalised column -> field, across the kind's files
	var links []linkEntry
	var extra, skipped, questions []string
	for _, f := range files {
		for _, c := range f.Columns {
			n := profile.NormaliseHeader(c.Name)
			switch parent, isLink := canon.KindOfLinkField(c.Field); {
			case c.Field == "" && c.Question != "":
				extra = append(extra, fmt.Sprintf("%s (%s): its dates read two ways: the question below", quote(c.Name), f.Name))
				questions = append(questions, fmt.Sprintf("%s: %s", f.Name, c.Question))
			case c.Field == "":
				extra = append(extra, fmt.Sprintf("%s (%s): %s", quote(c.Name), f.Name, c.Why))
			case isLink && canon.IsParent(k, parent):
				dup := false
				for _, l := range links {
					dup = dup || (profile.NormaliseHeader(l.col.Name) == n && l.parent == parent && l.col.List == c.List && l.col.ByName == c.ByName)
				}
				if !dup {
					links = append(links, linkEntry{col: c, file: f, parent: parent})
				}
			case !canon.HasField(k, c.Field) || isLink:
				skipped = append(skipped, fmt.Sprintf("%s (%s): %s is not a field of %s, so it goes to extra", quote(c.Name), f.Name, c.Field, k))
			case gives[n] != "" && gives[n] != c.Field:
				skipped = append(skipped, fmt.Sprintf("%s (%s): gives %s in another %s file, so it gives %s here too, not %s", quote(c.Name), f.Name, gives[n], k, gives[n], c.Field))
			case gives[n] == c.Field:
				// the same column gives the same field in another file
			default:
				gives[n] = c.Field
				fields[c.Field] = append(fields[c.Field], fieldCol{col: c, file: f})
			}
		}
	}
	w("    fields:\n")
	for _, f := range canon.Fields(k) {
		cols := fields[f]
		if len(cols) == 0 {
			continue
		}
		var names, dates []string
		multi := ""
		valueMap := map[string]string{}
		for _, fc := range cols {
			w("      # %s (%s): %s — %s\n", quote(fc.col.Name), oneLine(fc.file.Name), sureWord(fc.col.Sure), oneLine(fc.col.Why))
			names = append(names, fc.col.Name)
			if fc.col.Multi != "" {
				multi = fc.col.Multi
			}
			if ownDates(fc.col, wide) {
				dates = appendNew(dates, fc.col.DateFormat)
				w("      #   its dates are written %s\n", fc.col.DateFormat)
			}
			for from, to := range fc.col.Map {
				if strings.TrimSpace(from) != "" && strings.TrimSpace(to) != "" {
					valueMap[from] = to
				}
			}
		}
		if len(names) > 1 {
			w("      # several files: the first of these columns that holds a value gives %s\n", f)
		}
		var opts []string
		if multi != "" {
			opts = append(opts, "multi: "+quote(multi))
		}
		if len(dates) > 0 {
			opts = append(opts, "dates: "+quoteList(dates))
		}
		if len(valueMap) > 0 {
			opts = append(opts, "map: {"+mapYAML(valueMap)+"}")
		}
		if len(opts) > 0 {
			w("      %s: {columns: %s, %s}\n", f, quoteList(names), strings.Join(opts, ", "))
			continue
		}
		w("      %s: %s\n", f, quoteList(names))
	}
	if len(links) > 0 {
		sort.SliceStable(links, func(i, j int) bool {
			// a single id first, then lists, then names: the first that resolves gives the link
			return linkRank(links[i].col) < linkRank(links[j].col)
		})
		w("    links:\n")
		for _, l := range links {
			w("      # %s (%s): %s — %s\n", quote(l.col.Name), oneLine(l.file.Name), sureWord(l.col.Sure), oneLine(l.col.Why))
			entry := fmt.Sprintf("column: %s, kind: %s", quote(l.col.Name), l.parent)
			if len(l.col.Prefixes) > 0 {
				entry = fmt.Sprintf("column: %s, prefixes: {%s}", quote(l.col.Name), prefixYAML(l.col.Prefixes))
			}
			switch {
			case l.col.ByName:
				entry += ", by: name"
			case l.col.List != "":
				entry += ", list: " + quote(l.col.List)
			}
			w("      - {%s}\n", entry)
		}
	}
	if len(extra)+len(skipped) > 0 {
		w("    # Not placed, kept in each record's extra:\n")
		for _, e := range append(extra, skipped...) {
			w("    #   %s\n", oneLine(e))
		}
	}
	for _, q := range questions {
		// The whole question, on as many lines as it takes: the answer is
		// the column's field and its format under dates.
		w("    # QUESTION: %s\n", strings.Join(strings.Fields(q), " "))
		w("    #   Answer by giving the column its field above, with its format: {columns: [COLUMN], dates: [DD/MM/YYYY]}.\n")
	}
}

// mapYAML writes a value map as a YAML flow mapping's entries, in order
// of its keys.
func mapYAML(m map[string]string) string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		out = append(out, fmt.Sprintf("%s: %s", quote(k), quote(m[k])))
	}
	return strings.Join(out, ", ")
}

// prefixYAML writes a link's prefixes as a YAML flow mapping's entries.
func prefixYAML(prefixes map[string]ledger.Kind) string {
	return eachPrefix(prefixes, func(p string, k ledger.Kind) string { return fmt.Sprintf("%s: %s", quote(p), k) })
}

func linkRank(c *Column) int {
	switch {
	case c.ByName:
		return 2
	case c.List != "":
		return 1
	}
	return 0
}

func sureWord(s Sureness) string {
	if s == "" {
		return "set by hand"
	}
	return string(s)
}

func sortStrings(s []string) { sort.Strings(s) }

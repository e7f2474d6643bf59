package suggest

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"crmimport/canon"
	"crmimport/importer/input"
	"crmimport/importer/reader"
	"crmimport/ledger"
)

// DefaultSampleRows is how many rows of each file Suggest reads when
// Options.SampleRows is 0.
const DefaultSampleRows = 200

// minScore is the least a guess needs to be made: below it, the column
// goes to extra.
const minScore = 8

func suggest(ctx context.Context, paths []string, opt Options) (*Draft, error) {
	if len(paths) == 0 {
		return nil, errors.New("suggest: name the export: a folder, a zip, or its files")
	}
	name := opt.Name
	if name == "" {
		name = "custom"
	}
	d, samples, idx, err := sampleExport(ctx, paths, opt, name)
	if err != nil {
		return nil, err
	}
	for _, s := range samples {
		if _, _, ok := salesforceKind(s); ok {
			d.IDs = "salesforce"
		}
	}
	looks := map[*sample][]*look{}
	for _, s := range samples {
		for _, v := range s.vals {
			looks[s] = append(looks[s], lookAt(v))
		}
	}
	ex := placeIDs(samples, looks, idx)
	for _, k := range canon.Kinds() {
		for _, s := range samples {
			if s.file.Kind == k {
				placeFields(s, looks[s], idx, ex)
				addNames(ex, s)
			}
		}
	}
	valueSpellings(d, samples, looks)
	matchKeys(d, samples, looks)
	fixPatterns(d)
	return d, nil
}

// readFiles adds to d a file per file listed, and reads a sample of rows
// of each it can read, whose kind it guesses; a file it cannot read is
// left out, and says why. It returns the samples read.
// sampleExport reads the first rows of each file of the export at paths
// (opt's sample size and limits) into a draft named name, each file judged
// by its evidence, and the built-in profiles' spellings it was judged by
// (but opt.Hide's): what Suggest drafts from and Recognise weighs.
func sampleExport(ctx context.Context, paths []string, opt Options, name string) (*Draft, []*sample, spellingIndex, error) {
	rows := opt.SampleRows
	if rows <= 0 {
		rows = DefaultSampleRows
	}
	lim := opt.Limits
	if lim == (input.Limits{}) {
		lim = input.DefaultLimits()
	}
	listed, err := listFiles(paths, lim)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(listed) == 0 {
		return nil, nil, nil, &input.Error{Path: paths[0], Reason: "holds no files to read"}
	}
	idx := buildSpellings(opt.Hide)
	d := &Draft{Name: name, Files: []*File{}}
	samples, err := readFiles(ctx, d, listed, rows, lim, idx)
	return d, samples, idx, err
}

func readFiles(ctx context.Context, d *Draft, listed []input.File, rows int, lim input.Limits, idx spellingIndex) ([]*sample, error) {
	var samples []*sample
	for _, lf := range listed {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f := &File{Ref: lf.Ref, Name: lf.Name, Columns: []*Column{}}
		d.Files = append(d.Files, f)
		format, ok := reader.FormatOf(matchName(lf.Name))
		if !ok {
			f.KindWhy, f.KindSure = leftOutReason(lf.Name), Sure
			continue
		}
		f.Format = format
		f.Pattern = patternOf(lf.Name)
		ss, err := readSamples(f, rows, lim)
		if err != nil {
			f.KindWhy, f.KindSure = "left out: it cannot be read: "+err.Error(), Sure
			continue
		}
		ss = sheetFiles(d, f, ss, idx)
		for _, s := range ss {
			for i, c := range s.cols {
				s.file.Columns = append(s.file.Columns, &Column{Name: c, Why: "not placed: kept in extra", Samples: samplesOf(s.vals[i]), Values: fewValues(s.vals[i])})
			}
		}
		samples = append(samples, ss...)
	}
	return samples, nil
}

// sheetFiles guesses the kind of each sample of file f, and returns the
// samples the draft reads: f's first, when its sheets hold one kind at
// most (a run reads each sheet with a header: the Archived sheet of a
// contacts workbook is contacts too); when they hold several, one file of
// the draft per sheet, each naming its sheet (a profile's files: {file,
// sheet}), added to d after f.
func sheetFiles(d *Draft, f *File, ss []*sample, idx spellingIndex) []*sample {
	var kinds []ledger.Kind
	for _, s := range ss {
		s.kind, s.kindWhy, s.kindSure = guessKind(f.Name, s, idx)
		if s.kind != "" && !containsKind(kinds, s.kind) {
			kinds = append(kinds, s.kind)
		}
	}
	if len(kinds) < 2 {
		s := ss[0]
		f.Kind, f.KindWhy, f.KindSure = s.kind, s.kindWhy, s.kindSure
		return ss[:1]
	}
	d.Files = d.Files[:len(d.Files)-1] // f, replaced by its sheets
	for _, s := range ss {
		g := *f
		g.Sheet, g.Kind, g.KindWhy, g.KindSure = s.sheet, s.kind, s.kindWhy, s.kindSure
		g.Columns = []*Column{}
		if g.Kind != "" {
			g.KindWhy = fmt.Sprintf("its sheet %q: %s", s.sheet, g.KindWhy)
		}
		s.file = &g
		d.Files = append(d.Files, &g)
	}
	return ss
}

// placeIDs gives each file of a kind its id column, if one looks like
// it, and returns the ids each kind's files hold.
func placeIDs(samples []*sample, looks map[*sample][]*look, idx spellingIndex) *exportIDs {
	ex := &exportIDs{ids: map[ledger.Kind]map[string]bool{}, nameSet: map[ledger.Kind]map[string]bool{}}
	for _, s := range samples {
		if s.file.Kind == "" {
			continue
		}
		i, why, score := placeID(s, looks[s], idx)
		if i < 0 {
			s.file.KindWhy += "; no column looks like its id: pick the column that holds each record's own id"
			continue
		}
		c := s.file.Columns[i]
		c.Field, c.Why, c.Sure = "id", why, sureOf(score)
		if ex.ids[s.file.Kind] == nil {
			ex.ids[s.file.Kind] = map[string]bool{}
		}
		for _, v := range looks[s][i].values {
			ex.ids[s.file.Kind][v] = true
			if len(v) == 18 && isSalesforceID(v) {
				ex.ids[s.file.Kind][v[:15]+"\x00"] = true // what a 15-character id of it is (exportIDs.found)
			}
		}
	}
	return ex
}

// samplesOf are a column's first distinct non-empty values, for the editor.
func samplesOf(vals []string) []string {
	var out []string
	for _, v := range vals {
		v = strings.TrimSpace(v)
		if v == "" || contains(out, v) {
			continue
		}
		if r := []rune(v); len(r) > 80 {
			v = string(r[:79]) + "…"
		}
		out = append(out, v)
		if len(out) == 3 {
			break
		}
	}
	return out
}

// maxValues is the most distinct values a column may hold for the editor
// to offer a value map of them.
const maxValues = 12

// fewValues are the distinct non-empty values of a column, in the order
// first seen, when there are at most maxValues of them; else nil.
func fewValues(vals []string) []string {
	var out []string
	for _, v := range vals {
		v = strings.TrimSpace(v)
		if v == "" || contains(out, v) {
			continue
		}
		if len(out) == maxValues || len([]rune(v)) > 80 {
			return nil
		}
		out = append(out, v)
	}
	return out
}

// placeFields gives each column of a file but its id the field (or link)
// it most likely holds; a field two columns may give goes to the surer
// (the first, when as sure), and the other to extra.
func placeFields(s *sample, looks []*look, idx spellingIndex, ex *exportIDs) {
	k := s.file.Kind
	best := make([]*candidate, len(s.cols))
	for i, c := range s.cols {
		if s.file.Columns[i].Field == "id" {
			continue
		}
		cands := append(fieldCandidates(k, c, looks[i], idx), linkCandidates(k, c, looks[i], idx, ex)...)
		for j := range cands {
			if cands[j].score >= minScore && (best[i] == nil || cands[j].score > best[i].score) {
				best[i] = &cands[j]
			}
		}
	}
	taken := map[string]int{}
	for i, b := range best {
		if b == nil || b.parent != "" {
			continue
		}
		if at, ok := taken[b.field]; !ok || b.score > best[at].score {
			taken[b.field] = i
		}
	}
	for i, b := range best {
		col := s.file.Columns[i]
		if col.Field == "id" {
			continue
		}
		if b == nil {
			col.Why = "not placed: " + unplacedWhy(looks[i]) + "; kept in extra"
			if why := collidingIDs(k, s.cols[i], looks[i], ex); why != "" {
				col.Why = "not placed: " + why + "; kept in extra"
			}
			continue
		}
		if canon.IsDateField(b.field) && len(looks[i].dateChoices) > 0 && looks[i].iso*2 < looks[i].nonEmpty {
			askDate(col, b.field, looks[i])
			continue
		}
		if b.parent == "" && taken[b.field] != i {
			col.Why = fmt.Sprintf("not placed: it looks like %s (%s), but %q gives %s; kept in extra", b.field, b.why, s.cols[taken[b.field]], b.field)
			continue
		}
		if b.byName && hasIDLink(best, b.parent) {
			col.Why = fmt.Sprintf("not placed: its values are names of the export's %s, but another column links them by id; kept in extra", b.parent.Plural())
			continue
		}
		col.Field, col.Why, col.Sure = b.field, b.why, sureOf(b.score)
		if b.parent == "" && looks[i].joined > 0 {
			col.Multi = multiSep
			col.Why += fmt.Sprintf(`; %d of its values hold several joined by %q: the first gives %s, the column is kept in extra`, looks[i].joined, multiSep, b.field)
		}
		if b.parent != "" {
			col.Prefixes = b.prefixes
			col.List = b.list
			if b.byName {
				col.List = ""
				col.Why += " (by: name)"
				col.ByName = true
			}
		}
	}
}

// askDate leaves a date column whose values read either way unplaced,
// with the question and its choices (issue 26 item 5: every 08/03/2021
// failed, or worse, was read the wrong way, while Check said nothing).
func askDate(col *Column, field string, l *look) {
	col.DateChoices, col.DateField = l.dateChoices, field
	col.Question = fmt.Sprintf("is %q (%s) written day first (%s) or month first (%s)? %s", col.Name, field, l.dateChoices[0], l.dateChoices[1], l.dateEvidence)
	col.Why = fmt.Sprintf("not placed: it looks like %s, but its dates can be read two ways: %s; kept in extra until the format is chosen", field, l.dateEvidence)
}

// hasIDLink: a column of the file links to parent by id.
func hasIDLink(best []*candidate, parent ledger.Kind) bool {
	for _, b := range best {
		if b != nil && b.parent == parent && !b.byName {
			return true
		}
	}
	return false
}

// collidingIDs says why a column whose values equal a parent file's ids
// is no link (a count of small numbers equal to organization ids: issue
// 26), or "".
func collidingIDs(k ledger.Kind, col string, l *look, ex *exportIDs) string {
	for _, p := range canon.Parents(k) {
		if found, of := ex.found(p.Kind, l.idParts()); of > 0 && 2*found >= of {
			return fmt.Sprintf("%d of its %d values equal ids of the export's %s, but its name says no %s id: a number, not a link", found, of, p.Kind.Plural(), p.Kind)
		}
	}
	return ""
}

func unplacedWhy(l *look) string {
	if l.nonEmpty == 0 {
		return "no field of its name, and no values to judge"
	}
	return "no field of its name, and its values fit none"
}

// addNames keeps the names of a file's records, for links by name: a
// company's or a deal's name, a contact's first and last name.
func addNames(ex *exportIDs, s *sample) {
	k := s.file.Kind
	if ex.nameSet[k] == nil {
		ex.nameSet[k] = map[string]bool{}
	}
	at := map[string]int{}
	for i, c := range s.file.Columns {
		if c.Field != "" {
			at[c.Field] = i
		}
	}
	for r := 0; r < s.rows; r++ {
		var n string
		switch k {
		case ledger.Company, ledger.Deal:
			if i, ok := at["name"]; ok {
				n = strings.TrimSpace(s.vals[i][r])
			}
		case ledger.Contact:
			var parts []string
			for _, f := range []string{"first_name", "last_name"} {
				if i, ok := at[f]; ok {
					if v := strings.TrimSpace(s.vals[i][r]); v != "" {
						parts = append(parts, v)
					}
				}
			}
			n = strings.Join(parts, " ")
		}
		if n != "" {
			ex.nameSet[k][n] = true
		}
	}
}

// valueSpellings gathers the spellings of empty seen (twice or more in a
// column), of true and false in flag columns, and the date formats of date
// columns.
func valueSpellings(d *Draft, samples []*sample, looks map[*sample][]*look) {
	for _, s := range samples {
		if s.file.Kind == "" {
			continue
		}
		for i, c := range s.file.Columns {
			l := looks[s][i]
			for w, n := range l.empties {
				if (n >= 2 || w == salesforceEmptyID) && !contains(d.Empty, w) {
					d.Empty = append(d.Empty, w)
				}
			}
			if canon.IsFlagField(c.Field) {
				for _, w := range l.trueSeen {
					d.True = appendNew(d.True, w)
				}
				for _, w := range l.falseSeen {
					d.False = appendNew(d.False, w)
				}
			}
			switch {
			case canon.IsDateField(c.Field) && l.dateSpec != "":
				s.file.DateFormats = appendNew(s.file.DateFormats, l.dateSpec)
				c.DateFormat = l.dateSpec
				c.Why += "; " + l.dateEvidence
			case canon.IsDateField(c.Field) && len(l.dateChoices) > 0:
				// Most of its dates are ISO 8601: the few that read
				// either way are left to fail, not guessed.
				c.Why += fmt.Sprintf("; most of its dates are ISO 8601, and its other %s: no format is added for them, and they fail", l.dateEvidence)
			}
		}
	}
	sortStrings(d.Empty)
	sortStrings(d.True)
	sortStrings(d.False)
}

// fixPatterns makes a file's pattern its exact name where the pattern
// would also match another file of the export that is not of its kind.
func fixPatterns(d *Draft) {
	for _, f := range d.Files {
		if f.Kind == "" || f.Pattern == "" {
			continue
		}
		for _, g := range d.Files {
			if g == f || g.Kind == f.Kind || g.Format == "" || sameWorkbook(f, g) {
				continue
			}
			if m, _ := path.Match(f.Pattern, matchName(g.Name)); m {
				f.Pattern = matchName(f.Name)
				break
			}
		}
	}
}

// sameWorkbook: f and g are two sheets of one workbook, told apart by
// their sheets, not their pattern.
func sameWorkbook(f, g *File) bool {
	return f.Ref == g.Ref && f.Sheet != "" && g.Sheet != ""
}

// matchKeys chooses the natural keys that match existing records (R5):
// email when the contacts' emails read are distinct, domain when the
// companies' domains are (accounts that share a website are not one).
func matchKeys(d *Draft, samples []*sample, looks map[*sample][]*look) {
	var why []string
	for _, key := range []struct {
		kind        ledger.Kind
		field, name string
		norm        func(string) string
	}{{ledger.Contact, "email", "email", canon.EmailKey}, {ledger.Company, "domain", "domain", canon.DomainKey}} {
		placed, distinct := false, true
		seen := map[string]bool{}
		for _, s := range samples {
			if s.file.Kind != key.kind {
				continue
			}
			for i, c := range s.file.Columns {
				if c.Field != key.field {
					continue
				}
				placed = true
				for _, v := range looks[s][i].values {
					n := key.norm(v)
					if n != "" && seen[n] {
						distinct = false
					}
					seen[n] = true
				}
			}
		}
		switch {
		case placed && distinct:
			d.Match = append(d.Match, key.name)
			why = append(why, fmt.Sprintf("a %s with the %s of one already imported is matched, not created again (the %ss read are distinct)", key.kind, key.field, key.field))
		case placed:
			why = append(why, fmt.Sprintf("%s records share %ss in the rows read, so they are not matched by %s", key.kind, key.field, key.field))
		}
	}
	d.MatchWhy = strings.Join(why, "; ")
}

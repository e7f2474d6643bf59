package suggest

// Which built-in profile reads an export (issue 27 item 4): the New import
// page proposes a source and a profile instead of defaulting to canonical.
// It is judged on the evidence a draft weighs — the kind each file's values
// and headers say (guessKind: Salesforce id prefixes, join tables, headers
// confirmed by names) — and on what each built-in profile reads of it: the
// files its patterns (or, for Salesforce, its id prefixes) give that kind,
// with their id column, and the headers it spells.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"crmimport/canon"
	"crmimport/importer/profile"
	"crmimport/ledger"
)

// Recognition is which built-in profile reads an export, and why.
type Recognition struct {
	// Profile is the built-in profile proposed, "" when none reads the
	// export: the mapping editor drafts one.
	Profile string `json:"profile"`
	// Why is the proposal, or why there is none, in one line ("Account.csv
	// and Contact.csv with 001/003 ids: a Salesforce export").
	Why string `json:"why"`
	// Files are the export's files, each with the kind its evidence says
	// and whether the profile proposed reads it so.
	Files []RecognisedFile `json:"files"`
	// Candidates are the built-in profiles that read some of the export,
	// best first.
	Candidates []Candidate `json:"candidates"`
}

// RecognisedFile is one file of an export as Recognise judged it.
type RecognisedFile struct {
	Name string `json:"name"`
	// Kind is the kind its values and headers say (a draft's guess), or
	// "" for a file left out, with KindWhy saying why.
	Kind    ledger.Kind `json:"kind"`
	KindWhy string      `json:"kind_why"`
	// Read: the profile proposed reads it as Kind.
	Read bool `json:"read"`
}

// Candidate is what one built-in profile reads of an export.
type Candidate struct {
	Profile string `json:"profile"`
	// Files counts the files it reads as the kind their evidence says: its
	// patterns (or its id prefixes) give the file that kind, and the
	// header holds the kind's id column.
	Files int `json:"files"`
	// Exact counts the header columns of those files it spells as the
	// export does, case and spaces included (a CRM's own export); Columns
	// those it reads however spelled, of Of columns in all.
	Exact   int `json:"exact"`
	Columns int `json:"columns"`
	Of      int `json:"of"`
	// ByIDs: some of its files it reads as their ids' kind (Salesforce's
	// prefixes), not by name; IDs: its prefixes say the kind of the files
	// it reads as their evidence does (a Data Loader's upper-case headers
	// are not spelled as the profile spells them, its ids are).
	ByIDs bool `json:"by_ids,omitempty"`
	IDs   bool `json:"ids,omitempty"`

	read []string // the names of the files it reads
}

// Recognise reads the first rows of an export's files (the paths a run
// takes: folders, zips, files) as Suggest does, and says which built-in
// profile reads it: the one that reads the most of its files as the kinds
// their evidence says, then spells the most of their headers as the export
// does. It proposes none when the best reads no more than half of the files
// a kind was found in (all of them, when there are two or fewer), or,
// unless its id prefixes say the files' kinds, spells fewer than half of
// the columns it reads as the export does, or fewer than 3 (shortOf): an
// export that resembles a CRM's in a file or two, or whose headers merely
// mean what a CRM's do, is no export of it (a Zoho deals file reads as
// HubSpot's; the canonical contacts.csv has HubSpot's fields, spelled
// first_name, not "First Name"). How many of a file's columns it reads
// does not count: a CRM's export holds many custom fields.
func Recognise(ctx context.Context, paths []string, opt Options) (*Recognition, error) {
	if len(paths) == 0 {
		return nil, errors.New("recognise: name the export: a folder, a zip, or its files")
	}
	d, samples, idx, err := sampleExport(ctx, paths, opt, "")
	if err != nil {
		return nil, err
	}
	rec := &Recognition{Files: []RecognisedFile{}, Candidates: []Candidate{}}
	kinded := 0
	for _, f := range d.Files {
		rec.Files = append(rec.Files, RecognisedFile{Name: f.Name, Kind: f.Kind, KindWhy: f.KindWhy})
		if f.Kind != "" {
			kinded++
		}
	}
	for _, name := range profile.BuiltinNames() {
		if slices.Contains(opt.Hide, name) {
			continue
		}
		p, err := profile.Builtin(name)
		if err != nil {
			return nil, err // the embedded profiles are tested: cannot happen
		}
		if c := profileCandidate(p, samples, idx); c.Files > 0 {
			rec.Candidates = append(rec.Candidates, c)
		}
	}
	sort.SliceStable(rec.Candidates, func(i, j int) bool {
		a, b := rec.Candidates[i], rec.Candidates[j]
		if a.Files != b.Files {
			return a.Files > b.Files
		}
		if a.Exact != b.Exact {
			return a.Exact > b.Exact
		}
		return a.Columns > b.Columns
	})
	// Why says, when no profile is proposed, what falls short: the page
	// puts it after "No built-in profile reads this export: ".
	if kinded == 0 {
		rec.Why = "no file of it holds records of a kind crmimport imports, by its values or its headers"
		return rec, nil
	}
	if len(rec.Candidates) == 0 {
		rec.Why = fmt.Sprintf("none of the %s profiles reads %s", builtinWords(opt.Hide), namesPreview(kindedNames(rec.Files)))
		return rec, nil
	}
	best := rec.Candidates[0]
	if why := shortOf(best, kinded); why != "" {
		rec.Why = why
		return rec, nil
	}
	rec.Profile = best.Profile
	for i := range rec.Files {
		rec.Files[i].Read = slices.Contains(best.read, rec.Files[i].Name)
	}
	rec.Why = whyProfile(best, samples)
	return rec, nil
}

// shortOf says why the best candidate is no proposal, or "": it reads no
// more than half of the kinded files that hold records (all, when there
// are two or fewer), or it spells fewer than half of the columns it reads
// as the export does, or fewer than 3, and its id prefixes do not say the
// files' kinds.
func shortOf(best Candidate, kinded int) string {
	switch {
	case 2*best.Files <= kinded && best.Files < kinded:
		return fmt.Sprintf("the closest, %s, reads %d of the %d files that hold records, and %d of the %d columns of %s",
			best.Profile, best.Files, kinded, best.Columns, best.Of, plural(best.Files, "that file", "those files"))
	case best.IDs:
		return ""
	case 2*best.Exact < best.Columns:
		return fmt.Sprintf("the closest, %s, reads %s, but spells only %d of the %d columns it reads as the export does: they are another CRM's headers",
			best.Profile, namesPreview(best.read), best.Exact, best.Columns)
	case best.Exact < 3:
		return fmt.Sprintf("the closest, %s, reads %s, but only %d of %s columns as it spells them: too few to tell",
			best.Profile, namesPreview(best.read), best.Exact, plural(best.Files, "its", "their"))
	}
	return ""
}

// profileCandidate is what p reads of the samples.
func profileCandidate(p *profile.Profile, samples []*sample, idx spellingIndex) Candidate {
	c := Candidate{Profile: p.Name}
	for _, s := range samples {
		k := s.file.Kind
		if k == "" || !p.Reads(k) {
			continue
		}
		ik, idsOK := idsKind(p, s)
		idsOK = idsOK && ik == k
		byIDs := false
		if ks, _, ok := p.FileKinds(s.file.Name); !ok || !slices.Contains(ks, k) {
			if !idsOK {
				continue
			}
			byIDs = true
		}
		if !hasIDColumn(p, k, s.cols) {
			continue
		}
		exact, read := 0, 0
		for _, col := range s.cols {
			sp := idx[k][profile.NormaliseHeader(col)]
			if !slices.ContainsFunc(sp, func(x spelled) bool { return x.from == p.Name }) {
				continue
			}
			read++
			if slices.ContainsFunc(sp, func(x spelled) bool { return x.from == p.Name && x.Column == col }) {
				exact++
			}
		}
		c.Files++
		c.Exact += exact
		c.Columns += read
		c.Of += len(s.cols)
		c.ByIDs = c.ByIDs || byIDs
		c.IDs = c.IDs || idsOK
		if !slices.Contains(c.read, s.file.Name) {
			c.read = append(c.read, s.file.Name)
		}
	}
	return c
}

// idsKind is the kind p gives the records of a file by the prefix of its
// first id (kinds_by_id_prefix), as a run plans a file its patterns do not
// name (importer's byIDs).
func idsKind(p *profile.Profile, s *sample) (ledger.Kind, bool) {
	if !p.ReadsKindsByIDs() {
		return "", false
	}
	i := ownIDColumn(s.cols)
	if i < 0 {
		return "", false
	}
	for _, v := range s.vals[i] {
		if v = strings.TrimSpace(v); v != "" {
			k, _, ok := p.KindOfIDs(v)
			return k, ok
		}
	}
	return "", false
}

// hasIDColumn: the header holds a column p reads a kind k's ids from (or
// each column it makes them of).
func hasIDColumn(p *profile.Profile, k ledger.Kind, cols []string) bool {
	norm := make([]string, len(cols))
	for i, c := range cols {
		norm[i] = profile.NormaliseHeader(c)
	}
	if from := p.IDFrom(k); len(from) > 0 {
		for _, f := range from {
			if !slices.Contains(norm, profile.NormaliseHeader(f)) {
				return false
			}
		}
		return true
	}
	for _, id := range p.IDColumns(k) {
		if slices.Contains(norm, id) {
			return true
		}
	}
	return false
}

// whyProfile says in a line why the export is best's: the files it reads
// and the evidence — Salesforce ids by their prefixes, or the headers it
// spells.
func whyProfile(best Candidate, samples []*sample) string {
	var names, prefixes []string
	read := slices.Clone(samples)
	// Records first, in plan order, users last: "Account.csv and
	// Contact.csv", not "User.csv".
	sort.SliceStable(read, func(i, j int) bool { return kindRank(read[i].file.Kind) < kindRank(read[j].file.Kind) })
	for _, s := range read {
		if !slices.Contains(best.read, s.file.Name) || slices.Contains(names, s.file.Name) {
			continue
		}
		names = append(names, s.file.Name)
		if _, _, ok := salesforceKind(s); ok {
			if i := ownIDColumn(s.cols); i >= 0 {
				if v := firstValue(s.vals[i]); len(v) >= 3 && !slices.Contains(prefixes, v[:3]) {
					prefixes = append(prefixes, v[:3])
				}
			}
		}
	}
	var evidence string
	switch {
	case len(prefixes) > 0:
		evidence = "with " + strings.Join(firstOf(prefixes, 3), "/") + " ids"
	case 2*best.Exact >= best.Columns:
		evidence = fmt.Sprintf("with %s (%d of %s %d columns spelled as the %s profile spells them)",
			headersWords(best.Profile), best.Exact, plural(len(names), "its", "their"), best.Of, best.Profile)
	default:
		evidence = fmt.Sprintf("with headers the %s profile reads (%d of %s %d columns)", best.Profile, best.Columns, plural(len(names), "its", "their"), best.Of)
	}
	return fmt.Sprintf("%s %s: %s", namesPreview(names), evidence, exportWords(best.Profile))
}

// kindRank is a kind's place in plan order, users last.
func kindRank(k ledger.Kind) int {
	if k == ledger.User {
		return len(canon.Kinds())
	}
	return slices.Index(canon.Kinds(), k)
}

// exportWords names what an export read by a built-in profile is: "a
// Salesforce export", "crmimport's canonical layout".
func exportWords(name string) string {
	if name == "canonical" {
		return "crmimport's canonical layout"
	}
	return profile.Article(crmName(name)) + " export"
}

// headersWords names the headers of an export read by a built-in
// profile: "HubSpot's headers", "the canonical headers".
func headersWords(name string) string {
	if name == "canonical" {
		return "the canonical headers"
	}
	return crmName(name) + "'s headers"
}

// crmName is the name of the CRM a built-in profile reads, as its
// description spells it (HubSpot), or the profile's name.
func crmName(name string) string {
	p, err := profile.Builtin(name)
	if err != nil || p.Description == "" {
		return name
	}
	crm, _, _ := strings.Cut(p.Description, " ")
	return crm
}

// namesPreview names a few files: "Account.csv and Contact.csv", "a.csv,
// b.csv, c.csv and 4 more".
func namesPreview(names []string) string {
	switch n := len(names); {
	case n == 0:
		return "no file"
	case n == 1:
		return names[0]
	case n <= 3:
		return strings.Join(names[:n-1], ", ") + " and " + names[n-1]
	default:
		return strings.Join(names[:3], ", ") + fmt.Sprintf(" and %d more", n-3)
	}
}

func kindedNames(files []RecognisedFile) []string {
	var out []string
	for _, f := range files {
		if f.Kind != "" {
			out = append(out, f.Name)
		}
	}
	return out
}

// builtinWords names the built-in profiles a recognition weighs, all of
// them: "canonical, hubspot, pipedrive and salesforce".
func builtinWords(hide []string) string {
	var names []string
	for _, n := range profile.BuiltinNames() {
		if !slices.Contains(hide, n) {
			names = append(names, n)
		}
	}
	switch len(names) {
	case 0:
		return "no"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

func firstValue(vals []string) string {
	for _, v := range vals {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

func firstOf(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

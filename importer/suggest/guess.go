package suggest

// The guesses: a kind per file, the id column, a field per column, links.

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"crmimport/canon"
	"crmimport/importer/profile"
	"crmimport/ledger"
)

// guessKind guesses the kind of a file from its values, its headers and
// its name — never from its name alone (issue 26 item 5): Salesforce ids
// say their object; a join table is left out, saying so; then the fields
// its headers name, confirmed or told apart by its name.
func guessKind(name string, s *sample, idx spellingIndex) (ledger.Kind, string, Sureness) {
	if k, why, ok := salesforceKind(s); ok {
		return k, why, Sure
	}
	if why, ok := joinTable(s, idx); ok {
		return "", why, Sure
	}
	cols := s.cols
	base := strings.TrimSuffix(matchName(name), path.Ext(matchName(name)))
	var named []ledger.Kind
	var word string
	for _, w := range words(base) {
		if k := kindOfWord(w); k != "" && !containsKind(named, k) {
			named = append(named, k)
			if word == "" {
				word = w
			}
		}
	}
	hk, hn, hfields := headerKind(cols, idx)
	if flag := companyFlag(cols); flag != "" && (hk == "" || hk == ledger.Contact || hk == ledger.Company) {
		return ledger.Contact, fmt.Sprintf("its column %q tells companies from people, and %d of its columns are contact fields (%s): read as contacts; "+
			"a profile's where can read its companies as well", flag, len(headerFields(cols, idx, ledger.Contact)), strings.Join(headerFields(cols, idx, ledger.Contact), ", ")), Likely
	}
	switch {
	case len(named) == 1 && named[0] == ledger.Lead && hk == ledger.Contact:
		return ledger.Lead, fmt.Sprintf("its name says %q, and %d of its columns are fields a lead shares with a contact (%s)", word, hn, strings.Join(hfields, ", ")), Likely
	case len(named) == 1 && hk == named[0]:
		return named[0], fmt.Sprintf("its name says %q, and %d of its columns are %s fields (%s)", word, hn, named[0], strings.Join(hfields, ", ")), Sure
	case len(named) == 1 && len(hintedFields(cols, idx, named[0])) > 0 && (hk == "" || hn < 3):
		nf := hintedFields(cols, idx, named[0])
		return named[0], fmt.Sprintf("its name says %q, and %s of its columns %s (%s)", word, countWord(len(nf)), plural(len(nf), "is a "+string(named[0])+" field", "are "+string(named[0])+" fields"), strings.Join(nf, ", ")), Likely
	case len(named) > 1 && containsKind(named, hk) && hn >= 2:
		return hk, fmt.Sprintf("its name names %s, and %d of its columns are %s fields (%s)", kindList(named), hn, hk, strings.Join(hfields, ", ")), Likely
	case len(named) > 1 && hk == "":
		return "", fmt.Sprintf("left out: its name names %s, as a table joining them does, and its columns are not mostly one kind's", kindList(named)), Guess
	case hk != "" && hn >= 3:
		return hk, fmt.Sprintf("%d of its columns are %s fields (%s)", hn, hk, strings.Join(hfields, ", ")), Likely
	case len(named) == 1:
		return "", fmt.Sprintf("left out: its name says %q, but none of its columns is a %s field: a kind is never taken from a name alone", word, named[0]), Guess
	}
	return "", "left out: its columns are not mostly one kind's (users, companies, contacts, deals, notes, activities, emails), nor do its values say one", Guess
}

func countWord(n int) string {
	if n == 1 {
		return "one"
	}
	return fmt.Sprint(n)
}

func containsKind(ks []ledger.Kind, k ledger.Kind) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

func kindList(ks []ledger.Kind) string {
	var s []string
	for _, k := range ks {
		s = append(s, k.Plural())
	}
	return strings.Join(s, " and ")
}

// headerKind is the kind most of whose own fields the headers name (id,
// created_at, deleted and owner_id, which every kind has, not counted):
// the kind, how many fields, which.
func headerKind(cols []string, idx spellingIndex) (ledger.Kind, int, []string) {
	best, bestN, second := ledger.Kind(""), 0, 0
	var bestFields []string
	for _, k := range canon.Kinds() {
		got := headerFields(cols, idx, k)
		if k == ledger.Lead && !slices.Contains(got, "lead_source") {
			// A lead's fields are a contact's, with a company's name and a
			// status: without a word of its own, a file of people is
			// contacts (HubSpot's contacts have a "Company name"). Its
			// name (leads.csv) or its ids (00Q) say lead otherwise.
			continue
		}
		if len(got) > bestN {
			best, second, bestN, bestFields = k, bestN, len(got), got
		} else if len(got) > second {
			second = len(got)
		}
	}
	if bestN == second {
		return "", 0, nil
	}
	return best, bestN, bestFields
}

// headerFields are the fields of kind k that the headers name, but those
// every kind has (id, created_at, deleted, owner_id), sorted.
func headerFields(cols []string, idx spellingIndex, k ledger.Kind) []string {
	got := map[string]bool{}
	for _, c := range cols {
		h, _ := stripEntity(c)
		n := profile.NormaliseHeader(h)
		last := n
		if i := strings.LastIndex(c, "."); i >= 0 {
			last = profile.NormaliseHeader(c[i+1:]) // properties.firstname
		}
		for _, f := range canon.Fields(k) {
			switch f {
			case "id", "created_at", "deleted", "owner_id":
				continue
			}
			if _, isLink := canon.KindOfLinkField(f); isLink {
				continue // a link says what a record points to, not what it is
			}
			if n == profile.NormaliseHeader(f) || knownName(k, f, n) || knownName(k, f, last) {
				got[f] = true
			}
			for _, s := range idx[k][profile.NormaliseHeader(c)] {
				if s.Field == f && !s.Link {
					got[f] = true
				}
			}
		}
	}
	return sortedKeys(got)
}

// hintedFields are the fields of kind k the headers name (headerFields)
// or hint at by a word (a meeting's hs_meeting_title, "title"): enough to
// confirm what a file's name says, not to say it.
func hintedFields(cols []string, idx spellingIndex, k ledger.Kind) []string {
	got := headerFields(cols, idx, k)
	for _, c := range cols {
		h, _ := stripEntity(c)
		ws := words(strings.ReplaceAll(h, ".", " "))
		for _, cw := range containsWords {
			if !canon.HasField(k, cw.field) || contains(got, cw.field) || cw.field == "deleted" || cw.field == "created_at" {
				continue
			}
			for _, w := range ws {
				if contains(cw.words, w) {
					got = append(got, cw.field)
					break
				}
			}
		}
	}
	sort.Strings(got)
	return got
}

// candidate is one field a column may give.
type candidate struct {
	field  string
	score  int
	why    string
	list   string
	byName bool
	parent ledger.Kind
	// prefixes: a link by id prefix, the parent kind of each (parent is
	// then the kind most of its values name).
	prefixes map[string]ledger.Kind
}

func sureOf(score int) Sureness {
	switch {
	case score >= 25:
		return Sure
	case score >= 15:
		return Likely
	}
	return Guess
}

// isIDWord: the word is "id" or "ids" (Salesforce's AccountId splits into
// account, id).
func isIDWord(w string) bool { return w == "id" || w == "ids" || w == "key" || w == "nr" }

// idOfKind says which kind's id a header names (Record ID - Company,
// Primary Associated Company ID, AccountId, Organization - ID in an
// organizations file), or "" with ok=false when it names no id; a header
// that is only "id" or "record id" names the file's own (own=true).
func idOfKind(header string) (k ledger.Kind, own bool, ok bool) {
	h, _ := stripEntity(header)
	ws := splitIDWords(words(strings.ReplaceAll(h, ".", " ")))
	hasID := false
	var kinds []ledger.Kind
	for _, w := range ws {
		if isIDWord(w) {
			hasID = true
			continue
		}
		if kk := kindOfWord(w); kk != "" && !containsKind(kinds, kk) {
			kinds = append(kinds, kk)
		}
	}
	if !hasID {
		return "", false, false
	}
	if len(kinds) == 0 {
		for _, w := range ws {
			if !isIDWord(w) && w != "record" && w != "object" && w != "hs" {
				return "", false, false // WhoId, ParentId: an id of something the name does not say
			}
		}
		return "", true, true
	}
	return kinds[0], false, true
}

// splitIDWords splits a word that ends in "id" after a kind's word
// (Data Loader's ACCOUNTID, CONTACTIDS) into the two.
func splitIDWords(ws []string) []string {
	var out []string
	for _, w := range ws {
		for _, suffix := range []string{"ids", "id"} {
			if stem, ok := strings.CutSuffix(w, suffix); ok && stem != "" && kindOfWord(stem) != "" {
				out = append(out, stem)
				w = suffix
				break
			}
		}
		out = append(out, w)
	}
	return out
}

// placeID finds a file's id column: its index, the why and how sure, or -1.
func placeID(s *sample, looks []*look, idx spellingIndex) (int, string, int) {
	k := s.file.Kind
	best, bestScore, why := -1, 0, ""
	for i, c := range s.cols {
		l := looks[i]
		score, w := 0, ""
		n := profile.NormaliseHeader(c)
		if sp := spelledAs(idx, k, n, "id"); sp != "" {
			score, w = 28, sp
		} else if ik, own, ok := idOfKind(c); ok && (own || ik == k) {
			score, w = 26, "its name says it is the "+string(k)+"'s id"
			if strings.Contains(n, ".") || strings.Count(c, ".") > 0 {
				score -= 4 // properties.hs_object_id: a copy of the id, most likely
			}
		}
		if score > 0 {
			switch {
			case l.nonEmpty > 0 && l.distinct == l.nonEmpty && l.share(l.ids) >= 0.5:
				w += ", and its values are distinct ids"
				score += 4
			case l.nonEmpty == 0:
				w += " (no values to confirm it)"
			default:
				w += ", but its values are not all distinct ids"
				score -= 20
			}
		}
		if score > bestScore {
			best, bestScore, why = i, score, w
		}
	}
	if best >= 0 && bestScore > 5 {
		return best, why, bestScore
	}
	for i := range s.cols {
		if looks[i].uniqueIDs() && looks[i].nonEmpty == s.rows && s.rows > 0 {
			return i, fmt.Sprintf("the first column whose values are distinct ids in the %d rows read", s.rows), 8
		}
	}
	return -1, "", 0
}

// spelledAs says which built-in profile spells the header n as field f of
// kind k ("hubspot's spelling of email"), or "".
func spelledAs(idx spellingIndex, k ledger.Kind, n, f string) string {
	var from []string
	for _, s := range idx[k][n] {
		if s.Field == f && !contains(from, s.from) {
			from = append(from, s.from)
		}
	}
	if len(from) == 0 {
		return ""
	}
	sort.Strings(from)
	return fmt.Sprintf("%s %s it %s", strings.Join(from, " and "), plural(len(from), "profile spells", "profiles spell"), f)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// containsWords are words whose presence in a header hints at a field.
var containsWords = []struct {
	field string
	words []string
}{
	{"email", []string{"email", "mail", "correo"}},
	{"phone", []string{"phone", "mobile", "telefon", "tel", "teléfono", "fax"}},
	{"domain", []string{"website", "domain", "url", "web", "homepage"}},
	{"created_at", []string{"created", "create", "creation", "added"}},
	{"close_date", []string{"close", "closing"}},
	{"due_at", []string{"due", "start", "scheduled"}},
	{"sent_at", []string{"sent", "send"}},
	{"amount", []string{"amount", "value", "revenue", "price"}},
	{"currency", []string{"currency"}},
	{"stage", []string{"stage", "phase"}},
	{"pipeline", []string{"pipeline"}},
	{"industry", []string{"industry", "sector"}},
	{"deleted", []string{"deleted", "archived"}},
	{"subject", []string{"subject", "title"}},
	{"body", []string{"body", "notes", "description", "content"}},
	{"first_name", []string{"first"}},
	{"last_name", []string{"last", "surname"}},
	{"from", []string{"from", "sender"}},
	{"to", []string{"to", "recipient"}},
	{"type", []string{"type"}},
}

// valueCheck says how well a field's values fit it: a bonus or a malus,
// and why.
func valueCheck(k ledger.Kind, f string, l *look) (int, string) {
	if l.nonEmpty == 0 {
		return 0, ""
	}
	var share float64
	var what string
	switch {
	case f == "email" || f == "from" || f == "to":
		share, what = l.share(l.emails), "email addresses"
	case canon.IsDateField(f):
		share, what = l.share(l.dates), "dates"
	case f == "amount":
		share, what = l.share(l.amounts), "amounts"
	case canon.IsFlagField(f):
		share, what = l.share(l.bools), "true or false"
	case f == "domain":
		share, what = l.share(l.domains), "domains or web addresses"
	case f == "phone":
		share, what = l.share(l.phones), "phone numbers"
	case f == "status" && k == ledger.Deal:
		// A deal's status is open, won or lost (SPEC §4): a column of
		// other words (Active, Deleted) is no status, whatever its header.
		// A lead's is the CRM's own words.
		n := 0
		for _, v := range l.values {
			if _, ok := canon.Status(v); ok {
				n++
			}
		}
		share, what = l.share(n), "open, won or lost"
	default:
		return 0, ""
	}
	switch {
	case share >= 0.8 && canon.IsDateField(f) && 2*l.timed > l.nonEmpty:
		// Of two columns of one date (Salesforce's ActivityDateTime and
		// ActivityDate), the one that keeps the time.
		return 5, fmt.Sprintf("its values are %s with their times", what)
	case share >= 0.8:
		return 4, fmt.Sprintf("its values are %s", what)
	case share >= 0.5:
		return 0, fmt.Sprintf("most of its values are %s", what)
	}
	return -18, fmt.Sprintf("but its values are not %s", what)
}

// fieldCandidates are the fields (not links, not the id) a column may give.
func fieldCandidates(k ledger.Kind, col string, l *look, idx spellingIndex) []candidate {
	h, _ := stripEntity(col)
	n := profile.NormaliseHeader(h)
	full := profile.NormaliseHeader(col)
	ws := words(strings.ReplaceAll(h, ".", " "))
	last := ""
	if i := strings.LastIndex(col, "."); i >= 0 {
		last = profile.NormaliseHeader(col[i+1:]) // properties.firstname
	}
	var out []candidate
	for _, f := range canon.Fields(k) {
		if f == "id" {
			continue
		}
		if _, isLink := canon.KindOfLinkField(f); isLink {
			continue
		}
		score, why := 0, ""
		switch fn := profile.NormaliseHeader(f); {
		case spelledAs(idx, k, full, f) != "":
			score, why = 28, spelledAs(idx, k, full, f)
		case n == fn:
			score, why = 27, "the header is the field's own name"
		case knownName(k, f, n):
			score, why = 20, fmt.Sprintf("%q is a usual name of %s", h, f)
		case knownName(k, f, full):
			score, why = 20, fmt.Sprintf("%q is a usual name of %s", col, f) // Email - Work: no entity, a field and its label
		case last != "" && (last == fn || knownName(k, f, last)):
			score, why = 18, fmt.Sprintf("its last part %q is a usual name of %s", col[strings.LastIndex(col, ".")+1:], f)
		default:
			for _, cw := range containsWords {
				if cw.field != f {
					continue
				}
				for _, w := range ws {
					if contains(cw.words, w) {
						score, why = 10, fmt.Sprintf("its name holds %q", w)
					}
				}
			}
		}
		if k == ledger.Contact && f == "last_name" && (n == "name" || n == "fullname") && score > 12 {
			// A whole name: the last name only where no column gives a
			// first or last name (Pipedrive's Person - Name beside them),
			// and never a lead's title (Odoo's name beside contact_name).
			score, why = 12, why+" (a whole name, the last name only where no column gives one)"
		}
		if f == "created_at" && score < 20 && containsStem(ws, "creat") {
			score, why = 20, "its name says created"
		}
		// The look of the values alone.
		if score == 0 {
			switch {
			case f == "email" && k == ledger.Contact && l.share(l.emails) >= 0.8:
				score, why = 8, "its values are email addresses"
			case f == "domain" && k == ledger.Company && l.share(l.domains) >= 0.8 && l.nonEmpty > 0:
				score, why = 8, "its values are domains or web addresses"
			}
			if score > 0 {
				out = append(out, candidate{field: f, score: score, why: why})
			}
			continue
		}
		if bonus, what := valueCheck(k, f, l); what != "" {
			score += bonus
			why += "; " + what
		}
		if score > 0 {
			out = append(out, candidate{field: f, score: score, why: why})
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].score > out[b].score })
	return out
}

func containsWord(ws []string, w string) bool { return contains(ws, w) }

func containsStem(ws []string, stem string) bool {
	for _, w := range ws {
		if strings.HasPrefix(w, stem) {
			return true
		}
	}
	return false
}

// linkCandidates are the links a column of kind k may hold. A link by id
// needs two pieces of evidence (issue 26 item 5): a header that names the
// parent's id (a profile's spelling, "Organization ID", "AccountId") or
// a link of unnamed kind (WhoId, ParentId: then only ids as long as the
// parent's), and values that are the parent file's ids for most of the
// rows read. Values alone never make a link: a count, a quantity or a
// picture id of small numbers equals organization ids by chance (431
// people once linked to the wrong organization). A link by name needs
// values that are the names of the export's records of the parent kind.
// namesAnOwner reports whether a header names a record's owner: its last
// word is one for owner ("Account Owner", "Deal - Owner", "Inhaber").
func namesAnOwner(col string) bool {
	ws := words(col)
	if len(ws) == 0 {
		return false
	}
	switch ws[len(ws)-1] {
	case "owner", "inhaber", "besitzer", "propietario", "propriétaire", "proprietaire", "eigentümer":
		return true
	}
	return false
}

func linkCandidates(k ledger.Kind, col string, l *look, idx spellingIndex, ex *exportIDs) []candidate {
	full := profile.NormaliseHeader(col)
	var out []candidate
	list := l.listSep
	if l.jsonLists > 0 {
		list = "json"
	}
	if c, ok := prefixCandidate(k, col, l, ex); ok {
		return []candidate{c}
	}
	for _, p := range canon.Parents(k) {
		score, why, clist, byName := 0, "", list, false
		for _, s := range idx[k][full] {
			if s.Parent == p.Kind && (s.Field == p.Field) {
				score, why = 28, fmt.Sprintf("the %s profile reads it as a link to a %s", s.from, p.Kind)
				if s.List != "" {
					clist = s.List
				}
				byName = s.ByName
				break
			}
		}
		unnamed := false
		if score == 0 {
			switch ik, own, ok := idOfKind(col); {
			case ok && ik == p.Kind:
				score, why = 22, fmt.Sprintf("its name says it holds %s ids", p.Kind)
				if clist == "" && containsWord(words(col), "ids") {
					clist, why = ";", why+` (several: "IDs", separated by ";")`
				}
			case l.jsonLists > 0 || strings.Contains(col, "."):
				for _, w := range words(strings.ReplaceAll(col, ".", " ")) {
					if kindOfWord(w) == p.Kind {
						score, why = 18, fmt.Sprintf("its name holds %q", w)
					}
				}
			case !ok && !own && namesALink(col):
				unnamed = true
			}
		}
		if score == 0 && p.Kind == ledger.User && namesAnOwner(col) {
			// Zoho's "Account Owner", Pipedrive's "Owner": the person as
			// the export writes them, whom a users file names (SPEC §4).
			out = append(out, candidate{field: p.Field, score: 20, parent: p.Kind, list: clist,
				why: "its name says it is the record's owner (the owner as the export writes it: a users file gives each one's email)"})
			continue
		}
		if byName {
			out = append(out, candidate{field: p.Field, score: score, why: why, parent: p.Kind, byName: true})
			continue
		}
		found, of := ex.found(p.Kind, l.idParts())
		share := 0.0
		if of > 0 {
			share = float64(found) / float64(of)
		}
		switch {
		case unnamed && share >= 0.5 && longIDs(l.idParts()):
			score, why = 16, fmt.Sprintf("its name says it holds ids, and %d of its %d values are ids of the export's %s", found, of, p.Kind.Plural())
		case unnamed:
			score = 0
		case score > 0 && share >= 0.5:
			score += 4
			why += fmt.Sprintf(", and %d of its %d ids are %s ids of the export", found, of, p.Kind)
		case score > 0 && of == 0 && l.nonEmpty == 0 && score < 28 && !plainIDHeader(col):
			score = 0 // PrimaryPartnerAccountId, ConvertedAccountId: another account than the record's, and no values say otherwise
		case score > 0 && of == 0 && l.nonEmpty == 0:
			why += " (no values to confirm it)"
		case score > 0 && !ex.has(p.Kind) && (score >= 28 || full == profile.NormaliseHeader(p.Field)):
			// Named as a profile or the canonical layout names the link:
			// the parents may come from another export.
			why += fmt.Sprintf(" (the export holds no %s to confirm it)", p.Kind.Plural())
		case score > 0 && !ex.has(p.Kind):
			score = 0 // the export holds no parent to check its ids against
		case score > 0:
			score = 0 // its values are not the parent's ids: no link, whatever its name
		case l.nonEmpty > 0 && !headerSaysID(col):
			if hits := ex.names(p.Kind, l.values); float64(hits) >= 0.6*float64(len(l.values)) && hits > 0 {
				score, why, byName, clist = 14, fmt.Sprintf("%d of its %d values are names of the export's %s: a link by name", hits, len(l.values), p.Kind.Plural()), true, ""
			}
		}
		if score > 0 {
			out = append(out, candidate{field: p.Field, score: score, why: why, list: clist, byName: byName, parent: p.Kind})
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].score > out[b].score })
	return out
}

// plainIDHeader: the header says only which kind's id it holds ("Organization
// ID", AccountId, "Primary Associated Company ID"), no other role (a
// partner's, a converted lead's account).
func plainIDHeader(col string) bool {
	for _, w := range splitIDWords(words(strings.ReplaceAll(col, ".", " "))) {
		switch {
		case isIDWord(w), kindOfWord(w) != "":
		case contains([]string{"primary", "associated", "record", "main", "hs", "object"}, w):
		default:
			return false
		}
	}
	return true
}

// prefixCandidate is the link of a column whose header says it holds ids
// of records it does not name (WhoId, WhatId, ParentId, RelatedToId) and
// whose values are Salesforce ids of several parents: a link by id
// prefix, when most of its ids are the export's ids of the kinds their
// prefixes name.
func prefixCandidate(k ledger.Kind, col string, l *look, ex *exportIDs) (candidate, bool) {
	if !namesALink(col) || l.nonEmpty == 0 {
		return candidate{}, false
	}
	prefixes := map[string]ledger.Kind{}
	count := map[ledger.Kind]int{}
	found, of := 0, 0
	for _, v := range distinct(l.idParts()) {
		if !isSalesforceID(v) {
			return candidate{}, false
		}
		of++
		obj, known := salesforceObjects[v[:3]]
		if !known || obj.kind == "" || obj.kind == ledger.User || !canon.IsParent(k, obj.kind) {
			continue // a user is an owner, never the record a note or a task is about
		}
		prefixes[v[:3]] = obj.kind
		count[obj.kind]++
		if f, _ := ex.found(obj.kind, []string{v}); f == 1 {
			found++
		}
	}
	if len(count) < 2 || 2*found < of {
		return candidate{}, false
	}
	var most ledger.Kind
	for _, p := range canon.ParentKinds(k) {
		if count[p] > count[most] {
			most = p
		}
	}
	field := ""
	for _, p := range canon.Parents(k) {
		if p.Kind == most {
			field = p.Field
		}
	}
	names := sortedKeys(kindSet(prefixes))
	return candidate{field: field, score: 22, parent: most, prefixes: prefixes,
		why: fmt.Sprintf("its name says it holds ids, and %d of its %d values are ids of the export's %s, by their prefixes (%s)", found, of, strings.Join(names, ", "), prefixList(prefixes))}, true
}

func distinct(vals []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range vals {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// kindSet is the plural names of the kinds of a prefix map, as a set.
func kindSet(prefixes map[string]ledger.Kind) map[string]bool {
	out := map[string]bool{}
	for _, k := range prefixes {
		out[k.Plural()] = true
	}
	return out
}

// prefixList writes a prefix map as "001 company, 006 deal".
func prefixList(prefixes map[string]ledger.Kind) string {
	return eachPrefix(prefixes, func(p string, k ledger.Kind) string { return p + " " + string(k) })
}

// eachPrefix writes each entry of a prefix map, in the prefixes' order,
// joined with ", ".
func eachPrefix(prefixes map[string]ledger.Kind, entry func(string, ledger.Kind) string) string {
	keys := make([]string, 0, len(prefixes))
	for p := range prefixes {
		keys = append(keys, p)
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, p := range keys {
		out[i] = entry(p, prefixes[p])
	}
	return strings.Join(out, ", ")
}

// linkWords are the words beside "id" in the header of a link whose kind
// the header does not say (Salesforce's WhoId, WhatId, ParentId,
// RelatedToId, LinkedEntityId). CreatedById names a user who is no owner:
// "created" is not among them.
var linkWords = []string{"who", "what", "parent", "related", "to", "linked", "entity", "record", "object", "ref", "reference", "associated"}

// namesALink: the header is an id of a record it does not name (WhoId).
func namesALink(col string) bool {
	ws := words(strings.ReplaceAll(col, ".", " "))
	hasID, other := false, false
	for _, w := range ws {
		switch {
		case isIDWord(w):
			hasID = true
		case contains(linkWords, w):
			other = true
		default:
			return false
		}
	}
	return hasID && other
}

// headerSaysID: the header names an id, of any kind.
func headerSaysID(col string) bool {
	for _, w := range words(strings.ReplaceAll(col, ".", " ")) {
		if isIDWord(w) {
			return true
		}
	}
	return false
}

// longIDs: the values are ids too long to be a count (eight characters or
// more, as Salesforce's 18 and HubSpot's 11): a column whose header says
// only "an id" links by these alone.
func longIDs(vals []string) bool {
	if len(vals) == 0 {
		return false
	}
	for _, v := range vals {
		if len(v) < 8 {
			return false
		}
	}
	return true
}

// exportIDs are the ids and names of the export's files, per kind, from
// the rows read.
type exportIDs struct {
	ids     map[ledger.Kind]map[string]bool
	nameSet map[ledger.Kind]map[string]bool
}

func (e *exportIDs) found(k ledger.Kind, vals []string) (found, of int) {
	seen := map[string]bool{}
	for _, v := range vals {
		if seen[v] {
			continue
		}
		seen[v] = true
		of++
		if e.ids[k][v] || (len(v) == 15 && isSalesforceID(v) && e.ids[k][v+"\x00"]) {
			found++ // a 15-character Salesforce id is its 18-character id's first 15
		}
	}
	return found, of
}

// has: the export holds records of kind k whose ids were read.
func (e *exportIDs) has(k ledger.Kind) bool { return len(e.ids[k]) > 0 }

func (e *exportIDs) names(k ledger.Kind, vals []string) int {
	n := 0
	for _, v := range vals {
		if e.nameSet[k][v] {
			n++
		}
	}
	return n
}

var digitsRE = regexp.MustCompile(`[0-9]+([-_.][0-9]+)*`)

// patternOf is a file's pattern: its name, lower-cased, with dates and
// numbers made wildcards.
func patternOf(name string) string {
	return digitsRE.ReplaceAllString(matchName(name), "*")
}

package suggest

// The look of a column's values: emails, dates (and their formats),
// amounts, ids, booleans, domains and URLs, phone numbers, and the
// spellings of empty.

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"crmimport/canon"
)

// emptyWords are the spellings of empty a suggestion looks for.
var emptyWords = map[string]bool{
	"null": true, "NULL": true, "Null": true, "N/A": true, "n/a": true, "NA": true, "#N/A": true,
	"-": true, "--": true, "none": true, "None": true, "NONE": true, "nil": true, "(none)": true, "(empty)": true,
}

// Other spellings of true and false than canon.ParseBool's.
var (
	trueWords  = []string{"ja", "si", "sí", "oui", "wahr", "vrai", "verdadero", "x", "done", "erledigt", "completed", "checked", "on", "active"}
	falseWords = []string{"nein", "non", "falsch", "faux", "falso", "to do", "todo", "zu erledigen", "pendiente", "not started", "not_started", "open", "unchecked", "off", "inactive"}
)

func isTrueWord(w string) bool  { return contains(trueWords, strings.ToLower(w)) }
func isFalseWord(w string) bool { return contains(falseWords, strings.ToLower(w)) }

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

var (
	idRE     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]*[0-9][A-Za-z0-9_.:-]*$|^[0-9]+$`)
	domainRE = regexp.MustCompile(`^(https?://)?(www\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+(/\S*)?$`)
	phoneRE  = regexp.MustCompile(`^\+?[0-9 ()./-]{6,}$`)
)

// dateSpecs are the date formats a suggestion tries, profile spellings
// (load.go's dateLayout), most usual first.
var dateSpecs = []string{
	"DD.MM.YYYY", "DD/MM/YYYY", "MM/DD/YYYY", "D.M.YYYY", "M/D/YYYY", "DD-MM-YYYY", "YYYY/MM/DD", "M/D/YY", "DD.MM.YY",
	"DD.MM.YYYY HH:mm", "DD.MM.YYYY HH:mm:ss", "DD/MM/YYYY HH:mm", "DD/MM/YYYY HH:mm:ss", "MM/DD/YYYY HH:mm", "MM/DD/YYYY HH:mm:ss",
	"M/D/YYYY H:mm", "M/D/YYYY h:mm A", "MM/DD/YYYY hh:mm A", "M/D/YY H:mm", "M/D/YY h:mm A", "YYYY/MM/DD HH:mm:ss",
}

// specLayout is a date spec as a Go layout (the tokens of load.go's
// dateLayout).
func specLayout(spec string) string {
	tokens := []struct{ tok, layout string }{
		{"YYYY", "2006"}, {"YY", "06"}, {"MM", "01"}, {"M", "1"}, {"DD", "02"}, {"D", "2"},
		{"HH", "15"}, {"H", "15"}, {"hh", "03"}, {"h", "3"}, {"mm", "04"}, {"ss", "05"}, {"A", "PM"},
	}
	var b strings.Builder
	for s := spec; s != ""; {
		matched := false
		for _, t := range tokens {
			if strings.HasPrefix(s, t.tok) {
				b.WriteString(t.layout)
				s = s[len(t.tok):]
				matched = true
				break
			}
		}
		if !matched {
			b.WriteByte(s[0])
			s = s[1:]
		}
	}
	return b.String()
}

// look is what a column's values look like.
type look struct {
	nonEmpty, distinct        int
	emails, dates, iso        int
	amounts, bools, ids       int
	domains, phones, lists    int
	jsonLists, spaces         int
	joined                    int            // emails or phones joined by multiSep
	timed                     int            // ISO dates with a time of day
	dateSpec                  string         // the one spec every non-ISO date fits, or ""
	dateChoices               []string       // the specs of both orders every non-ISO date fits, when none settles it
	dateEvidence              string         // why the dates are read so, in words
	empties                   map[string]int // spellings of empty seen, and how often
	trueSeen, falseSeen       []string       // spellings of true/false beyond canon's
	boolOther                 int            // values neither canon nor the words above read as a flag
	listSep                   string         // ";" or "," when values hold several ids
	listParts                 []string       // the parts of the values, when a list
	values                    []string       // the non-empty values, in order
	distinctValues            map[string]bool
	unreadDates, unreadSample string
}

// lookAt judges a column by its values: how many look like each kind of
// value, the spellings of empty and of true and false, the date format
// they share, the lists they hold.
func lookAt(vals []string) *look {
	l := &look{empties: map[string]int{}, distinctValues: map[string]bool{}}
	var nonISO []string
	for _, raw := range vals {
		v := strings.TrimSpace(raw)
		if v == "" {
			continue
		}
		if emptyWords[v] || v == salesforceEmptyID {
			l.empties[v]++
			continue
		}
		if l.add(v) {
			nonISO = append(nonISO, v)
		}
	}
	if len(nonISO) > 0 {
		l.fitDates(nonISO)
	}
	if l.listSep != "" || l.jsonLists > 0 {
		if l.jsonLists == 0 {
			for _, v := range l.values {
				l.listParts = append(l.listParts, splitList(v, l.listSep)...)
			}
		}
	}
	return l
}

// add counts a value that is not empty by what it looks like. It reports
// a value that looks dated but is no ISO date: whether it is a date is
// judged with the others (fitDates).
func (l *look) add(v string) (undated bool) {
	l.nonEmpty++
	l.values = append(l.values, v)
	if !l.distinctValues[v] {
		l.distinctValues[v] = true
		l.distinct++
	}
	first, joined := firstOfMany(v)
	if canon.IsAddress(v) || (joined && canon.IsAddress(first)) {
		l.emails++
	}
	if _, ok := canon.ParseDate(v); ok {
		l.dates++
		l.iso++
		if strings.Contains(v, ":") && !strings.Contains(v, "00:00:00") {
			l.timed++
		}
	} else if looksDated(v) {
		undated = true
	}
	if canon.IsAmount(v) {
		l.amounts++
	}
	l.addFlag(v)
	if idRE.MatchString(v) && len(v) <= 64 {
		l.ids++
	}
	if !strings.Contains(v, "@") && domainRE.MatchString(strings.ToLower(v)) && !canon.IsAmount(v) {
		l.domains++
	}
	if isPhone(v) || (joined && isPhone(first)) {
		l.phones++
	}
	if joined && (canon.IsAddress(first) || isPhone(first)) {
		l.joined++
	}
	if strings.ContainsAny(v, " \t") {
		l.spaces++
	}
	l.addList(v)
	return undated
}

// multiSep is how a CRM joins several values of one field in a cell
// (Pipedrive's emails and phones: FORMATS.md).
const multiSep = ", "

// firstOfMany is the first of several values joined by multiSep, and
// whether v is such a join.
func firstOfMany(v string) (string, bool) {
	first, _, ok := strings.Cut(v, multiSep)
	return strings.TrimSpace(first), ok
}

// isPhone: v looks like a phone number (digits, spaces, + ( ) . / -), not
// an amount nor a date.
func isPhone(v string) bool {
	if !phoneRE.MatchString(v) || strings.IndexFunc(v, func(r rune) bool { return r >= '0' && r <= '9' }) < 0 || canon.IsAmount(v) {
		return false
	}
	_, isDate := canon.ParseDate(v)
	return !isDate
}

// addFlag counts a value that reads as true or false: as canon reads it,
// or by a spelling of true or false beyond canon's (kept).
func (l *look) addFlag(v string) {
	if _, ok := canon.ParseBool(v); ok {
		l.bools++
	} else if isTrueWord(v) {
		l.bools++
		l.trueSeen = appendNew(l.trueSeen, strings.ToLower(v))
	} else if isFalseWord(v) {
		l.bools++
		l.falseSeen = appendNew(l.falseSeen, strings.ToLower(v))
	} else {
		l.boolOther++
	}
}

// addList counts a value that is a list of ids: a JSON array (its parts
// kept), or ids joined by ";" or "," (the first separator seen kept).
func (l *look) addList(v string) {
	if strings.HasPrefix(v, "[") {
		if parts, ok := jsonList(v); ok {
			l.jsonLists++
			l.listParts = append(l.listParts, parts...)
			return
		}
	}
	for _, sep := range []string{";", ","} {
		if strings.Contains(v, sep) {
			parts := splitList(v, sep)
			allIDs := len(parts) > 1
			for _, p := range parts {
				allIDs = allIDs && idRE.MatchString(p)
			}
			if allIDs {
				l.lists++
				if l.listSep == "" {
					l.listSep = sep
				}
			}
			break
		}
	}
}

// fitDates finds the date specs that every dated value that is no ISO
// date fits, and counts them as dates. When specs of both orders fit
// (08/03/2021 is the 8th of March or the 3rd of August) and no value
// settles it, the column's format is a question (dateChoices); otherwise
// the first spec that fits is its format, with the values that settle it
// as evidence. When none fits, the first of them is the sample of dates
// left unread.
func (l *look) fitDates(nonISO []string) {
	var fits []string
	for _, spec := range dateSpecs {
		if allParse(spec, nonISO) {
			fits = append(fits, spec)
		}
	}
	if len(fits) == 0 {
		l.unreadDates, l.unreadSample = nonISO[0], nonISO[0]
		return
	}
	l.dates += len(nonISO)
	dayFirst, monthFirst := firstOfOrder(fits, true), firstOfOrder(fits, false)
	if dayFirst != "" && monthFirst != "" {
		l.dateChoices = []string{dayFirst, monthFirst}
		l.dateEvidence = fmt.Sprintf("%d %s readable either way (%s or %s), none that settle it", len(nonISO), plural(len(nonISO), "value", "values"), dayFirst, monthFirst)
		return
	}
	l.dateSpec = fits[0]
	l.dateEvidence = fmt.Sprintf("written %s", l.dateSpec)
	if other := ordered(dateSpecs, !isDayFirst(l.dateSpec)); len(other) > 0 {
		settle, example := 0, ""
		for _, v := range nonISO {
			if !anyParses(other, v) {
				settle++
				if example == "" {
					example = v
				}
			}
		}
		l.dateEvidence = fmt.Sprintf("written %s: %d of its %d dates (such as %s) can only be read so", l.dateSpec, settle, len(nonISO), example)
	}
}

func allParse(spec string, vals []string) bool {
	layout := specLayout(spec)
	for _, v := range vals {
		if _, err := time.Parse(layout, v); err != nil {
			return false
		}
	}
	return true
}

func anyParses(specs []string, v string) bool {
	for _, spec := range specs {
		if _, err := time.Parse(specLayout(spec), v); err == nil {
			return true
		}
	}
	return false
}

// isDayFirst: the spec writes the day before the month (DD/MM/YYYY).
func isDayFirst(spec string) bool {
	return strings.Index(spec, "D") < strings.Index(spec, "M")
}

// hasDayAndMonth: the spec writes both, as numbers (not YYYY/MM/DD's
// unmistakable order).
func hasDayAndMonth(spec string) bool {
	return strings.Contains(spec, "D") && strings.Contains(spec, "M") && !strings.HasPrefix(spec, "YYYY")
}

// ordered are the specs that write the day first (or the month first).
func ordered(specs []string, dayFirst bool) []string {
	var out []string
	for _, s := range specs {
		if hasDayAndMonth(s) && isDayFirst(s) == dayFirst {
			out = append(out, s)
		}
	}
	return out
}

func firstOfOrder(specs []string, dayFirst bool) string {
	if o := ordered(specs, dayFirst); len(o) > 0 {
		return o[0]
	}
	return ""
}

// looksDated: digits with date separators, no letters (but AM/PM).
func looksDated(v string) bool {
	if len(v) < 6 || len(v) > 25 {
		return false
	}
	digits, seps := 0, 0
	for _, r := range strings.TrimSuffix(strings.TrimSuffix(v, " AM"), " PM") {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == '.' || r == '/' || r == '-' || r == ':' || r == ' ':
			seps++
		default:
			return false
		}
	}
	return digits >= 4 && seps >= 2
}

func splitList(v, sep string) []string {
	var out []string
	for _, p := range strings.Split(v, sep) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func appendNew(list []string, s string) []string {
	if contains(list, s) {
		return list
	}
	return append(list, s)
}

// share is n out of the non-empty values, 0 when there are none.
func (l *look) share(n int) float64 {
	if l.nonEmpty == 0 {
		return 0
	}
	return float64(n) / float64(l.nonEmpty)
}

// uniqueIDs: every value distinct and id-looking.
func (l *look) uniqueIDs() bool {
	return l.nonEmpty > 0 && l.distinct == l.nonEmpty && l.ids == l.nonEmpty
}

// idParts are the ids the column holds: its values, or the parts of its lists.
func (l *look) idParts() []string {
	if len(l.listParts) > 0 {
		return l.listParts
	}
	return l.values
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

package canon

import (
	"fmt"
	"net/mail"
	"regexp"
	"strings"
	"time"

	"crmimport/ledger"
)

// Values are a record's fields after validation, ready to write: one per
// canonical field of its kind, in order; nil for none. A date is its
// normalised text, a flag a bool, an amount its decimal text, any other
// field its text.
type Values struct {
	fs   *FieldSet
	vals []any
}

// Get is the value of canonical field f (nil for none).
func (v Values) Get(f string) any {
	if v.fs == nil {
		return nil
	}
	if i, ok := v.fs.Index[f]; ok && v.vals != nil {
		return v.vals[i]
	}
	return nil
}

// Valid reports whether v holds a validated record's values (the zero
// Values holds none).
func (v Values) Valid() bool { return v.vals != nil }

// Text is the value of field f as text ("" for none, or for a value that
// is not text).
func (v Values) Text(f string) string {
	s, _ := v.Get(f).(string)
	return s
}

// DateHint says what a date looks like.
const DateHint = "(expected ISO 8601, e.g. 2024-03-01 or 2024-03-01T10:00:00Z)"

// Validate checks a record of kind k of the canonical format (SPEC §4,
// "Fails") — vals holds one string per field of FieldsOf(k), as read — and
// returns its values to write, or the reason it fails. Fields are checked
// in their canonical order, so that a record with two faults always gives
// the same reason.
func Validate(k ledger.Kind, vals []string) (Values, string) {
	fs := FieldsOf(k)
	get := func(f string) string {
		if i, ok := fs.Index[f]; ok {
			return vals[i]
		}
		return ""
	}
	v := Values{fs: fs, vals: make([]any, len(vals))}
	for i, f := range fs.Names {
		raw := vals[i]
		if f == "id" || f == "deleted" || strings.HasSuffix(f, "_id") {
			continue
		}
		s := strings.TrimSpace(raw)
		switch {
		case s == "" && f != "done":
			continue
		case dateFields[f]:
			d, ok := ParseDate(s)
			if !ok {
				return Values{}, fmt.Sprintf("%s %q is not a date %s", f, s, DateHint)
			}
			if dateOnlyFields[f] {
				d = d[:len(time.DateOnly)]
			}
			v.vals[i] = d
		case f == "domain":
			// A domain is a host (SPEC §11), the one R5 matches on: an
			// export's website URL gives its host alone, lower-cased.
			if d := DomainKey(s); d != "" {
				v.vals[i] = d
			}
		case f == "amount":
			if !IsAmount(s) {
				return Values{}, fmt.Sprintf("amount %q is not a number (use digits and a dot, e.g. 12000.50)", s)
			}
			v.vals[i] = s
		case f == "done" || f == "active":
			b, ok := ParseBool(s)
			if !ok {
				return Values{}, fmt.Sprintf("%s %q is not true or false", f, s)
			}
			v.vals[i] = b
		case f == "status" && k == ledger.Deal:
			st, ok := Status(s)
			if !ok {
				return Values{}, statusProblem(s)
			}
			v.vals[i] = st
		case f == "body":
			v.vals[i] = raw // bodies are stored exactly as read
		default:
			v.vals[i] = s
		}
	}
	if d := strings.TrimSpace(get("deleted")); d != "" {
		if _, ok := ParseBool(d); !ok {
			return Values{}, fmt.Sprintf("deleted %q is not true or false", d)
		}
	}
	switch k {
	case ledger.Company, ledger.Deal:
		if v.Get("name") == nil {
			return Values{}, fmt.Sprintf("%s has no name", k)
		}
	case ledger.User:
		email := strings.TrimSpace(get("email"))
		if v.Get("name") == nil && email == "" {
			return Values{}, "user has neither a name nor an email"
		}
		if email != "" && !IsAddress(email) {
			return Values{}, fmt.Sprintf("email %q is not an email address", email)
		}
	case ledger.Contact, ledger.Lead:
		email := strings.TrimSpace(get("email"))
		if v.Get("first_name") == nil && v.Get("last_name") == nil && email == "" {
			return Values{}, fmt.Sprintf("%s has neither a name nor an email", k)
		}
		if email != "" && !IsAddress(email) {
			return Values{}, fmt.Sprintf("email %q is not an email address", email)
		}
	}
	return v, ""
}

// IsAmount: a plain decimal number, such as 1200, -3.5 or .5.
func IsAmount(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	digits, dot := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot:
			dot = true
		default:
			return false
		}
	}
	return digits > 0
}

// IsAddress: an email address alone, such as ann@example.com.
func IsAddress(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Name == "" && a.Address == s && strings.Contains(a.Address, "@")
}

// ParseBool reads the spellings of a flag; empty is false.
func ParseBool(s string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "0", "false", "f", "no", "n":
		return false, true
	case "1", "true", "t", "yes", "y":
		return true, true
	}
	return false, false
}

// DateOf is the day a date or date-time value gives, as written (the day
// of "2017-04-28T23:30:00-05:00" is 2017-04-28, in its own zone), and
// whether it is one: what a field that holds a date stores.
func DateOf(s string) (string, bool) {
	d, ok := ParseDate(strings.TrimSpace(s))
	if !ok {
		return "", false
	}
	return d[:len(time.DateOnly)], true
}

// ParseDate reads an ISO 8601 date or date-time and writes it back in one
// form: a date as 2006-01-02, a date-time as 2006-01-02T15:04:05 with its
// fraction and zone when given. The layout is chosen by the value's shape,
// so that a valid value is parsed once.
func ParseDate(s string) (string, bool) {
	if len(s) < 10 || s[4] != '-' || s[7] != '-' {
		return "", false
	}
	if len(s) == 10 {
		t, err := time.Parse("2006-01-02", s)
		return t.Format("2006-01-02"), err == nil
	}
	if s[10] != 'T' && s[10] != ' ' {
		return "", false
	}
	rest := s[11:]
	zoned := strings.HasSuffix(rest, "Z") || strings.ContainsAny(rest, "+-")
	layout := "2006-01-02T15:04:05"
	if len(rest) == 5 { // 15:04
		layout = "2006-01-02T15:04"
	}
	if zoned {
		layout += "Z07:00"
		if len(rest) > 5 && rest[5] != ':' { // 15:04Z
			layout = "2006-01-02T15:04Z07:00"
		}
	}
	if s[10] == ' ' {
		layout = strings.Replace(layout, "T", " ", 1)
	}
	t, err := time.Parse(layout, s)
	if err != nil {
		return "", false
	}
	if zoned {
		return t.Format(time.RFC3339Nano), true
	}
	// time.Parse takes a fraction of seconds after the seconds even when the
	// layout has none.
	return t.Format("2006-01-02T15:04:05.999999999"), true
}

// excelNumber matches an id that a spreadsheet rewrote in scientific
// notation (9.91214E+15): the digits it dropped are gone for good.
var excelNumber = regexp.MustCompile(`^[+-]?[0-9]+(\.[0-9]+)?[eE][+-]?[0-9]+$`)

// MangledID says why an id or link value cannot be trusted, or "".
func MangledID(field, v string) string {
	if !strings.ContainsAny(v, "Ee") {
		return ""
	}
	if excelNumber.MatchString(strings.TrimSpace(v)) {
		return fmt.Sprintf("%s %q looks like a number a spreadsheet rewrote in scientific notation: the real id is lost; "+
			"export the file again and do not open it in a spreadsheet before importing", field, v)
	}
	return ""
}

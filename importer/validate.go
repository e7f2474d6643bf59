package importer

import (
	"fmt"
	"net/mail"
	"strings"
	"time"

	"crmimport/ledger"
)

// Values are a record's fields after validation, ready to write: one per
// canonical field of its kind, in order; nil for none.
type Values struct {
	kf   *kindFields
	vals []any
}

// get is the value of canonical field f (nil for none).
func (v Values) get(f string) any {
	if i, ok := v.kf.index[f]; ok && v.vals != nil {
		return v.vals[i]
	}
	return nil
}

// dateFields are the fields that hold a date or a date-time.
var dateFields = map[string]bool{"created_at": true, "close_date": true, "due_at": true, "sent_at": true}

const dateHint = "(expected ISO 8601, e.g. 2024-03-01 or 2024-03-01T10:00:00Z)"

// validate checks a record of the canonical format (SPEC §4, "Fails") and
// returns its values to write, or the reason it fails. Fields are checked
// in their canonical order, so that a record with two faults always gives
// the same reason.
func validate(r Record) (Values, string) {
	v := Values{kf: r.kf, vals: make([]any, len(r.vals))}
	for i, f := range r.kf.names {
		raw := r.vals[i]
		if f == "id" || f == "deleted" || strings.HasSuffix(f, "_id") {
			continue
		}
		s := strings.TrimSpace(raw)
		switch {
		case s == "" && f != "done":
			continue
		case dateFields[f]:
			d, ok := parseDate(s)
			if !ok {
				return Values{}, fmt.Sprintf("%s %q is not a date %s", f, s, dateHint)
			}
			v.vals[i] = d
		case f == "amount":
			if !isAmount(s) {
				return Values{}, fmt.Sprintf("amount %q is not a number (use digits and a dot, e.g. 12000.50)", s)
			}
			v.vals[i] = s
		case f == "done":
			b, ok := parseBool(s)
			if !ok {
				return Values{}, fmt.Sprintf("done %q is not true or false", s)
			}
			v.vals[i] = b
		case f == "body":
			v.vals[i] = raw // bodies are stored exactly as read
		default:
			v.vals[i] = s
		}
	}
	if d := strings.TrimSpace(r.get("deleted")); d != "" {
		if _, ok := parseBool(d); !ok {
			return Values{}, fmt.Sprintf("deleted %q is not true or false", d)
		}
	}
	switch r.Kind {
	case ledger.Company, ledger.Deal:
		if v.get("name") == nil {
			return Values{}, fmt.Sprintf("%s has no name", r.Kind)
		}
	case ledger.Contact:
		email := strings.TrimSpace(r.get("email"))
		if v.get("first_name") == nil && v.get("last_name") == nil && email == "" {
			return Values{}, "contact has neither a name nor an email"
		}
		if email != "" && !isAddress(email) {
			return Values{}, fmt.Sprintf("email %q is not an email address", email)
		}
	}
	return v, ""
}

// isAmount: a plain decimal number, such as 1200, -3.5 or .5.
func isAmount(s string) bool {
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

func isAddress(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Name == "" && a.Address == s && strings.Contains(a.Address, "@")
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// parseBool reads the spellings of a flag; empty is false.
func parseBool(s string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "0", "false", "f", "no", "n":
		return false, true
	case "1", "true", "t", "yes", "y":
		return true, true
	}
	return false, false
}

// parseDate reads an ISO 8601 date or date-time and writes it back in one
// form: a date as 2006-01-02, a date-time as 2006-01-02T15:04:05 with its
// fraction and zone when given. The layout is chosen by the value's shape,
// so that a valid value is parsed once.
func parseDate(s string) (string, bool) {
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

package importer

import (
	"fmt"
	"net/mail"
	"regexp"
	"strings"
	"time"

	"crmimport/ledger"
)

// Values are a record's fields after validation, ready to write.
type Values map[string]any

// dateFields are the fields that hold a date or a date-time.
var dateFields = map[string]bool{"created_at": true, "close_date": true, "due_at": true, "sent_at": true}

// textFields are stored trimmed; bodies are stored exactly as read.
var bodyFields = map[string]bool{"body": true}

// validate checks a record of the canonical format (SPEC §4, "Fails") and
// returns its values to write, or the reason it fails.
func validate(r Record) (Values, string) {
	v := Values{}
	for f, raw := range r.Fields {
		if f == "id" || f == "deleted" || strings.HasSuffix(f, "_id") {
			continue
		}
		s := strings.TrimSpace(raw)
		switch {
		case dateFields[f]:
			if s == "" {
				v[f] = nil
				continue
			}
			d, ok := parseDate(s)
			if !ok {
				return nil, fmt.Sprintf("%s %q is not a date (expected ISO 8601, e.g. 2024-03-01 or 2024-03-01T10:00:00Z)", f, s)
			}
			v[f] = d
		case f == "amount":
			if s == "" {
				v[f] = nil
				continue
			}
			if !amountRE.MatchString(s) {
				return nil, fmt.Sprintf("amount %q is not a number (use digits and a dot, e.g. 12000.50)", s)
			}
			v[f] = s
		case f == "done":
			b, ok := parseBool(s)
			if !ok {
				return nil, fmt.Sprintf("done %q is not true or false", s)
			}
			v[f] = b
		case bodyFields[f]:
			v[f] = nullIfEmpty(raw)
		default:
			v[f] = nullIfEmpty(s)
		}
	}
	if d := strings.TrimSpace(r.Fields["deleted"]); d != "" {
		if _, ok := parseBool(d); !ok {
			return nil, fmt.Sprintf("deleted %q is not true or false", d)
		}
	}
	switch r.Kind {
	case ledger.Company, ledger.Deal:
		if v["name"] == nil {
			return nil, fmt.Sprintf("%s has no name", r.Kind)
		}
	case ledger.Contact:
		email := strings.TrimSpace(r.Fields["email"])
		if v["first_name"] == nil && v["last_name"] == nil && email == "" {
			return nil, "contact has neither a name nor an email"
		}
		if email != "" && !isAddress(email) {
			return nil, fmt.Sprintf("email %q is not an email address", email)
		}
	}
	return v, ""
}

var amountRE = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)$`)

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
// fraction and zone when given.
func parseDate(s string) (string, bool) {
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t.Format("2006-01-02"), true
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05Z07:00", "2006-01-02T15:04Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.Format(time.RFC3339Nano), true
		}
	}
	// Zone-less date-times; time.Parse takes a fraction of seconds after the
	// seconds even when the layout has none.
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02 15:04"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.Format("2006-01-02T15:04:05.999999999"), true
		}
	}
	return "", false
}

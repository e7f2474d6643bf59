package canon

import (
	"fmt"
	"slices"
	"strings"

	"crmimport/ledger"
)

// fields are each kind's canonical fields in order (SPEC §4), from the
// table of kinds.
var fields = func() map[ledger.Kind][]string {
	out := map[ledger.Kind][]string{}
	for _, d := range kinds {
		out[d.Kind] = d.Fields
	}
	return out
}()

// Fields returns the canonical fields of kind k, in order.
func Fields(k ledger.Kind) []string { return append([]string(nil), fields[k]...) }

// HasField reports whether f is a canonical field of kind k.
func HasField(k ledger.Kind, f string) bool { return slices.Contains(fields[k], f) }

// FieldSet is a kind's canonical fields with where each one is and what it
// holds: the shape of a record's values, one string per field.
type FieldSet struct {
	Names   []string
	Index   map[string]int
	IsValue []bool // see IsValueField
}

var fieldSets = func() map[ledger.Kind]*FieldSet {
	out := map[ledger.Kind]*FieldSet{}
	for k, names := range fields {
		fs := &FieldSet{Names: names, Index: map[string]int{}, IsValue: make([]bool, len(names))}
		for i, f := range names {
			fs.Index[f] = i
			fs.IsValue[i] = valueFields[f]
		}
		out[k] = fs
	}
	return out
}()

// FieldsOf is the FieldSet of kind k, shared: never change it.
func FieldsOf(k ledger.Kind) *FieldSet { return fieldSets[k] }

// valueFields hold ids, links, dates, numbers, flags and addresses, where
// an export's spellings of "nothing" mean empty. Free text (names, bodies,
// phone numbers) is kept as written: somebody may be called Null.
var valueFields = map[string]bool{
	"id": true, "company_id": true, "contact_id": true, "deal_id": true,
	"created_at": true, "close_date": true, "due_at": true, "sent_at": true,
	"amount": true, "done": true, "deleted": true, "email": true, "domain": true, "from": true, "to": true,
	"status": true, "owner_id": true, "active": true, "lead_id": true, "converted_contact_id": true,
}

// IsValueField reports whether f holds a value rather than free text.
func IsValueField(f string) bool { return valueFields[f] }

// dateFields are the fields that hold a date or a date-time.
var dateFields = map[string]bool{"created_at": true, "close_date": true, "due_at": true, "sent_at": true}

// IsDateField reports whether f holds a date or a date-time.
func IsDateField(f string) bool { return dateFields[f] }

// dateOnlyFields hold a date and never a time: a deal's close date is a
// day (SPEC §11: "a date as a date"), whatever time an export writes with
// it (HubSpot's "2017-04-28 14:01:59"). The others are date-times.
var dateOnlyFields = map[string]bool{"close_date": true}

// IsDateOnlyField reports whether f holds a date and never a time.
func IsDateOnlyField(f string) bool { return dateOnlyFields[f] }

// IsFlagField reports whether f holds true or false.
func IsFlagField(f string) bool { return f == "done" || f == "deleted" || f == "active" }

// Statuses are the values of a deal's status (SPEC §4): what became of it.
var Statuses = []string{"open", "won", "lost"}

// Status is the status a value spells (its case and the spaces around it
// aside), and whether it spells one.
func Status(s string) (string, bool) {
	w := strings.ToLower(strings.TrimSpace(s))
	if slices.Contains(Statuses, w) {
		return w, true
	}
	return "", false
}

// statusProblem is why s is not a deal's status.
func statusProblem(s string) string {
	return fmt.Sprintf("status %q is not open, won or lost (a profile maps an export's own words with map:)", s)
}

// ValueProblem says why v cannot be the value of field f of kind k, as a
// profile's value map gives it (checked when the profile is loaded, so
// that a map never makes every row fail): a status that is none, a flag
// that is neither true nor false, a date or an amount that is none. ""
// when it can, or when the field takes any text.
func ValueProblem(k ledger.Kind, f, v string) string {
	s := strings.TrimSpace(v)
	if s == "" {
		return ""
	}
	switch {
	case f == "status" && k == ledger.Deal:
		if _, ok := Status(s); !ok {
			return statusProblem(s)
		}
	case IsFlagField(f):
		if _, ok := ParseBool(s); !ok {
			return fmt.Sprintf("%s %q is not true or false", f, s)
		}
	case IsDateField(f):
		if _, ok := ParseDate(s); !ok {
			return fmt.Sprintf("%s %q is not a date %s", f, s, DateHint)
		}
	case f == "amount":
		if !IsAmount(s) {
			return fmt.Sprintf("amount %q is not a number", s)
		}
	}
	return ""
}

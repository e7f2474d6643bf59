package ledger

import (
	"fmt"
	"strings"
)

// Kind is what a record is. Singular in the database and in JSON.
type Kind string

// The kinds, in the order of the default plan.
const (
	Company  Kind = "company"
	Contact  Kind = "contact"
	Deal     Kind = "deal"
	Note     Kind = "note"
	Activity Kind = "activity"
	Email    Kind = "email"
)

// Kinds returns every kind in plan order.
func Kinds() []Kind { return []Kind{Company, Contact, Deal, Note, Activity, Email} }

// Plural is the kind's plural, as in file names and the command line.
func (k Kind) Plural() string {
	switch k {
	case Company:
		return "companies"
	case Activity:
		return "activities"
	default:
		return string(k) + "s"
	}
}

// Table is the target table that holds records of this kind.
func (k Kind) Table() string { return k.Plural() }

// ParseKind accepts a kind in the singular or the plural, in any case.
func ParseKind(s string) (Kind, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	for _, k := range Kinds() {
		if t == string(k) || t == k.Plural() {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown kind %q (one of: companies, contacts, deals, notes, activities, emails)", s)
}

// Action is what a slot says.
type Action string

const (
	Created Action = "created" // final: this run made the row
	Matched Action = "matched" // final: the row already existed (R5)
	Skipped Action = "skipped" // a placeholder that the next attempt takes over (R3)
)

// Final reports whether a slot with this action refuses later claims (R2).
func (a Action) Final() bool { return a == Created || a == Matched }

package ledger

import "strings"

// Kind is what a record is. Singular in the database and in JSON. What
// each kind is — its phase, its parents, its fields — and the list of the
// kinds are canon's table of kinds (canon.KindTable); the ledger only
// names them.
type Kind string

// The kinds that code names.
const (
	User     Kind = "user"
	Company  Kind = "company"
	Contact  Kind = "contact"
	Lead     Kind = "lead"
	Deal     Kind = "deal"
	Note     Kind = "note"
	Activity Kind = "activity"
	Email    Kind = "email"
)

// Plural is the kind's plural, as in file names and the command line:
// English's rule for a noun, a consonant and y giving -ies (companies,
// activities), else -s.
func (k Kind) Plural() string {
	s := string(k)
	if n := len(s); n > 1 && s[n-1] == 'y' && !strings.ContainsRune("aeiou", rune(s[n-2])) {
		return s[:n-1] + "ies"
	}
	return s + "s"
}

// Table is the target table that holds records of this kind.
func (k Kind) Table() string { return k.Plural() }

// Action is what a slot says.
type Action string

const (
	Created Action = "created" // final: this run made the row
	Matched Action = "matched" // final: the row already existed (R5)
	Skipped Action = "skipped" // a placeholder that the next attempt takes over (R3)
)

// Final reports whether a slot with this action refuses later claims (R2).
func (a Action) Final() bool { return a == Created || a == Matched }

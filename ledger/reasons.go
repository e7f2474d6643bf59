package ledger

import (
	"fmt"
	"strings"
)

// Skip reasons (SPEC §2, R3): what a skipped slot's reason says, read back
// by the report's advice, the Skipped page and doctor.
const (
	ReasonNotLinked = "not linked to any record"
	ReasonEmptyBody = "empty body"
	ReasonDeleted   = "deleted in source"
)

// reasonLinkedOnlyTo starts the reason of a skip whose every link names a
// record that no run of its export gives (R6b): "linked only to a case,
// which the salesforce profile does not import".
const reasonLinkedOnlyTo = "linked only to "

// LinkedOnlyTo is the reason of a skip whose every link names a record
// that no run with profile gives (R6b): what names lists, in words ("a
// case and a user").
func LinkedOnlyTo(names, profile string) string {
	return fmt.Sprintf("%s%s, which the %s profile does not import", reasonLinkedOnlyTo, names, profile)
}

// ReasonOwnerOnly is the reason of a skip of a note, activity or email
// whose only link is a user — its owner, or a user it was attached to: a
// user never anchors a record (R6a), so no run takes it over (R6b).
const ReasonOwnerOnly = reasonLinkedOnlyTo + "a user (its owner or another): a user never anchors a note, activity or email"

// WaitsForNothing reports whether a skip reason says that no run of the
// export takes the record over (R6b): the summary, the Skipped page and
// doctor promise it no run.
func WaitsForNothing(reason string) bool { return strings.HasPrefix(reason, reasonLinkedOnlyTo) }

package suggest

// The evidence of a file's values for its kind, beside its headers (issue
// 26 item 5): Salesforce's id prefixes, join tables, a flag that tells
// companies from people in one file.

import (
	"fmt"
	"regexp"
	"strings"

	"crmimport/canon"
	"crmimport/importer/profile"
	"crmimport/ledger"
)

// salesforceEmptyID is Salesforce's empty lookup (FORMATS.md): no value.
const salesforceEmptyID = "000000000000000AAA"

// salesforceIDRE is a Salesforce id: 15 or 18 letters and digits, its
// first three (the object's prefix) holding a digit.
var salesforceIDRE = regexp.MustCompile(`^[a-zA-Z0-9]*[0-9][a-zA-Z0-9]*$`)

func isSalesforceID(v string) bool {
	return (len(v) == 15 || len(v) == 18) && salesforceIDRE.MatchString(v[:3]) && salesforceIDRE.MatchString(v) && v != salesforceEmptyID
}

// salesforceObject is what a Salesforce id prefix names: the object, and
// the kind its records are, or why no kind holds them.
type salesforceObject struct {
	name    string
	kind    ledger.Kind
	leftOut string
}

// salesforceObjects are the id prefixes of the objects a Salesforce
// export holds (FORMATS.md, "Salesforce").
var salesforceObjects = map[string]salesforceObject{
	"001": {name: "Account", kind: ledger.Company},
	"003": {name: "Contact", kind: ledger.Contact},
	"006": {name: "Opportunity", kind: ledger.Deal},
	"002": {name: "Note", kind: ledger.Note},
	"00T": {name: "Task", kind: ledger.Activity},
	"00U": {name: "Event", kind: ledger.Activity},
	"005": {name: "User", kind: ledger.User},
	"02s": {name: "EmailMessage", kind: ledger.Email},
	"00Q": {name: "Lead", kind: "lead", leftOut: "leads, which this version imports as no kind: their tasks and notes linked only to a lead wait for them"},
	"00K": {name: "OpportunityContactRole", leftOut: "a join table: each row pairs an opportunity with a contact and the contact's role, not a deal of its own; a profile reads a deal's contact from it by a join, which a draft does not write"},
	"068": {name: "ContentVersion", leftOut: "files, and the enhanced notes (FileType SNOTE, the latest version) whose HTML body is the file ContentVersion/<Id>, linked to their records through ContentDocumentLink: a draft cannot read a note's body from a side file nor its links from another file; the built-in salesforce profile reads them"},
	"06A": {name: "ContentDocumentLink", leftOut: "a join table: each row links a file or an enhanced note (ContentVersion) to a record; it gives the notes of ContentVersion their links, which a draft does not write"},
	"069": {name: "ContentDocument", leftOut: "the documents behind ContentVersion's files and enhanced notes"},
	"00P": {name: "Attachment", leftOut: "files attached to records (their bodies in Attachments/), no kind's records"},
	"500": {name: "Case", leftOut: "support cases, which no kind holds"},
	"701": {name: "Campaign", leftOut: "marketing campaigns, which no kind holds"},
	"008": {name: "OpportunityHistory", leftOut: "the stage history of opportunities: each row is a past state of a deal, not a deal"},
	"00k": {name: "OpportunityLineItem", leftOut: "the products of opportunities, which no kind holds"},
}

// salesforceKind judges a file by the prefix of its ids: when the column
// that holds each record's id (Id, ID, or the first) holds Salesforce ids
// of one object, the object says the kind, or why the file is left out
// (kind ""). ok is false when the values say nothing of the sort.
func salesforceKind(s *sample) (k ledger.Kind, why string, ok bool) {
	i := ownIDColumn(s.cols)
	if i < 0 {
		return "", "", false
	}
	prefix, n := "", 0
	for _, v := range s.vals[i] {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		if !isSalesforceID(v) || (prefix != "" && v[:3] != prefix) {
			return "", "", false
		}
		prefix = v[:3]
		n++
	}
	if n == 0 {
		return "", "", false
	}
	obj, known := salesforceObjects[prefix]
	switch {
	case !known:
		return "", fmt.Sprintf("left out: its %d ids (%q) are Salesforce ids of an object (%s…) that no kind holds", n, s.cols[i], prefix), true
	case obj.kind != "" && kindExists(obj.kind):
		return obj.kind, fmt.Sprintf("its %d ids (%q) are Salesforce %s ids (%s…)", n, s.cols[i], obj.name, prefix), true
	}
	return "", fmt.Sprintf("left out: its ids (%s…) are Salesforce's %s: %s", prefix, obj.name, obj.leftOut), true
}

// kindExists: k is one of the kinds crmimport imports.
func kindExists(k ledger.Kind) bool {
	for _, kk := range canon.Kinds() {
		if kk == k {
			return true
		}
	}
	return false
}

// ownIDColumn is the column that holds a record's own id when the header
// says so (Id, ID, id, Record ID), else the first column; -1 for none.
func ownIDColumn(cols []string) int {
	for i, c := range cols {
		switch profile.NormaliseHeader(c) {
		case "id", "recordid":
			return i
		}
	}
	if len(cols) > 0 {
		return 0
	}
	return -1
}

// joinTable says why a file is a join table: its rows pair ids of two
// kinds (OpportunityId and ContactId, by their headers), and none of its
// columns is a field a kind's record holds beyond its id, dates, flags
// and owner — a table of links, not of records.
func joinTable(s *sample, idx spellingIndex) (string, bool) {
	var kinds []ledger.Kind
	var cols []string
	for _, c := range s.cols {
		if k, _, ok := idOfKind(c); ok && k != "" && k != ledger.User && !containsKind(kinds, k) {
			kinds = append(kinds, k)
			cols = append(cols, c)
		}
	}
	if len(kinds) < 2 {
		return "", false
	}
	for _, k := range canon.Kinds() {
		for _, f := range headerFields(s.cols, idx, k) {
			switch f {
			case "type", "done", "active", "status":
				continue // a role or a flag of the pair
			}
			return "", false
		}
	}
	return fmt.Sprintf("left out: a join table: each row pairs a %s (%q) with a %s (%q), and it holds no other field of a record; "+
		"a profile reads such a pairing by a join, which a draft does not write", kinds[0], cols[0], kinds[1], cols[1]), true
}

// companyFlagNames are the headers of a flag that tells companies from
// people in one file (Odoo's res.partner: is_company, by label "Ist ein
// Unternehmen", "Is a Company", "Est une société").
var companyFlagNames = []string{"iscompany", "isacompany", "isteinunternehmen", "estunesociété", "estunesociete", "esunaempresa", "companytype"}

// companyFlag is the header of the file's company flag, or "".
func companyFlag(cols []string) string {
	for _, c := range cols {
		if contains(companyFlagNames, profile.NormaliseHeader(c)) {
			return c
		}
	}
	return ""
}

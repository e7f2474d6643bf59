package importer

import (
	"path/filepath"
	"strings"

	"crmimport/ledger"
)

// Profile maps an export's files and columns onto the canonical format.
// The canonical profile is the identity; the CRM profiles come later.
type Profile struct {
	Name string
	// fields lists each kind's canonical fields in order.
	fields map[ledger.Kind][]string
	// MatchEmail and MatchDomain say which natural keys match (R5).
	MatchEmail  bool
	MatchDomain bool
}

// Canonical is the project's own documented layout (SPEC §4).
func Canonical() *Profile {
	return &Profile{
		Name: "canonical",
		fields: map[ledger.Kind][]string{
			ledger.Company:  {"id", "name", "domain", "phone", "industry", "created_at", "deleted"},
			ledger.Contact:  {"id", "first_name", "last_name", "email", "phone", "title", "company_id", "created_at", "deleted"},
			ledger.Deal:     {"id", "name", "amount", "currency", "stage", "close_date", "company_id", "contact_id", "created_at", "deleted"},
			ledger.Note:     {"id", "body", "contact_id", "company_id", "deal_id", "created_at", "deleted"},
			ledger.Activity: {"id", "type", "subject", "body", "due_at", "done", "contact_id", "company_id", "deal_id", "created_at", "deleted"},
			ledger.Email:    {"id", "subject", "body", "from", "to", "sent_at", "contact_id", "company_id", "deal_id", "deleted"},
		},
		MatchEmail:  true,
		MatchDomain: true,
	}
}

// Fields returns the canonical fields of kind, in order.
func (p *Profile) Fields(k ledger.Kind) []string { return p.fields[k] }

// FileKind tells which kind a file holds, from its name, and its format;
// ok=false for a file the profile does not know.
func (p *Profile) FileKind(name string) (ledger.Kind, Format, bool) {
	base := strings.ToLower(filepath.Base(name))
	ext := filepath.Ext(base)
	var f Format
	switch ext {
	case ".csv":
		f = FormatCSV
	case ".json":
		f = FormatJSON
	case ".jsonl", ".ndjson":
		f = FormatJSONL
	default:
		return "", "", false
	}
	stem := strings.TrimSuffix(base, ext)
	for _, k := range ledger.Kinds() {
		if stem == k.Plural() {
			return k, f, true
		}
	}
	return "", "", false
}

// ExpectedFiles lists the file names the profile reads, for messages.
func (p *Profile) ExpectedFiles() string {
	var names []string
	for _, k := range ledger.Kinds() {
		names = append(names, k.Plural()+".csv")
	}
	return strings.Join(names, ", ") + " (or .json / .jsonl)"
}

// normaliseHeader makes header names match case- and space-insensitively:
// "First Name", "first_name" and "FIRST-NAME" are one name.
func normaliseHeader(h string) string {
	h = strings.TrimPrefix(h, "\ufeff")
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch r {
		case ' ', '_', '-', '\t':
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// parents lists the link fields of a kind and the kind each points to (R6).
func parents(k ledger.Kind) []link {
	switch k {
	case ledger.Contact:
		return []link{{"company_id", ledger.Company}}
	case ledger.Deal:
		return []link{{"company_id", ledger.Company}, {"contact_id", ledger.Contact}}
	case ledger.Note, ledger.Activity, ledger.Email:
		return []link{{"contact_id", ledger.Contact}, {"company_id", ledger.Company}, {"deal_id", ledger.Deal}}
	}
	return nil
}

type link struct {
	field string
	kind  ledger.Kind
}

// needsParent: a note, activity or email with no resolvable parent is
// skipped (R6); a contact or deal imports with the link empty.
func needsParent(k ledger.Kind) bool {
	return k == ledger.Note || k == ledger.Activity || k == ledger.Email
}

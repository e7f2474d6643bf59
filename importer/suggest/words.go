package suggest

// The words a suggestion knows beyond the built-in profiles' spellings:
// the kinds' words in file names and headers, in a few languages, and the
// unmistakable names of each canonical field.

import (
	"strings"
	"unicode"

	"crmimport/importer/profile"
	"crmimport/ledger"
)

// kindStems are the starts of the words that name each kind.
var kindStems = []struct {
	kind  ledger.Kind
	stems []string
}{
	{ledger.User, []string{"user", "owner", "benutzer", "usuario", "utilisateur", "employee", "staff", "mitarbeiter"}},
	{ledger.Company, []string{"compan", "organization", "organisation", "organizacion", "organización", "org", "account", "empresa", "unternehmen", "entreprise", "firma", "firmen", "societe", "société", "azienda"}},
	{ledger.Contact, []string{"contact", "kontakt", "person", "people", "personen", "persona", "contato", "contatto"}},
	{ledger.Lead, []string{"lead", "interessent", "prospect", "piste"}},
	{ledger.Deal, []string{"deal", "opportunit", "opportunidad", "oportunidad", "negocio", "transaction", "geschäft", "affaire", "trattativ"}},
	{ledger.Note, []string{"note", "notiz", "nota", "notas"}},
	{ledger.Activity, []string{"activit", "aktivit", "actividad", "task", "call", "meeting", "event", "aufgabe", "tarea", "reunion", "appointment", "termin"}},
	{ledger.Email, []string{"email", "e-mail", "mail", "correo", "message"}},
}

// kindOfWord is the kind a word names, or "".
func kindOfWord(w string) ledger.Kind {
	w = strings.ToLower(w)
	for _, ks := range kindStems {
		for _, s := range ks.stems {
			if s == "org" || s == "nota" || s == "mail" {
				if w == s || w == s+"s" {
					return ks.kind
				}
				continue
			}
			if strings.HasPrefix(w, s) {
				return ks.kind
			}
		}
	}
	return ""
}

// words splits a name into lower-case words: at spaces and punctuation,
// at a lower-case letter followed by an upper-case one (AccountId), and
// between letters and digits.
func words(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = nil
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case unicode.IsLetter(r):
			if len(cur) > 0 {
				prev := cur[len(cur)-1]
				if unicode.IsDigit(prev) || (unicode.IsUpper(r) && unicode.IsLower(prev)) {
					flush()
				} else if unicode.IsUpper(r) && unicode.IsUpper(prev) && i+1 < len(rs) && unicode.IsLower(rs[i+1]) && len(cur) > 1 {
					flush() // HTMLBody: HTML, Body
				}
			}
			cur = append(cur, r)
		case unicode.IsDigit(r):
			if len(cur) > 0 && !unicode.IsDigit(cur[len(cur)-1]) {
				flush()
			}
			cur = append(cur, r)
		default:
			flush()
		}
	}
	flush()
	return out
}

// stripEntity takes an entity prefix off a header ("Person - Email" is
// "Email" of a person), returning the rest and the kind the prefix names.
func stripEntity(h string) (string, ledger.Kind) {
	before, after, ok := strings.Cut(h, " - ")
	if !ok {
		return h, ""
	}
	if k := kindOfWord(strings.TrimSpace(before)); k != "" && len(words(before)) == 1 {
		return strings.TrimSpace(after), k
	}
	return h, ""
}

// fieldNames are the unmistakable names of each field (normalised as
// headers are compared), beyond the field's own name: sure of kind k when
// the header is exactly one of them.
var fieldNames = map[string][]string{
	"name":       {"name", "companyname", "organizationname", "organisationname", "accountname", "firmenname", "fullname"},
	"first_name": {"firstname", "givenname", "forename", "vorname", "prénom", "prenom", "nombredepila"},
	"last_name":  {"lastname", "surname", "familyname", "nachname", "apellido", "apellidos"},
	"email":      {"email", "emailaddress", "mail", "workemail", "emailwork", "primaryemail", "correo", "correoelectrónico", "emailfrom", "emailadresse"},
	"phone":      {"phone", "phonenumber", "telephone", "tel", "mobile", "mobilephone", "phonework", "phonemobile", "workphone", "telefon", "teléfono"},
	"title":      {"title", "jobtitle", "position", "cargo", "function", "jobposition", "stellenbezeichnung", "funktion", "poste", "fonction"},
	"domain":     {"domain", "website", "websiteurl", "url", "web", "homepage", "domainname", "companydomainname", "sitioweb"},
	"industry":   {"industry", "sector", "branche"},
	"created_at": {"createdat", "created", "createdate", "createddate", "createdon", "createdtime", "addtime", "datecreated", "creationdate", "addedon", "erstelltam", "erstellt", "angelegtam", "erstellungsdatum", "fechadecreación", "créé le", "créele"},
	"amount":     {"amount", "value", "dealvalue", "dealamount", "wert", "valor", "importe", "betrag"},
	"currency":   {"currency", "currencycode", "currencyisocode", "currencyofvalue", "moneda", "währung"},
	"stage":      {"stage", "dealstage", "stagename", "pipelinestage", "phase", "etapa"},
	"status":     {"status", "dealstatus", "estado"},
	"pipeline":   {"pipeline", "dealpipeline", "embudo"},
	"close_date": {"closedate", "expectedclosedate", "closingdate", "closedat", "closedon", "expectedclose"},
	"body":       {"body", "content", "note", "notes", "description", "text", "textbody", "notebody", "details", "message", "inhalt", "contenido"},
	"subject":    {"subject", "title", "betreff", "asunto"},
	"type":       {"type", "activitytype", "tasktype", "subtype", "typ", "tipo"},
	"due_at":     {"duedate", "due", "dueat", "duetime", "startdate", "starttime", "start", "activitydate", "activitydatetime", "date"},
	"done":       {"done", "completed", "iscompleted", "isclosed", "closed", "isdone", "erledigt", "completado", "taskstatus"},
	"deleted":    {"deleted", "isdeleted", "archived", "isarchived", "removed"},
	"active":     {"active", "isactive", "enabled", "aktiv", "activo", "actif"},
	"from":       {"from", "fromaddress", "fromemail", "sender", "senderemail", "emailfromaddress"},
	"to":         {"to", "toaddress", "toemail", "recipient", "recipients", "emailtoaddress"},
	"sent_at":    {"sentat", "sent", "sentdate", "senddate", "sendtime", "messagedate", "date", "activitydate", "timestamp"},
}

// kindFieldNames are names that mean a field of one kind only.
var kindFieldNames = map[ledger.Kind]map[string][]string{
	ledger.Deal:     {"name": {"title", "dealname", "dealtitle", "opportunityname", "titel", "título"}},
	ledger.Activity: {"subject": {"tasktitle", "calltitle", "meetingname", "meetingtitle", "eventtitle"}, "type": {"tasksubtype", "eventsubtype"}},
	ledger.Contact:  {"last_name": {"contactname"}},
	ledger.Lead: {"last_name": {"contactname"}, "company_name": {"company", "companyname", "partnername", "organization", "organisation", "accountname", "firma", "unternehmen", "empresa"},
		"lead_source": {"leadsource", "source", "origin", "herkunft", "quelle", "origen", "fuente"}, "status": {"leadstatus", "stage", "stageid"},
		"converted_contact_id": {"convertedcontactid"}},
	ledger.Email: {"subject": {"emailsubject"}, "body": {"emailbody", "emailtext", "htmlbody"}},
	ledger.Note:  {"body": {"notebody", "notecontent"}},
}

// knownName says whether norm is one of field f's unmistakable names for
// kind k.
func knownName(k ledger.Kind, f, norm string) bool {
	for _, n := range kindFieldNames[k][f] {
		if n == norm {
			return true
		}
	}
	if f == "name" && k != ledger.Company && k != ledger.Deal {
		return false
	}
	for _, n := range fieldNames[f] {
		if n == norm {
			return true
		}
	}
	return false
}

// spellingIndex is what the unhidden built-in profiles read: per kind, per
// normalised header, the spellings.
type spellingIndex map[ledger.Kind]map[string][]spelled

type spelled struct {
	profile.Spelling
	from string // the profile's name
}

func buildSpellings(hide []string) spellingIndex {
	idx := spellingIndex{}
	hidden := map[string]bool{}
	for _, h := range hide {
		hidden[h] = true
	}
	for _, name := range profile.BuiltinNames() {
		if hidden[name] {
			continue
		}
		p, err := profile.Builtin(name)
		if err != nil {
			continue // the embedded profiles are tested: cannot happen
		}
		for _, s := range p.Spellings() {
			if idx[s.Kind] == nil {
				idx[s.Kind] = map[string][]spelled{}
			}
			idx[s.Kind][s.Norm] = append(idx[s.Kind][s.Norm], spelled{Spelling: s, from: name})
		}
	}
	return idx
}

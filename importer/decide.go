package importer

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"crmimport/canon"
	"crmimport/importer/profile"
	"crmimport/ledger"
)

// linkedOnlyTo is the reason of a note, activity or email none of whose
// links resolved (R6b), when every link value names a record that no run
// with this profile gives — an object it does not import (a Salesforce
// case), a kind it does not read, or ids it ignores (a user) — or "" when
// one of them may yet arrive, or it names nothing at all (R6: not linked
// to any record).
func linkedOnlyTo(p *profile.Profile, r *profile.Record) string {
	var names []string
	add := func(name string) {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	owned := false
	for _, l := range canon.Parents(r.Kind) {
		if strings.TrimSpace(r.Get(l.Field)) == "" {
			continue
		}
		if !canon.Anchors(l.Kind) {
			owned = true // an owner never anchors it (R6a)
			continue
		}
		if p.Reads(l.Kind) {
			return ""
		}
		add(profile.Article(string(l.Kind)))
	}
	for _, l := range r.Links() {
		k, isKind := canon.KindOfLinkField(l.Field)
		switch {
		case canon.IsOwner(l.Field):
			owned = true
		case l.Never != "":
			add(l.Never)
		case isKind && !p.Reads(k):
			add(profile.Article(string(k)))
		default:
			return ""
		}
	}
	for _, name := range r.Ignored() {
		if ignoredUser(p, name) {
			owned = true // a user the profile reads, named where no link is taken (Salesforce's 005…)
			continue
		}
		add(name)
	}
	if len(names) == 0 {
		if owned {
			return ledger.ReasonOwnerOnly
		}
		return ""
	}
	list := names[0]
	if len(names) > 1 {
		list = strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
	}
	return ledger.LinkedOnlyTo(list, p.Name)
}

// ignoredUser reports whether an ignored link value names a record of a
// kind that never anchors one (a user) and that p reads: the record is
// not linked only to what p does not import.
func ignoredUser(p *profile.Profile, name string) bool {
	for _, k := range canon.Kinds() {
		if !canon.Anchors(k) && p.Reads(k) && name == profile.Article(string(k)) {
			return true
		}
	}
	return false
}

// firstSeen is where a source id first appeared in this run.
type firstSeen struct {
	file string
	line int
}

// outcome is what a record comes to, before its writes are known to hold.
type outcome int

const (
	failed outcome = iota
	unchanged
	skipped
	created
	matched
	updated // a final slot's row written again with the record's changes (R17)
)

// decision is one record's outcome and what it writes.
type decision struct {
	rec       profile.Record
	outcome   outcome
	reason    string // of a failure or a skip
	detail    string // what a skip could not resolve (JSON), or ""
	duplicate bool
	firstLine int // a duplicate's: the line of its id's first record
	unlinked  bool
	unowned   bool // its owner did not resolve (R6a): counted apart from unlinked
	values    canon.Values
	links     map[string]int64
	pending   []ledger.PendingLink // the link values to remember with a created row (R6a): field and parent
	extra     map[string]any
	rowID     int64 // created: the id its row will have; matched: the row found; updated: its row
	// change is what R17 found of a record with a final slot (changes.go):
	// outdated, a conflict, deleted since, an update; or hashes to adopt.
	change *change

	// What the decision tells the index, once the stage takes it (apply):
	// the record's id was read in this run (SPEC §4 step 2), and the
	// natural key of a row created (R5).
	seen                bool
	emailKey, domainKey string
}

// decide gives one record its outcome, in the order of SPEC §4, from the
// index alone: no statement is run but those that load, through q (the
// batch's transaction), what the index holds of a kind or of the natural
// keys on first need. A created record is given the id of its row-to-be
// (nextID). Nothing is added to the index: the caller hands the decision
// to the stage (stage.apply) before it decides the next record.
func decide(ctx context.Context, q ledger.Querier, st *stage, p *profile.Profile, r profile.Record, nextID func() int64) (decision, error) {
	d := decision{rec: r, outcome: failed}
	// 0 and 1. A row that cannot be read as a record; no id.
	if why := unreadable(r); why != "" {
		d.reason = why
		return d, nil
	}
	// 2. The same (kind, source_id) earlier in this run: a duplicate, failed.
	if first, dup := st.seenAt(r.ID); dup {
		d.duplicate, d.firstLine = true, first.line
		d.reason = duplicateReason(first)
		return d, nil
	}
	d.seen = true
	// 3. A final slot: unchanged, unless its content changed at the
	// source since (R17: outdated, or written under --update).
	e, found, err := st.slot(ctx, q, r.Kind, r.ID)
	switch {
	case err != nil:
		return d, err
	case found:
		return d, decideFinal(ctx, q, st, r, e, &d)
	}
	// 4 to 6, and 7 for a record with no link value at all.
	out, reason, values, done := judge(&r)
	d.rec, d.values = r, values
	if done {
		d.outcome, d.reason = out, reason
		if out == skipped && reason == ledger.ReasonNotLinked {
			// A record linked only to what the profile ignores (a
			// Salesforce user) waits for nothing either (R6b).
			if why := linkedOnlyTo(p, &r); why != "" {
				d.reason = why
			}
		}
		return d, nil
	}
	// 7. Links, only through final slots (R6).
	unresolved, err := linkParents(ctx, q, st, &r, &d)
	if err != nil {
		return d, err
	}
	if canon.NeedsParent(r.Kind) && !anchored(d.links) {
		d.outcome, d.reason = skipped, ledger.ReasonNotLinked
		if why := linkedOnlyTo(p, &r); why != "" {
			d.reason = why // R6b: a skip says what it waits for
		}
		// What it waits for: its parents, never its owner, whose arrival
		// would not take it over (R6a).
		waits := make(map[string]string, len(unresolved))
		for f, v := range unresolved {
			if !canon.IsOwner(f) {
				waits[f] = v
			}
		}
		if len(waits) > 0 {
			b, _ := json.Marshal(waits)
			d.detail = string(b)
		}
		return d, nil
	}
	d.pending = pendingOf(&r, d.links, unresolved)
	d.keepUnresolved(r.Extra, unresolved)
	// 8. Matched (R5), else created.
	if err := matchOrCreate(ctx, q, st, p, &d, nextID); err != nil {
		return d, err
	}
	return d, nil
}

// keepUnresolved gives d its extra: the record's extra columns and each
// link value that did not resolve, kept (SPEC §4 step 7) for R6a to
// complete — counted unowned for an owner, unlinked for any other link.
func (d *decision) keepUnresolved(extra map[string]any, unresolved map[string]string) {
	d.extra = extra
	if len(unresolved) == 0 {
		return
	}
	d.extra = make(map[string]any, len(extra)+len(unresolved))
	for k, v := range extra {
		d.extra[k] = v
	}
	for f, v := range unresolved {
		d.extra[f] = v
		if canon.IsOwner(f) {
			d.unowned = true
		} else {
			d.unlinked = true
		}
	}
}

// linkParents gives d the links of r that resolve through final slots
// (R6): its link fields, then its other link values (resolveLinks). It
// returns the values that do not resolve, by field.
func linkParents(ctx context.Context, q ledger.Querier, st *stage, r *profile.Record, d *decision) (map[string]string, error) {
	var unresolved map[string]string
	for _, l := range canon.Parents(r.Kind) {
		v := strings.TrimSpace(r.Get(l.Field))
		if v == "" {
			continue
		}
		rid, found, err := st.final(ctx, q, l.Kind, v)
		if err != nil {
			return nil, err
		}
		if !found && l.Kind == ledger.User && canon.IsAddress(v) {
			// An owner named by an email address is the user with that
			// email (R5: users match by email), from any source.
			rid, found, err = st.email(ctx, q, userKey(canon.EmailKey(v)))
			if err != nil {
				return nil, err
			}
		}
		if found && rid > 0 {
			if d.links == nil {
				d.links = map[string]int64{}
			}
			d.links[l.Field] = rid
			continue
		}
		if unresolved == nil {
			unresolved = map[string]string{}
		}
		unresolved[l.Field] = v
	}
	if links := r.Links(); links != nil {
		var err error
		if unresolved, err = resolveLinks(ctx, q, st, links, d, unresolved); err != nil {
			return nil, err
		}
	}
	return unresolved, nil
}

// matchOrCreate ends d, a record that will be written (SPEC §4 step 8): a
// contact matched by its email or a company by its domain when the profile
// says so (R5), else created with the id its row will have (nextID).
func matchOrCreate(ctx context.Context, q ledger.Querier, st *stage, p *profile.Profile, d *decision, nextID func() int64) error {
	var key string
	var look func(context.Context, ledger.Querier, string) (int64, bool, error)
	var keep *string // where a created row's key goes, for the stage (apply)
	switch {
	case d.rec.Kind == ledger.User:
		// Users match by email whatever the profile matches (SPEC §4):
		// one person owning records in two exports is one user.
		if k := canon.EmailKey(d.values.Text("email")); k != "" {
			key = userKey(k)
		}
		look, keep = st.email, &d.emailKey
	case d.rec.Kind == ledger.Contact && p.MatchEmail:
		key, look, keep = canon.EmailKey(d.values.Text("email")), st.email, &d.emailKey
	case d.rec.Kind == ledger.Company && p.MatchDomain:
		key, look, keep = canon.DomainKey(d.values.Text("domain")), st.domain, &d.domainKey
	}
	if look != nil && key != "" {
		id, ok, err := look(ctx, q, key)
		if err != nil {
			return err
		}
		if ok {
			d.outcome, d.rowID = matched, id
			return nil
		}
		*keep = key
	}
	d.outcome, d.rowID = created, nextID()
	return nil
}

// unreadable says why a record is failed before anything else is asked of
// it (SPEC §4 steps 0 and 1), or "": a row that cannot be read as a record
// fails with its reason, whatever its id (an id read from a broken row
// cannot be trusted, so it is neither a duplicate nor remembered as seen);
// then no id, an id too long to be one, or an id a spreadsheet rewrote.
func unreadable(r profile.Record) string {
	if r.Err != nil {
		return r.Err.Reason
	}
	return badID(r.ID)
}

// duplicateReason is the reason of a duplicate (SPEC §4 step 2).
func duplicateReason(first firstSeen) string {
	return fmt.Sprintf("duplicate source_id, first at %s:%d", first.file, first.line)
}

// judge decides what a record's own values decide, with no ledger to ask
// (SPEC §4 steps 4 to 6): deleted in source, skipped; invalid (a link id a
// spreadsheet rewrote, a value canon refuses), failed; a note with an
// empty body, skipped; and step 7 for a note, activity or email that holds
// no link value at all, which no ledger can link: skipped. It validates r
// when nothing has yet. done=false leaves the rest to the ledger (links,
// matches); values are the validated values, once validation has passed.
func judge(r *profile.Record) (out outcome, reason string, values canon.Values, done bool) {
	// 4. Deleted in source: skipped.
	if del, ok := canon.ParseBool(r.Get("deleted")); ok && del {
		return skipped, ledger.ReasonDeleted, canon.Values{}, true
	}
	// 5. Invalid: failed.
	if why := r.MangledLink(); why != "" {
		return failed, why, canon.Values{}, true
	}
	if !r.Validated() {
		r.Validate()
	}
	values, bad := r.Values()
	if bad != "" {
		return failed, bad, canon.Values{}, true
	}
	// 6. A note with an empty body: skipped.
	if r.Kind == ledger.Note && strings.TrimSpace(r.Get("body")) == "" {
		return skipped, ledger.ReasonEmptyBody, values, true
	}
	// 7, for a record that names no parent: nothing to resolve.
	if canon.NeedsParent(r.Kind) && !r.NamesAnAnchor() {
		return skipped, ledger.ReasonNotLinked, values, true
	}
	return 0, "", values, false
}

// anchored reports whether links hold a parent that anchors a record (R6:
// an owner never does).
func anchored(links map[string]int64) bool {
	for f := range links {
		if !canon.IsOwner(f) {
			return true
		}
	}
	return false
}

// MaxIDBytes is the longest source id crmimport takes (the README says
// so): no CRM comes near it, and a longer "id" is a column mapped wrong or
// a file that is not an export. It fails alone (SPEC §4 step 1).
const MaxIDBytes = 4096

// badID says why a record's id is no id (SPEC §4 step 1), or "".
func badID(id string) string {
	switch {
	case id == "":
		return "missing id"
	case len(id) > MaxIDBytes:
		return fmt.Sprintf("id is %d bytes long, longer than the %d bytes an id may have: is the id column the right one?", len(id), MaxIDBytes)
	}
	// An id a spreadsheet rewrote (9.91214E+15) is not an id: failed,
	// reported, never imported as if it were one.
	return canon.MangledID("id", id)
}

// seenID is the id a record adds to the ids seen in this run (SPEC §4
// step 2), as decide adds it; ok=false for a record that adds none. A
// resume that replays the records before its checkpoint uses it too, so
// that duplicates are found across a resume exactly as in one go.
func seenID(r profile.Record) (string, bool) {
	if r.Excluded || r.Err != nil || badID(r.ID) != "" {
		return "", false
	}
	return r.ID, true
}

// resolveLinks resolves a record's link values beyond its plain link
// fields, in order of preference: the first value that resolves gives its
// field (R6); the values that do not are unresolved, unless their field was
// given by another (a list's other elements are kept in extra).
func resolveLinks(ctx context.Context, q ledger.Querier, st *stage, links []profile.LinkValue, d *decision,
	unresolved map[string]string) (map[string]string, error) {
	for _, l := range links {
		if _, linked := d.links[l.Field]; linked {
			continue
		}
		if l.ID != "" {
			if k, ok := canon.KindOfLinkField(l.Field); ok {
				rid, found, err := st.final(ctx, q, k, l.ID)
				if err != nil {
					return unresolved, err
				}
				if found && rid > 0 {
					if d.links == nil {
						d.links = map[string]int64{}
					}
					d.links[l.Field] = rid
					continue
				}
			}
		}
		if unresolved == nil {
			unresolved = map[string]string{}
		}
		if prev, ok := unresolved[l.Field]; !ok {
			unresolved[l.Field] = l.Shown
		} else if !strings.Contains(", "+prev+", ", ", "+l.Shown+", ") {
			unresolved[l.Field] = prev + ", " + l.Shown
		}
	}
	for f := range d.links {
		delete(unresolved, f)
	}
	return unresolved, nil
}

// pendingOf are the link values of r that name a parent by its source id
// and did not resolve (links holds those that did): its link fields, then
// its other link values with an id, the first per field, each with the
// value kept for its field in extra (kept). Each is
// remembered with r's row if it is created, and completed when its parent
// arrives (R6a).
func pendingOf(r *profile.Record, links map[string]int64, kept map[string]string) []ledger.PendingLink {
	var out []ledger.PendingLink
	has := func(field string) bool {
		if _, ok := links[field]; ok {
			return true
		}
		return slices.ContainsFunc(out, func(p ledger.PendingLink) bool { return p.Field == field })
	}
	for _, l := range canon.Parents(r.Kind) {
		if v := strings.TrimSpace(r.Get(l.Field)); v != "" && !has(l.Field) {
			out = append(out, ledger.PendingLink{Field: l.Field, Kept: kept[l.Field], ParentKind: l.Kind, ParentSourceID: v})
		}
	}
	for _, l := range r.Links() {
		k, ok := canon.KindOfLinkField(l.Field)
		if ok && l.ID != "" && canon.IsParent(r.Kind, k) && !has(l.Field) {
			out = append(out, ledger.PendingLink{Field: l.Field, Kept: kept[l.Field], ParentKind: k, ParentSourceID: l.ID})
		}
	}
	return out
}

package importer

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store"
)

// Skip reasons (SPEC §2).
const (
	ReasonNotLinked = "not linked to any record"
	ReasonEmptyBody = "empty body"
	ReasonDeleted   = "deleted in source"
)

// firstSeen is where a source id first appeared in this run.
type firstSeen struct {
	file string
	line int
}

// batch is the state of one batch being decided, inside its transaction.
type batch struct {
	ctx     context.Context
	tx      *sql.Tx
	ledger  *ledger.Ledger
	inserts *statements
	run     phases.Run
	task    phases.Task
	profile *Profile
	now     time.Time
	// seen is the run's index of ids already read (committed batches);
	// added collects this batch's, merged only once the batch commits.
	seen  map[string]firstSeen
	added map[string]firstSeen
	// counts are the batch's outcomes.
	counts phases.Counts
}

func (b *batch) key(k ledger.Kind, id string) ledger.Key {
	return ledger.Key{Tenant: b.run.Tenant, Source: b.run.Source, Kind: k, SourceID: id}
}

func (b *batch) lookupSeen(id string) (firstSeen, bool) {
	if f, ok := b.seen[id]; ok {
		return f, true
	}
	f, ok := b.added[id]
	return f, ok
}

// decide gives one record its outcome, in the order of SPEC §4. It returns
// an error only when the batch cannot go on (the database failed).
func (b *batch) decide(r Record) error {
	// 1. No id: failed.
	if r.ID == "" {
		reason := "missing id"
		if r.Err != nil {
			reason = r.Err.Reason
		}
		return b.fail(r, reason)
	}
	// An id a spreadsheet rewrote (9.91214E+15) is not an id: failed,
	// reported, never imported as if it were one.
	if why := mangledID("id", r.ID); why != "" {
		return b.fail(r, why)
	}
	// 2. The same (kind, source_id) earlier in this run: a duplicate, failed.
	if first, dup := b.lookupSeen(r.ID); dup {
		b.counts.Duplicate++
		return b.fail(r, fmt.Sprintf("duplicate source_id, first at %s:%d", first.file, first.line))
	}
	b.added[r.ID] = firstSeen{file: r.File, line: r.Line}
	// A row that could not be read as it is fails with its reason.
	if r.Err != nil {
		return b.fail(r, r.Err.Reason)
	}
	// 3. A final slot: unchanged, nothing validated or written (R2).
	_, found, err := b.ledger.Final(b.ctx, b.key(r.Kind, r.ID))
	if err != nil {
		return err
	}
	if found {
		b.counts.Unchanged++
		return nil
	}
	// 4. Deleted in source: skipped.
	if del, ok := parseBool(r.Fields["deleted"]); ok && del {
		return b.skip(r, ReasonDeleted, "")
	}
	// 5. Invalid: failed.
	for _, l := range parents(r.Kind) {
		if why := mangledID(l.field, r.Fields[l.field]); why != "" {
			return b.fail(r, why)
		}
	}
	values, bad := validate(r)
	if bad != "" {
		return b.fail(r, bad)
	}
	// 6. A note with an empty body: skipped.
	if r.Kind == ledger.Note && strings.TrimSpace(r.Fields["body"]) == "" {
		return b.skip(r, ReasonEmptyBody, "")
	}
	// 7. Links, only through final slots (R6).
	links, unresolved, err := b.resolve(r)
	if err != nil {
		return err
	}
	if needsParent(r.Kind) && len(links) == 0 {
		detail := ""
		if len(unresolved) > 0 {
			d, _ := json.Marshal(unresolved)
			detail = string(d)
		}
		return b.skip(r, ReasonNotLinked, detail)
	}
	extra := r.Extra
	if len(unresolved) > 0 {
		b.counts.Unlinked++
		extra = map[string]any{}
		for k, v := range r.Extra {
			extra[k] = v
		}
		for f, v := range unresolved {
			extra[f] = v // the link value is kept (SPEC §4, step 7)
		}
	}
	// 8. Matched (R5), else created (R1).
	matchID, matched, err := b.match(r.Kind, values)
	if err != nil {
		return err
	}
	slot := ledger.Slot{Key: b.key(r.Kind, r.ID), RunID: b.run.ID, RecordType: r.Kind.Table(), At: b.now}
	var write ledger.WriteFunc
	if matched {
		slot.Action, slot.RecordID = ledger.Matched, matchID
	} else {
		slot.Action = ledger.Created
		target := row{tenant: b.run.Tenant, kind: r.Kind, values: values, links: links, extra: extra, imported: ledger.FormatTime(b.now)}
		write = func(ctx context.Context, _ *sql.Tx) (int64, error) { return b.inserts.insert(ctx, target) }
	}
	won, err := b.ledger.Record(b.ctx, slot, write)
	switch {
	case err != nil && store.IsConstraint(err):
		return b.fail(r, "the database refused the row: "+err.Error())
	case err != nil:
		return err
	case !won:
		// A final slot appeared since step 3 (not possible with one live run
		// per tenant, but the claim is the authority).
		b.counts.Unchanged++
		return nil
	}
	b.counts.Imported++
	if matched {
		b.counts.Matched++
	}
	return nil
}

// resolve looks each non-empty link up among final slots (R6).
func (b *batch) resolve(r Record) (links map[string]int64, unresolved map[string]string, err error) {
	for _, l := range parents(r.Kind) {
		v := strings.TrimSpace(r.Fields[l.field])
		if v == "" {
			continue
		}
		id, found, err := b.ledger.Final(b.ctx, b.key(l.kind, v))
		if err != nil {
			return nil, nil, err
		}
		if found && id > 0 {
			if links == nil {
				links = map[string]int64{}
			}
			links[l.field] = id
			continue
		}
		if unresolved == nil {
			unresolved = map[string]string{}
		}
		unresolved[l.field] = v
	}
	return links, unresolved, nil
}

// match finds an existing row by natural key (R5), where the profile says so.
func (b *batch) match(k ledger.Kind, v Values) (int64, bool, error) {
	switch {
	case k == ledger.Contact && b.profile.MatchEmail:
		s, _ := v["email"].(string)
		return b.ledger.MatchContact(b.ctx, b.run.Tenant, ledger.EmailKey(s))
	case k == ledger.Company && b.profile.MatchDomain:
		s, _ := v["domain"].(string)
		return b.ledger.MatchCompany(b.ctx, b.run.Tenant, ledger.DomainKey(s))
	}
	return 0, false, nil
}

func (b *batch) skip(r Record, reason, detail string) error {
	s := ledger.Slot{Key: b.key(r.Kind, r.ID), RunID: b.run.ID, Action: ledger.Skipped, Reason: reason, Detail: detail,
		At: b.now}
	won, err := b.ledger.Record(b.ctx, s, nil)
	if err != nil {
		return err
	}
	if !won {
		b.counts.Unchanged++ // a final slot appeared since step 3
		return nil
	}
	b.counts.Skipped++
	return nil
}

// fail records a failed record (R4): no slot, a row in record_failures.
func (b *batch) fail(r Record, reason string) error {
	b.counts.Failed++
	return recordFailure(b.ctx, b.tx, b.run.ID, b.task.ID, r, reason)
}

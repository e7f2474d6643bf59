package report

import (
	"fmt"
	"strings"

	"crmimport/importer/input"
	"crmimport/ledger"
	"crmimport/phases"
)

// The customer's version of a run's report (issue 27 item 5): what was
// migrated, per kind, and what the run leaves for the customer to do, in
// their words. A consultant mails it, so it names no command, no path of
// this machine, no task, no log line and no id of the run's own beyond its
// number. The export's ids (a record's source id) stay: they are the
// customer's own, and how they find a record in their CRM.

// CustomerStatus says how the run ended, for the customer.
func (r *Report) CustomerStatus() string {
	switch st := r.Run.Status; {
	case r.Run.Undoes != 0 && st == phases.RunSucceeded:
		return fmt.Sprintf("taken back: what run %d imported is removed again", r.Run.Undoes)
	case r.Run.Undoes != 0:
		return fmt.Sprintf("the taking back of run %d is not finished", r.Run.Undoes)
	case r.Run.UndoneBy != 0:
		return fmt.Sprintf("taken back later (by run %d)", r.Run.UndoneBy)
	case st == phases.RunRunning && r.Interrupted, st == phases.RunCancelled:
		return "stopped before its end: it will be continued where it stopped"
	case st == phases.RunRunning:
		return "in progress"
	case st == phases.RunSucceeded:
		return "complete"
	case st == phases.RunPartial:
		return "complete, but for the records below"
	default: // phases.RunFailed
		return "not completed"
	}
}

// Asks are what the run leaves for the customer to decide or fix, most
// urgent first, each in plain words; none when the run needs nothing from
// them.
func (r *Report) Asks() []string {
	if r.Run.Undoes != 0 {
		return nil
	}
	var out []string
	if invalid := r.perKind(func(k Kind) int64 { return k.Failed - k.Duplicate }); invalid.total > 0 {
		out = append(out, fmt.Sprintf("%s could not be imported because a value in %s is not valid (%s). The reasons and a few "+
			"of the records are listed below: please correct them in your CRM and export them again, or tell us the right values.",
			invalid.records(), invalid.verb("it", "them"), invalid.list))
	}
	if dups := r.perKind(func(k Kind) int64 { return k.Duplicate }); dups.total > 0 {
		out = append(out, fmt.Sprintf("%s %s an id that an earlier record of the export already has (%s): only the first of "+
			"each id was imported. Please check whether they are the same record.", dups.records(), dups.verb("has", "have"), dups.list))
	}
	waiting := r.perKind(func(k Kind) int64 {
		return k.skipsFor(func(reason string) bool { return reason == ledger.ReasonNotLinked })
	})
	if waiting.total > 0 {
		out = append(out, fmt.Sprintf("%s could not be imported yet because the "+anchorWords+" %s to is not in the new system (%s) "+
			"— often one of the records that could not be imported. Once it is, %s will be imported too.",
			waiting.records(), waiting.verb("it belongs", "they belong"), waiting.list, waiting.verb("it", "they")))
	}
	if never := r.perKind(func(k Kind) int64 { return k.skipsFor(ledger.WaitsForNothing) }); never.total > 0 {
		out = append(out, fmt.Sprintf("%s %s linked only to records that are not migrated (%s; the reasons are below). "+
			"To migrate %s, link each to a "+anchorWords+" in your CRM and export %s again.",
			never.records(), never.verb("is", "are"), never.list, never.verb("it", "them"), never.verb("it", "them")))
	}
	if unlinked := r.perKind(func(k Kind) int64 { return k.Unlinked }); unlinked.total > 0 {
		out = append(out, fmt.Sprintf("%s %s imported, but a link in %s names a record that is not in the export (%s) — a contact's "+
			"company, for example — and is empty for now. Please check that the export holds every company, contact and deal: "+
			"the link is completed when the record arrives.", unlinked.records(), unlinked.verb("was", "were"), unlinked.verb("it", "them"), unlinked.list))
	}
	if unowned := r.perKind(func(k Kind) int64 { return k.Unowned }); unowned.total > 0 {
		out = append(out, fmt.Sprintf("%s %s imported without an owner, because the owner named is not among the export's users (%s). "+
			"Please send us the list of your users (the name and email of each) so that the owners can be set.",
			unowned.records(), unowned.verb("was", "were"), unowned.list))
	}
	if conflict := r.perKind(func(k Kind) int64 { return k.Conflict }); conflict.total > 0 {
		out = append(out, fmt.Sprintf("%s changed in your CRM since %s imported, and %s edited in the new system too (%s): "+
			"%s left as %s there. Please tell us which version to keep.", conflict.records(), conflict.verb("it was", "they were"),
			conflict.verb("was", "were"), conflict.list, conflict.verb("it is", "they are"), conflict.verb("it is", "they are")))
	}
	if gone := r.perKind(func(k Kind) int64 { return k.DeletedSince }); gone.total > 0 {
		out = append(out, fmt.Sprintf("%s %s deleted in your CRM after %s imported (%s): %s still in the new system. "+
			"Tell us if %s should be removed there too.", gone.records(), gone.verb("was", "were"), gone.verb("it was", "they were"),
			gone.list, gone.verb("it is", "they are"), gone.verb("it", "they")))
	}
	return out
}

// CustomerNotes are what the customer should know of the run and need not
// act on: what it could not finish (the consultant's to fix), records left
// out on purpose, records found already there, changes brought up to date.
func (r *Report) CustomerNotes() []string {
	var out []string
	for _, t := range r.Tasks {
		if t.Status == phases.TaskFailed && r.Run.Undoes == 0 {
			what := t.Kind.Plural()
			if t.File != "" {
				what = fmt.Sprintf("the file %s (%s)", input.BaseName(t.File), t.Kind.Plural())
			}
			out = append(out, fmt.Sprintf("%s could not be read to its end: we are looking into it, and will ask you for a new "+
				"export if it needs one.", capital(what)))
		}
	}
	var notStarted []string
	for _, t := range r.Tasks {
		if t.Status == phases.TaskCancelled && strings.HasPrefix(t.LastError, "not started") {
			notStarted = append(notStarted, t.Kind.Plural())
		}
	}
	if len(notStarted) > 0 {
		out = append(out, fmt.Sprintf("%s %s not migrated yet, because a step before them did not finish: they will be once it has.",
			capital(joinUnique(notStarted)), plural(int64(len(notStarted)), "was", "were")))
	}
	if r.Run.Undoes != 0 {
		return out
	}
	if updated := r.perKind(func(k Kind) int64 { return k.Updated }); updated.total > 0 {
		out = append(out, fmt.Sprintf("%s %s brought up to date with the changes made in your CRM since %s first imported (%s).",
			updated.records(), updated.verb("was", "were"), updated.verb("it was", "they were"), updated.list))
	}
	if pending := r.perKind(func(k Kind) int64 { return k.Outdated - k.Conflict }); pending.total > 0 {
		out = append(out, fmt.Sprintf("%s changed in your CRM since %s imported (%s): %s will be brought up to date.",
			pending.records(), pending.verb("it was", "they were"), pending.list, pending.verb("it", "they")))
	}
	if matched := r.perKind(func(k Kind) int64 { return k.Matched }); matched.total > 0 {
		out = append(out, fmt.Sprintf("%s %s already in the new system (the same email or web domain) and %s linked to what is there "+
			"rather than created twice (%s).", matched.records(), matched.verb("was", "were"), matched.verb("was", "were"), matched.list))
	}
	if deleted := r.perKind(func(k Kind) int64 {
		return k.skipsFor(func(reason string) bool { return reason == ledger.ReasonDeleted })
	}); deleted.total > 0 {
		out = append(out, fmt.Sprintf("%s %s marked deleted in your CRM and %s left out (%s).", deleted.records(),
			deleted.verb("is", "are"), deleted.verb("was", "were"), deleted.list))
	}
	if empty := r.perKind(func(k Kind) int64 {
		return k.skipsFor(func(reason string) bool { return reason == ledger.ReasonEmptyBody })
	}); empty.total > 0 {
		out = append(out, fmt.Sprintf("%s %s no text and %s left out (%s).", empty.records(), empty.verb("has", "have"),
			empty.verb("was", "were"), empty.list))
	}
	if relinked := r.perKind(func(k Kind) int64 { return k.Relinked }); relinked.total > 0 {
		out = append(out, fmt.Sprintf("%s %s completed, now that the records %s arrived (%s).",
			Count(relinked.total), plural(relinked.total, "link was", "links were"), plural(relinked.total, "it names", "they name"), relinked.list))
	}
	return out
}

// skipsFor is how many of the kind's records were skipped for a reason
// that is.
func (k Kind) skipsFor(is func(reason string) bool) int64 {
	var n int64
	for _, s := range k.Skips {
		if is(s.Reason) {
			n += s.Count
		}
	}
	return n
}

// capital is s with its first letter upper-case: the start of a sentence.
func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

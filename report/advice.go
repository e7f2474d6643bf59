package report

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"crmimport/canon"
	"crmimport/importer/input"
	"crmimport/importer/profile"
	"crmimport/importer/runopts"
	"crmimport/ledger"
	"crmimport/phases"
)

// Warnings are what planning kept with the run (a file read as
// Windows-1252 on the evidence of its bytes), then per kind the records
// imported with a NUL byte kept in extra (SPEC §4), then per file the rows
// no kind of the profile takes (SPEC §4), then the records no longer in
// the export that look like new ones (SPEC §4: ids made of columns), then
// R9's call-outs: a kind whose every record took the same skip.
func (r *Report) Warnings() []string {
	out := append([]string(nil), r.Run.PlanWarnings()...)
	if f := r.Run.FinishedAt; f != nil && f.Before(r.Run.StartedAt) {
		out = append(out, fmt.Sprintf("the clock went back during this run: it ended at %s, before it started at %s; its duration is not known (0 is recorded, never a guess)",
			f.UTC().Format("2006-01-02 15:04:05 UTC"), r.Run.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC")))
	}
	for _, k := range r.Kinds {
		if k.NULKept == 0 {
			continue
		}
		was := "were"
		if k.NULKept == 1 {
			was = "was"
		}
		out = append(out, fmt.Sprintf("%s %s %s imported with a NUL byte in a column kept in extra, kept there as \\u0000: "+
			"text never holds one (binary data in the export?) — the run log names the columns; a NUL in a mapped field fails its row",
			Count(k.NULKept), noun(k.Kind, k.NULKept), was))
	}
	out = append(out, r.untakenWarnings()...)
	out = append(out, r.Lookalikes...)
	for _, k := range r.Kinds {
		if k.UniformSkip == "" {
			continue
		}
		out = append(out, fmt.Sprintf("every one of the %s %s was skipped as %q: a branch that every row takes is not judging rows — %s",
			Count(k.Skipped), noun(k.Kind, k.Skipped), k.UniformSkip, uniformHint(k)))
	}
	return out
}

// untakenWarnings are, per file, the rows that no kind of the profile
// takes (SPEC §4: a profile's where): read, counted by the file's first
// task, and imported as nothing.
func (r *Report) untakenWarnings() []string {
	var out []string
	var prof *profile.Profile
	for _, t := range r.Tasks {
		if t.Counts.Untaken == 0 {
			continue
		}
		if prof == nil {
			opts, err := runopts.Decode(r.Run)
			if err == nil {
				prof, _ = runopts.Profile(opts) // without it, the warning names no profile's rule
			}
		}
		name := input.Name(t.File)
		msg := fmt.Sprintf("%s: %s %s of no kind", name, Count(t.Counts.Untaken),
			plural(t.Counts.Untaken, "row is a record", "rows are records"))
		if prof != nil {
			msg += fmt.Sprintf(" of the %s profile (%s)", prof.Name, prof.Takers(name))
		}
		out = append(out, msg+": read, and not imported; if they should be, change the profile's where")
	}
	return out
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func uniformHint(k Kind) string {
	switch {
	case k.UniformSkip == ledger.ReasonNotLinked:
		return "were their contacts, companies and deals imported first?"
	case k.UniformSkip == ledger.ReasonDeleted:
		return "is the export made of deleted records only?"
	case ledger.WaitsForNothing(k.UniformSkip):
		_, prof, _ := strings.Cut(k.UniformSkip, ", which the ")
		return "the " + strings.TrimSuffix(prof, " profile does not import") + " profile imports none of the records they are linked to"
	default:
		return "check the export before trusting this run"
	}
}

// Next says what to do next, in order of urgency, in plain words.
func (r *Report) Next() []string {
	if r.DryRun != "" {
		return r.dryRunNext()
	}
	if r.Run.Undoes != 0 {
		return r.undoNext()
	}
	id := r.Run.ID
	var out []string
	out = append(out, r.undoneNext()...)
	out = append(out, r.tasksNext()...)
	// A run loaded from a dump counted failures whose rows it does not
	// carry: `rejects` cannot list them (dump.go); what it can list, the
	// failures of a resume here, is advised as for any run.
	listed := func(k Kind) int64 { return k.Failed - k.Duplicate }
	if words := r.UnlistedWords(); words != "" {
		out = append(out, words)
		listed = func(k Kind) int64 { return max(min(k.FailedRows, k.Failed-k.Duplicate), 0) }
	}
	invalid := r.perKind(listed)
	if invalid.total > 0 {
		out = append(out, fmt.Sprintf("%s failed validation (%s) — see the reasons in `crmimport report %d` and the rows "+
			"themselves with `crmimport rejects %d --out rejects.csv`, fix those rows and run again; imported rows will be "+
			"left alone", invalid.records(), invalid.list, id, id))
	}
	dups := r.perKind(func(k Kind) int64 { return k.Duplicate })
	if dups.total > 0 {
		out = append(out, fmt.Sprintf("%s %s an id used earlier in the export (%s): the first row of each id counts, "+
			"the repeats are reported as failed", dups.records(), dups.verb("repeats", "repeat"), dups.list))
	}
	waiting := r.perKind(func(k Kind) int64 {
		for _, s := range k.Skips {
			if s.Reason == ledger.ReasonNotLinked {
				return s.Count
			}
		}
		return 0
	})
	if waiting.total > 0 {
		out = append(out, fmt.Sprintf("%s %s for a "+anchorWords+" that is not imported (%s): once those are, "+
			"`crmimport run --only %s …` takes them over (a skip is a placeholder, not a verdict)",
			waiting.records(), waiting.verb("waits", "wait"), waiting.list, strings.Join(waiting.kinds, ",")))
	}
	if s := r.waitingForNothing(); s != "" {
		out = append(out, s)
	}
	unlinked := r.perKind(func(k Kind) int64 { return k.Unlinked })
	if unlinked.total > 0 {
		out = append(out, fmt.Sprintf("%s %s imported with a link left empty because its target was not found (%s); "+
			"the id given is kept in the row's extra column, and a run that imports the target completes the link (R6a)", unlinked.records(), unlinked.verb("was", "were"), unlinked.list))
	}
	unowned := r.perKind(func(k Kind) int64 { return k.Unowned })
	if unowned.total > 0 {
		out = append(out, fmt.Sprintf("%s %s imported without an owner because the user named was not found (%s); "+
			"the value is kept in the row's extra column, never replaced by another owner, and a run that imports the user completes it (R6a): "+
			"run again with the export's users file (Salesforce's User.csv), or with one you write — `--users users.csv`, its columns id "+
			"(the owner as the export writes it), email and name",
			unowned.records(), unowned.verb("was", "were"), unowned.list))
	}
	out = append(out, r.changesNext()...)
	if r.StrictExit() {
		out = append(out, "--strict: "+r.strictWhy()+", so this run exits 7")
	}
	return out
}

// StrictExit is whether the run exits 7 under --strict (SPEC §5, R17): it
// succeeded, and skipped records, or found records outdated (conflicts
// among them) or deleted in the source since they were imported.
func (r *Report) StrictExit() bool {
	t := r.Total
	return r.Strict && r.Run.Status == phases.RunSucceeded && !r.Interrupted &&
		(t.Skipped > 0 || t.Outdated > 0 || t.Conflict > 0 || t.DeletedSince > 0)
}

// strictWhy says what makes a strict run exit 7: "3 records were
// skipped", "2 records were outdated (1 in conflict)", "1 record was
// deleted in the source since", joined.
func (r *Report) strictWhy() string {
	t := r.Total
	var parts []string
	say := func(n int64, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s %s %s", Count(n), plural(n, "record was", "records were"), what))
		}
	}
	say(t.Skipped, "skipped")
	if t.Conflict > 0 {
		say(max(t.Outdated, t.Conflict), fmt.Sprintf("outdated (%s in conflict)", Count(t.Conflict)))
	} else {
		say(t.Outdated, "outdated")
	}
	say(t.DeletedSince, "deleted in the source since imported")
	return strings.Join(parts, ", ")
}

// undoneNext says what undos took back of the run: all of it, or, as a
// dependent of a cascade, some of its records.
func (r *Report) undoneNext() []string {
	id := r.Run.ID
	var out []string
	if r.Run.UndoneBy != 0 {
		out = append(out, fmt.Sprintf("run %d was undone by run %d: what it wrote is taken back; a new run of its export imports its records again",
			id, r.Run.UndoneBy))
	}
	for _, u := range r.Partly() {
		what := u.What
		if n := len(u.parts); n > 1 {
			what = strings.Join(u.parts[:n-1], ", ") + " and " + u.parts[n-1]
		}
		out = append(out, fmt.Sprintf("run %d (the undo of run %d with --cascade) took back %s of run %d, which depended on run %d's rows: "+
			"its counts say what it did, not what is still there; a new run of its export imports them again once their parents are back",
			u.Undo, u.Undoes, what, id, u.Undoes))
	}
	return out
}

// tasksNext says how to go on from where the run's tasks stand: an
// interrupted or stopped run, failed tasks, tasks not started.
func (r *Report) tasksNext() []string {
	id := r.Run.ID
	var out []string
	resume := r.resumeCommand()
	if r.Interrupted {
		out = append(out, fmt.Sprintf("run %d was interrupted (its process is gone): %s continues where it stopped", id, resume))
	}
	if r.Run.Status == phases.RunCancelled {
		out = append(out, fmt.Sprintf("run %d was stopped: %s continues where it stopped", id, resume))
	}
	var failedTasks, notStarted []phases.Task
	for _, t := range r.Tasks {
		switch {
		case t.Status == phases.TaskFailed:
			failedTasks = append(failedTasks, t)
		case t.Status == phases.TaskCancelled && strings.HasPrefix(t.LastError, "not started"):
			notStarted = append(notStarted, t)
		}
	}
	for _, t := range failedTasks {
		if t.File == "" {
			out = append(out, fmt.Sprintf("its %s task could not be finished: %s; %s runs it again", t.Kind.Plural(), t.LastError, resume))
			continue
		}
		out = append(out, fmt.Sprintf("%s could not be finished: %s. If the cause was passing (a full disk, a locked file), "+
			"`crmimport resume %d` continues at record %s; if you fix the file itself, run the import again (the ledger keeps "+
			"what is already imported)", input.Name(t.File), t.LastError, id, Count(t.Checkpoint.Rows)))
	}
	if len(notStarted) > 0 {
		var names []string
		for _, t := range notStarted {
			names = append(names, t.Kind.Plural())
		}
		out = append(out, fmt.Sprintf("%s were not started because an earlier phase failed (R7: importing them without "+
			"their parents would lose their links): %s runs them once that is fixed", joinUnique(names), resume))
	}
	return out
}

// waitingForNothing says what next of the skips that no run of the export
// takes over (R6b: linked only to records the profile does not import),
// with their reasons, most first; "" for none. No fresh run is promised.
func (r *Report) waitingForNothing() string {
	var reasons []Reason
	never := r.perKind(func(k Kind) int64 {
		var n int64
		for _, s := range k.Skips {
			if !ledger.WaitsForNothing(s.Reason) {
				continue
			}
			n += s.Count
			at := slices.IndexFunc(reasons, func(x Reason) bool { return x.Reason == s.Reason })
			if at < 0 {
				reasons = append(reasons, Reason{Reason: s.Reason})
				at = len(reasons) - 1
			}
			reasons[at].Count += s.Count
		}
		return n
	})
	if never.total == 0 {
		return ""
	}
	sortReasons(reasons)
	quoted := make([]string, len(reasons))
	for i, x := range reasons {
		quoted[i] = strconv.Quote(x.Reason)
	}
	prof := r.Run.Source
	if opts, err := runopts.Decode(r.Run); err == nil && opts.Profile != "" {
		prof = opts.Profile
	}
	return fmt.Sprintf("%s %s linked only to records that cannot hold them under the %s profile — not imported, or users (%s: %s): no run of this export "+
		"takes them over; to import them, link them to a "+anchorWords+" in the CRM and export them again",
		never.records(), never.verb("is", "are"), prof, never.list, strings.Join(quoted, "; "))
}

// undoNext is what to do after an undo (R16).
func (r *Report) undoNext() []string {
	id, undone := r.Run.ID, r.Run.Undoes
	if r.DryRun != "" {
		return []string{fmt.Sprintf("this was a dry run: nothing was written to %s; the same command without --dry-run takes run %d back", r.DryRun, undone)}
	}
	var out []string
	switch {
	case r.Interrupted:
		out = append(out, fmt.Sprintf("undo %d was interrupted (its process is gone): `crmimport resume %d` continues it", id, id))
	case r.Run.Status == phases.RunCancelled:
		out = append(out, fmt.Sprintf("undo %d was stopped: `crmimport resume %d` continues it; until then run %d is partly taken back", id, id, undone))
	case r.Run.Status == phases.RunSucceeded:
		out = append(out, fmt.Sprintf("run %d is taken back: a new run of its export imports its records again", undone))
	}
	for _, t := range r.Tasks {
		if t.Status == phases.TaskFailed {
			out = append(out, fmt.Sprintf("its %s task could not be finished: %s; `crmimport resume %d` tries it again", t.Kind.Plural(), t.LastError, id))
		}
	}
	return append(out, r.changesNext()...) // rows removed that were edited since (R17)
}

// dryRunNext is what to do after a dry run. Its run exists only in a
// throwaway copy of the database: no command here names it.
func (r *Report) dryRunNext() []string {
	out := []string{fmt.Sprintf("this was a dry run: nothing was written to %s; the same command without --dry-run imports", r.DryRun)}
	if plan, _ := runopts.PlanOf(r.Run, r.Tasks); plan != "" {
		out = append(out, fmt.Sprintf("its plan is %s: with `--plan %s` in place of --dry-run, the same command imports exactly this plan, "+
			"or nothing (exit 8) if a file changed since", plan, plan))
	}
	out = append(out, r.previewNext()...) // R17: what the plan would update, outdated, in conflict
	for _, t := range r.Tasks {
		if t.Status == phases.TaskFailed {
			out = append(out, fmt.Sprintf("%s could not be read: %s", input.Name(t.File), t.LastError))
		}
	}
	if invalid := r.perKind(func(k Kind) int64 { return k.Failed - k.Duplicate }); invalid.total > 0 {
		out = append(out, fmt.Sprintf("%s would fail validation (%s): fix those rows first, or import and then list them "+
			"with `crmimport rejects RUN --out rejects.csv` (RUN: the id the import prints)", invalid.records(), invalid.list))
	}
	if dups := r.perKind(func(k Kind) int64 { return k.Duplicate }); dups.total > 0 {
		out = append(out, fmt.Sprintf("%s %s an id used earlier in the export (%s): the first row of each id would count",
			dups.records(), dups.verb("repeats", "repeat"), dups.list))
	}
	if skipped := r.perKind(func(k Kind) int64 { return k.Skipped }); skipped.total > 0 {
		out = append(out, fmt.Sprintf("%s would be skipped (%s): a skip is a placeholder that a later run takes over",
			skipped.records(), skipped.list))
	}
	if s := r.waitingForNothing(); s != "" {
		out = append(out, "of those, "+s) // R6b: no later run takes those over
	}
	return out
}

// tally is a count over kinds, written "3 contacts, 1 deal".
type tally struct {
	total int64
	list  string
	kinds []string
}

func (t tally) records() string {
	if t.total == 1 {
		return "1 record"
	}
	return Count(t.total) + " records"
}

func (t tally) verb(one, many string) string {
	if t.total == 1 {
		return one
	}
	return many
}

func (r *Report) perKind(f func(Kind) int64) tally {
	var t tally
	var parts []string
	for _, k := range r.Kinds {
		if n := f(k); n > 0 {
			t.total += n
			parts = append(parts, Count(n)+" "+noun(k.Kind, n))
			t.kinds = append(t.kinds, k.Kind.Plural())
		}
	}
	t.list = strings.Join(parts, ", ")
	return t
}

func joinUnique(names []string) string {
	sort.Strings(names)
	var out []string
	for i, n := range names {
		if i == 0 || names[i-1] != n {
			out = append(out, n)
		}
	}
	switch len(out) {
	case 1:
		return out[0]
	default:
		return strings.Join(out[:len(out)-1], ", ") + " and " + out[len(out)-1]
	}
}

// noun is a kind in the singular or plural, as n asks.
func noun(k ledger.Kind, n int64) string {
	if n == 1 {
		return string(k)
	}
	return k.Plural()
}

// Count writes n with thousands separators: 1,204.
func Count(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// anchorWords name the kinds a note, activity or email may hang from (R6:
// every parent but a user), from the table of kinds: "contact, lead,
// company or deal".
var anchorWords = func() string {
	var ks []string
	for _, l := range canon.Parents(ledger.Note) {
		if canon.Anchors(l.Kind) {
			ks = append(ks, string(l.Kind))
		}
	}
	if len(ks) < 2 {
		return strings.Join(ks, "")
	}
	return strings.Join(ks[:len(ks)-1], ", ") + " or " + ks[len(ks)-1]
}()

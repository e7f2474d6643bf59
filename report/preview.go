package report

import (
	"fmt"
	"io"

	"crmimport/importer/runopts"
	"crmimport/phases"
)

// A dry run is a preview (SPEC §11: "`--dry-run`, `inspect` and the New
// import page say how many records would be updated, are outdated and in
// conflict"): its summary says, per kind, how many records the plan it
// shows would update, how many are outdated and how many in conflict, and
// what `--update` would update when the plan does not ask for it (R17).

// updating is whether the run's options ask for --update (R17).
func (r *Report) updating() bool {
	opts, err := runopts.Decode(r.Run)
	return err == nil && opts.Update != ""
}

// WouldUpdate is, per planned kind (zeros included), how many records a
// dry run's plan would update — or, when the plan does not ask for
// --update, how many the same plan with --update would (the applicable
// outdated records, R17). Nil for a run that is not a dry run.
func (r *Report) WouldUpdate() map[string]int64 {
	if r.DryRun == "" || r.Run.Undoes != 0 {
		return nil
	}
	out := make(map[string]int64, len(r.Kinds))
	for _, k := range r.Kinds {
		out[string(k.Kind)] = r.wouldUpdate(k)
	}
	return out
}

// wouldUpdate is WouldUpdate's count for kind k.
func (r *Report) wouldUpdate(k Kind) int64 {
	if r.updating() {
		return k.Updated
	}
	for _, c := range r.Changes {
		if c.Kind == k.Kind {
			return c.Applicable
		}
	}
	return 0
}

// previewHasChanges is whether a dry run found anything changed at the
// source: its table then has the columns of R17.
func (r *Report) previewHasChanges() bool {
	t := r.Total
	return r.DryRun != "" && r.Run.Undoes == 0 && t.Updated+t.Outdated+t.Conflict+t.DeletedSince > 0
}

// writePreviewTable is a dry run's outcome table when it found changes at
// the source: the four outcomes, then per kind what its plan would update,
// and how many records are outdated and in conflict (R17).
func writePreviewTable(w io.Writer, r *Report) {
	update := "would update"
	if !r.updating() {
		update = "--update would"
	}
	row := func(name, a, b, c, d, e, f, g, extra string) {
		fmt.Fprintf(w, "  %-12s %10s %10s %10s %10s %15s %10s %10s  %s\n", name, a, b, c, d, e, f, g, extra)
	}
	row("", "imported", "unchanged", "skipped", "failed", update, "outdated", "conflict", "")
	var total int64
	for _, k := range r.Kinds {
		n := r.wouldUpdate(k)
		total += n
		row(k.Kind.Plural(), Count(k.Imported), Count(k.Unchanged), Count(k.Skipped), Count(k.Failed),
			Count(n), Count(k.Outdated), Count(k.Conflict), details(besideColumns(k.Counts)))
	}
	if len(r.Kinds) > 1 {
		t := r.Total
		t.Excluded = 0 // as writeOutcomeTable's total
		row("total", Count(t.Imported), Count(t.Unchanged), Count(t.Skipped), Count(t.Failed),
			Count(total), Count(t.Outdated), Count(t.Conflict), details(besideColumns(t)))
	}
}

// previewNext says what a dry run found changed at the source: what its
// plan would update (or, without --update, leave outdated, and what
// --update would update), the conflicts, the records deleted since.
func (r *Report) previewNext() []string {
	var out []string
	would := r.perKind(r.wouldUpdate)
	outdated := r.perKind(func(k Kind) int64 { return k.Outdated })
	switch {
	case r.updating() && would.total > 0:
		out = append(out, fmt.Sprintf("would update %s (%s): changed at the source since %s imported; "+
			"`crmimport undo RUN` gives %s back", would.records(), would.list, would.verb("it was", "they were"), would.verb("its row", "their rows")))
	case outdated.total > 0:
		s := fmt.Sprintf("%s changed at the source since %s imported (%s): this plan leaves %s as %s (outdated)",
			outdated.records(), outdated.verb("it was", "they were"), outdated.list, outdated.verb("it", "them"), outdated.verb("it is", "they are"))
		if would.total > 0 {
			s += fmt.Sprintf("; with --update it would update %s (%s)", would.records(), would.list)
		}
		out = append(out, s)
	}
	if conflict := r.perKind(func(k Kind) int64 { return k.Conflict }); conflict.total > 0 {
		out = append(out, fmt.Sprintf("%s %s in conflict (%s): edited by hand since %s imported, left as %s — "+
			"`--update=overwrite` writes over those edits", conflict.records(), conflict.verb("is", "are"), conflict.list,
			conflict.verb("it was", "they were"), conflict.verb("it is", "they are")))
	}
	if ds := r.perKind(func(k Kind) int64 { return k.DeletedSince }); ds.total > 0 {
		out = append(out, fmt.Sprintf("%s %s deleted in the source since %s imported (%s): left in place — deletions are never propagated",
			ds.records(), ds.verb("was", "were"), ds.verb("it was", "they were"), ds.list))
	}
	return out
}

// besideColumns are c without the counts the preview table has columns
// for, so that its details do not say them twice (an overwrite is still
// told: it is a part of what would be updated).
func besideColumns(c phases.Counts) phases.Counts {
	if c.Overwritten == 0 {
		c.Updated = 0
	}
	c.Outdated, c.Conflict = 0, 0
	return c
}

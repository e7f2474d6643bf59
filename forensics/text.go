package forensics

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"crmimport/canon"
	"crmimport/importer/reader"
	"crmimport/report"
)

// WriteDiagnosis writes doctor's findings as text: the incidents they add
// up to, then each finding with its rule, count, what it means, its
// details, examples and repair.
func WriteDiagnosis(w io.Writer, d *Diagnosis) {
	scope := "every tenant"
	if d.Tenant != "" {
		scope = "tenant " + d.Tenant
	}
	if d.Clean {
		found := ", no slot without its row"
		if d.LedgerOnly != nil {
			found = ""
		}
		fmt.Fprintf(w, "doctor: %s — nothing found: no uniform or stale skips, no skips ready to take over, no stranded work, "+
			"no task out of its kind's phase, no false success, no unfinalized run%s\n", scope, found)
		WriteAsIs(w, d.LedgerOnly)
		return
	}
	fmt.Fprintf(w, "doctor: %s — %d %s\n", scope, len(d.Findings), reader.Plural(len(d.Findings), "finding", "findings"))
	for _, inc := range d.Incidents {
		fmt.Fprintf(w, "\nincident %s (tenant %s): %s\n", inc.Name, inc.Tenant, inc.Summary)
	}
	for _, f := range d.Findings {
		scope := "tenant " + f.Tenant
		if f.Tenant == "" {
			scope = "every tenant" // a finding of the whole database (dry-run-copies)
		}
		fmt.Fprintf(w, "\n%s · %s · %s · %d %s\n", f.Name, scope, f.Rule, f.Count, unit(f.Unit, f.Count))
		fmt.Fprintf(w, "  %s\n", f.Summary)
		for _, l := range f.Details {
			fmt.Fprintf(w, "  - %s\n", l)
		}
		fmt.Fprintf(w, "  examples: %s\n", strings.Join(f.Examples, ", "))
		for _, r := range f.Repair {
			fmt.Fprintf(w, "  repair: %s\n", r)
		}
	}
	WriteAsIs(w, d.LedgerOnly)
}

// WriteAsIs says, after a command's text, that it read a production
// engine's ledger as it is and what it cannot tell there (nothing for nil).
func WriteAsIs(w io.Writer, a *AsIs) {
	if a == nil {
		return
	}
	fmt.Fprintf(w, "\nread from the production ledger at %s as it is (its three ledger tables; nothing was written to it)\n", a.Database)
	if len(a.Unchecked) > 0 {
		fmt.Fprintf(w, "  not checked: %s\n", strings.Join(a.Unchecked, ", "))
	}
	for _, u := range a.Untold {
		fmt.Fprintf(w, "  cannot tell %s\n", u)
	}
	if a.Repairs != "" {
		fmt.Fprintf(w, "  %s\n", a.Repairs)
	}
}

// WriteLoad writes what a load brought in.
func WriteLoad(w io.Writer, s *LoadSummary) {
	var runs []string
	for _, id := range s.Runs {
		runs = append(runs, fmt.Sprint(id))
	}
	fmt.Fprintf(w, "loaded %s (%s)\n", s.Dump, strings.Join(s.Files, ", "))
	fmt.Fprintf(w, "  runs:         %d (%s) of %s\n", len(s.Runs), strings.Join(runs, ", "), orNone(strings.Join(s.Tenants, ", ")))
	fmt.Fprintf(w, "  tasks:        %d\n", s.Tasks)
	fmt.Fprintf(w, "  slots:        %d created, %d matched, %d skipped\n", s.Slots["created"], s.Slots["matched"], s.Slots["skipped"])
	var rows []string
	n := 0
	for _, k := range canon.Kinds() {
		t := k.Table()
		if c := s.Placeholders[t]; c > 0 {
			rows = append(rows, fmt.Sprintf("%d %s", c, t))
			n += c
		}
	}
	fmt.Fprintf(w, "  placeholders: %d target rows marked from_dump, for the created and matched slots (%s)\n", n, orNone(strings.Join(rows, ", ")))
	for _, m := range s.Notices {
		fmt.Fprintf(w, "  notice: %s\n", m)
	}
	for _, m := range s.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", m)
	}
	tenant := ""
	if len(s.Tenants) == 1 {
		tenant = " --tenant " + report.ShellCommand(s.Tenants[0])
	}
	fmt.Fprintf(w, "\nNext: crmimport doctor%s · crmimport ledger why%s · crmimport runs\n", tenant, orDefault(tenant, " --tenant T"))
}

// unit is a finding's unit for n: "1 run", "2 runs".
func unit(plural string, n int64) string {
	if n == 1 {
		return strings.TrimSuffix(plural, "s")
	}
	return plural
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// WriteGrouping writes the ledger grouped by kind, action, reason and run.
func WriteGrouping(w io.Writer, g *Grouping) {
	scope := ""
	if g.Kind != "" {
		scope += ", kind " + g.Kind
	}
	if g.Run != 0 {
		scope += fmt.Sprintf(", run %d", g.Run)
	}
	if len(g.Groups) == 0 {
		fmt.Fprintf(w, "the ledger of tenant %s%s holds no slot\n", g.Tenant, scope)
		WriteAsIs(w, g.LedgerOnly)
		return
	}
	fmt.Fprintf(w, "the ledger of tenant %s%s: %d %s, by kind, action, reason and run\n\n", g.Tenant, scope, g.Total,
		reader.Plural(int(g.Total), "slot", "slots"))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  KIND\tSOURCE\tACTION\tREASON\tRUN\tCOUNT")
	for _, gr := range g.Groups {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%d\n", gr.Kind, gr.Source, gr.Action, orDash(gr.Reason), runWord(gr.Run, gr.RunStatus), gr.Count)
	}
	tw.Flush()
	WriteAsIs(w, g.LedgerOnly)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// runWord is a run with its status: "1 (failed)", "7 (not here)".
func runWord(id int64, status string) string {
	switch {
	case id == 0:
		return "-"
	case status == "":
		return fmt.Sprintf("%d (not in this database)", id)
	}
	return fmt.Sprintf("%d (%s)", id, status)
}

// WriteStory writes one record's story: each slot, then the failed
// attempts.
func WriteStory(w io.Writer, s *Story) {
	kind := "any kind"
	if s.Kind != "" {
		kind = "kind " + s.Kind
	}
	if len(s.Slots) == 0 {
		fmt.Fprintf(w, "no slot of tenant %s has the source id %q (%s): no run has imported, matched or skipped it\n", s.Tenant, s.SourceID, kind)
	}
	for i, sl := range s.Slots {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s %s · tenant %s · source %s · slot %d\n", sl.Kind, sl.SourceID, s.Tenant, sl.Source, sl.Slot)
		line := "  " + sl.Action
		if sl.Reason != "" {
			line += fmt.Sprintf(" %q", sl.Reason)
		}
		if sl.Detail != "" {
			line += " — what it could not resolve: " + sl.Detail
		}
		fmt.Fprintln(w, line)
		switch {
		case sl.RunID == 0:
			fmt.Fprintf(w, "  claimed at %s by no run the slot names\n", sl.ClaimedAt)
		case sl.Run == nil:
			fmt.Fprintf(w, "  claimed by run %d at %s; run %d is not in this database\n", sl.RunID, sl.ClaimedAt, sl.RunID)
		default:
			loaded := ""
			if sl.Run.Loaded {
				loaded = " (loaded from a dump)"
			}
			fmt.Fprintf(w, "  claimed by run %d at %s; run %d is %s%s\n", sl.RunID, sl.ClaimedAt, sl.RunID, sl.Run.Status, loaded)
		}
		if sl.Row != nil {
			switch {
			case sl.Row.Unknown:
				fmt.Fprintf(w, "  its row: %s %d — whether it is there cannot be told: the ledger's schema has no target tables\n", sl.Row.Table, sl.Row.ID)
			case sl.Row.Missing:
				fmt.Fprintf(w, "  its row, %s %d, is MISSING: the slot refuses every later claim (R2), so no run writes it again (see `crmimport doctor`)\n", sl.Row.Table, sl.Row.ID)
			case sl.Row.Placeholder:
				fmt.Fprintf(w, "  its row: %s %d, a placeholder loaded from a dump\n", sl.Row.Table, sl.Row.ID)
			default:
				fmt.Fprintf(w, "  its row: %s %d\n", sl.Row.Table, sl.Row.ID)
			}
		}
		writeUpdates(w, sl)
		writeChanges(w, sl)
		writeLinks(w, sl)
		if sl.Action == "skipped" {
			for _, r := range sl.Later {
				fmt.Fprintf(w, "  since then, run %d (%s) processed %s and left this skip as it was: a stale verdict (R3)\n", r.ID, r.Status, sl.Kind.Plural())
			}
			for _, p := range sl.Parents {
				switch p.Action {
				case "created", "matched":
					fmt.Fprintf(w, "  its %s %s is %s now, by run %d: a run of %s takes this skip over (R3)\n", p.Kind, p.SourceID, p.Action, p.Run, sl.Kind.Plural())
				case "":
					fmt.Fprintf(w, "  its %s %s has no slot yet: it waits for it (R6)\n", p.Kind, p.SourceID)
				default:
					fmt.Fprintf(w, "  its %s %s is %s too (run %d): it waits for it (R6)\n", p.Kind, p.SourceID, p.Action, p.Run)
				}
			}
		}
	}
	if len(s.Failures) > 0 {
		fmt.Fprintln(w, "\nfailed attempts (a failure claims nothing, R4):")
		for _, f := range s.Failures {
			fmt.Fprintf(w, "  run %d (source %s): %s %s at %s:%d: %s\n", f.Run, f.Source, f.Kind, s.SourceID, f.File, f.Line, f.Reason)
		}
	}
	WriteAsIs(w, s.LedgerOnly)
}

// writeChanges writes what runs found changed at the source for a
// slot's record and left as it was (R17): outdated, a conflict, deleted
// since. Its updates are writeUpdates'.
func writeChanges(w io.Writer, sl SlotStory) {
	for _, c := range sl.Changes {
		fields := strings.Join(c.Fields, ", ")
		var what string
		switch c.Change {
		case "outdated":
			what = fmt.Sprintf("found it changed at the source (%s) and left it as it was: outdated", fields)
		case "conflict":
			what = fmt.Sprintf("found it changed at the source (%s), its row edited by hand since (%s), and left it alone: a conflict",
				fields, strings.Join(c.Edited, ", "))
		case "deleted_since":
			what = "found it deleted in the source since: left in place (deletions are never propagated)"
		default:
			continue // updated, overwritten: writeUpdates; an undo's removal: the row is gone
		}
		line := fmt.Sprintf("  run %d %s", c.Run, what)
		if c.UndoneBy != 0 {
			line += fmt.Sprintf(" (run %d undone by run %d)", c.Run, c.UndoneBy)
		}
		fmt.Fprintln(w, line)
	}
}

// writeLinks writes the link values of a slot's row that did not resolve
// when it was written (R6a): relinked by a later run, or still waiting.
func writeLinks(w io.Writer, sl SlotStory) {
	for _, l := range sl.Links {
		if l.CompletedBy != 0 {
			fmt.Fprintf(w, "  its %s, %s %s, was completed by run %d once the %s arrived: relinked (R6a)\n", l.Field, l.Kind, l.SourceID, l.CompletedBy, l.Kind)
			continue
		}
		fmt.Fprintf(w, "  its %s waits for %s %s: completed when a run imports it (R6a)\n", l.Field, l.Kind, l.SourceID)
	}
}

// writeUpdates writes the updates of a slot's row (R17): by which run,
// when it started, which fields, and the undo that reverted it.
func writeUpdates(w io.Writer, sl SlotStory) {
	for _, u := range sl.Updates {
		when := "run not in this database"
		if u.StartedAt != "" {
			when = "started " + u.StartedAt
		}
		fields := strings.Join(u.Fields, ", ")
		if fields == "" {
			fields = "no field named"
		}
		line := fmt.Sprintf("  updated by run %d (%s): %s", u.Run, when, fields)
		if u.RevertedBy != 0 {
			line += fmt.Sprintf("; reverted by run %d (undo)", u.RevertedBy)
		}
		fmt.Fprintln(w, line)
	}
}

package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"crmimport/phases"
)

// Duration writes a run's duration, or "—" for a run without one: a gap is
// shown, never estimated (R15).
func Duration(ms *int64) string {
	if ms == nil {
		return "—"
	}
	d := time.Duration(*ms) * time.Millisecond
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", *ms)
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	default:
		return d.Round(time.Second).String()
	}
}

// WriteSummary writes the end-of-run summary: the four outcomes per kind in
// their order, the warnings, and what to do next.
func WriteSummary(w io.Writer, r *Report) {
	name := fmt.Sprintf("run %d", r.Run.ID)
	if r.DryRun != "" {
		name = "dry run (nothing written)"
	}
	status := strings.ToUpper(r.StatusWord())
	if u := r.UndoWord(); u != "" {
		status += " · " + u
	}
	fmt.Fprintf(w, "%s · tenant %s · source %s · %s · %s\n\n", name, r.Run.Tenant, r.Run.Source,
		status, Duration(r.Run.DurationMS))
	switch {
	case r.Run.Undoes != 0:
		writeUndoTable(w, r)
	case r.previewHasChanges():
		writePreviewTable(w, r)
	default:
		writeOutcomeTable(w, r)
	}
	writeAdvice(w, r)
}

// writeAdvice writes R9's warnings and what to do next.
func writeAdvice(w io.Writer, r *Report) {
	if ws := r.Warnings(); len(ws) > 0 {
		fmt.Fprintln(w)
		for _, s := range ws {
			fmt.Fprintf(w, "warning: %s\n", s)
		}
	}
	if next := r.Next(); len(next) > 0 {
		fmt.Fprintln(w, "\nWhat next:")
		for _, s := range next {
			fmt.Fprintf(w, "  - %s\n", s)
		}
	}
}

func writeOutcomeTable(w io.Writer, r *Report) {
	row := func(name, a, b, c, d, extra string) {
		fmt.Fprintf(w, "  %-12s %10s %10s %10s %10s  %s\n", name, a, b, c, d, extra)
	}
	row("", "imported", "unchanged", "skipped", "failed", "")
	for _, k := range r.Kinds {
		row(k.Kind.Plural(), Count(k.Imported), Count(k.Unchanged), Count(k.Skipped), Count(k.Failed), details(k.Counts))
	}
	if len(r.Kinds) > 1 {
		t := r.Total
		t.Excluded = 0 // a row of a file that feeds several kinds is excluded once per kind: no sum says anything
		row("total", Count(t.Imported), Count(t.Unchanged), Count(t.Skipped), Count(t.Failed), details(t))
	}
}

// writeUndoTable is an undo's outcome per kind (R16): target rows removed
// with their slots, matched slots released, skips given back their
// before-image, skips deleted with nothing earlier to give back.
func writeUndoTable(w io.Writer, r *Report) {
	row := func(name, a, b, c, d string) {
		fmt.Fprintf(w, "  %-12s %10s %10s %10s %10s\n", name, a, b, c, d)
	}
	row("", "removed", "released", "restored", "cleared")
	for _, k := range r.Kinds {
		row(k.Kind.Plural(), Count(k.Removed), Count(k.Released), Count(k.Restored), Count(k.Cleared))
	}
	if len(r.Kinds) > 1 {
		t := r.Total
		row("total", Count(t.Removed), Count(t.Released), Count(t.Restored), Count(t.Cleared))
	}
}

// details are the parts of imported and failed worth naming.
func details(c phases.Counts) string {
	var parts []string
	if c.Matched > 0 {
		parts = append(parts, Count(c.Matched)+" matched")
	}
	if c.Unlinked > 0 {
		parts = append(parts, Count(c.Unlinked)+" unlinked")
	}
	if c.Unowned > 0 {
		parts = append(parts, Count(c.Unowned)+" unowned") // an owner not found (R6a)
	}
	if c.Relinked > 0 {
		parts = append(parts, Count(c.Relinked)+" relinked") // links completed when their parent arrived (R6a)
	}
	if c.Duplicate > 0 {
		parts = append(parts, Count(c.Duplicate)+" duplicate")
	}
	parts = append(parts, changeDetails(c)...)
	if c.Excluded > 0 {
		// Rows read that are not records of the kind (a profile's where,
		// SPEC §4): no outcome, but never out of sight.
		parts = append(parts, Count(c.Excluded)+" excluded")
	}
	if len(parts) == 0 {
		return ""
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// Bar draws the four outcomes in their order — good, nothing to do, needs a
// fresh run, broken — as # = ~ ! over width characters. Every outcome that
// is not zero gets at least one character.
func Bar(c phases.Counts, width int) string {
	total := c.Total()
	if total == 0 {
		return strings.Repeat(".", width)
	}
	counts := []int64{c.Imported, c.Unchanged, c.Skipped, c.Failed}
	marks := []string{"#", "=", "~", "!"}
	w := make([]int, len(counts))
	sum := 0
	for i, n := range counts {
		if n > 0 {
			w[i] = max(1, int(n*int64(width)/total))
			sum += w[i]
		}
	}
	for sum > width { // the minimums took room: take it back from the widest
		widest := 0
		for i := range w {
			if w[i] > w[widest] {
				widest = i
			}
		}
		w[widest]--
		sum--
	}
	for sum < width { // rounding left room: give it to the largest count
		largest := 0
		for i := range counts {
			if counts[i] > counts[largest] {
				largest = i
			}
		}
		w[largest]++
		sum++
	}
	var b strings.Builder
	for i := range w {
		b.WriteString(strings.Repeat(marks[i], w[i]))
	}
	return b.String()
}

// WriteReport writes the run page: status, phases, tasks, per kind the
// four-outcome bar, the top skip and failure reasons, and the run log.
func WriteReport(w io.Writer, r *Report) {
	fmt.Fprintf(w, "Run %d\n", r.Run.ID)
	fmt.Fprintf(w, "  tenant      %s\n  source      %s\n  status      %s\n", r.Run.Tenant, r.Run.Source, r.StatusWord())
	if u := r.UndoWord(); u != "" {
		fmt.Fprintf(w, "  undo        %s\n", u)
	}
	fmt.Fprintf(w, "  phase       %d\n  started     %s\n", r.Run.CurrentPhase, r.Run.StartedAt.UTC().Format(time.RFC3339))
	if r.Run.FinishedAt != nil {
		fmt.Fprintf(w, "  finished    %s\n", r.Run.FinishedAt.UTC().Format(time.RFC3339))
	} else {
		fmt.Fprintf(w, "  finished    — (not finalized)\n")
	}
	fmt.Fprintf(w, "  duration    %s\n  attempts    %d\n", Duration(r.Run.DurationMS), r.Run.Attempts)
	if r.Run.Message != "" {
		fmt.Fprintf(w, "  message     %s\n", r.Run.Message)
	}

	if r.Run.Undoes != 0 {
		fmt.Fprintln(w, "\nTaken back")
		writeUndoTable(w, r)
	} else {
		fmt.Fprintln(w, "\nOutcomes (# imported, = unchanged, ~ skipped, ! failed)")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, k := range r.Kinds {
			fmt.Fprintf(tw, "  %s\t%s\t%s imported, %s unchanged, %s skipped, %s failed %s\n", k.Kind.Plural(), Bar(k.Counts, 30),
				Count(k.Imported), Count(k.Unchanged), Count(k.Skipped), Count(k.Failed), details(k.Counts))
		}
		tw.Flush()
	}

	fmt.Fprintln(w, "\nTasks")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  id\tphase\tkind\tfile\tstatus\trecords\tread\tattempts\tnote")
	for _, t := range r.Tasks {
		fmt.Fprintf(tw, "  %d\t%d\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", t.ID, t.Phase, t.Kind.Plural(), FileName(t), t.Status,
			Count(t.Checkpoint.Rows), r.progressCell(t), t.Attempts, t.LastError)
	}
	tw.Flush()

	for _, k := range r.Kinds {
		if k.Skipped == 0 && len(k.Failures) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s\n", strings.ToUpper(k.Kind.Plural()[:1])+k.Kind.Plural()[1:])
		if k.Skipped > 0 {
			fmt.Fprintln(w, "  skipped:")
			for _, s := range top(k.Skips, 10) {
				fmt.Fprintf(w, "    %8s  %s%s\n", Count(s.Count), s.Reason, examples(s))
			}
			if taken := k.Skipped - sum(k.Skips); taken > 0 {
				fmt.Fprintf(w, "    %8s  taken over by a later run since\n", Count(taken))
			}
		}
		if k.Failures != nil {
			fmt.Fprintln(w, "  failed:")
			for _, s := range top(k.Failures, 10) {
				fmt.Fprintf(w, "    %8s  %s%s\n", Count(s.Count), s.Reason, examples(s))
			}
		}
	}
	writeChanges(w, r)
	writeAdvice(w, r)
	if len(r.Log) > 0 {
		fmt.Fprintln(w, "\nLog")
		for _, l := range r.Log {
			fmt.Fprintf(w, "  %s  %-7s  %s\n", l.At, l.Level, l.Message)
		}
	}
}

// examples names a reason's example ids: " (e.g. c-1, c-7)".
func examples(r Reason) string {
	if len(r.Examples) == 0 {
		return ""
	}
	return " (e.g. " + strings.Join(r.Examples, ", ") + ")"
}

func top(rs []Reason, n int) []Reason {
	if len(rs) > n {
		return rs[:n]
	}
	return rs
}

func sum(rs []Reason) int64 {
	var n int64
	for _, r := range rs {
		n += r.Count
	}
	return n
}

// WriteRuns lists runs, newest first.
func WriteRuns(w io.Writer, reports []*Report) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "run\ttenant\tsource\tstatus\tphase\timported\tunchanged\tskipped\tfailed\tduration\tundo")
	for _, r := range reports {
		t := r.Total
		cells := []string{Count(t.Imported), Count(t.Unchanged), Count(t.Skipped), Count(t.Failed)}
		undo := r.UndoWord()
		if r.Run.Undoes != 0 {
			// An undo imports nothing: the last column says what it took back.
			cells = []string{"—", "—", "—", "—"}
			undo += fmt.Sprintf(": %s removed, %s released, %s restored, %s cleared",
				Count(t.Removed), Count(t.Released), Count(t.Restored), Count(t.Cleared))
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Run.ID, r.Run.Tenant, r.Run.Source, r.StatusWord(),
			r.Run.CurrentPhase, cells[0], cells[1], cells[2], cells[3], Duration(r.Run.DurationMS), undo)
	}
	tw.Flush()
}

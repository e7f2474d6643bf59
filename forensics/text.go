package forensics

import (
	"fmt"
	"io"
	"strings"
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
		fmt.Fprintf(w, "doctor: %s — nothing found: no uniform or stale skips, no skips ready to take over, no stranded work, "+
			"no false success, no unfinalized run, no slot without its row\n", scope)
		return
	}
	fmt.Fprintf(w, "doctor: %s — %d %s\n", scope, len(d.Findings), plural(len(d.Findings), "finding", "findings"))
	for _, inc := range d.Incidents {
		fmt.Fprintf(w, "\nincident %s (tenant %s): %s\n", inc.Name, inc.Tenant, inc.Summary)
	}
	for _, f := range d.Findings {
		fmt.Fprintf(w, "\n%s · tenant %s · %s · %d %s\n", f.Name, f.Tenant, f.Rule, f.Count, unit(f.Unit, f.Count))
		fmt.Fprintf(w, "  %s\n", f.Summary)
		for _, l := range f.Details {
			fmt.Fprintf(w, "  - %s\n", l)
		}
		fmt.Fprintf(w, "  examples: %s\n", strings.Join(f.Examples, ", "))
		for _, r := range f.Repair {
			fmt.Fprintf(w, "  repair: %s\n", r)
		}
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
	for _, t := range []string{"companies", "contacts", "deals", "notes", "activities", "emails"} {
		if c := s.Placeholders[t]; c > 0 {
			rows = append(rows, fmt.Sprintf("%d %s", c, t))
			n += c
		}
	}
	fmt.Fprintf(w, "  placeholders: %d target rows marked from_dump, for the created and matched slots (%s)\n", n, orNone(strings.Join(rows, ", ")))
	for _, m := range s.Notices {
		fmt.Fprintf(w, "  notice: %s\n", m)
	}
	tenant := ""
	if len(s.Tenants) == 1 {
		tenant = " --tenant " + s.Tenants[0]
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

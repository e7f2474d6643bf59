package report

import (
	"fmt"

	"crmimport/importer/input"
	"crmimport/phases"
)

// A run loaded from a dump (`crmimport ledger load`) has no input files
// here: its tasks name none, and it is resumed over a local export with
// `resume RUN --from PATH` (R10).

// FileName is a task's file as shown: "—" for a task of a run loaded from
// a dump, which has none here.
func FileName(t phases.Task) string {
	if t.File == "" {
		return "—"
	}
	return input.Name(t.File)
}

// resumeCommand is the command that resumes the run, as the run page says
// it.
func (r *Report) resumeCommand() string {
	if r.Dump != "" {
		return fmt.Sprintf("`crmimport resume %d --from PATH` (PATH: a local export of what it left to do: the run was loaded from a dump)", r.Run.ID)
	}
	return fmt.Sprintf("`crmimport resume %d`", r.Run.ID)
}

// Unlisted is how many of the run's failed records have no row here: the
// failures a run loaded from a dump counted where it ran, which the dump
// (migrations, migration_tasks, migration_records) does not carry. 0 for a
// run of this database, whose every failure keeps its row (R4).
func (r *Report) Unlisted() int64 {
	if r.Dump == "" {
		return 0
	}
	return max(r.Total.Failed-r.FailedRows, 0)
}

// UnlistedWords says why failed records counted by a run loaded from a
// dump are not listed, and what tries them again; "" when every failed
// record of the run has its row here.
func (r *Report) UnlistedWords() string {
	n := r.Unlisted()
	if n == 0 {
		return ""
	}
	kinds := r.perKind(func(k Kind) int64 { return max(k.Failed-k.FailedRows, 0) })
	what := fmt.Sprintf("%s failed records (%s) were", Count(n), kinds.list)
	if n == 1 {
		what = fmt.Sprintf("1 failed record (%s) was", kinds.list)
	}
	return fmt.Sprintf("%s counted where run %d ran, before it was loaded from a dump: the dump carries no failed rows, so "+
		"their rows and reasons are not here to list — fix them at the source and export again; %s over that export tries them",
		what, r.Run.ID, r.resumeCommand())
}

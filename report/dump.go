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

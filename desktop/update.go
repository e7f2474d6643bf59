package desktop

import (
	"net/http"
	"strconv"

	"crmimport/importer/runopts"
	"crmimport/report"
	"crmimport/runs"
)

// Changes at the source (R17, SPEC §11) on the run page: "Apply these
// changes" starts a new run of the run's own options with --update, as
// `crmimport run … --update` would (report.UpdateCommand), and works on it
// in this process as Resume and the failed records' re-import do.

// applyAction labels the run page's "Apply these changes": shown (Label
// not "") when the run found outdated records that --update would apply
// and was not itself an update; disabled, with the reason, while the run
// is live.
func applyAction(rep *report.Report, live bool) action {
	t := rep.ChangeTotals()
	if t.Applicable == 0 || rep.Run.Undoes != 0 {
		return action{}
	}
	if opts, err := runopts.Decode(rep.Run); err != nil || opts.Update != "" {
		return action{}
	}
	a := action{Label: "Apply these changes — " + report.Count(t.Applicable) + " " + plural(int(min(t.Applicable, 2)), "record", "records"), OK: true}
	switch {
	case live:
		a.OK, a.Why = false, "the run is working: it can be applied once it has ended"
	case rep.Dump != "":
		a.OK, a.Why = false, "the run was loaded from a dump: its export is not here; run the command above over a local copy"
	}
	return a
}

// apiUpdate plans a new run of run {id}'s options with --update (R17) and
// works on it in this process (R10: committed before this answers, with
// the new run's id). A live run of the tenant answers 409 (R13).
func (s *Server) apiUpdate(w http.ResponseWriter, r *http.Request) {
	id := s.runID(w, r)
	if id == 0 {
		return
	}
	run, err := runs.LoadRun(r.Context(), s.ro, id)
	if err != nil {
		s.fail(w, err)
		return
	}
	base, err := s.privateFolder(fixesFolder)
	if err != nil {
		s.fail(w, err)
		return
	}
	spec, cleanup, err := runs.UpdateSpec(run, base)
	if err == nil {
		var next runs.Run
		if next, err = runs.Start(r.Context(), s.eng, spec); err == nil {
			s.work(next.ID)
			writeJSON(w, http.StatusAccepted, map[string]any{"run": next.ID, "status": next.Status,
				"url": "/runs/" + strconv.FormatInt(next.ID, 10)})
			return
		}
	}
	cleanup() // no run reads the profile written for it
	s.fail(w, err)
}

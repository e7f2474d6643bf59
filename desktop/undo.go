package desktop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"crmimport/importer"
	"crmimport/phases"
	"crmimport/report"
	"crmimport/undo"
)

// Undo on the page and in the API (R16, SPEC §9 and §10): the preview is
// undo.Build's plan as `undo RUN --dry-run --json` prints it, with its
// digest, and the undo itself is undo.StartWith's run — the plan the
// preview showed, or nothing — which this process works on like a run
// started here (the engine's admission, stop and resume hold for it).

// cascadeParam reads ?cascade=1 (or true).
func cascadeParam(r *http.Request) (bool, error) {
	v := r.URL.Query().Get("cascade")
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, badRequest("cascade %q is not 1, 0, true or false", v)
	}
	return b, nil
}

// apiUndoPreview is `undo RUN [--cascade] --dry-run --json`: what the undo
// would take back, per kind, with the dependents and the notices; or its
// refusal, with the CLI's exit code (fail).
func (s *Server) apiUndoPreview(w http.ResponseWriter, r *http.Request) {
	id := s.runID(w, r)
	if id == 0 {
		return
	}
	cascade, err := cascadeParam(r)
	if err != nil {
		s.fail(w, err)
		return
	}
	p, err := undo.Build(r.Context(), s.ro, s.eng, id, cascade)
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, p.Preview())
}

// undoRequest is what POST /api/runs/{id}/undo takes (an empty body is
// fine; ?cascade=1 says the same as the body's cascade). The page sends
// back the plan's digest and parts that its preview showed: the undo
// commits that plan or nothing (R16, undo.PlanChangedError).
type undoRequest struct {
	Cascade bool            `json:"cascade"`
	Plan    string          `json:"plan,omitempty"`
	Parts   []undo.PlanPart `json:"parts,omitempty"`
}

// apiUndo plans the undo of a run (R10: its run, tasks and items commit
// before this answers, with its id) and works on it in this process.
func (s *Server) apiUndo(w http.ResponseWriter, r *http.Request) {
	id := s.runID(w, r)
	if id == 0 {
		return
	}
	cascade, err := cascadeParam(r)
	if err != nil {
		s.fail(w, err)
		return
	}
	var q undoRequest
	if err := readOptional(r, &q); err != nil {
		s.fail(w, err)
		return
	}
	cascade = cascade || q.Cascade
	if q.Plan != "" && !undo.ValidDigest(q.Plan) {
		s.fail(w, badRequest("plan %q is not a plan's digest (64 hex digits, as GET /api/runs/%d/undo answers it)", q.Plan, id))
		return
	}
	if err := undo.CheckParts(q.Parts); err != nil {
		s.fail(w, badRequest("parts are not those of a preview (as GET /api/runs/%d/undo answers them): %v", id, err))
		return
	}
	imp := importer.New(s.eng)
	run, p, err := undo.StartWith(r.Context(), s.eng, undo.Options{Undo: id, Cascade: cascade, Plan: q.Plan, Shown: q.Parts})
	if err != nil {
		s.fail(w, err)
		return
	}
	s.work(imp, run.ID)
	writeJSON(w, http.StatusAccepted, map[string]any{"run": run.ID, "status": run.Status, "undoes": id, "cascade": cascade,
		"total": p.Total(), "url": "/runs/" + strconv.FormatInt(run.ID, 10)})
}

// readOptional reads a JSON body into v, if there is one: an empty body
// is the zero request.
func readOptional(r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		return badRequest("the request is not the JSON this route takes: %v", err)
	}
	return nil
}

// undoAction is the run page's Undo: enabled when the engine would accept
// it (alone, or under cascade: the page then lists the dependents and
// offers it), labelled by what it takes back, else disabled saying why.
func (s *Server) undoAction(ctx context.Context, rep *report.Report) action {
	if rep.DryRun != "" {
		return action{Label: "Undo", Why: "a dry run wrote nothing"}
	}
	p, err := undo.Build(ctx, s.ro, s.eng, rep.Run.ID, false)
	var (
		adm *phases.AdmissionError
		ref *undo.RefusedError
		dep *undo.DependentsError
	)
	switch {
	case err == nil:
		return action{Label: fmt.Sprintf("Undo — take back %s %s", report.Count(int64(p.Total())), plural(p.Total(), "record", "records")), OK: true}
	case errors.As(err, &adm):
		return action{Label: "Undo", Why: "the run is live: stop it first (R13), then undo it"}
	case errors.As(err, &ref):
		return action{Label: "Undo", Why: ref.Msg}
	case errors.As(err, &dep):
		n := 0
		for _, d := range dep.Dependents {
			n += d.Count
		}
		return action{Label: fmt.Sprintf("Undo… — %s %s of other runs depend on it", report.Count(int64(n)), plural(n, "record", "records")), OK: true}
	default:
		return action{Label: "Undo", Why: err.Error()}
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

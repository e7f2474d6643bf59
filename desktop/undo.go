package desktop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"crmimport/report"
	"crmimport/runs"
)

// Undo on the page and in the API (R16, SPEC §9 and §10): the preview is
// runs.PreviewUndo's, as `undo RUN --dry-run --json` prints it, with its
// digest, and the undo itself is runs.StartUndo's run — the plan the
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
	v, err := runs.PreviewUndo(r.Context(), s.ro, s.eng, runs.UndoOptions{Undo: id, Cascade: cascade})
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// undoRequest is what POST /api/runs/{id}/undo takes (an empty body is
// fine; ?cascade=1 says the same as the body's cascade). The page sends
// back the plan's digest and parts that its preview showed: the undo
// commits that plan or nothing (R16, exit 8).
type undoRequest struct {
	Cascade bool                `json:"cascade"`
	Plan    string              `json:"plan,omitempty"`
	Parts   []runs.UndoPlanPart `json:"parts,omitempty"`
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
	run, total, _, err := runs.StartUndo(r.Context(), s.eng, runs.UndoOptions{Undo: id, Cascade: cascade, Plan: q.Plan, Shown: q.Parts})
	if err != nil {
		s.fail(w, err)
		return
	}
	s.work(run.ID)
	writeJSON(w, http.StatusAccepted, map[string]any{"run": run.ID, "status": run.Status, "undoes": id, "cascade": cascade,
		"total": total, "url": "/runs/" + strconv.FormatInt(run.ID, 10)})
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
	u := runs.CanUndo(ctx, s.ro, s.eng, rep.Run.ID)
	switch {
	case !u.OK:
		return action{Label: "Undo", Why: u.Why}
	case u.Dependents > 0:
		return action{Label: fmt.Sprintf("Undo… — %s %s of other runs depend on it", report.Count(int64(u.Dependents)), plural(u.Dependents, "record", "records")), OK: true}
	default:
		return action{Label: fmt.Sprintf("Undo — take back %s %s", report.Count(int64(u.Total)), plural(u.Total, "record", "records")), OK: true}
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

package desktop

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"crmimport/forensics"
	"crmimport/importer"
	"crmimport/importer/profile"
	"crmimport/importer/runopts"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/report"
	"crmimport/store"
)

// The JSON API under /api/ (README: one example per route). Shapes are
// those of --json (SPEC §5); an error is {"error", "exit_code"} with the
// exit code the command line would give.

func (s *Server) apiRuns(w http.ResponseWriter, r *http.Request) {
	reports, err := report.List(r.Context(), s.ro, s.eng, r.URL.Query().Get("tenant"))
	if err != nil {
		s.fail(w, err)
		return
	}
	copies, err := store.LeftCopies(r.Context(), s.ro)
	if err != nil {
		s.fail(w, err)
		return
	}
	out := []report.Summary{}
	for _, rep := range reports {
		out = append(out, rep.Summary())
	}
	writeJSON(w, http.StatusOK, map[string]any{"runs": out, "dry_run_copies": append([]store.DryRunCopy{}, copies...)})
}

func (s *Server) apiRun(w http.ResponseWriter, r *http.Request) {
	id := s.runID(w, r)
	if id == 0 {
		return
	}
	rep, err := report.Build(r.Context(), s.ro, s.eng, id, true)
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, rep.Full())
}

// stopBy is who asks for a stop from the page or the API, as the run's
// log and its tasks tell it (R14).
const stopBy = "the desktop (`crmimport ui`)"

// apiStop requests a stop (R14): a request in the run's row, which the
// run's process — this one or another — reads after its batch in flight.
func (s *Server) apiStop(w http.ResponseWriter, r *http.Request) {
	id := s.runID(w, r)
	if id == 0 {
		return
	}
	run, requested, err := s.eng.Stop(r.Context(), id, stopBy)
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"run": id, "status": run.Status, "requested": requested,
		"stopped": run.Status == phases.RunCancelled})
}

// apiResume re-arms a run (R8) and works on it in this process, under the
// admission control of any run (R13: a live tenant answers 409).
func (s *Server) apiResume(w http.ResponseWriter, r *http.Request) {
	id := s.runID(w, r)
	if id == 0 {
		return
	}
	imp := importer.New(s.eng)
	run, rearmed, err := imp.Resume(r.Context(), id)
	if err != nil {
		s.fail(w, err)
		return
	}
	s.work(imp, run.ID)
	writeJSON(w, http.StatusAccepted, map[string]any{"run": run.ID, "status": run.Status, "tasks": len(rearmed)})
}

// importRequest is what POST /api/imports and POST /api/inspect take: the
// options of `run`.
type importRequest struct {
	Path      string   `json:"path"`
	Paths     []string `json:"paths,omitempty"` // the further zips of one export
	Tenant    string   `json:"tenant"`
	Source    string   `json:"source"`
	Profile   string   `json:"profile,omitempty"`
	Only      []string `json:"only,omitempty"`
	BatchSize int      `json:"batch_size,omitempty"`
	Strict    bool     `json:"strict,omitempty"`
	Encoding  string   `json:"encoding,omitempty"`
	Reread    bool     `json:"reread,omitempty"`
	DryRun    bool     `json:"dry_run,omitempty"`
	// Plan and PlanFiles are a dry run's, as its summary answered them:
	// the import is that plan or nothing (importer.PlanChangedError).
	Plan      string             `json:"plan,omitempty"`
	PlanFiles []runopts.PlanFile `json:"plan_files,omitempty"`
}

// spec reads the request as `run` reads its command line.
func (q importRequest) spec(needTenant bool) (importer.RunSpec, error) {
	spec := importer.RunSpec{Tenant: strings.TrimSpace(q.Tenant), Source: strings.TrimSpace(q.Source), Profile: q.Profile,
		Input: strings.TrimSpace(q.Path), Inputs: q.Paths, BatchSize: q.BatchSize, Strict: q.Strict, Encoding: q.Encoding, Reread: q.Reread,
		Plan: q.Plan, Shown: q.PlanFiles}
	if spec.BatchSize == 0 {
		spec.BatchSize = importer.DefaultBatchSize
	}
	switch {
	case spec.Input == "":
		return spec, badRequest("path is empty: give the folder, zip or file to import")
	case needTenant && spec.Tenant == "":
		return spec, badRequest("tenant is empty: the workspace the data belongs to")
	case spec.Source == "":
		return spec, badRequest("source is empty: the ledger's source name, e.g. canonical")
	case spec.Plan != "" && !importer.ValidPlan(spec.Plan):
		return spec, badRequest("plan %q is not a plan's digest (64 hex digits, as a dry run's summary answers it)", spec.Plan)
	}
	if err := importer.CheckBatchSize(spec.BatchSize); err != nil {
		return spec, badRequest("batch_size: %v", err)
	}
	for _, o := range q.Only {
		for _, word := range strings.Split(o, ",") {
			if strings.TrimSpace(word) == "" {
				continue
			}
			k, err := ledger.ParseKind(word)
			if err != nil {
				return spec, badRequest("only: %v", err)
			}
			spec.Only = append(spec.Only, k)
		}
	}
	return spec, nil
}

func readRequest(r *http.Request, v any) error { return readRequestUpTo(r, v, 1<<20) }

// readRequestUpTo reads a JSON body of at most limit bytes.
func readRequestUpTo(r *http.Request, v any, limit int64) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, limit))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest("the request is not the JSON this route takes: %v", err)
	}
	return nil
}

// apiImport plans a run and works on it in this process (R10: the run and
// its plan are committed before this answers, with the run's id), or,
// with dry_run, runs it on a throwaway copy of the database and answers
// its summary (nothing written).
func (s *Server) apiImport(w http.ResponseWriter, r *http.Request) {
	var q importRequest
	if err := readRequest(r, &q); err != nil {
		s.fail(w, err)
		return
	}
	spec, err := q.spec(true)
	if err != nil {
		s.fail(w, err)
		return
	}
	if q.DryRun {
		sum, err := s.dryRun(r.Context(), spec)
		if err != nil {
			s.fail(w, err)
			return
		}
		writeJSON(w, http.StatusOK, sum)
		return
	}
	imp := importer.New(s.eng)
	run, err := imp.Plan(r.Context(), spec)
	if err != nil {
		s.fail(w, err)
		return
	}
	s.work(imp, run.ID)
	writeJSON(w, http.StatusAccepted, map[string]any{"run": run.ID, "status": run.Status, "url": "/runs/" + strconv.FormatInt(run.ID, 10)})
}

// dryRun is `run --dry-run`: the run works on a throwaway copy of the
// database (store.Throwaway: a copy of the file, or a schema beside a
// server's, dropped after), and its summary names no run, and the
// database without its password.
func (s *Server) dryRun(ctx context.Context, spec importer.RunSpec) (report.Summary, error) {
	// What store tells while it works (a copy a killed dry run left,
	// removed) goes to the log, as the command line's goes to stderr.
	ctx = store.WithNotice(ctx, func(msg string) { s.logf("notice: %s", msg) })
	standFor, err := store.FileIDOf(s.cfg.DBPath)
	if err != nil {
		return report.Summary{}, err
	}
	tmp, cleanup, err := store.Throwaway(ctx, s.cfg.DBPath)
	if err != nil {
		return report.Summary{}, err
	}
	defer func() {
		if err := cleanup(); err != nil { // the dry run is over: its copy left behind is told, not its failure
			s.logf("warning: dry run: %v", err)
		}
	}()
	db, err := store.Open(ctx, tmp)
	if err != nil {
		return report.Summary{}, err
	}
	defer db.Close()
	e := s.cfg.Engine(db)
	e.StandFor(standFor) // the copy stands for the database (R13)
	imp := importer.New(e)
	run, err := imp.Plan(ctx, spec)
	if err != nil {
		return report.Summary{}, err
	}
	if _, err := imp.Execute(ctx, run.ID); err != nil {
		return report.Summary{}, err
	}
	rep, err := report.Build(ctx, db, e, run.ID, false)
	if err != nil {
		return report.Summary{}, err
	}
	rep.DryRun = dbWords(s.cfg.DBPath)
	return rep.Summary(), nil
}

// work runs a planned or resumed run in this process until it ends or the
// server stops (which stops it after its batch in flight: R14).
func (s *Server) work(imp *importer.Importer, id int64) {
	s.mu.Lock()
	s.live[id] = true
	s.mu.Unlock()
	s.runs.Add(1)
	go func() {
		defer s.runs.Done()
		defer func() {
			s.mu.Lock()
			delete(s.live, id)
			s.mu.Unlock()
		}()
		// The error is the run's own: it is in its row and its log, which
		// the run page shows; a run the engine could not go on with is left
		// for resume, as after `crmimport run`.
		if _, err := imp.Execute(s.ctx, id); err != nil {
			s.logf("run %d stopped: %v", id, err)
		}
	}()
}

// logf tells the terminal that runs `crmimport ui` what happened in the
// background.
func (s *Server) logf(format string, args ...any) {
	if s.cfg.Log != nil {
		s.cfg.Log(fmt.Sprintf(format, args...))
	}
}

func (s *Server) apiDoctor(w http.ResponseWriter, r *http.Request) {
	d, err := forensics.Doctor(r.Context(), s.ro, s.eng, s.doctorOptions(r.URL.Query().Get("tenant")))
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func (s *Server) apiWhy(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	tenant := strings.TrimSpace(q.Get("tenant"))
	if tenant == "" {
		s.fail(w, badRequest("tenant is empty: ledger why takes a tenant"))
		return
	}
	var kind ledger.Kind
	if k := q.Get("kind"); k != "" {
		var err error
		if kind, err = ledger.ParseKind(k); err != nil {
			s.fail(w, badRequest("kind: %v", err))
			return
		}
	}
	if id := q.Get("source_id"); id != "" {
		st, err := forensics.StoryOf(r.Context(), s.ro, s.eng, tenant, kind, id)
		if err != nil {
			s.fail(w, err)
			return
		}
		writeJSON(w, http.StatusOK, st)
		return
	}
	var run int64
	if v := q.Get("run"); v != "" {
		var err error
		if run, err = strconv.ParseInt(v, 10, 64); err != nil {
			s.fail(w, badRequest("run %q is not a run id", v))
			return
		}
	}
	g, err := forensics.Why(r.Context(), s.ro, s.eng, tenant, kind, run)
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, g)
}

func (s *Server) apiProfiles(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"profiles": profile.BuiltinNames()})
}

// apiInspect is `crmimport inspect`: what a run of the export would plan
// and find, with nothing written (importer.Inspect opens no database).
func (s *Server) apiInspect(w http.ResponseWriter, r *http.Request) {
	var q importRequest
	if err := readRequest(r, &q); err != nil {
		s.fail(w, err)
		return
	}
	spec, err := q.spec(false)
	if err != nil {
		s.fail(w, err)
		return
	}
	in, err := importer.Inspect(r.Context(), importer.InspectSpec{Source: spec.Source, Profile: spec.Profile, Input: spec.Input,
		Inputs: spec.Inputs, Only: spec.Only, Encoding: spec.Encoding})
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, in)
}

package desktop

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"crmimport/canon"
	"crmimport/forensics"
	"crmimport/importer/input"
	"crmimport/importer/profile"
	"crmimport/importer/runopts"
	"crmimport/ledger"
	"crmimport/report"
	"crmimport/runs"
	"crmimport/store"
)

// The JSON API under /api/ (README: one example per route). Shapes are
// those of --json (SPEC §5); an error is {"error", "exit_code"} with the
// exit code the command line would give.

func (s *Server) apiRuns(w http.ResponseWriter, r *http.Request) {
	reports, err := runs.List(r.Context(), s.ro, s.eng, r.URL.Query().Get("tenant"))
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
	rep, err := runs.Report(r.Context(), s.ro, s.eng, id, true)
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, runs.PageOf(rep))
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
	st, err := runs.Stop(r.Context(), s.eng, id, stopBy, 0, runs.Watch{})
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// resumeRequest is what POST /api/runs/{id}/resume may take: from, the
// local export that a run loaded from a dump is resumed over (`resume RUN
// --from PATH`, R10). No body resumes a run over its own files.
type resumeRequest struct {
	From string `json:"from,omitempty"`
}

// apiResume re-arms a run (R8) and works on it in this process, under the
// admission control of any run (R13: a live tenant answers 409).
func (s *Server) apiResume(w http.ResponseWriter, r *http.Request) {
	id := s.runID(w, r)
	if id == 0 {
		return
	}
	var q resumeRequest
	if r.ContentLength != 0 { // the run page's Resume posts no body
		if err := readRequest(r, &q); err != nil {
			s.fail(w, err)
			return
		}
	}
	run, rearmed, err := runs.StartResume(r.Context(), s.eng, id, strings.TrimSpace(q.From))
	if err != nil {
		s.fail(w, err)
		return
	}
	s.work(run.ID)
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
	// Update is the page's "Apply changes at the source (--update)": the
	// run writes what changed since its records were imported (R17).
	Update bool `json:"update,omitempty"`
	// NewTenant confirms that a tenant no run names yet is meant to be
	// made, when its name folds to an existing tenant's (runs.Lookalike,
	// issue 27 item 3): without it such a request is refused (exit 2),
	// naming the existing tenant.
	NewTenant bool `json:"new_tenant,omitempty"`
	// Plan and PlanFiles are a dry run's, as its summary answered them:
	// the import is that plan or nothing (exit 8).
	Plan      string          `json:"plan,omitempty"`
	PlanFiles []runs.PlanFile `json:"plan_files,omitempty"`
	// Progress, with DryRun, answers JSON Lines: the dry run's progress
	// while it works, then its summary or its error (dryRunLines).
	Progress bool `json:"progress,omitempty"`
}

// spec reads the request as `run` reads its command line (runs.Check):
// for `run`, or for `inspect`, which needs no tenant.
func (q importRequest) spec(command string) (runs.Spec, error) {
	spec := runs.Spec{Tenant: q.Tenant, Source: q.Source, Profile: q.Profile, Input: q.Path, Inputs: q.Paths, BatchSize: q.BatchSize,
		Strict: q.Strict, Encoding: q.Encoding, Reread: q.Reread, Plan: q.Plan, Shown: q.PlanFiles}
	if q.Update {
		spec.Update = runopts.UpdateApply
	}
	if spec.BatchSize == 0 {
		spec.BatchSize = runs.DefaultBatchSize
	}
	names := runs.APINames
	names.Command = command
	if err := runs.Check(&spec, names); err != nil {
		return spec, err
	}
	return spec, runs.ParseOnly(&spec, "only", q.Only...)
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
	spec, err := q.spec("run")
	if err != nil {
		s.fail(w, err)
		return
	}
	// A new tenant is made on purpose, never by a typo (issue 27 item 3):
	// a dry run too, whose result under a new tenant would be every record
	// imported again.
	if !q.NewTenant {
		like, err := runs.Lookalike(r.Context(), s.ro, spec.Tenant)
		if err != nil {
			s.fail(w, err)
			return
		}
		if like != "" {
			s.fail(w, &runs.LookalikeError{Tenant: spec.Tenant, Existing: like})
			return
		}
	}
	if q.DryRun && q.Progress {
		s.dryRunLines(w, r.Context(), spec)
		return
	}
	if q.DryRun {
		s.dryRun(w, r.Context(), spec)
		return
	}
	run, err := runs.Start(r.Context(), s.eng, spec)
	if err != nil {
		s.fail(w, err)
		return
	}
	s.work(run.ID)
	writeJSON(w, http.StatusAccepted, map[string]any{"run": run.ID, "status": run.Status, "url": "/runs/" + strconv.FormatInt(run.ID, 10)})
}

// dryRun is `run --dry-run` (runs.DryRun): its summary, with the exit code
// the command line gives it, names no run, and the database without its
// password.
func (s *Server) dryRun(w http.ResponseWriter, ctx context.Context, spec runs.Spec) {
	// What store tells while it works (a copy a killed dry run left,
	// removed) goes to the log, as the command line's goes to stderr.
	ctx = store.WithNotice(ctx, func(msg string) { s.logf("notice: %s", msg) })
	out, err := runs.DryRun(ctx, s.cfg.DBPath, s.cfg.Engine, spec, runs.Watch{Warn: func(msg string) { s.logf("warning: %s", msg) }})
	if err == nil {
		err = out.Err
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, dryRunAnswer{out.Summary(), out.Code()})
}

// dryRunAnswer is a dry run's summary, with the exit code the command
// line gives it.
type dryRunAnswer struct {
	report.Summary
	ExitCode int `json:"exit_code"`
}

// dryProgress is how far a dry run has come (issue 27 item 4: New import
// shows it while it works), read from the throwaway copy's tasks as the
// run page reads a run's (runs.TasksProgress).
type dryProgress struct {
	// Stage is "planning" until the first task starts, then "working".
	Stage string `json:"stage"`
	// Phase, Kind and File are the task at work.
	Phase int    `json:"phase,omitempty"`
	Kind  string `json:"kind,omitempty"`
	File  string `json:"file,omitempty"`
	// Records are the records read so far, of every task; Percent how far
	// into the export's files (nil while a size is unknown).
	Records int64    `json:"records"`
	Percent *float64 `json:"percent"`
	// Tasks are the tasks planned, Done those ended.
	Tasks int `json:"tasks"`
	Done  int `json:"done"`
}

// dryProgressEvery is how often at most a dry run's progress is sent
// (and a task's start always is).
const dryProgressEvery = 250 * time.Millisecond

// dryRunLines is dryRun answered as JSON Lines (application/x-ndjson):
// {"progress": …} as the dry run works, then the summary (with its
// exit_code) or the error ({"error", "exit_code"}) as the last line. The
// status is 200 once the lines begin: the last line says how it ended.
func (s *Server) dryRunLines(w http.ResponseWriter, ctx context.Context, spec runs.Spec) {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	enc := json.NewEncoder(w)
	send := func(v any) {
		// The client went away: the dry run goes on to its end, whose
		// copy is removed as always.
		if enc.Encode(v) == nil {
			_ = rc.Flush()
		}
	}
	send(map[string]dryProgress{"progress": {Stage: "planning"}})
	var last time.Time
	watch := runs.Watch{
		Warn: func(msg string) { s.logf("warning: %s", msg) },
		Engine: func(e *runs.Engine) {
			tell := func(started bool) func(runs.Task) {
				return func(t runs.Task) {
					if !started && time.Since(last) < dryProgressEvery {
						return
					}
					tasks, err := runs.LoadTasks(ctx, e.DB, t.RunID)
					if err != nil {
						return // the next batch tells it
					}
					last = time.Now()
					p := runs.TasksProgress(tasks, last)
					dp := dryProgress{Stage: "working", Phase: t.Phase, Kind: string(t.Kind), File: input.Name(t.File),
						Records: p.Records, Percent: p.Percent, Tasks: len(tasks)}
					for _, tk := range tasks {
						if tk.Status != runs.TaskPending && tk.Status != runs.TaskRunning {
							dp.Done++
						}
					}
					send(map[string]dryProgress{"progress": dp})
				}
			}
			e.OnTask, e.OnBatch = tell(true), tell(false)
		},
	}
	ctx = store.WithNotice(ctx, func(msg string) { s.logf("notice: %s", msg) })
	out, err := runs.DryRun(ctx, s.cfg.DBPath, s.cfg.Engine, spec, watch)
	if err == nil {
		err = out.Err
	}
	if err != nil {
		send(runs.ErrorOf(err))
		return
	}
	send(dryRunAnswer{out.Summary(), out.Code()})
}

// work runs a planned or resumed run in this process until it ends or the
// server stops (which stops it after its batch in flight: R14).
func (s *Server) work(id int64) {
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
		if _, err := runs.Execute(s.ctx, s.eng, id); err != nil {
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
		if kind, err = canon.ParseKind(k); err != nil {
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
// and find, with nothing written (runs.Inspect opens no database).
func (s *Server) apiInspect(w http.ResponseWriter, r *http.Request) {
	var q importRequest
	if err := readRequest(r, &q); err != nil {
		s.fail(w, err)
		return
	}
	spec, err := q.spec("inspect")
	if err != nil {
		s.fail(w, err)
		return
	}
	// With a tenant, the rows are compared with its ledger through the
	// pages' read-only pool (R17): an inspection never writes.
	in, err := runs.Inspect(r.Context(), runs.InspectSpec{Source: spec.Source, Profile: spec.Profile, Input: spec.Input,
		Inputs: spec.Inputs, Only: spec.Only, Encoding: spec.Encoding, Tenant: spec.Tenant, Ledger: s.ro})
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, in)
}

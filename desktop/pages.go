package desktop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"

	"crmimport/bytesize"
	"crmimport/canon"
	"crmimport/forensics"
	"crmimport/importer/profile"
	"crmimport/importer/runopts"
	"crmimport/ledger"
	"crmimport/report"
	"crmimport/runs"
)

// runID reads the {id} of a path; 0 with the page answered when it is
// not a run id.
func (s *Server) runID(w http.ResponseWriter, r *http.Request) int64 {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		s.refuse(w, r, http.StatusNotFound, fmt.Sprintf("%q is not a run id", r.PathValue("id")))
		return 0
	}
	return id
}

// pageError shows an error on a page in the words of the CLI.
func (s *Server) pageError(w http.ResponseWriter, r *http.Request, err error) {
	code := http.StatusInternalServerError
	if errors.Is(err, runs.ErrNoRun) {
		code = http.StatusNotFound
	}
	s.refuse(w, r, code, err.Error())
}

func (s *Server) runsPage(w http.ResponseWriter, r *http.Request) {
	reports, err := runs.List(r.Context(), s.ro, s.eng, r.URL.Query().Get("tenant"))
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	s.render(w, "runs", page{Title: "Runs", Nav: "runs", Data: struct{ Runs []*report.Report }{reports}})
}

// runView is what the run page (and the HTML report) shows.
type runView struct {
	R        *report.Report
	Tasks    []taskView
	Warnings []string
	Next     []string
	Stop     action
	Resume   action
	Undo     action
	// Failed and Rejects open the run's failed records, labelled by what
	// they hold: a run loaded from a dump counted failures whose rows it
	// does not carry (report.Unlisted).
	Failed  action
	Rejects action
	// Apply is "Apply these changes" (R17, update.go): Label "" when the
	// run has none to apply.
	Apply action
	// Update is the run's --update ("apply", "overwrite"; "" without):
	// a run that applied changes at the source says so (R17).
	Update string
	Live   bool // the run works: the page listens to its events
	// UndoKinds are the kinds in the order an undo takes them back, as
	// JSON (undoKinds): the undo dialog's order. Read on the page only.
	UndoKinds string
}

// action is a button: what it does, whether the engine would accept it,
// and why not.
type action struct {
	Label string
	OK    bool
	Why   string
	Href  string // a link's, for an action that opens a page
}

type taskView struct {
	runs.Task
	FileName string
	Percent  *float64
	Size     string // "1.2 MiB of 4.0 MiB", "" when unknown
	Rate     string
	Left     string
}

// buildRun reads a run's page through the same library function as
// `report RUN` (runs.Report), with its log.
func (s *Server) buildRun(ctx context.Context, id int64) (*runView, error) {
	rep, err := runs.Report(ctx, s.ro, s.eng, id, true)
	if err != nil {
		return nil, err
	}
	v := newRunView(rep)
	v.Live = rep.Run.Status == runs.RunRunning && !rep.Interrupted
	v.Stop, v.Resume = s.actions(rep)
	v.Apply = applyAction(rep, v.Live)
	return v, nil
}

// newRunView is the run page of a report: its tasks with their progress
// from the database (runs.TaskProgress through the report's clock), as
// `report` and `runs` show it.
func newRunView(rep *report.Report) *runView {
	v := &runView{R: rep, Warnings: rep.Warnings(), Next: rep.Next()}
	v.Failed, v.Rejects = failedActions(rep)
	if opts, err := runopts.Decode(rep.Run); err == nil {
		v.Update = opts.Update
	}
	for _, t := range rep.Tasks {
		p := rep.TaskProgress(t)
		tv := taskView{Task: t, FileName: report.FileName(t), Percent: p.Percent}
		// No rate for a task no process works on (an interrupted run's).
		if t.Status == runs.TaskRunning && !rep.Interrupted {
			if p.RecordsPerSecond != nil {
				tv.Rate = report.Count(int64(*p.RecordsPerSecond)) + " records/s"
			}
			if p.SecondsLeft != nil && *p.SecondsLeft > 0 {
				tv.Left = report.Left(*p.SecondsLeft)
			}
		}
		switch {
		case rep.Run.Undoes != 0:
			// An undo's task reads items, not bytes: its size is the
			// items planned, its read the items done.
			tv.Size = report.Count(p.ReadBytes) + " of " + report.Count(p.SizeBytes) + " items"
		case p.SizeBytes > 0:
			tv.Size = bytesize.Format(p.ReadBytes) + " of " + bytesize.Format(p.SizeBytes)
		}
		v.Tasks = append(v.Tasks, tv)
	}
	return v
}

// failedActions labels the links to a run's failed records by the rows
// they open: every failed record's for a run of this database (R4); for a
// run loaded from a dump, those that failed here, the others counted
// where it ran and not in the dump — no list that opens empty.
func failedActions(rep *report.Report) (failed, rejects action) {
	failed = action{Label: fmt.Sprintf("Failed records (%s)", report.Count(rep.Total.Failed)), OK: true}
	rejects = action{Label: "Download rejects", OK: true}
	unlisted := rep.Unlisted()
	switch {
	case unlisted == 0:
	case rep.FailedRows == 0:
		why := "the dump carries no failed rows: these failures were counted where the run ran"
		failed = action{Label: fmt.Sprintf("Failed records (%s, not in the dump)", report.Count(unlisted)), Why: why}
		rejects.OK, rejects.Why = false, why
	default:
		failed.Label = fmt.Sprintf("Failed records (%s here of %s)", report.Count(rep.FailedRows), report.Count(rep.Total.Failed))
		failed.Why = fmt.Sprintf("%s were counted where the run ran: the dump carries no failed rows", report.Count(unlisted))
	}
	return failed, rejects
}

// actions labels Stop and Resume by what the engine would do now (R14,
// R8), and disables what it would refuse.
func (s *Server) actions(rep *report.Report) (stop, resume action) {
	n := 0
	for _, t := range rep.Tasks {
		if t.Status == runs.TaskFailed || t.Status == runs.TaskCancelled || t.Status == runs.TaskRunning {
			n++
		}
	}
	tasks := fmt.Sprintf("%d %s", n, map[bool]string{true: "task", false: "tasks"}[n == 1])
	switch st := rep.Run.Status; {
	case st == runs.RunRunning && !rep.Interrupted:
		stop = action{Label: "Stop after the current batch", OK: true}
		resume = action{Label: "Resume", Why: "the run is working"}
	case st == runs.RunRunning:
		stop = action{Label: "Cancel (its process is gone)", OK: true}
		resume = action{Label: "Resume — " + tasks + " will run", OK: true}
	case st == runs.RunCancelled:
		stop = action{Label: "Stop", Why: "the run is stopped"}
		resume = action{Label: "Resume — " + tasks + " will run", OK: n > 0}
	case st == runs.RunPartial, st == runs.RunFailed:
		stop = action{Label: "Stop", Why: "the run has ended"}
		resume = action{Label: "Retry — " + tasks + " will run", OK: n > 0}
		if n == 0 {
			resume = action{Label: "Retry", Why: "no task failed or stopped: fix the failed records in the export and import it again"}
		}
	default:
		stop = action{Label: "Stop", Why: "the run has ended"}
		resume = action{Label: "Resume", Why: "a succeeded run has nothing to resume"}
	}
	if resume.OK && rep.Dump != "" {
		resume.OK, resume.Why = false, "the run was loaded from a dump: resume it over a local export with `crmimport resume "+
			strconv.FormatInt(rep.Run.ID, 10)+" --from PATH`"
	}
	if !resume.OK && resume.Why == "" {
		resume.Why = "no task to re-arm"
	}
	return stop, resume
}

func (s *Server) runPage(w http.ResponseWriter, r *http.Request) {
	id := s.runID(w, r)
	if id == 0 {
		return
	}
	v, err := s.buildRun(r.Context(), id)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	// Undo is read on the page only, not in its live events: its plan
	// reads the tenant's whole ledger (runs.CanUndo).
	v.Undo = s.undoAction(r.Context(), v.R)
	if v.UndoKinds, err = undoKinds(canon.KindTable()); err != nil {
		s.pageError(w, r, err)
		return
	}
	s.render(w, "run", page{Title: fmt.Sprintf("Run %d", id), Nav: "runs", Data: v})
}

// reportFileName is what a downloaded report is saved as: the customer's
// version says what it is to whoever receives it; the full one is the
// consultant's and names the tool.
func reportFileName(id int64, a Audience) string {
	switch a {
	case ForCustomer:
		return fmt.Sprintf("migration-report-run-%d.html", id)
	case ForFull:
		return fmt.Sprintf("crmimport-run-%d-full-report.html", id)
	}
	return fmt.Sprintf("crmimport-run-%d.html", id)
}

// reportDownload is the run's HTML report as a file (Download report):
// the full version, or the customer's with ?for=customer (as `report RUN
// --format html --for customer`).
func (s *Server) reportDownload(w http.ResponseWriter, r *http.Request) {
	id := s.runID(w, r)
	if id == 0 {
		return
	}
	audience := ForFull
	if v := r.URL.Query().Get("for"); v != "" {
		a, err := ParseAudience(v)
		if err != nil {
			s.refuse(w, r, http.StatusNotFound, err.Error())
			return
		}
		audience = a
	}
	rep, err := runs.Report(r.Context(), s.ro, s.eng, id, true)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	var b bytes.Buffer
	if err := WriteReport(&b, rep, audience); err != nil {
		s.pageError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename=%q`, reportFileName(id, audience)))
	_, _ = w.Write(b.Bytes()) // the client went away: nothing to tell it
}

// rejectsDownload streams the run's rejects (report.Rejects) as they
// are read: a run of 400,000 failed records costs the memory of one (issue
// 23 item 15). An error before the first byte is answered as one; after
// it, the response is cut off, so that a download that stopped short
// fails in the browser rather than look whole.
func (s *Server) rejectsDownload(w http.ResponseWriter, r *http.Request) {
	id := s.runID(w, r)
	if id == 0 {
		return
	}
	out := &download{w: w, name: fmt.Sprintf("crmimport-rejects-%d.csv", id)}
	if _, err := report.Rejects(r.Context(), s.ro, id, out); err != nil {
		switch {
		case out.started:
			panic(http.ErrAbortHandler)
		case strings.HasPrefix(r.URL.Path, "/api/"):
			s.fail(w, err)
		default:
			s.pageError(w, r, err)
		}
	}
}

// download is a CSV attachment whose headers are sent with its first
// bytes.
type download struct {
	w       http.ResponseWriter
	name    string
	started bool
}

func (d *download) Write(p []byte) (int, error) {
	if !d.started {
		d.started = true
		d.w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		d.w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s"`, d.name))
	}
	return d.w.Write(p)
}

// importPage is New import. Its source and profile are those the URL
// gives (a run's "Apply these changes", a skipped page's take-over, the
// mapping editor's profile file), kept as given; else the page proposes
// them once it has read the export (recognise.go), never a default.
func (s *Server) importPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	// ?profile= names a built-in profile or a profile file (as `run
	// --profile` reads it: runs.ResolveProfile), such as the one the
	// mapping editor saved.
	prof, file := q.Get("profile"), ""
	if prof != "" && !slices.Contains(profile.BuiltinNames(), prof) {
		prof, file = "", prof
	}
	// The tenant is chosen among the existing ones (issue 27 item 3).
	ts, err := runs.Tenants(r.Context(), s.ro)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	kinds, err := planKinds()
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	var tenants []string
	for _, t := range ts {
		tenants = append(tenants, t.Tenant)
	}
	// ?update=1&from=RUN: the run page's "Apply these changes" (update.go).
	s.render(w, "import", page{Title: "New import", Nav: "import", Data: struct {
		Path, Tenant, Source, Profile, ProfileFile, Only string
		Profiles                                         []string
		Uploads                                          string
		Update                                           bool
		From                                             string
		Kinds                                            string
		Tenants                                          []string
	}{q.Get("path"), q.Get("tenant"), q.Get("source"), prof, file, q.Get("only"), profile.BuiltinNames(), s.folderWords(uploadsFolder),
		q.Get("update") == "1", q.Get("from"), kinds, tenants}})
}

func (s *Server) ledgerPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d, err := forensics.Doctor(r.Context(), s.ro, s.eng, s.doctorOptions(q.Get("tenant")))
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	data := struct {
		Diagnosis              *forensics.Diagnosis
		Tenant, Kind, SourceID string
		Kinds                  []string
		Grouping, Story, Error string
	}{Diagnosis: d, Tenant: q.Get("tenant"), Kind: q.Get("kind"), SourceID: q.Get("source_id")}
	for _, k := range canon.Kinds() {
		data.Kinds = append(data.Kinds, string(k))
	}
	if data.Tenant != "" {
		var b bytes.Buffer
		kind := ledger.Kind(data.Kind)
		if data.SourceID != "" {
			st, err := forensics.StoryOf(r.Context(), s.ro, s.eng, data.Tenant, kind, data.SourceID)
			if err != nil {
				data.Error = err.Error()
			} else {
				forensics.WriteStory(&b, st)
				data.Story = b.String()
			}
		} else {
			g, err := forensics.Why(r.Context(), s.ro, s.eng, data.Tenant, kind, 0)
			if err != nil {
				data.Error = err.Error()
			} else {
				forensics.WriteGrouping(&b, g)
				data.Grouping = b.String()
			}
		}
	}
	s.render(w, "ledger", page{Title: "Ledger", Nav: "ledger", Data: data})
}

func (s *Server) profilesPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, "profiles", page{Title: "Profiles", Nav: "profiles", Data: struct{ Names []string }{profile.BuiltinNames()}})
}

func (s *Server) profilePage(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	p, err := profile.Builtin(name)
	if err != nil {
		s.refuse(w, r, http.StatusNotFound, fmt.Sprintf("no built-in profile %q (see /profiles)", name))
		return
	}
	s.render(w, "profile", page{Title: "Profile " + name, Nav: "profiles", Data: struct{ Name, Text string }{name, string(p.Text())}})
}

// static serves the page's own script and style, nothing else.
func (s *Server) static(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	if name != path.Base(name) || strings.HasPrefix(name, ".") {
		s.refuse(w, r, http.StatusNotFound, "no such file")
		return
	}
	b, err := fs.ReadFile(s.assets, "static/"+name)
	if err != nil {
		s.refuse(w, r, http.StatusNotFound, "no such file")
		return
	}
	w.Header().Set("Content-Type", mime.TypeByExtension(path.Ext(name)))
	_, _ = w.Write(b) // the client went away: nothing to tell it
}

package desktop

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"crmimport/canon"
	"crmimport/fixfile"
	"crmimport/ledger"
	"crmimport/report"
	"crmimport/runs"
)

// Fixed rows (SPEC §9, *Failed records*): the rows a person edited on the
// page are written as a one-file fix folder (fixfile.WriteEdited) in a
// private folder (beside the database: privateFolder), and a normal run over it — the
// failed run's tenant, source and profile, --only the rows' kinds — works
// in this process, through the ledger (R2-R4: nothing already imported is
// touched). One file at a time: a fix folder of edited rows holds one file,
// and R13 admits one run per tenant. The page then asks what became of
// each row (fixfile.Outcomes) until the run ends.

// fixesFolder is the private folder that holds the fix folders of edited
// rows (privateFolder: beside the database, as the uploads' folder).
const fixesFolder = "fixes"

// fixRequest is what POST /api/runs/{id}/fix takes: the edited rows of
// one file of the run (its Failure.File), each its failure id and the
// cells it changes.
type fixRequest struct {
	File string              `json:"file"`
	Rows []fixfile.EditedRow `json:"rows"`
}

// apiFix writes the edited rows of one file of run {id} as a fix folder
// and plans a run over it (R10: committed before this answers), which
// works in this process. A row that is not a failed row of that file, or a
// cell that is not a column of it, is a bad request (400); a tenant with a
// live run answers 409 (R13), and the folder written for it is taken back.
func (s *Server) apiFix(w http.ResponseWriter, r *http.Request) {
	id := s.runID(w, r)
	if id == 0 {
		return
	}
	var q fixRequest
	if err := readRequest(r, &q); err != nil {
		s.fail(w, err)
		return
	}
	fix, dir, err := s.startFix(r.Context(), id, q)
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"run": fix.ID, "status": fix.Status, "folder": dir,
		"url": "/runs/" + strconv.FormatInt(fix.ID, 10), "outcomes": fmt.Sprintf("/api/runs/%d/fix-outcomes", fix.ID)})
}

// checkFix reads the request against the run's failed records: a file, at
// least one row, each a failure of the run and of that file, once. It
// returns the kinds of those failures, in plan order: a file may feed
// several kinds (SPEC §4), and a line that two of them failed is one row.
func (s *Server) checkFix(ctx context.Context, id int64, q fixRequest) (runs.Run, []ledger.Kind, error) {
	run, err := runs.LoadRun(ctx, s.ro, id)
	if err != nil {
		return run, nil, err
	}
	if strings.TrimSpace(q.File) == "" {
		return run, nil, badRequest("file is empty: the file of the failed rows, as the failed records name it")
	}
	if len(q.Rows) == 0 {
		return run, nil, badRequest("rows is empty: no edited row to re-import")
	}
	// Only the rows asked are read (issue 23 item 15: a fix of one row of a
	// run that failed 400,000 read them all, twice).
	ids := make([]int64, len(q.Rows))
	for i, row := range q.Rows {
		ids[i] = row.Failure
	}
	fails, err := report.FailuresByID(ctx, s.ro, id, ids)
	if err != nil {
		return run, nil, err
	}
	byID := map[int64]report.Failure{}
	for _, f := range fails {
		byID[f.ID] = f
	}
	asked := map[ledger.Kind]bool{}
	seen := map[int64]bool{}
	for _, row := range q.Rows {
		f, ok := byID[row.Failure]
		switch {
		case !ok:
			return run, nil, badRequest("failure %d is not a failed record of run %d", row.Failure, id)
		case f.File != q.File:
			return run, nil, badRequest("failure %d of run %d is a row of %s, not of %s: re-import the rows of each file on their own",
				row.Failure, id, f.File, q.File)
		case seen[row.Failure]:
			return run, nil, badRequest("failure %d is in the request twice", row.Failure)
		}
		k, err := canon.ParseKind(f.Kind)
		if err != nil {
			return run, nil, badRequest("failure %d: %v", row.Failure, err)
		}
		seen[row.Failure], asked[k] = true, true
	}
	var kinds []ledger.Kind
	for _, k := range canon.Kinds() {
		if asked[k] {
			kinds = append(kinds, k)
		}
	}
	return run, kinds, nil
}

// fixOutcomes is what GET /api/runs/{id}/fix-outcomes answers.
type fixOutcomes struct {
	Run     int64  `json:"run"`
	FromRun int64  `json:"from_run"` // the run whose failed rows the folder holds
	Status  string `json:"status"`
	// Done: the run has ended (or its process is gone); until then a row
	// it has not read yet is "pending".
	Done     bool              `json:"done"`
	Folder   string            `json:"folder"`
	URL      string            `json:"url"`
	Outcomes []fixfile.Outcome `json:"outcomes"`
}

// apiFixOutcomes tells what became of each row of the fix folder run {id}
// reads — imported, unchanged, skipped or failed with its reason — as
// the run works (fixfile.Outcomes through the read pool).
func (s *Server) apiFixOutcomes(w http.ResponseWriter, r *http.Request) {
	id := s.runID(w, r)
	if id == 0 {
		return
	}
	run, err := runs.LoadRun(r.Context(), s.ro, id)
	if err != nil {
		s.fail(w, err)
		return
	}
	man, folder, err := runs.FixFolderOf(run)
	if err != nil {
		s.fail(w, err)
		return
	}
	if man == nil {
		s.refuse(w, r, http.StatusNotFound, fmt.Sprintf("run %d did not read a fix folder: it has no fixed rows to tell of", id))
		return
	}
	out, err := fixfile.Outcomes(r.Context(), s.ro, id)
	if err != nil {
		s.fail(w, err)
		return
	}
	s.mu.Lock()
	here := s.live[id]
	s.mu.Unlock()
	// A run this server works on is live from its plan on; another
	// process's is live while its owner is (R13: else interrupted).
	done := run.Status.Terminal() || (!here && s.eng.Interrupted(run))
	if !done {
		for i := range out {
			if out[i].Outcome == "not read" {
				out[i].Outcome = "pending"
			}
		}
	}
	writeJSON(w, http.StatusOK, fixOutcomes{Run: id, FromRun: man.Run, Status: string(run.Status), Done: done, Folder: folder,
		URL: "/runs/" + strconv.FormatInt(id, 10), Outcomes: out})
}

package desktop

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"crmimport/canon"
	"crmimport/fixfile"
	"crmimport/grid"
	"crmimport/report"
	"crmimport/runs"
)

// The review grid of a run's failed and skipped records (SPEC §9, *Failed
// records*; issue 27 item 1; package grid): a page that holds one page of
// rows, which its script (static/grid.js) asks the API for — the server
// pages, never the browser holding all rows. Edits and bulk operations
// are kept in the database (record_edits) until *Re-import* runs them
// through the ledger as the single-row fixes do (a fix folder, a run).

// gridPage is the page's shell: the rows come from /api/runs/{id}/grid.
func (s *Server) gridPage(w http.ResponseWriter, r *http.Request) {
	id := s.runID(w, r)
	if id == 0 {
		return
	}
	run, err := runs.LoadRun(r.Context(), s.ro, id)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	var kinds []string
	for _, k := range canon.Kinds() {
		kinds = append(kinds, string(k))
	}
	s.render(w, "grid", page{Title: fmt.Sprintf("Review grid of run %d", id), Nav: "runs", Data: struct {
		Run    int64
		Tenant string
		Fixes  string
		Kinds  []string
	}{id, run.Tenant, s.folderWords(fixesFolder), kinds}})
}

// gridQuery reads a page of the grid from a request's query: file, kind,
// reason (a class), id (a source id, whole), value (in any cell), column
// and has (a column holding a text), sort (line, reason, source_id,
// column) and by (its column), desc, offset and limit.
func gridQuery(v url.Values) (grid.Query, error) {
	q := grid.Query{File: v.Get("file"), Class: v.Get("reason"), SourceID: strings.TrimSpace(v.Get("id")),
		Value: v.Get("value"), Column: v.Get("column"), Has: v.Get("has"), Sort: v.Get("sort"), By: v.Get("by"),
		Desc: v.Get("desc") == "1"}
	var err error
	if q.Kind, err = kindParam(v); err != nil {
		return q, err
	}
	if s := v.Get("offset"); s != "" {
		if q.Offset, err = strconv.ParseInt(s, 10, 64); err != nil || q.Offset < 0 {
			return q, badRequest("offset=%q is not a row's place (0 is the first)", s)
		}
	}
	if s := v.Get("limit"); s != "" {
		if q.Limit, err = strconv.Atoi(s); err != nil || q.Limit < 1 || q.Limit > grid.MaxPage {
			return q, badRequest("limit=%q: a page holds 1 to %d rows", s, grid.MaxPage)
		}
	}
	return q, nil
}

// gridFailed answers a bad query as a bad request, anything else as it is.
func gridFailed(err error) error {
	if errors.Is(err, grid.ErrBadQuery) {
		return badRequest("%v", err)
	}
	return err
}

func (s *Server) apiGrid(w http.ResponseWriter, r *http.Request) {
	id := s.runID(w, r)
	if id == 0 {
		return
	}
	q, err := gridQuery(r.URL.Query())
	if err != nil {
		s.fail(w, err)
		return
	}
	p, err := grid.Page(r.Context(), s.ro, id, q)
	if err != nil {
		s.fail(w, gridFailed(err))
		return
	}
	writeJSON(w, http.StatusOK, p)
}

// editsRequest is what POST /api/runs/{id}/grid/edits takes: the cells
// changed, per failed row.
type editsRequest struct {
	Rows []fixfile.EditedRow `json:"rows"`
}

// apiGridEdits keeps the cells a person changed in the database (one
// transaction), where a refresh or a restart finds them.
func (s *Server) apiGridEdits(w http.ResponseWriter, r *http.Request) {
	id := s.runID(w, r)
	if id == 0 {
		return
	}
	var q editsRequest
	if err := readRequest(r, &q); err != nil {
		s.fail(w, err)
		return
	}
	if len(q.Rows) == 0 {
		s.fail(w, badRequest("rows is empty: no edited cell to keep"))
		return
	}
	n, err := grid.SaveEdits(r.Context(), s.db, id, q.Rows, time.Now())
	if err != nil {
		s.fail(w, gridFailed(err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"run": id, "cells": n})
}

// bulkRequest is what POST /api/runs/{id}/grid/bulk takes: the rows (the
// grid's filters, as its query names them), the operation, and save
// (false: a preview).
type bulkRequest struct {
	Filters map[string]string `json:"filters"`
	grid.Op
	Save bool `json:"save"`
}

// apiGridBulk previews a bulk operation on the rows the filters choose (a
// count and the first changes, before and after), or saves it: the same
// pass either way (grid.Bulk).
func (s *Server) apiGridBulk(w http.ResponseWriter, r *http.Request) {
	id := s.runID(w, r)
	if id == 0 {
		return
	}
	var b bulkRequest
	if err := readRequest(r, &b); err != nil {
		s.fail(w, err)
		return
	}
	v := url.Values{}
	for k, x := range b.Filters {
		v.Set(k, x)
	}
	q, err := gridQuery(v)
	if err != nil {
		s.fail(w, err)
		return
	}
	if b.Op.Op == grid.OpEncoding {
		if b.Op.Command, err = s.encodingCommand(r.Context(), id, b.Op.Encoding); err != nil {
			s.fail(w, err)
			return
		}
	}
	writer := s.db
	if !b.Save {
		writer = nil
	}
	res, err := grid.Bulk(r.Context(), s.ro, writer, id, q, b.Op, time.Now())
	if err != nil {
		s.fail(w, gridFailed(err))
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// encodingCommand is the command line that imports run id's export again
// in enc; "" when the run names no export here. Never with --update: in a
// UTF-8 file with a few stray bytes, another encoding would read the rows
// that imported well with other letters — such a record is told outdated
// (R17) and nothing is written over it until the user applies what they
// checked.
func (s *Server) encodingCommand(ctx context.Context, id int64, enc string) (string, error) {
	run, err := runs.LoadRun(ctx, s.ro, id)
	if err != nil {
		return "", err
	}
	opts, err := runs.OptionsOf(run)
	if err != nil || opts.Input == "" {
		return "", nil
	}
	words := []string{"crmimport", "--db", commandDB(s.cfg.DBPath), "run", "--tenant", run.Tenant, "--source", run.Source}
	if opts.Profile != "" && opts.Profile != run.Source {
		words = append(words, "--profile", opts.Profile)
	}
	words = append(words, "--encoding", enc, opts.Input)
	return report.ShellCommand(words...), nil
}

// reimportRequest is what POST /api/runs/{id}/grid/reimport takes: the
// file whose edited rows go ("" for the first file with edits waiting).
type reimportRequest struct {
	File string `json:"file"`
}

// apiGridReimport re-imports the edited rows of one file of run {id} that
// wait (every edit of each, from the database): a fix folder and a normal
// run over it (apiFix's way: R2-R4), after which the edits name that run
// and each row shows what it made of it.
func (s *Server) apiGridReimport(w http.ResponseWriter, r *http.Request) {
	id := s.runID(w, r)
	if id == 0 {
		return
	}
	var q reimportRequest
	if err := readRequest(r, &q); err != nil {
		s.fail(w, err)
		return
	}
	ctx := r.Context()
	if q.File == "" {
		p, err := grid.Page(ctx, s.ro, id, grid.Query{Limit: 1})
		if err != nil {
			s.fail(w, err)
			return
		}
		if len(p.Pending) > 0 {
			q.File = p.Pending[0].File
		}
	}
	rows, err := grid.Pending(ctx, s.ro, id, q.File)
	if err != nil {
		s.fail(w, err)
		return
	}
	if len(rows) == 0 {
		s.fail(w, badRequest("no edited row of %q waits for a re-import", q.File))
		return
	}
	fix, dir, err := s.startFix(ctx, id, fixRequest{File: q.File, Rows: rows})
	if err != nil {
		s.fail(w, err)
		return
	}
	if err := grid.MarkSent(ctx, s.db, id, fix.ID, rows); err != nil {
		// The run reads the rows all the same: the page would offer them
		// again, and their outcome is on the run's page.
		s.fail(w, fmt.Errorf("run %d re-imports the rows, but their edits could not be marked so: %w", fix.ID, err))
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"run": fix.ID, "status": fix.Status, "folder": dir, "rows": len(rows), "file": q.File,
		"url": "/runs/" + strconv.FormatInt(fix.ID, 10), "outcomes": fmt.Sprintf("/api/runs/%d/fix-outcomes", fix.ID)})
}

// startFix writes edited rows of one file of run id as a fix folder and
// starts a run over it, which works in this process (apiFix, and the
// grid's re-import). A refused plan takes the folder back.
func (s *Server) startFix(ctx context.Context, id int64, q fixRequest) (runs.Run, string, error) {
	run, kinds, err := s.checkFix(ctx, id, q)
	if err != nil {
		return runs.Run{}, "", err
	}
	base, err := s.privateFolder(fixesFolder)
	if err != nil {
		return runs.Run{}, "", err
	}
	dir, err := fixfile.WriteEdited(ctx, s.ro, id, q.File, q.Rows, base)
	if err != nil {
		var pe *fs.PathError
		if !errors.As(err, &pe) && ctx.Err() == nil {
			err = badRequest("%v", err) // a cell that is not a column of the file, a run with no input here
		}
		return runs.Run{}, "", err
	}
	spec, cleanup, err := runs.FixSpec(run, kinds, dir, base)
	if err == nil {
		var fix runs.Run
		if fix, err = runs.Start(ctx, s.eng, spec); err == nil {
			s.work(fix.ID)
			return fix, dir, nil
		}
	}
	// No run reads the folder: it goes (a refused plan leaves no run row).
	cleanup()
	_ = os.RemoveAll(dir) // under our own private folder; what is left there is only disk
	return runs.Run{}, "", err
}

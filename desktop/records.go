package desktop

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"crmimport/canon"
	"crmimport/forensics"
	"crmimport/ledger"
	"crmimport/runs"
)

// The pages of a run's records (SPEC §9, *Failed records* and the skipped
// records) and their API, paged in the database (issue 23 item 15): a
// page is read by keyset — ?after= the last record of the page before, or
// ?before= the first of the page after — never by offset, and its filters
// (?kind=, ?reason= a reason class), search (?id= a source id, whole, by an
// index; ?q= words of the reason, read in each record) and counts are the
// database's (forensics.PageFailures,
// PageSkips), so that a run of 400,000 failed records opens, pages and
// filters as fast as one of 40, in the memory of one page.

// failureQuery reads a page of failures from a request's query: kind,
// reason (a class), id (a source id, whole), q (words of the reason),
// after, before and limit (API only; the pages show forensics.MaxPage).
// What cannot be is a bad request.
func failureQuery(v url.Values) (forensics.FailureQuery, error) {
	q := forensics.FailureQuery{Class: v.Get("reason"), SourceID: strings.TrimSpace(v.Get("id")), Search: strings.TrimSpace(v.Get("q"))}
	var err error
	if q.Kind, err = kindParam(v); err != nil {
		return q, err
	}
	if q.After, err = idParam(v, "after"); err != nil {
		return q, err
	}
	if q.Before, err = idParam(v, "before"); err != nil {
		return q, err
	}
	q.Limit, err = limitParam(v)
	return q, err
}

// skipQuery reads a page of skips from a request's query: kind, id, q,
// after and before (KIND:SOURCE_ID, a skip's key) and limit.
func skipQuery(v url.Values) (forensics.SkipQuery, error) {
	q := forensics.SkipQuery{SourceID: strings.TrimSpace(v.Get("id")), Search: strings.TrimSpace(v.Get("q"))}
	var err error
	if q.Kind, err = kindParam(v); err != nil {
		return q, err
	}
	if q.After, err = skipKeyParam(v, "after"); err != nil {
		return q, err
	}
	if q.Before, err = skipKeyParam(v, "before"); err != nil {
		return q, err
	}
	q.Limit, err = limitParam(v)
	return q, err
}

func kindParam(v url.Values) (ledger.Kind, error) {
	s := v.Get("kind")
	if s == "" {
		return "", nil
	}
	k, err := canon.ParseKind(s)
	if err != nil {
		return "", badRequest("kind: %v", err)
	}
	return k, nil
}

func idParam(v url.Values, name string) (int64, error) {
	s := v.Get(name)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 {
		return 0, badRequest("%s=%q is not a failed record's id: follow the page's own links (next, prev)", name, s)
	}
	return n, nil
}

func skipKeyParam(v url.Values, name string) (*forensics.SkipKey, error) {
	s := v.Get(name)
	if s == "" {
		return nil, nil
	}
	kind, id, ok := strings.Cut(s, ":")
	k, err := canon.ParseKind(kind)
	if !ok || err != nil || id == "" {
		return nil, badRequest("%s=%q is not a skipped record's KIND:SOURCE_ID: follow the page's own links (next, prev)", name, s)
	}
	return &forensics.SkipKey{Kind: k, SourceID: id}, nil
}

func limitParam(v url.Values) (int, error) {
	s := v.Get("limit")
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > forensics.MaxPage {
		return 0, badRequest("limit=%q: a page holds 1 to %d records", s, forensics.MaxPage)
	}
	return n, nil
}

// pageFailed answers a bad page as a bad request, anything else as it is.
func pageFailed(err error) error {
	if errors.Is(err, forensics.ErrBadPage) {
		return badRequest("%v", err)
	}
	return err
}

// pager is where a page stands among the records it is a page of, and the
// links to the pages beside it (they keep the filters and the search).
type pager struct {
	First, Last, Total int64
	FirstURL           string // the first page, "" when this is it
	PrevURL, NextURL   string
}

func newPager(path string, filters url.Values, first, shown, total int64, prev, next string) pager {
	p := pager{First: first, Last: first + shown - 1, Total: total}
	link := func(key, value string) string {
		v := url.Values{}
		for k, vs := range filters {
			if len(vs) > 0 && vs[0] != "" {
				v.Set(k, vs[0])
			}
		}
		if key != "" {
			v.Set(key, value)
		}
		if len(v) == 0 {
			return path
		}
		return path + "?" + v.Encode()
	}
	if prev != "" {
		p.PrevURL = link("before", prev)
	}
	if first != 1 {
		// Past the first page, or past the last record (a link kept from
		// before the records changed): the way back to the first.
		p.FirstURL = link("", "")
	}
	if next != "" {
		p.NextURL = link("after", next)
	}
	return p
}

func (s *Server) failedPage(w http.ResponseWriter, r *http.Request) {
	id := s.runID(w, r)
	if id == 0 {
		return
	}
	q, err := failureQuery(r.URL.Query())
	if err != nil {
		s.refuse(w, r, http.StatusBadRequest, err.Error())
		return
	}
	q.Limit = forensics.MaxPage
	p, err := forensics.PageFailures(r.Context(), s.ro, id, q)
	if err != nil {
		s.pageError(w, r, pageFailed(err))
		return
	}
	// A run loaded from a dump counted failures whose rows it does not
	// carry: the page says so rather than list nothing. Its report is read
	// only then: it groups the failures by reason, which a run of this
	// database needs not.
	var unlisted string
	dump, err := runs.LoadedFrom(r.Context(), s.ro, id)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	if dump != "" {
		rep, err := runs.Report(r.Context(), s.ro, s.eng, id, false)
		if err != nil {
			s.pageError(w, r, err)
			return
		}
		unlisted = rep.UnlistedWords()
	}
	filters := url.Values{"kind": {string(q.Kind)}, "reason": {q.Class}, "id": {q.SourceID}, "q": {q.Search}}
	var prev, next string
	if p.Prev != 0 {
		prev = strconv.FormatInt(p.Prev, 10)
	}
	if p.Next != 0 {
		next = strconv.FormatInt(p.Next, 10)
	}
	s.render(w, "failed", page{Title: fmt.Sprintf("Failed records of run %d", id), Nav: "runs", Data: struct {
		Run                           int64
		Kind, Class, SourceID, Search string
		P                             *forensics.FailurePage
		Pager                         pager
		Fixes                         string
		Unlisted                      string // why failed records of a run loaded from a dump are not here (report.UnlistedWords)
	}{id, string(q.Kind), q.Class, q.SourceID, q.Search, p,
		newPager(fmt.Sprintf("/runs/%d/failed", id), filters, p.First, int64(len(p.Records)), p.Total, prev, next),
		s.folderWords(fixesFolder), unlisted}})
}

func (s *Server) apiFailed(w http.ResponseWriter, r *http.Request) {
	id := s.runID(w, r)
	if id == 0 {
		return
	}
	q, err := failureQuery(r.URL.Query())
	if err != nil {
		s.fail(w, err)
		return
	}
	p, err := forensics.PageFailures(r.Context(), s.ro, id, q)
	if err != nil {
		s.fail(w, pageFailed(err))
		return
	}
	// failed: the total, under the name this answer has always had.
	writeJSON(w, http.StatusOK, struct {
		*forensics.FailurePage
		Failed int64 `json:"failed"`
	}{p, p.Total})
}

func (s *Server) apiSkipped(w http.ResponseWriter, r *http.Request) {
	id := s.runID(w, r)
	if id == 0 {
		return
	}
	q, err := skipQuery(r.URL.Query())
	if err != nil {
		s.fail(w, err)
		return
	}
	p, err := forensics.PageSkips(r.Context(), s.ro, id, q)
	if err != nil {
		s.fail(w, pageFailed(err))
		return
	}
	writeJSON(w, http.StatusOK, p)
}

func (s *Server) skippedPage(w http.ResponseWriter, r *http.Request) {
	id := s.runID(w, r)
	if id == 0 {
		return
	}
	q, err := skipQuery(r.URL.Query())
	if err != nil {
		s.refuse(w, r, http.StatusBadRequest, err.Error())
		return
	}
	q.Limit = forensics.MaxPage
	p, err := forensics.PageSkips(r.Context(), s.ro, id, q)
	if err != nil {
		s.pageError(w, r, pageFailed(err))
		return
	}
	run, err := runs.LoadRun(r.Context(), s.ro, id)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	key := func(k *forensics.SkipKey) string {
		if k == nil {
			return ""
		}
		return string(k.Kind) + ":" + k.SourceID
	}
	data := struct {
		Run                    int64
		Kind, SourceID, Search string
		P                      *forensics.SkipPage
		Pager                  pager
		ReadyKinds             []string
		Path                   string
		ImportURL, Why         string
	}{Run: id, Kind: string(q.Kind), SourceID: q.SourceID, Search: q.Search, P: p,
		Pager: newPager(fmt.Sprintf("/runs/%d/skipped", id), url.Values{"kind": {string(q.Kind)}, "id": {q.SourceID}, "q": {q.Search}},
			p.First, int64(len(p.Records)), p.Total, key(p.Prev), key(p.Next))}
	for _, c := range p.Ready {
		data.ReadyKinds = append(data.ReadyKinds, c.Kind)
	}
	if p.ReadyTotal > 0 {
		// doctor's ready-to-take-over: a run of those kinds over the
		// original export takes the skips over (R3).
		opts, err := runs.OptionsOf(run)
		switch {
		case err != nil || opts.Input == "":
			data.Why = "the run names no export here (it was loaded from a dump): import an export of these records"
		default:
			data.Path = opts.Input
			if _, err := os.Stat(opts.Input); err != nil {
				data.Why = fmt.Sprintf("%s is not there any more: import an export of these records", opts.Input)
				break
			}
			var plurals []string
			for _, k := range data.ReadyKinds {
				plurals = append(plurals, ledger.Kind(k).Plural())
			}
			v := url.Values{"path": {opts.Input}, "tenant": {run.Tenant}, "source": {run.Source}, "profile": {opts.Profile},
				"only": {strings.Join(plurals, ",")}}
			data.ImportURL = "/import?" + v.Encode()
		}
	}
	s.render(w, "skipped", page{Title: fmt.Sprintf("Skipped records of run %d", id), Nav: "runs", Data: data})
}

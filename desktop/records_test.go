package desktop

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"crmimport/fixfile"
	"crmimport/importer"
	"crmimport/phases"
	"crmimport/report"
	"crmimport/store"
	"crmimport/store/storetest"
)

// manyFailures imports an export that fails 1,230 records: 1,000 contacts
// with an email that is no address (the first holding <script>), 200
// without a name or an email (after them: past the first page), and 30
// deals whose amount is no number; 70 records import.
func manyFailures(t *testing.T, ctx context.Context, db *sql.DB) {
	t.Helper()
	var contacts, deals strings.Builder
	contacts.WriteString("id,first_name,email,title\n")
	for i := 1; i <= 1200; i++ {
		switch title := "Buyer"; {
		case i == 1:
			fmt.Fprintf(&contacts, "c-%04d,Ann,ann%d(at)example.com,<script>alert(1)</script>\n", i, i)
		case i <= 1000:
			fmt.Fprintf(&contacts, "c-%04d,Ann,ann%d(at)example.com,%s\n", i, i, title)
		default:
			fmt.Fprintf(&contacts, "c-%04d,,,%s\n", i, title)
		}
	}
	contacts.WriteString("c-9001,Bob,bob@example.com,Boss\n")
	deals.WriteString("id,name,amount\n")
	for i := 1; i <= 99; i++ {
		amount := "12.50"
		if i <= 30 {
			amount = fmt.Sprintf("%d euros", i)
		}
		fmt.Fprintf(&deals, "d-%03d,Deal %d,%s\n", i, i, amount)
	}
	imp := importer.New(phases.New(db, nil))
	run, err := imp.Plan(ctx, importer.RunSpec{Tenant: "acme", Source: "canonical", BatchSize: 500,
		Input: writeFiles(t, map[string]string{"contacts.csv": contacts.String(), "deals.csv": deals.String()})})
	require.NoError(t, err)
	_, err = imp.Execute(ctx, run.ID)
	require.NoError(t, err)
}

// failedAnswer is GET /api/runs/{id}/failed's answer.
type failedAnswer struct {
	Run     int64 `json:"run"`
	Failed  int64 `json:"failed"`
	Total   int64 `json:"total"`
	First   int64 `json:"first"`
	Next    int64 `json:"next"`
	Prev    int64 `json:"prev"`
	Records []struct {
		ID       int64  `json:"id"`
		Kind     string `json:"kind"`
		SourceID string `json:"source_id"`
		Reason   string `json:"reason"`
		Class    string `json:"class"`
	} `json:"records"`
	Kinds []struct {
		Kind  string `json:"kind"`
		Count int64  `json:"count"`
	} `json:"kinds"`
	Reasons []struct {
		Reason string `json:"reason"`
		Count  int64  `json:"count"`
	} `json:"reasons"`
	Error string `json:"error"`
}

// pageBody is the page at path, which must answer 200.
func (s *Server) pageBody(t *testing.T, path string) string {
	t.Helper()
	w := s.do(t, req{http.MethodGet, path, s.addr, nil, true})
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	return w.Body.String()
}

func (s *Server) failed(t *testing.T, query string) failedAnswer {
	t.Helper()
	w := s.do(t, req{http.MethodGet, "/api/runs/1/failed?" + query, s.addr, nil, true})
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	return decode[failedAnswer](t, w)
}

func queryColumn(t *testing.T, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(q, args...)
	require.NoError(t, err)
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		out = append(out, s)
	}
	require.NoError(t, rows.Err())
	return out
}

// TestFailedRecordsPageInTheDatabase: issue 23 item 15. The Failed
// records of a run are paged in the database by keyset (after / before
// a failure's id), filtered by kind and reason class and searched by
// source id and reason text there, and every count — the total, per kind,
// per reason — is the database's over every failure, not what one page
// holds; a page holds at most its size (MaxPage). Before, the page and the
// API stopped at the first 500 with no way on, and the page built its
// filters from every failure loaded into memory.
func TestFailedRecordsPageInTheDatabase(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		ctx := context.Background()
		db, err := store.Open(ctx, addr)
		require.NoError(t, err)
		manyFailures(t, ctx, db)
		s, err := New(ctx, Config{DBPath: addr, Folder: t.TempDir()})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })
		all := queryColumn(t, db, `SELECT id FROM record_failures WHERE migration_id = 1 ORDER BY id`)
		require.Len(t, all, 1230)

		// Forward through every page, then back: each failure once, in
		// the order they failed, each page at its place.
		var seen []string
		var pages []failedAnswer
		for q := ""; ; {
			p := s.failed(t, q)
			require.LessOrEqual(t, len(p.Records), 500, "a page holds at most its size")
			require.Equal(t, int64(1230), p.Total)
			require.Equal(t, p.Total, p.Failed)
			require.Equal(t, int64(len(seen)+1), p.First)
			for _, r := range p.Records {
				seen = append(seen, strconv.FormatInt(r.ID, 10))
			}
			pages = append(pages, p)
			if p.Next == 0 {
				break
			}
			require.Equal(t, p.Records[len(p.Records)-1].ID, p.Next)
			q = "after=" + strconv.FormatInt(p.Next, 10)
		}
		require.Equal(t, all, seen, "every failure, once, in order")
		require.Len(t, pages, 3)
		require.Zero(t, pages[0].Prev)
		for i := len(pages) - 1; i > 0; i-- {
			back := s.failed(t, "before="+strconv.FormatInt(pages[i].Prev, 10))
			require.Equal(t, pages[i-1].Records, back.Records, "the page before page %d", i+1)
			require.Equal(t, pages[i-1].First, back.First)
		}

		// The counts: the database's, per kind and per reason class.
		p := pages[2]
		kinds := map[string]int64{}
		for _, k := range p.Kinds {
			kinds[k.Kind] = k.Count
		}
		require.Equal(t, map[string]int64{"contact": 1200, "deal": 30}, kinds)
		reasons := map[string]int64{}
		for _, r := range p.Reasons {
			reasons[r.Reason] = r.Count
		}
		noName := "contact has neither a name nor an email"
		require.Equal(t, map[string]int64{`email "…" is not an email address`: 1000, noName: 200,
			`amount "…" is not a number (use digits and a dot, e.g. 12000.50)`: 30}, reasons)

		// A reason class all of whose failures are past the first page.
		byClass := s.failed(t, "reason="+url.QueryEscape(noName))
		require.Equal(t, int64(200), byClass.Total)
		require.Len(t, byClass.Records, 200)
		for _, r := range byClass.Records {
			require.Equal(t, noName, r.Class)
		}
		require.Equal(t, []struct {
			Kind  string `json:"kind"`
			Count int64  `json:"count"`
		}{{"contact", 200}}, byClass.Kinds, "per kind, within the reason chosen")
		byKind := s.failed(t, "kind=deal&limit=7")
		require.Equal(t, int64(30), byKind.Total)
		require.Len(t, byKind.Records, 7)
		require.Equal(t, "d-001", byKind.Records[0].SourceID)
		next := s.failed(t, "kind=deal&limit=7&after="+strconv.FormatInt(byKind.Next, 10))
		require.Equal(t, "d-008", next.Records[0].SourceID)
		require.Equal(t, int64(8), next.First)

		// Search: by source id (the whole id), by words of the reason in
		// any case; LIKE's own wildcards are only text.
		one := s.failed(t, "id=c-0777")
		require.Len(t, one.Records, 1)
		require.Equal(t, "c-0777", one.Records[0].SourceID)
		require.Equal(t, int64(1), one.Total)
		require.Empty(t, s.failed(t, "id=c-077").Records, "an id is found whole")
		require.Empty(t, s.failed(t, "id=c-0777&kind=deal").Records)
		text := s.failed(t, "q="+url.QueryEscape("(AT)EXAMPLE"))
		require.Equal(t, int64(1000), text.Total)
		require.Len(t, text.Records, 500)
		require.Equal(t, int64(1000), text.Kinds[0].Count)
		require.Equal(t, int64(1), s.failed(t, "q="+url.QueryEscape("ann777(at)")).Total)
		require.Empty(t, s.failed(t, "q="+url.QueryEscape("ann77_(at)")).Records, "_ is a character, not a wildcard")
		require.Empty(t, s.failed(t, "q="+url.QueryEscape("ann%(at)")).Records, "% is a character, not a wildcard")

		// The page: a pager that says where it is, a search box, filters
		// with their counts, every value escaped.
		w := s.do(t, req{http.MethodGet, "/runs/1/failed?after=" + all[499], s.addr, nil, true})
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		html := w.Body.String()
		holds(t, html, "Rows 501–1,000 of 1,230")
		holds(t, html, `href="/runs/1/failed?after=`+all[999]+`"`)
		holds(t, html, `href="/runs/1/failed?before=`+all[500]+`"`)
		holds(t, html, `<input type="search" name="id"`)
		holds(t, html, `<input type="search" name="q"`)
		holds(t, html, ">contact (1,200)</option>")
		holds(t, html, ">contact has neither a name nor an email (200)</option>")
		// A link kept from before the records changed, past the last one.
		stale := s.pageBody(t, "/runs/1/failed?after="+all[len(all)-1])
		holds(t, stale, "No rows here of 1,230")
		holds(t, stale, `<a class="button" href="/runs/1/failed" rel="first">`)
		holds(t, stale, "No failed records past the one this page follows: go back to the first page.")
		w = s.do(t, req{http.MethodGet, "/runs/1/failed", s.addr, nil, true})
		holdsNot(t, w.Body.String(), "<script>alert(1)</script>", "export data is escaped")
		holdsNot(t, w.Body.String(), `rel="first"`, "the first page has no way to itself")
		holds(t, w.Body.String(), "&lt;script&gt;alert(1)&lt;/script&gt;")

		// A page that cannot be: said so, as a bad request.
		for _, q := range []string{"after=x", "after=1&before=2", "limit=501", "limit=-1", "kind=bogus"} {
			w := s.do(t, req{http.MethodGet, "/api/runs/1/failed?" + q, s.addr, nil, true})
			require.Equal(t, http.StatusBadRequest, w.Code, "%s: %s", q, w.Body.String())
			require.NotEmpty(t, decode[failedAnswer](t, w).Error)
		}
	})
}

// skippedAnswer is GET /api/runs/{id}/skipped's answer.
type skippedAnswer struct {
	Total int64 `json:"total"`
	First int64 `json:"first"`
	Next  *struct {
		Kind     string `json:"kind"`
		SourceID string `json:"source_id"`
	} `json:"next"`
	Records []struct {
		Kind     string   `json:"kind"`
		SourceID string   `json:"source_id"`
		Ready    []string `json:"ready"`
	} `json:"records"`
	Kinds []struct {
		Kind  string `json:"kind"`
		Count int64  `json:"count"`
	} `json:"kinds"`
	ReadyTotal int64 `json:"ready_total"`
}

// TestSkippedRecordsPageInTheDatabase: issue 23 item 15. The Skipped
// page's kind filter and its *Ready to take over* banner come from the
// database over every skip the run owns, not from the first 500 rows; the
// skips are paged by keyset (kind in plan order, then source id) and
// searched there. Here 600 notes wait for a contact that never comes and
// fill the first page; 5 activities, after them, wait for c-9, which a
// later run imports.
func TestSkippedRecordsPageInTheDatabase(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		ctx := context.Background()
		db, err := store.Open(ctx, addr)
		require.NoError(t, err)
		var notes, activities strings.Builder
		notes.WriteString("id,body,contact_id\n")
		for i := 1; i <= 600; i++ {
			fmt.Fprintf(&notes, "n-%04d,Called,c-absent\n", i)
		}
		activities.WriteString("id,type,subject,contact_id\n")
		for i := 1; i <= 5; i++ {
			fmt.Fprintf(&activities, "a-%d,call,Call back,c-9\n", i)
		}
		imp := importer.New(phases.New(db, nil))
		first := writeFiles(t, map[string]string{"notes.csv": notes.String(), "activities.csv": activities.String()})
		for _, in := range []string{first, writeFiles(t, map[string]string{"contacts.csv": "id,first_name\nc-9,Ann\n"})} {
			run, err := imp.Plan(ctx, importer.RunSpec{Tenant: "acme", Source: "canonical", Input: in, BatchSize: 500})
			require.NoError(t, err)
			_, err = imp.Execute(ctx, run.ID)
			require.NoError(t, err)
		}
		s, err := New(ctx, Config{DBPath: addr, Folder: t.TempDir()})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })

		w := s.do(t, req{http.MethodGet, "/runs/1/skipped", s.addr, nil, true})
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		html := w.Body.String()
		holds(t, html, "Ready to take over")
		holds(t, html, "5 records wait for parents that are imported now (activity)")
		holds(t, html, `href="/import?only=activities&amp;path=`)
		holds(t, html, ">activity (5)</option>", "the kind filter knows the kinds past the first page")
		holds(t, html, ">note (600)</option>")
		holds(t, html, "Rows 1–500 of 605")

		get := func(q string) skippedAnswer {
			t.Helper()
			w := s.do(t, req{http.MethodGet, "/api/runs/1/skipped?" + q, s.addr, nil, true})
			require.Equal(t, http.StatusOK, w.Code, w.Body.String())
			return decode[skippedAnswer](t, w)
		}
		var seen []string
		for q := ""; ; {
			p := get(q)
			require.LessOrEqual(t, len(p.Records), 500)
			require.Equal(t, int64(605), p.Total)
			require.Equal(t, int64(5), p.ReadyTotal)
			require.Equal(t, int64(len(seen)+1), p.First)
			for _, r := range p.Records {
				seen = append(seen, r.Kind+"/"+r.SourceID)
			}
			if p.Next == nil {
				break
			}
			q = "after=" + url.QueryEscape(p.Next.Kind+":"+p.Next.SourceID)
		}
		require.Len(t, seen, 605)
		require.Equal(t, "note/n-0001", seen[0])
		require.Equal(t, "note/n-0600", seen[599])
		require.Equal(t, []string{"activity/a-1", "activity/a-2", "activity/a-3", "activity/a-4", "activity/a-5"}, seen[600:])

		acts := get("kind=activity")
		require.Len(t, acts.Records, 5)
		require.Equal(t, []string{"contact"}, acts.Records[0].Ready)
		found := get("id=n-0599")
		require.Len(t, found.Records, 1)
		require.Equal(t, "n-0599", found.Records[0].SourceID)
		require.Equal(t, int64(1), found.Total)
		require.Empty(t, get("id=n-0599&kind=activity").Records)
		require.Equal(t, int64(605), get("q="+url.QueryEscape("NOT LINKED")).Total)
		require.Zero(t, get("q=absent").Total, "the reason is searched, not what the skip waits for")
		html = s.pageBody(t, "/runs/1/skipped?kind=note&after="+url.QueryEscape("note:n-0500"))
		holds(t, html, "Rows 501–600 of 600")
		holds(t, html, `href="/runs/1/skipped?before=note%3An-0501&amp;kind=note"`)
	})
}

// holds fails the test when the page does not hold s (and does not print
// the whole page).
func holds(t *testing.T, page, s string, why ...any) {
	t.Helper()
	if !strings.Contains(page, s) {
		t.Fatalf("the page does not hold %q %v", s, why)
	}
}

// holdsNot fails the test when the page holds s.
func holdsNot(t *testing.T, page, s string, why ...any) {
	t.Helper()
	if strings.Contains(page, s) {
		t.Fatalf("the page holds %q %v", s, why)
	}
}

// peakHeap runs f and tells the most heap it took above what was live
// before, read every millisecond (runtime/metrics), with the garbage
// collector kept close behind (GOGC=10) so that what is counted is what f
// holds. The tests that call it do not run in parallel: the heap is the
// process's.
func peakHeap(f func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	base := read()
	var peak atomic.Uint64
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if v := read(); v > peak.Load() {
					peak.Store(v)
				}
			}
		}
	}()
	f()
	close(done)
	<-stopped
	if v := read(); v > peak.Load() {
		peak.Store(v)
	}
	if peak.Load() < base {
		return 0
	}
	return peak.Load() - base
}

// TestThePageAndAFixHoldAPage: issue 23 item 15. With 60,000 failed
// records, the Failed records page holds the records of one page, and a
// fix of one row (POST /api/runs/{id}/fix: checkFix, then
// fixfile.WriteEdited) reads that row and the run, not every failure:
// each takes a few MiB of heap, as with 60 (before, each read every
// failure into memory, twice: 540 and 580 MiB at 400,000).
func TestThePageAndAFixHoldAPage(t *testing.T) {
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		ctx := context.Background()
		db, err := store.Open(ctx, addr)
		require.NoError(t, err)
		var b strings.Builder
		b.WriteString("id,first_name,last_name,email,title\n")
		for i := 1; i <= 10; i++ {
			fmt.Fprintf(&b, "c-%d,Ann,Lee,ann%d(at)example.com,\"Head of sales, EMEA\"\n", i, i)
		}
		imp := importer.New(phases.New(db, nil))
		run, err := imp.Plan(ctx, importer.RunSpec{Tenant: "acme", Source: "canonical", BatchSize: 100,
			Input: writeFiles(t, map[string]string{"contacts.csv": b.String()})})
		require.NoError(t, err)
		_, err = imp.Execute(ctx, run.ID)
		require.NoError(t, err)
		const n = 60000
		_, err = db.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
INSERT INTO record_failures (migration_id, task_id, kind, source_id, file, line, reason, reason_class, raw)
SELECT f.migration_id, f.task_id, f.kind, 'more-' || n.i || '-' || f.source_id, f.file, f.line + 10 * n.i, f.reason, f.reason_class, f.raw
FROM record_failures f CROSS JOIN n WHERE f.migration_id = 1`, n/10-1)
		require.NoError(t, err)
		s, err := New(ctx, Config{DBPath: addr, Folder: t.TempDir()})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })

		var w *httptest.ResponseRecorder
		heap := peakHeap(func() { w = s.do(t, req{http.MethodGet, "/runs/1/failed?after=30000", s.addr, nil, true}) })
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		t.Logf("a page of %d failed records: peak heap %.1f MiB", n, float64(heap)/(1<<20))
		require.Less(t, heap, uint64(16<<20), "the page holds one page of records")
		holds(t, w.Body.String(), "Rows 30,001–30,500 of 60,000")

		var dir string
		heap = peakHeap(func() {
			q := fixRequest{File: "contacts.csv", Rows: []fixfile.EditedRow{{Failure: 5, Cells: []report.RawCell{{Name: "email", Value: "ann5@example.com"}}}}}
			_, _, err = s.checkFix(ctx, 1, q)
			require.NoError(t, err)
			dir, err = fixfile.WriteEdited(ctx, s.ro, 1, q.File, q.Rows, t.TempDir())
		})
		require.NoError(t, err)
		t.Logf("a fix of one row of %d failed records: peak heap %.1f MiB", n, float64(heap)/(1<<20))
		require.Less(t, heap, uint64(4<<20), "a fix reads only its rows")
		fixed, err := os.ReadFile(filepath.Join(dir, "contacts.csv"))
		require.NoError(t, err)
		require.Equal(t, "\ufeffid,first_name,last_name,email,title\nc-5,Ann,Lee,ann5@example.com,\"Head of sales, EMEA\"\n", string(fixed))
	})
}

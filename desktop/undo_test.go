package desktop

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/importer"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store"
	"crmimport/store/storetest"
	"crmimport/undo"
)

// undoServer is a listening server on the database at addr where each
// export of runs was imported in turn into tenant acme (source canonical).
func undoServer(t *testing.T, addr string, runs ...importer.RunSpec) *Server {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, addr)
	require.NoError(t, err)
	imp := importer.New(phases.New(db, nil))
	for _, spec := range runs {
		spec.BatchSize = 50
		run, err := imp.Plan(ctx, spec)
		require.NoError(t, err)
		_, err = imp.Execute(ctx, run.ID)
		require.NoError(t, err)
	}
	require.NoError(t, db.Close())
	s, err := New(ctx, Config{DBPath: addr, Folder: t.TempDir()})
	require.NoError(t, err)
	go func() { _ = s.Serve() }() // ends with Shutdown
	t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })
	return s
}

// waitDone waits until run id has a terminal status, and returns it.
func (s *Server) waitDone(t *testing.T, id int64) phases.Run {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		run, err := phases.LoadRun(context.Background(), s.ro, id)
		require.NoError(t, err)
		if run.Status != phases.RunRunning {
			return run
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("run %d never ended", id)
	return phases.Run{}
}

func (s *Server) count(t *testing.T, q string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, s.ro.QueryRow(q, args...).Scan(&n))
	return n
}

// rowsOf is how many rows the tenant holds in every target table, and
// how many slots run id owns.
func (s *Server) rowsOf(t *testing.T, tenant string, id int64) (rows, slots int) {
	t.Helper()
	for _, k := range canon.Kinds() {
		rows += s.count(t, "SELECT count(*) FROM "+k.Table()+" WHERE tenant_id = ?", tenant)
	}
	return rows, s.count(t, `SELECT count(*) FROM migration_records WHERE migration_id = ?`, id)
}

// TestUndoFromTheAPI: GET /api/runs/{id}/undo is `undo RUN --dry-run
// --json` (undo.Build's preview) and writes nothing; POST starts the undo
// in the server's process and answers its run and page; the undo takes
// back every row and slot of the run (R16); then the undone run and the
// undo refuse an undo (409, exit 1, saying which), and the run page and
// the runs page show each as undone by / undo of the other, linked, with
// Undo disabled saying why.
func TestUndoFromTheAPI(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		s := undoServer(t, addr, importer.RunSpec{Tenant: "demo", Source: "canonical", Input: "../fixtures/demo"})
		rows, slots := s.rowsOf(t, "demo", 1)
		require.Positive(t, rows)
		require.Positive(t, slots)

		w := s.do(t, req{http.MethodGet, "/runs/1", s.addr, nil, true})
		require.Contains(t, w.Body.String(), fmt.Sprintf(`data-undo="/api/runs/1/undo" data-run="1"  title="">Undo — take back %d records</button>`, slots),
			"Undo is enabled and says how many records it takes back")

		before := snapshot(t, s)
		res, doc := s.api(t, http.MethodGet, "/api/runs/1/undo", nil)
		require.Equal(t, http.StatusOK, res.StatusCode, doc)
		p, err := undo.Build(context.Background(), s.ro, s.eng, 1, false)
		require.NoError(t, err)
		want, err := json.Marshal(p.Preview())
		require.NoError(t, err)
		var wantDoc map[string]any
		require.NoError(t, json.Unmarshal(want, &wantDoc))
		require.Equal(t, wantDoc, doc, "the preview is the plan's, as --dry-run --json prints it")
		require.Equal(t, true, doc["dry_run"])
		require.Equal(t, float64(slots), doc["total"])
		require.Equal(t, before, snapshot(t, s), "a preview writes nothing")

		res, doc = s.api(t, http.MethodPost, "/api/runs/1/undo", nil) // no body: not under cascade
		require.Equal(t, http.StatusAccepted, res.StatusCode, doc)
		require.Equal(t, float64(2), doc["run"])
		require.Equal(t, "/runs/2", doc["url"])
		require.Equal(t, float64(slots), doc["total"])
		require.Equal(t, phases.RunSucceeded, s.waitDone(t, 2).Status)
		rows, slots = s.rowsOf(t, "demo", 1)
		require.Zero(t, rows, "the run's rows are gone")
		require.Zero(t, slots, "and its slots")
		run, err := phases.LoadRun(context.Background(), s.ro, 1)
		require.NoError(t, err)
		require.Equal(t, int64(2), run.UndoneBy)

		for id, why := range map[int]string{1: "already undone by run 2", 2: "is an undo (of run 1)"} {
			res, doc = s.api(t, http.MethodGet, fmt.Sprintf("/api/runs/%d/undo", id), nil)
			require.Equal(t, http.StatusConflict, res.StatusCode, doc)
			require.Equal(t, float64(1), doc["exit_code"], "refused as the CLI refuses it: exit 1")
			require.Contains(t, doc["error"], why)
			res, doc = s.api(t, http.MethodPost, fmt.Sprintf("/api/runs/%d/undo", id), nil)
			require.Equal(t, http.StatusConflict, res.StatusCode, doc)
			require.Contains(t, doc["error"], why)
		}
		require.Equal(t, 2, s.count(t, `SELECT count(*) FROM migrations`), "a refused undo leaves no run")

		page := s.do(t, req{http.MethodGet, "/runs/1", s.addr, nil, true}).Body.String()
		require.Contains(t, page, `<span class="undo-word">undone by <a href="/runs/2">run 2</a></span>`)
		require.Contains(t, page, `<dt>Undone by</dt><dd data-field="undone-by"><a href="/runs/2">run 2</a></dd>`)
		require.Contains(t, page, `disabled title="run 1 was already undone by run 2`)
		page = s.do(t, req{http.MethodGet, "/runs/2", s.addr, nil, true}).Body.String()
		require.Contains(t, page, `<span class="undo-word">undo of <a href="/runs/1">run 1</a></span>`)
		require.Contains(t, page, `<h2 id="takenback-h">Taken back</h2>`)
		require.Contains(t, page, `disabled title="run 2 is an undo (of run 1)`)
		require.Regexp(t, `data-field="size">[0-9,]+ of [0-9,]+ items<`, page, "an undo's progress is items done of items planned")
		require.Contains(t, page, `<progress max="100" data-field="progress" value="100"`, "and its bar is full at the end")
		page = s.do(t, req{http.MethodGet, "/", s.addr, nil, true}).Body.String()
		require.Contains(t, page, `<td class="undo" data-field="undo"> <span class="undo-word">undone by <a href="/runs/2">run 2</a></span></td>`)
		require.Contains(t, page, fmt.Sprintf(`<span class="undo-word">undo of <a href="/runs/1">run 1</a></span>: %s removed`, doc2count(t, wantDoc, "removed")))

		html := s.do(t, req{http.MethodGet, "/runs/1/report.html", s.addr, nil, true}).Body.String()
		require.Contains(t, html, `<span class="undo-word">undone by run 2</span>`, "the HTML report says it, linking to nothing")
		require.NotContains(t, html, "href=")

		res, doc = s.api(t, http.MethodGet, "/api/runs/1/undo?cascade=maybe", nil)
		require.Equal(t, http.StatusBadRequest, res.StatusCode, doc)
		require.Equal(t, float64(2), doc["exit_code"])
	})
}

// doc2count sums one count of a preview's kinds, as the pages write it.
func doc2count(t *testing.T, preview map[string]any, field string) string {
	t.Helper()
	var n float64
	for _, c := range preview["kinds"].(map[string]any) {
		n += c.(map[string]any)[field].(float64)
	}
	return fmt.Sprintf("%.0f", n)
}

// TestUndoRefusedForDependents: a later run's contacts link to the
// companies of the run to undo (R16): the preview and the undo are refused
// (409, exit 1) with the dependents listed per run and kind, count and
// example ids (a source id "<script>" is data: JSON, escaped); the run
// page still offers Undo, saying so; ?cascade=1 previews both, and the
// undo under cascade takes back the dependents too, record by record —
// run 2's contact that links to nothing of run 1 stays.
func TestUndoRefusedForDependents(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		dir := writeFiles(t, map[string]string{
			"companies.csv": "id,name\nco-1,Acme\nco-2,Globex\n",
			"contacts.csv":  "id,first_name,company_id\nc-1,Ann,co-1\n<script>alert(1)</script>,Bob,co-2\nc-3,Cy,\n",
		})
		s := undoServer(t, addr,
			importer.RunSpec{Tenant: "acme", Source: "canonical", Input: dir, Only: []ledger.Kind{ledger.Company}},
			importer.RunSpec{Tenant: "acme", Source: "canonical", Input: dir})

		page := s.do(t, req{http.MethodGet, "/runs/1", s.addr, nil, true}).Body.String()
		require.Contains(t, page, `data-undo="/api/runs/1/undo" data-run="1"  title="">Undo… — 2 records of other runs depend on it</button>`)

		for _, method := range []string{http.MethodGet, http.MethodPost} {
			res, doc := s.api(t, method, "/api/runs/1/undo", nil)
			require.Equal(t, http.StatusConflict, res.StatusCode, doc)
			require.Equal(t, float64(1), doc["exit_code"])
			require.Contains(t, doc["error"], "--cascade")
			require.Equal(t, []any{map[string]any{"run": float64(2), "source": "canonical", "kind": "contact", "how": "links", "count": float64(2),
				"examples": []any{"<script>alert(1)</script>", "c-1"}}}, doc["dependents"], method)
		}
		require.Equal(t, 2, s.count(t, `SELECT count(*) FROM migrations`), "a refused undo leaves no run")

		res, doc := s.api(t, http.MethodGet, "/api/runs/1/undo?cascade=1", nil)
		require.Equal(t, http.StatusOK, res.StatusCode, doc)
		require.Equal(t, true, doc["cascade"])
		require.Equal(t, float64(4), doc["total"], "2 companies and the 2 contacts that link to them")
		require.Len(t, doc["dependents"], 1)

		res, doc = s.api(t, http.MethodPost, "/api/runs/1/undo", map[string]any{"cascade": true})
		require.Equal(t, http.StatusAccepted, res.StatusCode, doc)
		id := int64(doc["run"].(float64))
		require.Equal(t, phases.RunSucceeded, s.waitDone(t, id).Status)
		require.Zero(t, s.count(t, `SELECT count(*) FROM companies WHERE tenant_id = 'acme'`))
		require.Equal(t, 1, s.count(t, `SELECT count(*) FROM contacts WHERE tenant_id = 'acme'`))
		require.Equal(t, 1, s.count(t, `SELECT count(*) FROM migration_records WHERE tenant_id = 'acme'`))
		require.Equal(t, 1, s.count(t, `SELECT count(*) FROM migration_records WHERE migration_id = 2 AND source_id = 'c-3'`),
			"the record that depends on nothing of run 1 stays")

		res, doc = s.api(t, http.MethodPost, "/api/runs/1/undo", map[string]any{"cascade": true, "everything": true})
		require.Equal(t, http.StatusBadRequest, res.StatusCode, doc)
	})
}

// TestUndoOfALiveRunIsRefused: R13 on undo — a run that works cannot be
// undone (409 naming the live run, exit 6: stop it first), and its page
// says so on a disabled Undo.
func TestUndoOfALiveRunIsRefused(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		s := slowServer(t, addr)
		dir := writeFiles(t, map[string]string{"contacts.csv": "id,first_name\n" + contactsCSV(300)})
		res, doc := s.api(t, http.MethodPost, "/api/imports", map[string]any{"path": dir, "tenant": "acme", "source": "canonical", "batch_size": 30})
		require.Equal(t, http.StatusAccepted, res.StatusCode, doc)
		live := doc["run"].(float64)
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			res, doc = s.api(t, method, fmt.Sprintf("/api/runs/%d/undo", int(live)), nil)
			require.Equal(t, http.StatusConflict, res.StatusCode, doc)
			require.Equal(t, float64(6), doc["exit_code"])
			require.Equal(t, live, doc["live_run"])
		}
		page := s.do(t, req{http.MethodGet, fmt.Sprintf("/runs/%d", int(live)), s.addr, nil, true}).Body.String()
		require.Contains(t, page, `disabled title="the run is live: stop it first (R13), then undo it">Undo</button>`)
		res, doc = s.api(t, http.MethodPost, fmt.Sprintf("/api/runs/%d/stop", int(live)), nil)
		require.Equal(t, http.StatusOK, res.StatusCode, doc)
	})
}

func contactsCSV(n int) string {
	var b []byte
	for i := 1; i <= n; i++ {
		b = fmt.Appendf(b, "c-%d,Ann %d\n", i, i)
	}
	return string(b)
}

// TestPartlyUndoneOnThePages (R16, SPEC §10): a run whose records an undo
// under --cascade took back keeps its status and counts, and the runs
// page, its run page (with what next), its HTML report and the API say
// what was taken back of it, linking to the undo and the run it undid.
func TestPartlyUndoneOnThePages(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		dir := writeFiles(t, map[string]string{
			"companies.csv": "id,name\nco-1,Acme\n",
			"contacts.csv":  "id,first_name,company_id\nc-1,Ann,co-1\nc-2,Bob,co-1\nc-3,Cy,\n",
		})
		s := undoServer(t, addr,
			importer.RunSpec{Tenant: "acme", Source: "canonical", Input: dir, Only: []ledger.Kind{ledger.Company}},
			importer.RunSpec{Tenant: "acme", Source: "canonical", Input: dir})
		res, doc := s.api(t, http.MethodPost, "/api/runs/1/undo", map[string]any{"cascade": true})
		require.Equal(t, http.StatusAccepted, res.StatusCode, doc)
		require.Equal(t, phases.RunSucceeded, s.waitDone(t, 3).Status)

		const linked = ` <span class="undo-word">partly undone by <a href="/runs/3">run 3</a> (cascade of <a href="/runs/1">run 1</a>): 2 contacts</span>`
		page := s.do(t, req{http.MethodGet, "/", s.addr, nil, true}).Body.String()
		require.Contains(t, page, `<tr data-run="2" data-undone-by="0" data-partly="2">`, "the live runs page reloads when it changes")
		require.Contains(t, page, `<td class="undo" data-field="undo">`+linked+`</td>`)
		page = s.do(t, req{http.MethodGet, "/runs/2", s.addr, nil, true}).Body.String()
		require.Contains(t, page, `<span data-field="status"><span class="status status-succeeded">succeeded</span></span>`+linked+`</h1>`)
		require.Contains(t, page, `<div><dt>Partly undone</dt><dd data-field="partly-undone">`+
			`by <a href="/runs/3">run 3</a> (cascade of <a href="/runs/1">run 1</a>): 2 contacts</dd></div>`)
		require.Contains(t, page, "run 3 (the undo of run 1 with --cascade) took back 2 contacts of run 2")
		html := s.do(t, req{http.MethodGet, "/runs/2/report.html", s.addr, nil, true}).Body.String()
		require.Contains(t, html, `<span class="undo-word">partly undone by run 3 (cascade of run 1): 2 contacts</span>`)
		require.NotContains(t, html, "href=")

		res, doc = s.api(t, http.MethodGet, "/api/runs", nil)
		require.Equal(t, http.StatusOK, res.StatusCode, doc)
		var partly any
		for _, r := range doc["runs"].([]any) {
			if r.(map[string]any)["run"] == float64(2) {
				partly = r.(map[string]any)["partly_undone"]
			}
		}
		require.Equal(t, []any{map[string]any{"undo": float64(3), "undoes": float64(1), "kind": "contact", "count": float64(2)}}, partly)
	})
}

// TestUndoConfirmsItsPreview (R16; SPEC §11: a preview and its commit are
// the same plan): the preview answers the plan's digest and its parts; the
// confirming POST carries them back, and a plan that another run changed
// in between is refused (409, exit 8) naming what changed — not taken back
// bigger than the confirmation showed; the preview again, confirmed, is.
func TestUndoConfirmsItsPreview(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		s := undoServer(t, addr,
			importer.RunSpec{Tenant: "acme", Source: "canonical", Input: "../fixtures/demo", Only: []ledger.Kind{ledger.Company}},
			importer.RunSpec{Tenant: "acme", Source: "canonical", Input: "../fixtures/demo", Only: []ledger.Kind{ledger.Contact}})
		res, preview := s.api(t, http.MethodGet, "/api/runs/1/undo?cascade=1", nil)
		require.Equal(t, http.StatusOK, res.StatusCode, preview)
		require.Len(t, preview["plan"], 64)
		require.NotEmpty(t, preview["parts"])

		// Another import of the tenant between the preview and its
		// confirmation: two more contacts of run 1's companies.
		res, doc := s.api(t, http.MethodPost, "/api/imports", map[string]any{"path": "../fixtures/demo-later", "tenant": "acme", "source": "canonical"})
		require.Equal(t, http.StatusAccepted, res.StatusCode, doc)
		later := int64(doc["run"].(float64))
		require.Equal(t, phases.RunSucceeded, s.waitDone(t, later).Status)
		before := snapshot(t, s)

		res, doc = s.api(t, http.MethodPost, "/api/runs/1/undo", map[string]any{"cascade": true, "plan": preview["plan"], "parts": preview["parts"]})
		require.Equal(t, http.StatusConflict, res.StatusCode, doc)
		require.Equal(t, float64(8), doc["exit_code"], "exit 8, as `undo --plan` refuses a changed plan")
		require.Contains(t, doc["error"], fmt.Sprintf("its plan changed since the preview: 2 more contacts of run %d to remove; nothing was written", later))
		require.Equal(t, before, snapshot(t, s), "nothing was taken back")
		require.Equal(t, 3, s.count(t, `SELECT count(*) FROM migrations`), "and no undo planned")

		res, doc = s.api(t, http.MethodPost, "/api/runs/1/undo", map[string]any{"cascade": true, "plan": "not a digest"})
		require.Equal(t, http.StatusBadRequest, res.StatusCode, doc)
		require.Equal(t, float64(2), doc["exit_code"])
		res, doc = s.api(t, http.MethodPost, "/api/runs/1/undo", map[string]any{"cascade": true, "plan": preview["plan"],
			"parts": []any{map[string]any{"run": 1, "kind": "<script>", "fate": "removed", "count": 1}}})
		require.Equal(t, http.StatusBadRequest, res.StatusCode, doc)
		require.Contains(t, doc["error"], `"<script>" is not a kind`)

		res, again := s.api(t, http.MethodGet, "/api/runs/1/undo?cascade=1", nil)
		require.Equal(t, http.StatusOK, res.StatusCode, again)
		require.NotEqual(t, preview["plan"], again["plan"])
		require.Equal(t, preview["total"].(float64)+2, again["total"])
		res, doc = s.api(t, http.MethodPost, "/api/runs/1/undo", map[string]any{"cascade": true, "plan": again["plan"], "parts": again["parts"]})
		require.Equal(t, http.StatusAccepted, res.StatusCode, doc)
		require.Equal(t, again["total"], doc["total"])
		require.Equal(t, phases.RunSucceeded, s.waitDone(t, int64(doc["run"].(float64))).Status)
	})
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"crmimport/desktop"
	"crmimport/phases"
	"crmimport/runs"
	"crmimport/store"
	"crmimport/store/storetest"
)

// TestTwoFacesSayTheSame: issue 24 item 1 (STYLE 18, SPEC §9) — the same
// requests through the command line and through the desktop's API, each
// on a database of its own built alike, say the same: a run under
// --strict that skipped a record (its summary, `next` and exit 7, on the
// run's own summary, on `report RUN` and on the run page), a dry run, a
// second run of a tenant whose run is live (refused, exit 6, naming it),
// a dry run beside it, and an undo refused for the records of another run
// that depend on its rows (exit 1, with the dependents).
func TestTwoFacesSayTheSame(t *testing.T) {
	t.Parallel()
	first := exportOf(t, map[string]string{
		"companies.csv": "id,name\nco1,Acme\n",
		"contacts.csv":  "id,first_name,company_id\nc1,Ann,co1\n",
		"notes.csv":     "id,body,contact_id\nn1,Hi Ann,c1\nn2,Hi nobody,c404\n",
	})
	second := exportOf(t, map[string]string{"contacts.csv": "id,first_name,company_id\nc2,Bob,co1\n"})
	storetest.RunAddress(t, func(t *testing.T, cliDB string) {
		pageDB := filepath.Join(t.TempDir(), "crm.db")
		if store.IsAddress(cliDB) {
			pageDB = storetest.PostgresDSN(t)
		}
		cli := cliFace{db: cliDB}
		page := newPageFace(t, pageDB)
		same := func(what string, c, p said) {
			t.Helper()
			require.Equal(t, normalise(c.doc, cliDB), normalise(p.doc, pageDB), "%s: what each face says", what)
			require.Equal(t, c.code, p.code, "%s: exit codes", what)
		}

		strict := request{tenant: "acme", path: first, strict: true}
		c, p := cli.run(t, strict), page.run(t, strict)
		require.Equal(t, exitStrict, c.code, "a skip under --strict: %s", c.doc)
		same("a run under --strict", c, p)
		require.Contains(t, c.doc["next"], "--strict: 1 record was skipped, so this run exits 7")
		same("the run's report", cli.report(t, 1), page.report(t, 1))
		same("the run's report and its own summary", c, cli.report(t, 1))

		more := request{tenant: "acme", path: second}
		same("a run of records that depend on the first's", cli.run(t, more), page.run(t, more))
		c, p = cli.undo(t, 1), page.undo(t, 1)
		require.Equal(t, exitError, c.code, "refused for its dependents: %s", c.doc)
		require.NotEmpty(t, c.doc["dependents"])
		same("an undo refused for the dependents of its run", c, p)

		dry := request{tenant: "acme", path: first, dryRun: true}
		same("a dry run", cli.run(t, dry), page.run(t, dry))

		// A live run of globex: planned here, by this process, and not
		// worked on yet.
		db := storetest.Open(t, cliDB)
		_, err := runs.Start(context.Background(), phases.New(db, nil), runs.Spec{Tenant: "globex", Source: "canonical", Input: second})
		require.NoError(t, err)
		db = storetest.Open(t, pageDB)
		_, err = runs.Start(context.Background(), phases.New(db, nil), runs.Spec{Tenant: "globex", Source: "canonical", Input: second})
		require.NoError(t, err)
		again := request{tenant: "globex", path: first}
		c, p = cli.run(t, again), page.run(t, again)
		require.Equal(t, exitRefused, c.code, "a second run of a live tenant: %s", c.doc)
		require.EqualValues(t, 3, c.doc["live_run"])
		same("a second run of a tenant whose run is live", c, p)
		again.dryRun = true
		same("a dry run beside a live run", cli.run(t, again), page.run(t, again))
	})
}

// request is one request of a run, as either face takes it.
type request struct {
	tenant, path   string
	strict, dryRun bool
}

// said is what a face said: its one JSON document and its exit code.
type said struct {
	code int
	doc  map[string]any
}

// normalise keeps of doc what a face says of a run or a refusal — the
// summary's fields (SPEC §5) and the error document's — leaving out what
// differs between two runs of the same request however they are made: the
// times, and the database's name. The exit code is compared on its own.
func normalise(doc map[string]any, db string) string {
	d := map[string]any{}
	for _, k := range []string{"run", "tenant", "source", "status", "interrupted", "phase", "kinds", "undoes", "undone_by",
		"partly_undone", "warnings", "next", "dry_run", "plan", "plan_files", "error", "live_run", "dependents"} {
		if v, ok := doc[k]; ok {
			d[k] = v
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(d)
	return strings.ReplaceAll(b.String(), store.Name(db), "DB")
}

// cliFace asks the command line, in-process, with --json.
type cliFace struct{ db string }

func (f cliFace) said(t *testing.T, args ...string) said {
	t.Helper()
	r := crm(t, nil, append([]string{"--db", f.db, "--json"}, args...)...)
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	return said{code: r.code, doc: doc}
}

func (f cliFace) run(t *testing.T, q request) said {
	args := []string{"run", "--tenant", q.tenant, "--source", "canonical"}
	if q.strict {
		args = append(args, "--strict")
	}
	if q.dryRun {
		args = append(args, "--dry-run")
	}
	return f.said(t, append(args, q.path)...)
}

func (f cliFace) report(t *testing.T, id int64) said {
	s := f.said(t, "report", strconv.FormatInt(id, 10), "--format", "json")
	s.code = exitCodeOf(s.doc)
	return s
}

func (f cliFace) undo(t *testing.T, id int64) said {
	return f.said(t, "undo", strconv.FormatInt(id, 10))
}

// pageFace asks the desktop's API, as the page's script does.
type pageFace struct{ s *desktop.Server }

func newPageFace(t *testing.T, db string) pageFace {
	s, err := desktop.New(context.Background(), desktop.Config{DBPath: db, Folder: t.TempDir()})
	require.NoError(t, err)
	go func() { _ = s.Serve() }() // ends with Shutdown
	t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })
	return pageFace{s: s}
}

func (f pageFace) api(t *testing.T, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var b bytes.Buffer
	if body != nil {
		require.NoError(t, json.NewEncoder(&b).Encode(body))
	}
	r, err := http.NewRequest(method, "http://"+f.s.Addr()+path, &b)
	require.NoError(t, err)
	r.Header.Set("Authorization", "Bearer "+f.s.Token())
	r.Header.Set(desktop.RequestedBy, "crmimport")
	res, err := http.DefaultClient.Do(r)
	require.NoError(t, err)
	defer res.Body.Close()
	var doc map[string]any
	require.NoError(t, json.NewDecoder(res.Body).Decode(&doc))
	return res.StatusCode, doc
}

// run posts the import and, for a run the server works on, waits for its
// end and reads its page's summary: what the page shows of it.
func (f pageFace) run(t *testing.T, q request) said {
	t.Helper()
	status, doc := f.api(t, http.MethodPost, "/api/imports", map[string]any{"path": q.path, "tenant": q.tenant,
		"source": "canonical", "strict": q.strict, "dry_run": q.dryRun})
	switch {
	case status >= 400:
		return said{code: exitCodeOf(doc), doc: doc}
	case q.dryRun:
		return said{code: exitCodeOf(doc), doc: doc}
	}
	require.Equal(t, http.StatusAccepted, status, doc)
	id := int64(doc["run"].(float64))
	deadline := time.Now().Add(30 * time.Second)
	for {
		s := f.report(t, id)
		if s.doc["status"] != "running" || time.Now().After(deadline) {
			return s
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (f pageFace) report(t *testing.T, id int64) said {
	_, doc := f.api(t, http.MethodGet, "/api/runs/"+strconv.FormatInt(id, 10), nil)
	return said{code: exitCodeOf(doc), doc: doc}
}

func (f pageFace) undo(t *testing.T, id int64) said {
	_, doc := f.api(t, http.MethodPost, "/api/runs/"+strconv.FormatInt(id, 10)+"/undo", nil)
	return said{code: exitCodeOf(doc), doc: doc}
}

// exitCodeOf is the exit code a document gives (an error's, or a run's
// outcome's), -1 when it gives none.
func exitCodeOf(doc map[string]any) int {
	if n, ok := doc["exit_code"].(float64); ok {
		return int(n)
	}
	return -1
}

func exportOf(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600))
	}
	return dir
}

package desktop

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/importer"
	"crmimport/phases"
	"crmimport/store"
	"crmimport/store/storetest"
)

// TestRecogniseProposesSourceAndProfile (issue 27 item 4): POST
// /api/recognise proposes the built-in profile that reads an export and,
// as its source, the profile's name — or, for a tenant whose earlier runs
// with that profile kept their records under another source, that source
// (R1: another name would import them again); an export no profile reads
// gets the mapping editor's address instead.
func TestRecogniseProposesSourceAndProfile(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		ctx := context.Background()
		sf, err := filepath.Abs("../fixtures/salesforce")
		require.NoError(t, err)
		db, err := store.Open(ctx, addr)
		require.NoError(t, err)
		imp := importer.New(phases.New(db, nil))
		users := writeFiles(t, map[string]string{"User.csv": "Id,Username,Email,FirstName,LastName,IsActive,CreatedDate\n" +
			"0055g00000AbCdEAAV,ann@example.com,ann@example.com,Ann,Lee,1,2022-01-01 00:00:00\n"})
		run, err := imp.Plan(ctx, importer.RunSpec{Tenant: "acme", Source: "sf-acme", Profile: "salesforce", Input: users, BatchSize: 10})
		require.NoError(t, err)
		_, err = imp.Execute(ctx, run.ID)
		require.NoError(t, err)
		require.NoError(t, db.Close())
		s, err := New(ctx, Config{DBPath: addr, Folder: t.TempDir()})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })

		w := s.post(t, "/api/recognise", map[string]any{"paths": []string{sf}})
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		got := decode[recognition](t, w)
		require.Equal(t, "salesforce", got.Profile)
		require.Equal(t, "salesforce", got.Source)
		require.Equal(t, "the profile's name", got.SourceWhy)
		require.True(t, strings.HasPrefix(got.Why, "Account.csv, Contact.csv, Lead.csv and 6 more with 001/003/00Q ids: a Salesforce export"), got.Why)
		require.Empty(t, got.Editor)

		w = s.post(t, "/api/recognise", map[string]any{"paths": []string{sf}, "tenant": "acme"})
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		got = decode[recognition](t, w)
		require.Equal(t, "sf-acme", got.Source, "tenant acme keeps its Salesforce records under sf-acme")
		require.Equal(t, "the source of tenant acme's earlier runs with the salesforce profile (run 1): its records are kept under it", got.SourceWhy)

		zoho, err := filepath.Abs("../fixtures/suggest/zoho")
		require.NoError(t, err)
		w = s.post(t, "/api/recognise", map[string]any{"paths": []string{zoho}, "tenant": "acme"})
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		got = decode[recognition](t, w)
		require.Empty(t, got.Profile)
		require.Empty(t, got.Source)
		require.Equal(t, "/profiles/new?path="+url.QueryEscape(zoho), got.Editor)

		w = s.post(t, "/api/recognise", map[string]any{"paths": []string{" "}})
		require.Equal(t, http.StatusBadRequest, w.Code, w.Body.String())
	})
}

// TestDryRunTellsItsProgress (issue 27 item 4): a dry run asked with
// progress answers JSON Lines — planning first, then the tasks at work
// (phase, kind, file, records, percent) as they start and commit — and
// ends with its summary, the same as the dry run answered whole; an
// export that cannot be planned ends with the error instead.
func TestDryRunTellsItsProgress(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	demo, err := filepath.Abs("../fixtures/demo")
	require.NoError(t, err)
	ask := map[string]any{"path": demo, "tenant": "demo", "source": "canonical", "dry_run": true, "progress": true}
	w := s.post(t, "/api/imports", ask)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	require.Equal(t, "application/x-ndjson", w.Header().Get("Content-Type"))
	var lines []map[string]json.RawMessage
	sc := bufio.NewScanner(w.Body)
	for sc.Scan() {
		var line map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(sc.Bytes(), &line), sc.Text())
		lines = append(lines, line)
	}
	require.Greater(t, len(lines), 3)
	var first dryProgress
	require.NoError(t, json.Unmarshal(lines[0]["progress"], &first))
	require.Equal(t, dryProgress{Stage: "planning"}, first)
	kinds := map[string]bool{}
	for _, l := range lines[1 : len(lines)-1] {
		var p dryProgress
		require.NoError(t, json.Unmarshal(l["progress"], &p))
		require.Equal(t, "working", p.Stage)
		require.Equal(t, 6, p.Tasks, "the demo's six files")
		require.NotEmpty(t, p.File)
		kinds[p.Kind] = true
	}
	require.Len(t, kinds, 6, "each task told as it starts")
	var last dryRunAnswer
	require.NoError(t, json.Unmarshal(mustJSON(t, lines[len(lines)-1]), &last))
	delete(ask, "progress")
	whole := decode[dryRunAnswer](t, s.post(t, "/api/imports", ask))
	require.Equal(t, whole.Kinds, last.Kinds)
	require.Equal(t, whole.ExitCode, last.ExitCode)
	require.Equal(t, whole.Plan, last.Plan)

	ask = map[string]any{"path": t.TempDir(), "tenant": "demo", "source": "canonical", "dry_run": true, "progress": true}
	w = s.post(t, "/api/imports", ask)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	out := strings.Split(strings.TrimSpace(w.Body.String()), "\n")
	require.Len(t, out, 2, w.Body.String())
	var failed apiError
	require.NoError(t, json.Unmarshal([]byte(out[1]), &failed))
	require.Contains(t, failed.Error, "no file")
	require.Equal(t, 1, failed.ExitCode)
}

// newServer is a server over a new SQLite file.
func newServer(t *testing.T) *Server {
	t.Helper()
	ctx := context.Background()
	addr := filepath.Join(t.TempDir(), "crm.db")
	db, err := store.Open(ctx, addr)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	s, err := New(ctx, Config{DBPath: addr, Folder: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })
	return s
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

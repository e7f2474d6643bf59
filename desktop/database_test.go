package desktop

import (
	"context"
	"encoding/json"
	"html/template"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/forensics"
	"crmimport/importer"
	"crmimport/phases"
	"crmimport/report"
	"crmimport/store"
	"crmimport/store/storetest"
)

// password is what the tests' server addresses carry as their password:
// the test cluster trusts its socket and never asks for it, so that it
// can be there and must be seen nowhere.
const password = "s3cret-pw"

// withPassword is addr with a password: a server's address gets one, a
// file's path stays as it is.
func withPassword(t *testing.T, addr string) string {
	t.Helper()
	if !store.IsAddress(addr) {
		return addr
	}
	require.True(t, strings.HasPrefix(addr, "postgres://postgres@"), addr)
	return strings.Replace(addr, "postgres://postgres@", "postgres://postgres:"+password+"@", 1)
}

// shown is how the pages must name the database at addr: a file's path
// as it is, a server's address with its password hidden.
func shown(addr string) string {
	return strings.Replace(addr, ":"+password+"@", ":xxxxx@", 1)
}

// TestDatabaseWords: how the pages name a database — a file's path as it
// is; a server's address with its password hidden wherever it is given,
// in the address's user or its query; and in a command to paste into a
// shell without the password at all (PGPASSWORD or ~/.pgpass gives it).
func TestDatabaseWords(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ addr, words, command string }{
		{"crm.db", "crm.db", "crm.db"},
		{"/data/acme crm.db", "/data/acme crm.db", "/data/acme crm.db"},
		{"postgres://ann:s3cret@db.example:5432/crm?sslmode=require",
			"postgres://ann:xxxxx@db.example:5432/crm?sslmode=require", "postgres://ann@db.example:5432/crm?sslmode=require"},
		{"postgres://ann@db.example/crm?password=s3cret&search_path=acme",
			"postgres://ann@db.example/crm?password=xxxxx&search_path=acme", "postgres://ann@db.example/crm?search_path=acme"},
		{"postgresql://db.example/crm", "postgresql://db.example/crm", "postgresql://db.example/crm"},
	} {
		require.Equal(t, tt.words, dbWords(tt.addr), tt.addr)
		require.Equal(t, tt.command, commandDB(tt.addr), tt.addr)
	}
}

// TestThePagesNameTheDatabase: every page's header names the database it
// reads — a file's path, or a server's address with its password hidden —
// and no page shows the password.
func TestThePagesNameTheDatabase(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		addr = withPassword(t, addr)
		s := testServer(t, addr)
		header := `<span class="db" title="the database this page reads">` + template.HTMLEscapeString(shown(addr)) + `</span>`
		for _, p := range []string{"/", "/runs/1", "/runs/1/failed", "/import", "/profiles", "/profiles/new", "/profiles/canonical"} {
			w := s.do(t, req{http.MethodGet, p, s.addr, nil, true})
			require.Equal(t, http.StatusOK, w.Code, "%s: %s", p, w.Body.String())
			require.Contains(t, w.Body.String(), header, p)
			require.NotContains(t, w.Body.String(), password, p)
		}
	})
}

// TestDryRunFromThePage: a dry run from New import works on a throwaway
// copy of the database (a file, or a schema beside the server's, dropped
// after) and writes nothing to it; its summary names no run, and says
// that nothing was written to the database, named without its password.
func TestDryRunFromThePage(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		addr = withPassword(t, addr)
		s := testServer(t, addr)
		before := snapshot(t, s)
		w := s.post(t, "/api/imports", map[string]any{"path": "../fixtures/demo", "tenant": "acme", "source": "canonical", "dry_run": true})
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		require.NotContains(t, w.Body.String(), password)
		var sum struct {
			Run    int64                    `json:"run"`
			DryRun bool                     `json:"dry_run"`
			Status string                   `json:"status"`
			Kinds  map[string]phases.Counts `json:"kinds"`
			Next   []string                 `json:"next"`
		}
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &sum))
		require.True(t, sum.DryRun)
		require.Zero(t, sum.Run, "a dry run's summary names no run")
		require.Equal(t, "partial", sum.Status, "the demo export has failed records")
		require.Positive(t, sum.Kinds["contact"].Imported, "what an import into a new tenant would do")
		require.NotEmpty(t, sum.Next)
		require.Equal(t, "this was a dry run: nothing was written to "+shown(addr)+"; the same command without --dry-run imports", sum.Next[0])
		require.Equal(t, before, snapshot(t, s), "nothing written")
		if store.IsAddress(addr) {
			var copies int
			// This database's copies only: other tests' dry runs work on
			// the same server meanwhile (a copy says what it copies).
			require.NoError(t, s.ro.QueryRow(`SELECT count(*) FROM pg_namespace n WHERE n.nspname LIKE 'crmimport\_dry\_run\_%'
				AND coalesce(obj_description(n.oid, 'pg_namespace'), '') LIKE '%"of":"' || current_schema() || '"%'`).Scan(&copies))
			require.Zero(t, copies, "the throwaway schema is dropped")
		}
	})
}

// TestDoctorRepairsNameTheDatabase: doctor's repairs on the Ledger page
// and in GET /api/doctor are commands to paste into a shell: they name
// the database the server reads (--db), a server's address without its
// password.
func TestDoctorRepairsNameTheDatabase(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		addr = withPassword(t, addr)
		ctx := context.Background()
		db, err := store.Open(ctx, addr)
		require.NoError(t, err)
		imp := importer.New(phases.New(db, nil))
		for _, files := range []map[string]string{
			{"notes.csv": "id,body,contact_id\nn-1,Call back,c-9\n"}, // skipped: c-9 is not there yet
			{"contacts.csv": "id,first_name\nc-9,Ann\n"},             // now it is: the note is ready to take over
		} {
			run, err := imp.Plan(ctx, importer.RunSpec{Tenant: "acme", Source: "canonical", Input: writeFiles(t, files), BatchSize: 10})
			require.NoError(t, err)
			_, err = imp.Execute(ctx, run.ID)
			require.NoError(t, err)
		}
		require.NoError(t, db.Close())
		s, err := New(ctx, Config{DBPath: addr, Folder: t.TempDir()})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })

		want := report.ShellCommand("crmimport", "--db", strings.Replace(addr, ":"+password+"@", "@", 1), "run", "--tenant", "acme")
		w := s.do(t, req{http.MethodGet, "/api/doctor", s.addr, nil, true})
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		require.NotContains(t, w.Body.String(), password)
		var d forensics.Diagnosis
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &d))
		var repairs []string
		for _, f := range d.Findings {
			if f.Name == forensics.ReadyToTakeOver {
				repairs = append(repairs, f.Repair...)
			}
		}
		require.NotEmpty(t, repairs, "the note is ready to take over: %s", w.Body.String())
		require.True(t, strings.HasPrefix(repairs[0], want), "%s\nnot a command of\n%s", repairs[0], want)

		w = s.do(t, req{http.MethodGet, "/ledger", s.addr, nil, true})
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		require.Contains(t, w.Body.String(), template.HTMLEscapeString(want))
		require.NotContains(t, w.Body.String(), password)
	})
}

// upload drops one file onto the page, as New import does, and answers
// the folder it was saved in.
func upload(t *testing.T, s *Server, name, body string) string {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/api/uploads", strings.NewReader("--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\""+
		name+"\"\r\n\r\n"+body+"\r\n--B--\r\n"))
	r.Host = s.addr
	r.Header.Set("Content-Type", "multipart/form-data; boundary=B")
	r.Header.Set(RequestedBy, "crmimport")
	r.AddCookie(&http.Cookie{Name: s.cookie, Value: s.token})
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, r)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	var doc struct {
		Path string `json:"path"`
	}
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &doc))
	return doc.Path
}

// TestPrivateFoldersOfAServersDatabase: with no Config.Folder, what the
// pages are given goes beside a SQLite file whatever the environment, and
// for a database on a server in the user's configuration folder
// (os.UserConfigDir()/crmimport/…, 0700), which the pages name. Not
// parallel: it sets the environment that os.UserConfigDir reads.
func TestPrivateFoldersOfAServersDatabase(t *testing.T) {
	storetest.Cluster(t) // started, if it is the first, in the environment it runs in, not the one set here
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	conf, err := os.UserConfigDir()
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(conf, home), conf)
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		s, err := New(context.Background(), Config{DBPath: addr})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })
		uploads, profiles := filepath.Join(conf, "crmimport", "uploads"), filepath.Join(conf, "crmimport", "profiles")
		if !store.IsAddress(addr) {
			uploads, profiles = addr+".uploads", addr+".profiles"
		}
		dir := upload(t, s, "contacts.csv", "id,first_name\nc-1,Ann\n")
		require.Equal(t, uploads, filepath.Dir(dir))
		for _, p := range []string{uploads, dir} {
			st, err := os.Stat(p)
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o700), st.Mode().Perm(), p)
		}
		w := s.do(t, req{http.MethodGet, "/profiles/new", s.addr, nil, true})
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		require.Contains(t, w.Body.String(), "A file name is saved in <code>"+template.HTMLEscapeString(profiles)+"</code>")
		require.Contains(t, w.Body.String(), "(saved privately in <code>"+template.HTMLEscapeString(uploads)+"</code>)")
		w = s.do(t, req{http.MethodGet, "/import", s.addr, nil, true})
		require.Contains(t, w.Body.String(), "Files dropped or chosen are saved privately in <code>"+template.HTMLEscapeString(uploads)+"</code>")
	})
	entries, err := os.ReadDir(filepath.Join(conf, "crmimport"))
	require.NoError(t, err)
	require.Len(t, entries, 1, "only the server's database wrote there: its uploads")
}

// TestImportConfirmsItsDryRun (issue 23 item 3; SPEC §11, R10): New
// import's dry run answers the plan's digest and the files it reads with
// their fingerprints; the Import that carries them back is planned only if
// its plan is that one — a file changed since is refused (409, exit 8)
// naming the file, and no run is planned; the file as the dry run read it
// imports.
func TestImportConfirmsItsDryRun(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		s := testServer(t, addr)
		dir := t.TempDir()
		for _, name := range []string{"companies.csv", "contacts.csv"} {
			b, err := os.ReadFile(filepath.Join("..", "fixtures", "demo", name))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o600))
		}
		req := map[string]any{"path": dir, "tenant": "acme", "source": "canonical"}
		w := s.post(t, "/api/imports", map[string]any{"path": dir, "tenant": "acme", "source": "canonical", "dry_run": true})
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		var dry struct {
			Plan      string           `json:"plan"`
			PlanFiles []map[string]any `json:"plan_files"`
		}
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &dry))
		require.Len(t, dry.Plan, 64)
		require.Len(t, dry.PlanFiles, 2)
		require.Equal(t, "contact", dry.PlanFiles[1]["kind"])

		contacts := filepath.Join(dir, "contacts.csv")
		was, err := os.ReadFile(contacts)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(contacts, append(append([]byte{}, was...), "con-900,Zoe,Ng,zoe.ng@example.com,,,,2024-05-05,,\r\n"...), 0o600))
		req["plan"], req["plan_files"] = dry.Plan, dry.PlanFiles
		w = s.post(t, "/api/imports", req)
		require.Equal(t, http.StatusConflict, w.Code, w.Body.String())
		var refusal apiError
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &refusal))
		require.Equal(t, 8, refusal.ExitCode, "as `run --plan` exits")
		require.Contains(t, refusal.Error, "the run was not started: its plan changed since the dry run: contacts.csv (contact) changed (fingerprint crc32c:")
		var runs int
		require.NoError(t, s.ro.QueryRow(`SELECT count(*) FROM migrations WHERE tenant_id = 'acme'`).Scan(&runs))
		require.Zero(t, runs, "no run was planned")

		w = s.post(t, "/api/imports", map[string]any{"path": dir, "tenant": "acme", "source": "canonical", "plan": "zz"})
		require.Equal(t, http.StatusBadRequest, w.Code, w.Body.String())

		require.NoError(t, os.WriteFile(contacts, was, 0o600))
		w = s.post(t, "/api/imports", req)
		require.Equal(t, http.StatusAccepted, w.Code, w.Body.String())
	})
}

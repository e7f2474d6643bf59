package desktop

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"crmimport/importer"
	"crmimport/phases"
	"crmimport/store"
	"crmimport/store/storetest"
)

// testServer is a server on a fresh database at addr (storetest.RunAddress)
// holding one run of the demo export, not listening: tests call its handler.
func testServer(t *testing.T, addr string) *Server {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, addr)
	require.NoError(t, err)
	imp := importer.New(phases.New(db, nil))
	run, err := imp.Plan(ctx, importer.RunSpec{Tenant: "demo", Source: "canonical", Input: "../fixtures/demo", BatchSize: 50})
	require.NoError(t, err)
	_, err = imp.Execute(ctx, run.ID)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	s, err := New(ctx, Config{DBPath: addr, Folder: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })
	return s
}

// private is where the private folder called name (uploads, fixes,
// profiles) of s must be: beside a SQLite file, named after it
// (crm.db.uploads); for a database on a server, which no file is beside,
// in the folder the server was given (Config.Folder).
func private(s *Server, name string) string {
	if store.IsAddress(s.cfg.DBPath) {
		return filepath.Join(s.cfg.Folder, name)
	}
	return s.cfg.DBPath + "." + name
}

// concrete turns a route's pattern into a path it answers.
func concrete(pattern string) string {
	r := strings.NewReplacer("{id}", "1", "{file}", "app.css", "{name}", "canonical", "{tenant}", "demo", "{kind}", "contacts", "{$}", "")
	return r.Replace(pattern)
}

type req struct {
	method, path, host string
	header             map[string]string
	cookie             bool
}

func (s *Server) do(t *testing.T, q req) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(q.method, q.path, strings.NewReader("{}"))
	if strings.HasSuffix(q.path, "/events") {
		// An event stream goes on until its client leaves: this one leaves
		// soon.
		ctx, cancel := context.WithTimeout(r.Context(), 300*time.Millisecond)
		t.Cleanup(cancel)
		r = r.WithContext(ctx)
	}
	r.Host = q.host
	if q.host == "-" {
		r.Host = ""
	}
	for k, v := range q.header {
		r.Header.Set(k, v)
	}
	if q.cookie {
		r.AddCookie(&http.Cookie{Name: s.cookie, Value: s.token})
	}
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, r)
	return w
}

// TestEveryRouteIsGuarded: SPEC §9, walked over every route the server
// registers, so that a route added later cannot skip a rule. A foreign or
// empty Host is refused (DNS rebinding); no token, a wrong one, or a token
// in a cookie of another name is refused; a POST from another site, or
// without X-Requested-By, is refused; every answer carries the strict CSP
// and no CORS header.
func TestEveryRouteIsGuarded(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		s := testServer(t, addr)
		require.NotEmpty(t, s.routes)
		for _, rt := range s.routes {
			p := concrete(rt.pattern)
			t.Run(rt.method+" "+rt.pattern, func(t *testing.T) {
				ok := map[string]string{"Authorization": "Bearer " + s.token, RequestedBy: "crmimport"}
				for name, q := range map[string]req{
					"ForeignHost":    {rt.method, p, "evil.example:80", ok, false},
					"RebindingHost":  {rt.method, p, "attacker.example:" + strings.Split(s.addr, ":")[1], ok, false},
					"EmptyHost":      {rt.method, p, "-", ok, false},
					"OtherPortHost":  {rt.method, p, "127.0.0.1:1", ok, false},
					"NoToken":        {rt.method, p, s.addr, map[string]string{RequestedBy: "crmimport"}, false},
					"WrongToken":     {rt.method, p, s.addr, map[string]string{"Authorization": "Bearer " + strings.Repeat("0", 32), RequestedBy: "crmimport"}, false},
					"WrongTokenInQS": {http.MethodGet, p + "?token=" + strings.Repeat("0", 32), s.addr, nil, false},
				} {
					w := s.do(t, q)
					require.GreaterOrEqual(t, w.Code, 400, "%s: %d %s", name, w.Code, w.Body.String())
					require.NotEqual(t, http.StatusNotFound, w.Code, "%s: refused before any route is looked at", name)
					require.Empty(t, w.Header().Get("Set-Cookie"), name)
				}
				if rt.method == http.MethodPost {
					for name, h := range map[string]map[string]string{
						"CrossSite":        {RequestedBy: "crmimport", "Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"},
						"CrossOrigin":      {RequestedBy: "crmimport", "Origin": "http://localhost:1"},
						"NoRequestedBy":    {},
						"WrongRequestedBy": {RequestedBy: "evil"},
					} {
						w := s.do(t, req{rt.method, p, s.addr, h, true})
						require.Equal(t, http.StatusForbidden, w.Code, "%s: %s", name, w.Body.String())
					}
				}
				w := s.do(t, req{rt.method, p, s.addr, ok, false})
				require.Contains(t, w.Header().Get("Content-Security-Policy"), "default-src 'none'")
				require.Contains(t, w.Header().Get("Content-Security-Policy"), "script-src 'self'")
				for k := range w.Header() {
					require.False(t, strings.HasPrefix(strings.ToLower(k), "access-control-"), "no CORS header: %s", k)
				}
			})
		}
	})
}

// TestTokenBecomesAnInstanceCookie: the token in the URL is taken once
// into an HttpOnly, SameSite=Strict cookie named for this instance, and
// the URL is cleaned of it; the cookie alone then opens the pages, while a
// cookie of another name with the right value does not.
func TestTokenBecomesAnInstanceCookie(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		s := testServer(t, addr)
		require.Len(t, s.token, 32, "128 bits, hex")
		w := s.do(t, req{http.MethodGet, "/runs/1?token=" + s.token, s.addr, nil, false})
		require.Equal(t, http.StatusSeeOther, w.Code)
		require.Equal(t, "/runs/1", w.Header().Get("Location"))
		c := w.Result().Cookies()
		require.Len(t, c, 1)
		require.Equal(t, s.cookie, c[0].Name)
		require.True(t, strings.HasPrefix(s.cookie, "crmimport_") && len(s.cookie) > len("crmimport_"))
		require.True(t, c[0].HttpOnly)
		require.Equal(t, http.SameSiteStrictMode, c[0].SameSite)
		w = s.do(t, req{http.MethodGet, "/runs/1", s.addr, nil, true})
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		r := httptest.NewRequest(http.MethodGet, "/runs/1", nil)
		r.Host = s.addr
		r.AddCookie(&http.Cookie{Name: "crmimport_other", Value: s.token})
		w = httptest.NewRecorder()
		s.Handler().ServeHTTP(w, r)
		require.Equal(t, http.StatusUnauthorized, w.Code, "another instance's cookie name")
		other, err := New(context.Background(), Config{DBPath: addr, Folder: t.TempDir()}) // another instance on the same database
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, other.Shutdown(context.Background())) })
		require.NotEqual(t, s.cookie, other.cookie, "each instance names its cookie")
		require.NotEqual(t, s.token, other.token)
	})
}

// TestNoGetChangesAnything: every GET route, answered with a valid token,
// leaves the database as it was.
func TestNoGetChangesAnything(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		s := testServer(t, addr)
		before := snapshot(t, s)
		for _, rt := range s.routes {
			if rt.method != http.MethodGet || strings.HasSuffix(rt.pattern, "/events") {
				continue
			}
			s.do(t, req{rt.method, concrete(rt.pattern), s.addr, nil, true})
		}
		require.Equal(t, before, snapshot(t, s))
	})
}

// snapshot is what a change would change: the counts of runs, slots, log
// lines and companies, and each run's status and stop request.
func snapshot(t *testing.T, s *Server) string {
	t.Helper()
	var b strings.Builder
	for _, q := range []string{`SELECT count(*) FROM migrations`, `SELECT count(*) FROM migration_records`, `SELECT count(*) FROM run_log`,
		`SELECT count(*) FROM companies`} {
		var n int64
		require.NoError(t, s.ro.QueryRow(q).Scan(&n))
		fmt.Fprintf(&b, "%d|", n)
	}
	rows, err := s.ro.Query(`SELECT id, status, cancellation_requested FROM migrations ORDER BY id`)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var id, stop int64
		var status string
		require.NoError(t, rows.Scan(&id, &status, &stop))
		fmt.Fprintf(&b, "%d %s %d|", id, status, stop)
	}
	require.NoError(t, rows.Err())
	return b.String()
}

// TestAddrMustBeLoopback: SPEC §9 — the desktop listens on 127.0.0.1 or
// [::1] (however spelled) and nowhere else: any address another machine
// could reach is refused, and so is another loopback address such as
// 127.0.0.2, which the Host check (DNS rebinding) would not answer to.
func TestAddrMustBeLoopback(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"127.0.0.1:0", "[::1]:8080", "localhost:0", "[::ffff:127.0.0.1]:0", "[0:0:0:0:0:0:0:1]:0"} {
		require.NoError(t, CheckAddr(ok), ok)
	}
	for _, bad := range []string{"0.0.0.0:0", ":8080", "192.168.1.4:80", "[::]:0", "example.com:80", "evil:80", "127.0.0.1",
		"127.0.0.2:80", "127.1.2.3:0", "[::ffff:127.0.0.2]:0"} {
		err := CheckAddr(bad)
		require.Error(t, err, bad)
		require.Contains(t, err.Error(), "127.0.0.1", "the error says what to give instead")
	}
	for _, bad := range []string{"0.0.0.0:0", "127.0.0.2:0"} {
		_, err := New(context.Background(), Config{DBPath: filepath.Join(t.TempDir(), "x.db"), Addr: bad})
		require.Error(t, err, bad)
	}
}

// TestThePrintedAddressAnswers: issue 23 item 17 — whichever spelling of
// the loopback address --addr gives, the URL the server prints (and its
// Addr) names the address it listens on as the Host check knows it, so
// that opening it shows the Runs page instead of 421.
func TestThePrintedAddressAnswers(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"127.0.0.1:0", "localhost:0", "[::ffff:127.0.0.1]:0", "[::1]:0", "[0:0:0:0:0:0:0:1]:0"} {
		t.Run(addr, func(t *testing.T) {
			t.Parallel()
			s, err := New(context.Background(), Config{DBPath: filepath.Join(t.TempDir(), "crm.db"), Addr: addr})
			require.NoError(t, err)
			go func() { _ = s.Serve() }() // ends with Shutdown
			t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })
			require.True(t, strings.HasPrefix(s.URL(), "http://"+s.Addr()+"/?token="), s.URL())
			if !strings.Contains(addr, "[") {
				require.True(t, strings.HasPrefix(s.Addr(), "127.0.0.1:"), "%s listens on %s", addr, s.Addr())
			}
			jar, err := cookiejar.New(nil)
			require.NoError(t, err)
			res, err := (&http.Client{Jar: jar}).Get(s.URL())
			require.NoError(t, err)
			body, err := io.ReadAll(res.Body)
			require.NoError(t, err)
			require.NoError(t, res.Body.Close())
			require.Equal(t, http.StatusOK, res.StatusCode, "%s printed %s: %s", addr, s.URL(), body)
			require.Contains(t, string(body), "Runs")
		})
	}
}

// TestTheTokenExchangeStaysOnTheSite: issue 23 item 17 — the redirect
// that takes the token out of the URL goes to a path of this site, never
// to another host however the path is spelled (a decoded %2F or %5C would
// make //evil.example, which a browser reads as another host).
func TestTheTokenExchangeStaysOnTheSite(t *testing.T) {
	t.Parallel()
	s := testServer(t, filepath.Join(t.TempDir(), "crm.db"))
	for p, want := range map[string]string{
		"/%2Fevil.example":         "/%2Fevil.example",
		"/%2F%2Fevil.example/x":    "/%2F%2Fevil.example/x",
		"/%5Cevil.example":         "/%5Cevil.example",
		"/%5C%5Cevil.example":      "/%5C%5Cevil.example",
		"/%09/evil.example":        "/%09/evil.example",
		"/runs/1":                  "/runs/1",
		"/runs/1/failed?kind=note": "/runs/1/failed?kind=note",
	} {
		sep := "?"
		if strings.Contains(p, "?") {
			sep = "&"
		}
		w := s.do(t, req{http.MethodGet, p + sep + "token=" + s.token, s.addr, nil, false})
		require.Equal(t, http.StatusSeeOther, w.Code, p)
		loc := w.Header().Get("Location")
		require.Equal(t, want, loc, p)
		u, err := url.Parse("http://" + s.addr + p)
		require.NoError(t, err)
		to, err := u.Parse(loc)
		require.NoError(t, err)
		require.Equal(t, s.addr, to.Host, "%s redirects to %s, on another host", p, loc)
	}
	// The mux redirects a path with // to its clean form before the guard
	// sees it; the guard does not count on it.
	for p, want := range map[string]string{"//evil.example": "/", "": "/", `/\evil.example`: "/%5Cevil.example", "/runs/1": "/runs/1"} {
		require.Equal(t, want, sameSite(&url.URL{Path: p}, nil), p)
	}
}

// TestUploadsArePrivate: files dropped onto the page are written 0600 in a
// 0700 folder beside the database (in Config.Folder for a database on a
// server), and a name cannot climb out of it.
func TestUploadsArePrivate(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		s := testServer(t, addr)
		var body strings.Builder
		body.WriteString("--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"contacts.csv\"\r\n\r\nid,first_name\nc1,Ann\n\r\n--B--\r\n")
		r := httptest.NewRequest(http.MethodPost, "/api/uploads", strings.NewReader(body.String()))
		r.Host = s.addr
		r.Header.Set("Content-Type", "multipart/form-data; boundary=B")
		r.Header.Set(RequestedBy, "crmimport")
		r.AddCookie(&http.Cookie{Name: s.cookie, Value: s.token})
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, r)
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		dirs, err := filepath.Glob(filepath.Join(private(s, uploadsFolder), "*"))
		require.NoError(t, err)
		require.Len(t, dirs, 1)
		for _, p := range []string{private(s, uploadsFolder), dirs[0]} {
			st, err := os.Stat(p)
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o700), st.Mode().Perm(), p)
		}
		st, err := os.Stat(filepath.Join(dirs[0], "contacts.csv"))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm())

		body.Reset()
		body.WriteString("--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"../../escape.csv\"\r\n\r\nx\r\n--B--\r\n")
		r = httptest.NewRequest(http.MethodPost, "/api/uploads", strings.NewReader(body.String()))
		r.Host = s.addr
		r.Header.Set("Content-Type", "multipart/form-data; boundary=B")
		r.Header.Set(RequestedBy, "crmimport")
		r.AddCookie(&http.Cookie{Name: s.cookie, Value: s.token})
		w = httptest.NewRecorder()
		s.Handler().ServeHTTP(w, r)
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		_, err = os.Stat(filepath.Join(filepath.Dir(private(s, uploadsFolder)), "escape.csv"))
		require.ErrorIs(t, err, os.ErrNotExist, "a dropped file stays in its folder")
		if !store.IsAddress(s.cfg.DBPath) {
			left, err := os.ReadDir(s.cfg.Folder)
			require.NoError(t, err)
			require.Empty(t, left, "beside a SQLite file, Config.Folder is not used")
		}
	})
}

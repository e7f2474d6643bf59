package desktop

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// RequestedBy is the header every change must carry (SPEC §9): the pages
// send it, and a script sends it too; a cross-site form cannot.
const RequestedBy = "X-Requested-By"

// csp: nothing but this server's own scripts, styles and requests; no
// frames, no forms to elsewhere, no inline script.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// newSecret is n random bytes as hex.
func newSecret(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// CheckAddr refuses an address that is not a loopback one (SPEC §9: the
// desktop is never reachable from another machine). An empty host or a
// name other than localhost is refused too.
func CheckAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %v (use 127.0.0.1:PORT or [::1]:PORT)", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("--addr %q: not a loopback address; the desktop listens on 127.0.0.1 or [::1] only", addr)
	}
	return nil
}

// guard is the security of every route: Host, token, and for a change the
// origin and the custom header; and the headers every answer carries.
func (s *Server) guard(rt route) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		if !s.hostAllowed(r.Host) {
			s.refuse(w, r, http.StatusMisdirectedRequest, fmt.Sprintf("this server answers to %s only (Host %q refused)", s.addr, r.Host))
			return
		}
		if tok := r.URL.Query().Get("token"); tok != "" && r.Method == http.MethodGet {
			if !s.tokenOK(tok) {
				s.refuse(w, r, http.StatusUnauthorized, "wrong token: open the address `crmimport ui` printed")
				return
			}
			http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: s.token, Path: "/", HttpOnly: true,
				SameSite: http.SameSiteStrictMode})
			q := r.URL.Query()
			q.Del("token")
			u := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
			http.Redirect(w, r, u.String(), http.StatusSeeOther)
			return
		}
		if !s.authorized(r) {
			s.refuse(w, r, http.StatusUnauthorized, "no token: open the address `crmimport ui` printed (or send Authorization: Bearer TOKEN)")
			return
		}
		if rt.method != http.MethodGet {
			if err := s.origin.Check(r); err != nil {
				s.refuse(w, r, http.StatusForbidden, "a change must come from this page: "+err.Error())
				return
			}
			if r.Header.Get(RequestedBy) != "crmimport" {
				s.refuse(w, r, http.StatusForbidden, "a change must carry the header "+RequestedBy+": crmimport")
				return
			}
		}
		rt.h(w, r)
	}
}

// hostAllowed: the Host header names this server's own loopback address
// (against DNS rebinding); an empty one is refused.
func (s *Server) hostAllowed(host string) bool {
	for _, h := range s.hosts {
		if host == h {
			return true
		}
	}
	return false
}

func (s *Server) tokenOK(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.token)) == 1
}

// authorized: the instance's cookie, or a Bearer header.
func (s *Server) authorized(r *http.Request) bool {
	if c, err := r.Cookie(s.cookie); err == nil && s.tokenOK(c.Value) {
		return true
	}
	if a := r.Header.Get("Authorization"); strings.HasPrefix(a, "Bearer ") {
		return s.tokenOK(strings.TrimPrefix(a, "Bearer "))
	}
	return false
}

// refuse answers a refused request: JSON for the API, a short page else.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, code int, msg string) {
	if strings.HasPrefix(r.URL.Path, "/api/") {
		writeJSON(w, code, apiError{Error: msg, ExitCode: exitFor(code)})
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprintln(w, "crmimport: "+msg)
}

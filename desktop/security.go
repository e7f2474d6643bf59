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

// CheckAddr refuses an address other than 127.0.0.1 or [::1] (SPEC §9:
// the desktop is never reachable from another machine, and the Host check
// against DNS rebinding answers to those two and localhost only). Another
// spelling of one of them ([::ffff:127.0.0.1], [0:0:0:0:0:0:0:1]) is that
// address; another loopback address (127.0.0.2) is refused, as are an
// empty host and a name other than localhost.
func CheckAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %v (use 127.0.0.1:PORT or [::1]:PORT)", addr, err)
	}
	if host == "localhost" {
		return nil // listens on 127.0.0.1 (listenAddr)
	}
	if !loopback(net.ParseIP(host)) {
		return fmt.Errorf("--addr %q: the desktop listens on the loopback address 127.0.0.1 or [::1] only (use 127.0.0.1:PORT or [::1]:PORT; port 0 takes a free one)", addr)
	}
	return nil
}

// loopback: ip is 127.0.0.1 or ::1, however it was written.
func loopback(ip net.IP) bool {
	return ip != nil && (ip.Equal(net.IPv4(127, 0, 0, 1)) || ip.Equal(net.IPv6loopback))
}

// sameSite is where the token exchange sends the browser: the request's
// own path and query, escaped as they came (a %2F or %5C decoded would
// make //evil.example or /\evil.example, which a browser reads as another
// host; EscapedPath keeps them, and escapes a backslash), and the Runs
// page for a path that would still leave the site (one that the server's
// mux has not cleaned of its //).
func sameSite(u *url.URL, q url.Values) string {
	p := u.EscapedPath()
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") {
		p = "/"
	}
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	return p
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
			http.Redirect(w, r, sameSite(r.URL, q), http.StatusSeeOther)
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

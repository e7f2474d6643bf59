package desktop

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"crmimport/runs"
	"crmimport/store"
)

//go:embed assets
var embedded embed.FS

// Config is what `crmimport ui` starts a server with.
type Config struct {
	DBPath string // the database, a SQLite file's path or a postgres:// address; made when absent (an import can start here)
	Addr   string // a loopback address; port 0 takes a free one
	Assets string // a folder to serve the templates and static files from, for development; "" for the embedded ones
	// Folder is where the pages write what they are given — dropped
	// files, fixed rows, saved profiles (privateFolder) — when the
	// database is a server's, which no file can be beside: "" for the
	// user's configuration folder's crmimport/ (os.UserConfigDir). Beside
	// a SQLite file they go beside it, and Folder is not used.
	Folder string
	// Failpoints is passed to the engine of the runs started here.
	Engine func(db *sql.DB) *runs.Engine
	// Log is told what happens in the background (a run started here that
	// stopped with an error); may be nil.
	Log func(string)
}

// Server is one running desktop.
type Server struct {
	cfg    Config
	db     *sql.DB // the one writer: runs started here, stop, resume
	ro     *sql.DB // the pages' and the API's reads
	eng    *runs.Engine
	ln     net.Listener
	srv    *http.Server
	addr   string
	hosts  []string
	token  string
	cookie string
	origin *http.CrossOriginProtection
	assets fs.FS
	routes []route
	events *hub

	ctx    context.Context // cancelled at Shutdown: runs started here stop after their batch (R14)
	cancel context.CancelFunc
	runs   sync.WaitGroup
	mu     sync.Mutex
	live   map[int64]bool // runs this process works on now
}

// New opens the database (its writer and a read-only pool), listens on
// cfg.Addr, and makes the instance's token and cookie name.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if err := CheckAddr(cfg.Addr); err != nil {
		return nil, err
	}
	if cfg.Engine == nil {
		cfg.Engine = func(db *sql.DB) *runs.Engine { return runs.NewEngine(db, nil) }
	}
	s := &Server{cfg: cfg, live: map[int64]bool{}}
	var err error
	if s.assets, err = assetsFS(cfg.Assets); err != nil {
		return nil, err
	}
	if s.token, err = newSecret(16); err != nil { // 128 bits (SPEC §9)
		return nil, err
	}
	suffix, err := newSecret(4)
	if err != nil {
		return nil, err
	}
	s.cookie = "crmimport_" + suffix // cookies are shared by the ports of a host: one name per instance
	if s.db, err = store.Open(ctx, cfg.DBPath); err != nil {
		return nil, err
	}
	if s.ro, err = store.OpenReader(ctx, cfg.DBPath); err != nil {
		s.db.Close()
		return nil, err
	}
	s.eng = cfg.Engine(s.db)
	if s.ln, err = net.Listen("tcp", listenAddr(cfg.Addr)); err != nil {
		s.close()
		return nil, fmt.Errorf("ui: listen on %s: %w", cfg.Addr, err)
	}
	// The address printed and answered to is the listener's, as the Host
	// check spells it (127.0.0.1 or [::1]), whatever spelling --addr gave
	// ([::ffff:127.0.0.1], [0:0:0:0:0:0:0:1]): the URL always opens.
	bound := s.ln.Addr().(*net.TCPAddr)
	port := strconv.Itoa(bound.Port)
	s.addr = net.JoinHostPort(bound.IP.String(), port)
	s.hosts = []string{"127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port}
	s.origin = http.NewCrossOriginProtection()
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	s.events = newHub(s)
	s.routes = s.routeTable()
	mux := http.NewServeMux()
	for _, rt := range s.routes {
		mux.HandleFunc(rt.method+" "+rt.pattern, s.guard(rt))
	}
	// Whatever no route names is refused by the same guard (Host, token)
	// before it is answered 404: an unknown path tells a stranger nothing.
	mux.HandleFunc("/", s.guard(route{method: http.MethodGet, pattern: "/", h: s.notFound}))
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	return s, nil
}

// listenAddr is where the server listens for a checked --addr (CheckAddr):
// localhost is 127.0.0.1, not whichever address the resolver gives first.
func listenAddr(addr string) string {
	host, port, _ := net.SplitHostPort(addr)
	if host == "localhost" {
		return net.JoinHostPort("127.0.0.1", port)
	}
	return addr
}

func assetsFS(dir string) (fs.FS, error) {
	if dir == "" {
		return fs.Sub(embedded, "assets")
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("--assets %s: not a folder", dir)
	}
	return os.DirFS(dir), nil
}

// Addr is where the server listens (127.0.0.1:PORT).
func (s *Server) Addr() string { return s.addr }

// URL is the address to open, with the token.
func (s *Server) URL() string { return "http://" + s.addr + "/?token=" + s.token }

// Token is the instance's token (for a script's Authorization header).
func (s *Server) Token() string { return s.token }

// Handler serves the application (tests call it through httptest).
func (s *Server) Handler() http.Handler { return s.srv.Handler }

// Serve answers requests until Shutdown.
func (s *Server) Serve() error {
	err := s.srv.Serve(s.ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops answering, stops the runs this server works on (after
// their batch in flight: R14, they end cancelled and resume continues
// them) and closes the database.
func (s *Server) Shutdown(ctx context.Context) error {
	s.cancel()
	err := s.srv.Shutdown(ctx)
	s.events.close()
	s.runs.Wait()
	return errors.Join(err, s.close())
}

func (s *Server) close() error {
	var errs []error
	if s.ro != nil {
		errs = append(errs, s.ro.Close())
	}
	if s.db != nil {
		errs = append(errs, s.db.Close())
	}
	return errors.Join(errs...)
}

// apiError is every error the API answers: the message and the exit code
// the command line would give for it, with the live run that refused it
// and the dependents that refuse an undo alone (runs.ErrorOf).
type apiError = runs.ErrorDoc

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v) // the client went away: nothing to tell it
}

// httpStatus is the HTTP status of each kind of refusal (runs.RefusalOf).
var httpStatus = map[runs.Refusal]int{
	runs.Failed:      http.StatusInternalServerError,
	runs.Usage:       http.StatusBadRequest,
	runs.Live:        http.StatusConflict,
	runs.PlanChanged: http.StatusConflict, // as `undo --plan` and `run --plan` exit 8: the plan changed since its preview
	runs.NoRun:       http.StatusNotFound,
	runs.NotNow:      http.StatusConflict,            // what the run's state refuses (exit 1), as resume's refusals
	runs.Unplannable: http.StatusUnprocessableEntity, // the export cannot be planned, as `run` refuses it (exit 1)
}

// fail answers err as the command line would: its message and exit code.
func (s *Server) fail(w http.ResponseWriter, err error) {
	writeJSON(w, httpStatus[runs.RefusalOf(err)], runs.ErrorOf(err))
}

// badRequest is a request the API cannot take as it is (exit 2).
func badRequest(format string, args ...any) error { return runs.Usagef(format, args...) }

// exitFor is the exit code of a refusal by the guard.
func exitFor(code int) int {
	if code == http.StatusConflict {
		return 6
	}
	if code >= 400 && code < 500 {
		return 2
	}
	return 1
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/" {
		s.runsPage(w, r)
		return
	}
	s.refuse(w, r, http.StatusNotFound, "no such page: "+r.URL.Path)
}

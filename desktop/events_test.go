package desktop

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/failpoint"
	"crmimport/fixtures/gen"
	"crmimport/phases"
	"crmimport/store/storetest"
)

// slowServer is a listening server on the database at addr whose runs
// pause before each of their first contact batches, so that their
// progress can be watched.
func slowServer(t *testing.T, addr string) *Server {
	t.Helper()
	return pausingServer(t, addr, 10, "250ms")
}

// pausingServer is slowServer with its first batches contact batches (of
// this process, resumes included) each pausing for pause.
func pausingServer(t *testing.T, addr string, batches int, pause string) *Server {
	t.Helper()
	var fps []string
	for n := 1; n <= batches; n++ {
		fps = append(fps, fmt.Sprintf("batch:contact:%d=sleep:%s", n, pause))
	}
	set, err := failpoint.Parse(strings.Join(fps, ","), canon.ParseKind)
	require.NoError(t, err)
	s, err := New(context.Background(), Config{DBPath: addr, Folder: t.TempDir(),
		Engine: func(db *sql.DB) *phases.Engine { return phases.New(db, set) }})
	require.NoError(t, err)
	go func() { _ = s.Serve() }() // ends with Shutdown
	t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })
	return s
}

func (s *Server) api(t *testing.T, method, path string, body any) (*http.Response, map[string]any) {
	t.Helper()
	var b bytes.Buffer
	if body != nil {
		require.NoError(t, json.NewEncoder(&b).Encode(body))
	}
	r, err := http.NewRequest(method, "http://"+s.addr+path, &b)
	require.NoError(t, err)
	r.Header.Set("Authorization", "Bearer "+s.token)
	r.Header.Set(RequestedBy, "crmimport")
	res, err := http.DefaultClient.Do(r)
	require.NoError(t, err)
	defer res.Body.Close()
	var doc map[string]any
	require.NoError(t, json.NewDecoder(res.Body).Decode(&doc))
	return res, doc
}

type sse struct {
	id   string
	kind string
	data string
}

// stream reads events of a run's stream until n have come, resuming after
// lastID when it is not "".
func (s *Server) stream(t *testing.T, run int64, lastID string, n int) []sse {
	t.Helper()
	count := 0
	return s.readEvents(t, run, lastID, func(sse) bool { count++; return count >= n })
}

// readEvents reads a run's stream, resuming after lastID when it is not "",
// until done says so of an event or the stream ends, and returns the events
// read.
func (s *Server) readEvents(t *testing.T, run int64, lastID string, done func(sse) bool) []sse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://%s/api/runs/%d/events", s.addr, run), nil)
	require.NoError(t, err)
	r.Header.Set("Authorization", "Bearer "+s.token)
	if lastID != "" {
		r.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(r)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	var out []sse
	var cur sse
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			cur.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			cur.kind = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		case line == "" && cur.id != "":
			out = append(out, cur)
			if done(cur) {
				return out
			}
			cur = sse{}
		}
	}
	return out
}

// keepWatching opens a run's stream and keeps it open until the test ends,
// as a page left open does; it answers once the stream has sent its first
// event (the server holds the watcher).
func (s *Server) keepWatching(t *testing.T, run int64) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://%s/api/runs/%d/events", s.addr, run), nil)
	require.NoError(t, err)
	r.Header.Set("Authorization", "Bearer "+s.token)
	res, err := http.DefaultClient.Do(r)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() && !strings.HasPrefix(sc.Text(), "data: ") {
	}
	require.NoError(t, sc.Err())
	go func() {
		defer res.Body.Close()
		for sc.Scan() {
		}
	}()
}

// TestEventsResumeWithLastEventID: a run's stream starts with its state;
// a client that reconnects with Last-Event-ID gets the events it missed,
// in order, from where it was, not the state again; events carry the
// run's progress as it goes.
func TestEventsResumeWithLastEventID(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		s := slowServer(t, addr)
		dir := t.TempDir()
		_, err := gen.Write(dir, gen.Config{Contacts: 600, Seed: 3})
		require.NoError(t, err)
		res, doc := s.api(t, http.MethodPost, "/api/imports", map[string]any{"path": dir, "tenant": "acme", "source": "canonical", "batch_size": 30})
		require.Equal(t, http.StatusAccepted, res.StatusCode, doc)
		run := int64(doc["run"].(float64))

		first := s.stream(t, run, "", 4)
		require.Len(t, first, 4)
		require.Equal(t, "state", first[0].kind, "a stream starts with the current state")
		var st runState
		require.NoError(t, json.Unmarshal([]byte(first[0].data), &st))
		require.Equal(t, run, st.Run)
		for i := 1; i < len(first); i++ {
			require.NotEqual(t, first[i-1].data, first[i].data, "an event is a change")
		}

		again := s.stream(t, run, first[1].id, 2)
		require.Len(t, again, 2)
		require.Equal(t, first[2].id, again[0].id, "resumed after the last event seen")
		require.Equal(t, first[2].data, again[0].data)
		require.NotEqual(t, "state", again[0].kind)
		require.Equal(t, first[3].id, again[1].id)

		gone := s.stream(t, run, "999999", 1)
		require.Equal(t, "state", gone[0].kind, "an id the server does not hold gets the state")
	})
}

// TestASecondStartIsRefused: a run started from the page runs in the
// server's process under admission control (R13): a second start for the
// live tenant answers 409 naming the live run, with the CLI's exit code 6.
func TestASecondStartIsRefused(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		s := slowServer(t, addr)
		dir := t.TempDir()
		_, err := gen.Write(dir, gen.Config{Contacts: 300, Seed: 4})
		require.NoError(t, err)
		req := map[string]any{"path": dir, "tenant": "acme", "source": "canonical", "batch_size": 30}
		res, doc := s.api(t, http.MethodPost, "/api/imports", req)
		require.Equal(t, http.StatusAccepted, res.StatusCode, doc)
		live := doc["run"].(float64)
		res, doc = s.api(t, http.MethodPost, "/api/imports", req)
		require.Equal(t, http.StatusConflict, res.StatusCode, doc)
		require.Equal(t, live, doc["live_run"])
		require.Equal(t, float64(6), doc["exit_code"])
		require.Contains(t, doc["error"], "live run")

		res, doc = s.api(t, http.MethodPost, "/api/imports", map[string]any{"path": "", "tenant": "acme", "source": "canonical"})
		require.Equal(t, http.StatusBadRequest, res.StatusCode)
		require.Equal(t, float64(2), doc["exit_code"], "a request that cannot be right: the CLI's usage code")
		res, doc = s.api(t, http.MethodPost, "/api/imports", map[string]any{"path": filepath.Join(dir, "nope"), "tenant": "b", "source": "canonical"})
		require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode, doc)
		require.Equal(t, float64(1), doc["exit_code"], "an export that cannot be planned, as run refuses it")

		res, doc = s.api(t, http.MethodPost, fmt.Sprintf("/api/runs/%d/stop", int(live)), nil)
		require.Equal(t, http.StatusOK, res.StatusCode, doc)
		require.Equal(t, true, doc["requested"])
	})
}

// TestAResumedRunStreamsItsNewAttempt: issue 23 item 12 — after a stop and
// a resume (R14, R8), a page that opens the run's stream gets the run as it
// is now, running, not the end state its stream kept from the attempt
// before (on which the page, seeing the run ended, reloaded itself every
// second until the run really ended) — though another page kept watching
// the run all along, so that the feed's poller never stopped and its last
// state, read before the resume, was the stop.
func TestAResumedRunStreamsItsNewAttempt(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		s := pausingServer(t, addr, 60, "150ms")
		dir := t.TempDir()
		_, err := gen.Write(dir, gen.Config{Contacts: 1200, Seed: 5})
		require.NoError(t, err)
		res, doc := s.api(t, http.MethodPost, "/api/imports", map[string]any{"path": dir, "tenant": "acme", "source": "canonical", "batch_size": 30})
		require.Equal(t, http.StatusAccepted, res.StatusCode, doc)
		run := int64(doc["run"].(float64))
		s.keepWatching(t, run)

		// A page watches the run until it ends cancelled: its stream keeps
		// that state.
		var stopped bool
		var last runState
		s.readEvents(t, run, "", func(e sse) bool {
			require.NoError(t, json.Unmarshal([]byte(e.data), &last))
			if !stopped && last.Status == "running" && last.Kinds["contact"].Imported > 0 {
				res, doc := s.api(t, http.MethodPost, fmt.Sprintf("/api/runs/%d/stop", run), nil)
				require.Equal(t, http.StatusOK, res.StatusCode, doc)
				stopped = true
			}
			return last.Status == "cancelled"
		})
		require.Equal(t, "cancelled", last.Status, "the stream told the stop")

		res, doc = s.api(t, http.MethodPost, fmt.Sprintf("/api/runs/%d/resume", run), nil)
		require.Equal(t, http.StatusAccepted, res.StatusCode, doc)
		_, now := s.api(t, http.MethodGet, fmt.Sprintf("/api/runs/%d", run), nil)
		require.Equal(t, "running", now["status"], "the API says the resumed run works")

		first := s.stream(t, run, "", 1)
		require.Len(t, first, 1)
		var st runState
		require.NoError(t, json.Unmarshal([]byte(first[0].data), &st))
		require.Equal(t, "state", first[0].kind)
		require.Equal(t, "running", st.Status, "a page opened after the resume is told the run works, not the end of the attempt before: %s", first[0].data)
	})
}

// TestADryRunBesideALiveRun: issue 23 item 14 — a dry run of a tenant whose
// run works is refused as that run's second run would be (R13: 409, exit
// code 6), saying that the run is live and how to stop it, not that its
// process is gone and `resume` continues it: the dry run's copy of the
// database stands for the database, in which the run's owner works. Not
// parallel: on PostgreSQL its dry run's throwaway schema would show in
// TestDryRunFromThePage's look for a copy left behind.
func TestADryRunBesideALiveRun(t *testing.T) {
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		s := pausingServer(t, addr, 40, "150ms")
		dir := t.TempDir()
		_, err := gen.Write(dir, gen.Config{Contacts: 1200, Seed: 6})
		require.NoError(t, err)
		req := map[string]any{"path": dir, "tenant": "acme", "source": "canonical", "batch_size": 30}
		res, doc := s.api(t, http.MethodPost, "/api/imports", req)
		require.Equal(t, http.StatusAccepted, res.StatusCode, doc)
		live := int64(doc["run"].(float64))

		req["dry_run"] = true
		res, doc = s.api(t, http.MethodPost, "/api/imports", req)
		require.Equal(t, http.StatusConflict, res.StatusCode, doc)
		require.Equal(t, float64(live), doc["live_run"])
		require.Equal(t, float64(6), doc["exit_code"])
		msg := doc["error"].(string)
		require.Contains(t, msg, fmt.Sprintf("already has a live run: run %d", live))
		require.Contains(t, msg, fmt.Sprintf("crmimport stop %d", live))
		require.NotContains(t, msg, "interrupted")
		require.NotContains(t, msg, "resume")
		_, now := s.api(t, http.MethodGet, fmt.Sprintf("/api/runs/%d", live), nil)
		require.Equal(t, "running", now["status"])
		require.NotEqual(t, true, now["interrupted"], "the live run is live")
	})
}

// TestAStopFromThePageSaysWhoAsked: issue 23 item 16 — a stop given on the
// page (R14) is told, in the run's log and its cancelled tasks' notes, as
// asked by the desktop and this process, not as `crmimport stop` from
// another host.
func TestAStopFromThePageSaysWhoAsked(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		s := pausingServer(t, addr, 40, "150ms")
		dir := t.TempDir()
		_, err := gen.Write(dir, gen.Config{Contacts: 1200, Seed: 8})
		require.NoError(t, err)
		res, doc := s.api(t, http.MethodPost, "/api/imports", map[string]any{"path": dir, "tenant": "acme", "source": "canonical", "batch_size": 30})
		require.Equal(t, http.StatusAccepted, res.StatusCode, doc)
		run := int64(doc["run"].(float64))
		var last runState
		s.readEvents(t, run, "", func(e sse) bool {
			require.NoError(t, json.Unmarshal([]byte(e.data), &last))
			return last.Kinds["contact"].Imported > 0
		})
		res, doc = s.api(t, http.MethodPost, fmt.Sprintf("/api/runs/%d/stop", run), nil)
		require.Equal(t, http.StatusOK, res.StatusCode, doc)
		s.readEvents(t, run, "", func(e sse) bool {
			require.NoError(t, json.Unmarshal([]byte(e.data), &last))
			return last.Status == "cancelled"
		})

		v, err := s.buildRun(context.Background(), run)
		require.NoError(t, err)
		asked := fmt.Sprintf("stop requested by the desktop (`crmimport ui`), pid %d on ", os.Getpid())
		var notes []string
		for _, task := range v.R.Tasks {
			if task.Status == phases.TaskCancelled && task.Kind != "contact" {
				notes = append(notes, task.LastError)
			}
		}
		require.NotEmpty(t, notes, "the queued tasks were cancelled")
		for _, n := range notes {
			require.Contains(t, n, asked)
		}
		var log strings.Builder
		for _, l := range v.R.Log {
			log.WriteString(l.Message + "\n")
		}
		require.Contains(t, log.String(), asked)
		require.NotContains(t, log.String()+strings.Join(notes, "\n"), "another host")
	})
}

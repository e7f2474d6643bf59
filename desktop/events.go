package desktop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"crmimport/runs"
)

// Live updates (SPEC §9) come from the database, not from this process's
// memory: a run of any process shows live. A poller per watched run reads
// its state through the read pool every EventPoll; each change is an
// event with the next number of the run's sequence. A client that
// reconnects with Last-Event-ID gets the events it missed while the
// server still holds them (the last eventsKept), else the current state.
// A feed outlives its watchers, but what it kept is history, not the run
// as it is: a stream sends nothing until the poller has read the run in a
// read that began after the stream joined (each join wakes the poller) —
// the run may have been resumed meanwhile (R8), and the feed's last state
// is then the end of the attempt before, whether its poller had stopped or
// another page kept it going.

// EventPoll is how often a watched run is read: at least once a second.
const EventPoll = 400 * time.Millisecond

const eventsKept = 256

// event is one message of a run's stream.
type event struct {
	id   int64
	kind string // state (the first, or after a gap), progress, status
	data []byte
}

// feed is one run's sequence of events and its watchers.
type feed struct {
	mu       sync.Mutex
	seq      int64
	events   []event // the last eventsKept
	last     []byte  // the last state sent
	status   string
	joins    int64         // streams joined so far
	read     int64         // joins when the poller's last finished read began: streams joined up to it see the run as it is
	kick     chan struct{} // a join asks the poller for a read now
	watchers int
	wake     chan struct{} // closed and replaced at each new event or read
	stop     context.CancelFunc
}

type hub struct {
	s     *Server
	mu    sync.Mutex
	feeds map[int64]*feed
	ctx   context.Context
	end   context.CancelFunc
}

func newHub(s *Server) *hub {
	ctx, cancel := context.WithCancel(s.ctx)
	return &hub{s: s, feeds: map[int64]*feed{}, ctx: ctx, end: cancel}
}

func (h *hub) close() { h.end() }

// watch joins run id's feed, starting its poller or asking the running
// one for a read now, and answers the join's number: the stream's first
// state is from a read that began after it (feed.read reaches it); leave
// lets go of the feed. A feed outlives its watchers, so that a client that
// reconnects finds the sequence it knew (its poller stops meanwhile).
func (h *hub) watch(id int64) (*feed, int64, func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f := h.feeds[id]
	if f == nil {
		f = &feed{wake: make(chan struct{}), kick: make(chan struct{}, 1)}
		h.feeds[id] = f
	}
	f.mu.Lock()
	f.watchers++
	f.joins++
	join := f.joins
	if f.stop == nil {
		ctx, cancel := context.WithCancel(h.ctx)
		f.stop = cancel
		go h.poll(ctx, id, f)
	} else {
		select {
		case f.kick <- struct{}{}:
		default: // a read is asked already: it begins after this join
		}
	}
	f.mu.Unlock()
	return f, join, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.watchers--
		if f.watchers == 0 && f.stop != nil {
			f.stop()
			f.stop = nil
		}
	}
}

// runState is what a run's events carry: its status, the four outcomes per
// kind and its tasks' progress.
type runState struct {
	Run         int64                  `json:"run"`
	Status      string                 `json:"status"`
	Interrupted bool                   `json:"interrupted"`
	Phase       int                    `json:"phase"`
	DurationMS  *int64                 `json:"duration_ms"`
	Kinds       map[string]runs.Counts `json:"kinds"`
	Tasks       []taskState            `json:"tasks"`
	Message     string                 `json:"message,omitempty"`
}

type taskState struct {
	ID      int64    `json:"id"`
	Kind    string   `json:"kind"`
	Status  string   `json:"status"`
	Rows    int64    `json:"rows"`
	Percent *float64 `json:"percent"`
	Size    string   `json:"size"`
	Rate    string   `json:"rate"`
	Left    string   `json:"left"`
	Note    string   `json:"note,omitempty"`
}

func (s *Server) state(ctx context.Context, id int64) (runState, error) {
	v, err := s.buildRun(ctx, id)
	if err != nil {
		return runState{}, err
	}
	rep := v.R
	st := runState{Run: id, Status: rep.StatusWord(), Interrupted: rep.Interrupted, Phase: rep.Run.CurrentPhase,
		DurationMS: rep.Run.DurationMS, Kinds: map[string]runs.Counts{}, Message: rep.Run.Message}
	for _, k := range rep.Kinds {
		st.Kinds[string(k.Kind)] = k.Counts
	}
	for _, t := range v.Tasks {
		st.Tasks = append(st.Tasks, taskState{ID: t.ID, Kind: string(t.Kind), Status: string(t.Status), Rows: t.Checkpoint.Rows,
			Percent: t.Percent, Size: t.Size, Rate: t.Rate, Left: t.Left, Note: t.LastError})
	}
	return st, nil
}

func (h *hub) poll(ctx context.Context, id int64, f *feed) {
	t := time.NewTicker(EventPoll)
	defer t.Stop()
	for {
		f.mu.Lock()
		joins := f.joins
		f.mu.Unlock()
		st, err := h.s.state(ctx, id)
		if err == nil {
			b, _ := json.Marshal(st) // a struct of plain values: it marshals
			f.mu.Lock()
			if ctx.Err() != nil {
				// Stopped while it read: a poller started since owns the
				// feed, and what this one read may be older than its.
				f.mu.Unlock()
				return
			}
			changed := !bytes.Equal(b, f.last)
			if changed {
				kind := "progress"
				if f.last == nil {
					kind = "state"
				} else if st.Status != f.status {
					kind = "status"
				}
				f.seq++
				f.events = append(f.events, event{id: f.seq, kind: kind, data: b})
				if len(f.events) > eventsKept {
					f.events = f.events[len(f.events)-eventsKept:]
				}
				f.last, f.status = b, st.Status
			}
			if changed || f.read < joins {
				f.read = joins
				close(f.wake)
				f.wake = make(chan struct{})
			}
			f.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-f.kick:
		}
	}
}

// apiEvents streams a run's state as Server-Sent Events: the current state
// first (or, with Last-Event-ID, the events missed since), then an event
// per change of progress or status.
func (s *Server) apiEvents(w http.ResponseWriter, r *http.Request) {
	id := s.runID(w, r)
	if id == 0 {
		return
	}
	if _, err := runs.LoadRun(r.Context(), s.ro, id); err != nil {
		s.fail(w, err)
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		s.fail(w, fmt.Errorf("events: the connection cannot stream"))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	f, join, leave := s.events.watch(id)
	defer leave()
	var after int64 = -1 // -1: send the current state first
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			after = n
		}
	}
	for {
		f.mu.Lock()
		var send []event
		switch {
		case len(f.events) == 0, f.read < join:
			// Nothing read since this stream joined: the run may have
			// changed since the feed's last read (a resume), wait for it.
		case after < 0 || after < f.events[0].id-1 || after > f.seq:
			// First, or a gap the server no longer holds: the current state.
			last := f.events[len(f.events)-1]
			send = []event{{id: last.id, kind: "state", data: last.data}}
		default:
			for _, e := range f.events {
				if e.id > after {
					send = append(send, e)
				}
			}
		}
		wake := f.wake
		f.mu.Unlock()
		for _, e := range send {
			if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.id, e.kind, e.data); err != nil {
				return
			}
			after = e.id
		}
		if len(send) > 0 {
			fl.Flush()
		}
		select {
		case <-r.Context().Done():
			return
		case <-s.ctx.Done():
			return
		case <-wake:
		case <-time.After(15 * time.Second):
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			fl.Flush()
		}
	}
}

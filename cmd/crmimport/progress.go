package main

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"crmimport/importer"
	"crmimport/importer/input"
	"crmimport/phases"
)

// progressView draws one bar per phase on stderr, on a terminal only and
// never under --quiet: the bytes of the phase's files read so far.
type progressView struct {
	mu    sync.Mutex
	a     *app
	db    *sql.DB
	on    bool
	phase int
	bar   *progressbar.ProgressBar
	done  map[int64]int64 // bytes of this phase's tasks already counted
	sizes map[int64]int64
}

func (a *app) progress(imp *importer.Importer) *progressView {
	p := &progressView{a: a, db: imp.Engine.DB, on: a.terminal() && !a.quiet, done: map[int64]int64{}, sizes: map[int64]int64{}}
	if !p.on {
		return p
	}
	imp.Engine.OnTask = p.task
	imp.Progress = p.advance
	return p
}

// task starts a new bar when a task of a new phase starts.
func (p *progressView) task(t phases.Task) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t.Phase == p.phase && p.bar != nil {
		return
	}
	p.finishLocked()
	p.phase = t.Phase
	tasks, err := phases.LoadTasks(context.Background(), p.db, t.RunID)
	var total int64
	if err == nil {
		for _, u := range tasks {
			if u.Phase != t.Phase {
				continue
			}
			if size := input.Size(u.File); size > 0 {
				total += size
				p.sizes[u.ID] = size
			}
		}
	}
	p.bar = progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(p.a.bars), // its own control sequences; it shows no name from data
		progressbar.OptionSetDescription(phaseName(t.Phase)),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetRenderBlankState(true),
	)
}

func (p *progressView) advance(t phases.Task, read, size int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar == nil || t.Phase != p.phase {
		return
	}
	p.done[t.ID] = read
	var n int64
	for _, v := range p.done {
		n += v
	}
	_ = p.bar.Set64(n)
}

func (p *progressView) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finishLocked()
}

func (p *progressView) finishLocked() {
	if p.bar != nil {
		_ = p.bar.Finish()
		p.bar = nil
	}
	p.done = map[int64]int64{}
}

func phaseName(n int) string {
	switch n {
	case 1:
		return "phase 1 · companies"
	case 2:
		return "phase 2 · contacts"
	case 3:
		return "phase 3 · deals"
	case 4:
		return "phase 4 · notes"
	default:
		return "phase 5 · activities, emails"
	}
}

package main

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"crmimport/bytesize"
	"crmimport/report"
	"crmimport/runs"
)

// progressView draws one bar per phase on stderr, on a terminal only and
// never under --quiet: how far the phase's files are read, with the rate
// and time left of the task at work. Its numbers are the database's, as
// the run page and `runs` read them (runs.TasksProgress over the stored
// progress of the phase's tasks), read again after each committed batch:
// the bar, the page and `runs` agree.
type progressView struct {
	mu    sync.Mutex
	a     *app
	db    *sql.DB
	now   func() time.Time
	on    bool
	phase int
	undo  bool // the run is an undo (R16)
	bar   *progressbar.ProgressBar
}

func (a *app) progress() *progressView {
	return &progressView{a: a, on: a.terminal() && !a.quiet}
}

// watch draws the progress of the runs engine e works on (runs.Watch).
func (p *progressView) watch(e *runs.Engine) {
	if !p.on {
		return
	}
	p.mu.Lock()
	p.db, p.now = e.DB, e.Now
	p.mu.Unlock()
	e.OnTask = p.task
	e.OnBatch = p.committed // an undo's batches too
}

// task starts a new bar when a task of a new phase starts.
func (p *progressView) task(t runs.Task) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t.Phase == p.phase && p.bar != nil {
		p.refreshLocked(t.RunID)
		return
	}
	p.finishLocked()
	p.phase = t.Phase
	p.undo = isUndoTask(p.db, t.RunID)
	p.bar = progressbar.NewOptions64(-1,
		progressbar.OptionSetWriter(p.a.bars), // its own control sequences; it shows no name from data
		progressbar.OptionSetDescription(p.phaseName()),
		progressbar.OptionShowDescriptionAtLineEnd(),
		progressbar.OptionSetPredictTime(false), // the time left is the database's, in the description
		progressbar.OptionSetElapsedTime(false),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetRenderBlankState(true),
	)
	p.refreshLocked(t.RunID)
}

// committed redraws the bar once a batch of t has committed.
func (p *progressView) committed(t runs.Task) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar == nil || t.Phase != p.phase {
		return
	}
	p.refreshLocked(t.RunID)
}

// refreshLocked reads the phase's tasks and shows their stored progress.
// A read that fails leaves the bar as it was: it is a view, and the run
// itself tells its errors.
func (p *progressView) refreshLocked(runID int64) {
	tasks, err := runs.LoadTasks(context.Background(), p.db, runID)
	if err != nil {
		return
	}
	var phase []runs.Task
	for _, u := range tasks {
		if u.Phase == p.phase {
			phase = append(phase, u)
		}
	}
	pr := runs.TasksProgress(phase, p.now())
	desc := p.phaseName() + " · " + report.Count(pr.Records) + " records"
	if pr.Percent != nil {
		if p.bar.GetMax64() != pr.SizeBytes {
			p.bar.ChangeMax64(pr.SizeBytes)
		}
		// The bar shows the stored percent, which stays below 100 until
		// the phase's tasks have succeeded.
		_ = p.bar.Set64(int64(*pr.Percent / 100 * float64(pr.SizeBytes)))
		if p.undo {
			// An undo's size is its items, not bytes.
			desc = p.phaseName() + " · " + report.Count(pr.ReadBytes) + " of " + report.Count(pr.SizeBytes) + " slots taken back"
		} else {
			desc += " · " + bytesize.Format(pr.ReadBytes) + " of " + bytesize.Format(pr.SizeBytes)
		}
	} else {
		_ = p.bar.Set64(pr.ReadBytes)
	}
	if pace := report.Pace(pr); pace != "" {
		desc += " · " + pace
	}
	p.bar.Describe(desc)
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
}

// isUndoTask reports whether run is an undo (R16), whose phases go
// children first and whose progress counts slots.
func isUndoTask(db *sql.DB, run int64) bool {
	r, err := runs.LoadRun(context.Background(), db, run)
	return err == nil && r.Undoes != 0
}

// phaseName names the bar's phase: an import's, or an undo's (children
// first, SPEC §10).
func (p *progressView) phaseName() string {
	if !p.undo {
		return phaseName(p.phase)
	}
	switch p.phase {
	case 1:
		return "undo phase 1 · activities, emails"
	case 2:
		return "undo phase 2 · notes"
	case 3:
		return "undo phase 3 · deals"
	case 4:
		return "undo phase 4 · contacts"
	default:
		return "undo phase 5 · companies"
	}
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

package importer

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"crmimport/ledger"
	"crmimport/phases"
)

// DefaultBatchSize is how many records commit together with their
// checkpoint (R12): a crash loses at most one batch of work.
const DefaultBatchSize = 5000

// Options are a run's options, persisted with the run (R10) and read back
// on resume.
type Options struct {
	Input     string   `json:"input"`
	Profile   string   `json:"profile"`
	Only      []string `json:"only,omitempty"`
	BatchSize int      `json:"batch_size"`
	Strict    bool     `json:"strict,omitempty"`
	Encoding  string   `json:"encoding,omitempty"`
}

// DecodeOptions reads a run's persisted options.
func DecodeOptions(r phases.Run) (Options, error) {
	var o Options
	if len(r.Options) == 0 {
		return o, nil
	}
	if err := json.Unmarshal(r.Options, &o); err != nil {
		return o, fmt.Errorf("run %d: options: %w", r.ID, err)
	}
	return o, nil
}

// RunSpec is what a user asks of a new run.
type RunSpec struct {
	Tenant    string
	Source    string
	Profile   string // "" means the built-in profile named like the source
	Input     string
	Only      []ledger.Kind
	BatchSize int
	Strict    bool
	Encoding  string // "" means: UTF-8, or Windows-1252 for a file that is not valid UTF-8
}

// Importer plans runs over exports and does their work.
type Importer struct {
	Engine *phases.Engine
	// Progress is told, after each committed batch, how far its file is read.
	Progress func(t phases.Task, read, size int64)

	// runs holds each run's in-memory index (index.go).
	runs map[int64]*runIndex
}

// New returns an importer working through engine.
func New(engine *phases.Engine) *Importer {
	return &Importer{Engine: engine, runs: map[int64]*runIndex{}}
}

// ProfileByName returns a built-in profile.
func ProfileByName(name string) (*Profile, error) {
	if name == "" || name == "canonical" {
		return Canonical(), nil
	}
	return nil, &UsageError{Msg: fmt.Sprintf("unknown profile %q (built-in: canonical)", name)}
}

// UsageError is a request that cannot be right as written (exit 2).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Plan discovers the export's files, fingerprints them, and commits the run
// and its plan (R10). Problems found before the run exists are *InputError
// and leave no row.
func (imp *Importer) Plan(ctx context.Context, spec RunSpec) (phases.Run, error) {
	profileName := spec.Profile
	if profileName == "" {
		profileName = spec.Source
	}
	profile, err := ProfileByName(profileName)
	if err != nil {
		return phases.Run{}, err
	}
	if spec.BatchSize <= 0 {
		spec.BatchSize = DefaultBatchSize
	}
	if spec.Encoding != "" {
		if _, err := NewRowReader(bytes.NewReader(nil), ReadOptions{Name: "--encoding", Format: FormatCSV, Encoding: spec.Encoding}); err != nil {
			return phases.Run{}, &UsageError{Msg: fmt.Sprintf("--encoding %s: %v", spec.Encoding, err)}
		}
	}
	input, err := filepath.Abs(spec.Input)
	if err != nil {
		return phases.Run{}, &InputError{Path: spec.Input, Reason: err.Error()}
	}
	files, notices, err := discover(input, profile, spec.Only, spec.Encoding)
	if err != nil {
		return phases.Run{}, err
	}
	opts := Options{Input: input, Profile: profile.Name, BatchSize: spec.BatchSize, Strict: spec.Strict, Encoding: spec.Encoding}
	for _, k := range spec.Only {
		opts.Only = append(opts.Only, string(k))
	}
	plan := phases.PlanSpec{Tenant: spec.Tenant, Source: spec.Source, Options: opts, Notices: notices}
	for _, f := range files {
		plan.Tasks = append(plan.Tasks, phases.TaskSpec{Kind: f.Kind, Phase: phases.Phase(f.Kind), File: f.Path,
			Format: string(f.Format), Encoding: f.Encoding, Fingerprint: f.Info.Fingerprint})
	}
	return imp.Engine.Plan(ctx, plan)
}

// Execute works on a planned or resumed run (see phases.Engine.Execute).
func (imp *Importer) Execute(ctx context.Context, runID int64) (phases.Run, error) {
	return imp.Engine.Execute(ctx, runID, imp.Open)
}

// Resume re-arms a run after checking that the files its re-armed tasks
// read are still those it planned (R8, R10). A run loaded from a dump
// whose unfinished tasks have no file here is refused: see ResumeFrom.
func (imp *Importer) Resume(ctx context.Context, runID int64) (phases.Run, []phases.Task, error) {
	if err := imp.refuseFileless(ctx, runID); err != nil {
		return phases.Run{}, nil, err
	}
	return imp.Engine.Resume(ctx, runID, checkInputs)
}

// checkInputs refuses a resume into a file that changed since the plan.
func checkInputs(ctx context.Context, run phases.Run, rearm []phases.Task) error {
	for _, t := range rearm {
		if t.File == "" {
			return &phases.ChangedInputError{Run: run.ID, File: t.Kind.Plural() + " task", Reason: "has no input file here"}
		}
		f, err := os.Open(t.File)
		if err != nil {
			return &phases.ChangedInputError{Run: run.ID, File: t.File, Reason: "cannot be opened (" + errors.Unwrap(err).Error() + ")"}
		}
		info, err := Inspect(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("read %s: %w", t.File, err)
		}
		if info.Fingerprint != t.Fingerprint {
			return &phases.ChangedInputError{Run: run.ID, File: t.File,
				Reason: fmt.Sprintf("has changed (fingerprint %s, planned %s)", info.Fingerprint, t.Fingerprint)}
		}
	}
	return nil
}

// taskWork is one task's open input.
type taskWork struct {
	imp       *Importer
	run       phases.Run
	task      phases.Task
	profile   *Profile
	file      *os.File
	size      int64
	rr        *RowReader
	mapper    *mapper
	idx       *runIndex
	feed      *feed
	batchSize int
	rows      int64
	line      int64
}

// Open opens a task's file at its checkpoint (phases.OpenFunc). An error
// fails the task with a message naming the file.
func (imp *Importer) Open(ctx context.Context, run phases.Run, t phases.Task) (*phases.Work, error) {
	opts, err := DecodeOptions(run)
	if err != nil {
		return nil, err
	}
	profile, err := ProfileByName(opts.Profile)
	if err != nil {
		return nil, err
	}
	w, err := imp.openFile(profile, t)
	if err != nil {
		return nil, err
	}
	w.run = run
	w.idx = imp.index(run)
	if err := imp.prepareIndex(ctx, run, t, profile, w.idx); err != nil {
		w.file.Close()
		return nil, err
	}
	// Continue at the checkpoint: skip the records already committed, which
	// are also added to the index of ids seen in this run.
	for w.rows < t.Checkpoint.Rows {
		row, err := w.rr.Next()
		if errors.Is(err, io.EOF) {
			w.file.Close()
			return nil, fmt.Errorf("%s: ends after %d records, but the task's checkpoint is at record %d",
				filepath.Base(t.File), w.rows, t.Checkpoint.Rows)
		}
		if err != nil {
			w.file.Close()
			return nil, err
		}
		w.rows++
		w.line = int64(row.Line)
		r := w.mapper.mapRow(row)
		w.idx.remember(t.Kind, r.ID, firstSeen{file: r.File, line: r.Line})
	}
	w.idx.loaded[t.ID] = true
	w.batchSize = opts.BatchSize
	if w.batchSize <= 0 {
		w.batchSize = DefaultBatchSize
	}
	var known *idTable
	if f := w.idx.finals[t.Kind]; f != nil {
		known = f.loaded
	}
	w.feed = startFeed(w.rr, w.mapper, known)
	return &phases.Work{Next: w.next, Close: func() error {
		w.feed.stop()
		return w.file.Close()
	}}, nil
}

// index returns the in-memory index of a run, made on first use.
func (imp *Importer) index(run phases.Run) *runIndex {
	x := imp.runs[run.ID]
	if x == nil {
		x = newRunIndex(run.Tenant, run.Source)
		imp.runs[run.ID] = x
	}
	return x
}

// prepareIndex loads what the task's kind needs, lets go of what no task
// left needs, and rebuilds, in a new process, the ids that earlier tasks of
// the same kind read in this run (SPEC §4 step 2 holds across a resume).
func (imp *Importer) prepareIndex(ctx context.Context, run phases.Run, t phases.Task, profile *Profile, x *runIndex) error {
	tasks, err := phases.LoadTasks(ctx, imp.Engine.DB, run.ID)
	if err != nil {
		return err
	}
	var remaining []ledger.Kind
	for _, u := range tasks {
		if u.Status == phases.TaskPending || u.Status == phases.TaskRunning {
			remaining = append(remaining, u.Kind)
		}
	}
	if err := x.need(ctx, imp.Engine.DB, t.Kind, remaining); err != nil {
		return err
	}
	for _, u := range tasks {
		if u.Kind != t.Kind || u.ID >= t.ID || x.loaded[u.ID] || u.Checkpoint.Rows == 0 {
			continue
		}
		w, err := imp.openFile(profile, u)
		if err != nil {
			return fmt.Errorf("re-read the ids of %s: %w", filepath.Base(u.File), err)
		}
		for n := int64(0); n < u.Checkpoint.Rows; n++ {
			row, err := w.rr.Next()
			if err != nil {
				break
			}
			r := w.mapper.mapRow(row)
			x.remember(t.Kind, r.ID, firstSeen{file: r.File, line: r.Line})
		}
		w.file.Close()
		x.loaded[u.ID] = true
	}
	return nil
}

func (imp *Importer) openFile(profile *Profile, t phases.Task) (*taskWork, error) {
	name := filepath.Base(t.File)
	f, err := os.Open(t.File)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot open: %w", name, errors.Unwrap(err))
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	rr, err := NewRowReader(bufio.NewReaderSize(f, 1<<16), ReadOptions{Name: name, Format: Format(t.Format), Encoding: t.Encoding})
	if err != nil {
		f.Close()
		return nil, err
	}
	m := newMapper(profile, t.Kind, name)
	if err := m.checkHeader(rr.Header()); err != nil {
		f.Close()
		return nil, err
	}
	return &taskWork{imp: imp, task: t, profile: profile, file: f, size: st.Size(), rr: rr, mapper: m}, nil
}

// chunkSize is how many records are decided and then written together.
const chunkSize = 256

// next decides the next batch of records inside tx and writes them, many
// per statement (R12: the engine commits them with the checkpoint).
func (w *taskWork) next(ctx context.Context, tx *sql.Tx) (phases.Batch, error) {
	l := ledger.New(tx)
	defer l.Close()
	now := w.imp.Engine.Now()
	wr := &writer{ctx: ctx, tx: tx, ledger: l, run: w.run, task: w.task, now: now,
		imported: ledger.FormatTime(now), stmts: map[string]*sql.Stmt{}}
	defer wr.close()
	if err := tx.QueryRowContext(ctx, nextIDSQL(w.task.Kind)).Scan(&wr.next); err != nil {
		return phases.Batch{}, fmt.Errorf("next %s id: %w", w.task.Kind, err)
	}
	w.idx.ctx, w.idx.q = ctx, tx // what the index loads on first need, it reads in this batch
	st := newStage(w.idx, w.task.Kind)
	var counts phases.Counts
	chunk := make([]Record, 0, chunkSize)
	done := false
	for n := 0; n < w.batchSize && !done; n++ {
		r, err := w.feed.next()
		switch {
		case errors.Is(err, io.EOF):
			done = true
		case err != nil:
			return phases.Batch{}, err
		default:
			w.rows++
			w.line = int64(r.Line)
			chunk = append(chunk, r)
		}
		if len(chunk) == chunkSize || (done || n == w.batchSize-1) && len(chunk) > 0 {
			if err := w.writeChunk(wr, st, chunk, &counts); err != nil {
				return phases.Batch{}, err
			}
			chunk = chunk[:0]
		}
	}
	if err := w.idx.err; err != nil {
		w.idx.err = nil // the batch fails; a later one may load again
		return phases.Batch{}, err
	}
	read := w.feed.bytes
	return phases.Batch{
		Checkpoint: phases.Checkpoint{Rows: w.rows, Line: w.line},
		Counts:     counts,
		Done:       done,
		Committed: func() {
			st.commit()
			if w.imp.Progress != nil {
				w.imp.Progress(w.task, read, w.size)
			}
		},
	}, nil
}

// writeChunk decides and writes a chunk of records. When the chunk's
// writes fail for one record's fault (a constraint; a claim refused), the
// chunk is taken back whole and redone record by record, so that only that
// record fails (R4) or is counted unchanged (R2).
func (w *taskWork) writeChunk(wr *writer, st *stage, recs []Record, counts *phases.Counts) error {
	mark, next := st.mark(), wr.next
	ds := make([]decision, len(recs))
	for i, r := range recs {
		ds[i] = decide(st, w.profile, r, wr.nextID)
	}
	err := wr.flush(ds)
	if err == nil {
		for i := range ds {
			count(counts, &ds[i])
		}
		return nil
	}
	if !isRecordFault(err) {
		return err
	}
	st.undo(mark)
	wr.next = next
	for _, r := range recs {
		m := st.mark()
		d := decide(st, w.profile, r, wr.nextID)
		err := wr.flush([]decision{d})
		switch {
		case err == nil:
		case !isRecordFault(err):
			return err
		case errors.Is(err, ledger.ErrRefused):
			st.undo(m)
			d = decision{rec: r, outcome: unchanged} // the slot is final already (R2)
		default:
			st.undo(m)
			if r.ID != "" {
				st.addSeen(r.ID, firstSeen{file: r.File, line: r.Line}) // it was read, whatever became of it
			}
			d = decision{rec: r, outcome: failed, reason: "the database refused the row: " + err.Error()}
			if err := wr.insertFailures([]*decision{&d}); err != nil {
				return err
			}
		}
		count(counts, &d)
	}
	return nil
}

// count adds a record's outcome to the batch's counts.
func count(c *phases.Counts, d *decision) {
	switch d.outcome {
	case failed:
		c.Failed++
		if d.duplicate {
			c.Duplicate++
		}
	case unchanged:
		c.Unchanged++
	case skipped:
		c.Skipped++
	case created, matched:
		c.Imported++
		if d.outcome == matched {
			c.Matched++
		}
		if d.unlinked {
			c.Unlinked++
		}
	}
}

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
const DefaultBatchSize = 1000

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

	// seen indexes, per run and kind, the source ids already read in that
	// run and where (SPEC §4 step 2). It holds only what committed (R12).
	seen map[seenKey]map[string]firstSeen
	// loaded says which tasks' committed rows are in seen.
	loaded map[int64]bool
}

// New returns an importer working through engine.
func New(engine *phases.Engine) *Importer {
	return &Importer{Engine: engine, seen: map[seenKey]map[string]firstSeen{}, loaded: map[int64]bool{}}
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
// read are still those it planned (R8, R10).
func (imp *Importer) Resume(ctx context.Context, runID int64) (phases.Run, []phases.Task, error) {
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
	if err := imp.loadSeen(ctx, run, t, profile); err != nil {
		w.file.Close()
		return nil, err
	}
	// Continue at the checkpoint: skip the records already committed, which
	// are also added to the index of ids seen in this run.
	seen := imp.seenOf(run.ID, t.Kind)
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
		rememberFirst(seen, w.mapper.mapRow(row))
	}
	imp.loaded[t.ID] = true
	w.batchSize = opts.BatchSize
	if w.batchSize <= 0 {
		w.batchSize = DefaultBatchSize
	}
	return &phases.Work{Next: w.next, Close: w.file.Close}, nil
}

type seenKey struct {
	run  int64
	kind ledger.Kind
}

func (imp *Importer) seenOf(run int64, k ledger.Kind) map[string]firstSeen {
	key := seenKey{run: run, kind: k}
	if imp.seen[key] == nil {
		imp.seen[key] = map[string]firstSeen{}
	}
	return imp.seen[key]
}

func rememberFirst(seen map[string]firstSeen, r Record) {
	if r.ID == "" {
		return
	}
	if _, ok := seen[r.ID]; !ok {
		seen[r.ID] = firstSeen{file: r.File, line: r.Line}
	}
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

// loadSeen rebuilds, in a new process, the ids that earlier tasks of the
// same kind read in this run (SPEC §4 step 2 holds across a resume).
func (imp *Importer) loadSeen(ctx context.Context, run phases.Run, t phases.Task, profile *Profile) error {
	tasks, err := phases.LoadTasks(ctx, imp.Engine.DB, run.ID)
	if err != nil {
		return err
	}
	seen := imp.seenOf(run.ID, t.Kind)
	for _, u := range tasks {
		if u.Kind != t.Kind || u.ID >= t.ID || imp.loaded[u.ID] || u.Checkpoint.Rows == 0 {
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
			rememberFirst(seen, w.mapper.mapRow(row))
		}
		w.file.Close()
		imp.loaded[u.ID] = true
	}
	return nil
}

// next decides the next batch of records inside tx (R12).
func (w *taskWork) next(ctx context.Context, tx *sql.Tx) (phases.Batch, error) {
	l := ledger.New(tx)
	defer l.Close()
	ins := &statements{tx: tx}
	defer ins.close()
	b := &batch{ctx: ctx, tx: tx, ledger: l, inserts: ins, run: w.run, task: w.task, profile: w.profile,
		now: w.imp.Engine.Now(), seen: w.imp.seenOf(w.run.ID, w.task.Kind), added: map[string]firstSeen{}}
	done := false
	for n := 0; n < w.batchSize; n++ {
		row, err := w.rr.Next()
		if errors.Is(err, io.EOF) {
			done = true
			break
		}
		if err != nil {
			return phases.Batch{}, err
		}
		w.rows++
		w.line = int64(row.Line)
		if err := b.decide(w.mapper.mapRow(row)); err != nil {
			return phases.Batch{}, err
		}
	}
	seen, added := b.seen, b.added
	return phases.Batch{
		Checkpoint: phases.Checkpoint{Rows: w.rows, Line: w.line},
		Counts:     b.counts,
		Done:       done,
		Committed: func() {
			for id, f := range added {
				seen[id] = f
			}
			if w.imp.Progress != nil {
				w.imp.Progress(w.task, w.rr.BytesRead(), w.size)
			}
		},
	}, nil
}

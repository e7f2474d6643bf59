package importer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"crmimport/importer/input"
	"crmimport/importer/profile"
	"crmimport/importer/reader"
	"crmimport/importer/runopts"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store"
	"crmimport/target"
)

// DefaultBatchSize is how many records commit together with their
// checkpoint (R12): a crash loses at most one batch of work.
const DefaultBatchSize = 5000

// MaxBatchSize bounds --batch-size: a batch's records, rows and slots are
// held until it commits, so one batch of a whole export held them all (1.2
// million records: 294 MiB). At this size a batch costs about 15 MiB, and a
// run stays within the memory the README states.
const MaxBatchSize = 50000

// CheckBatchSize refuses a batch size outside 1…MaxBatchSize, as a usage
// error: both faces ask it (Plan too, where 0 asks for the default).
func CheckBatchSize(n int) error {
	if n < 1 || n > MaxBatchSize {
		return &UsageError{Msg: fmt.Sprintf("the batch size must be between 1 and %d records (a batch is held in memory until it commits), got %d", MaxBatchSize, n)}
	}
	return nil
}

// RunSpec is what a user asks of a new run.
type RunSpec struct {
	Tenant    string
	Source    string
	Profile   string // a built-in profile's name or a profile file; "" means the built-in profile named like the source
	Input     string
	Inputs    []string // further paths of the same export (Salesforce's _2.ZIP …)
	Only      []ledger.Kind
	BatchSize int
	Strict    bool
	Encoding  string // "" means: each file's own, on the evidence of its bytes (reader.ChooseEncoding)
	Reread    bool   // read every file, even one the ledger has already taken whole (sameinput.go)
	// Plan, if set, is the digest of the plan a dry run showed: the run is
	// planned only if its plan has it (*PlanChangedError), and Shown, the
	// dry run's files when known, lets the refusal name what changed.
	Plan  string
	Shown []runopts.PlanFile
}

// Importer plans runs over exports and does their work.
type Importer struct {
	Engine *phases.Engine
	// Progress is told, after each committed batch, how far its file is read.
	Progress func(t phases.Task, read, size int64)

	// runs holds each run's in-memory index (index.go).
	runs map[int64]*runIndex
	// limits bound what zips and gzips may uncompress to.
	limits input.Limits
}

// New returns an importer working through engine.
func New(engine *phases.Engine) *Importer {
	return &Importer{Engine: engine, runs: map[int64]*runIndex{}, limits: input.DefaultLimits()}
}

// UsageError is a request that cannot be right as written (exit 2).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Plan discovers the export's files, fingerprints them, and commits the run
// and its plan (R10). Problems found before the run exists are *input.Error
// and leave no row.
func (imp *Importer) Plan(ctx context.Context, spec RunSpec) (phases.Run, error) {
	if spec.BatchSize != 0 {
		if err := CheckBatchSize(spec.BatchSize); err != nil {
			return phases.Run{}, err
		}
	}
	prof, inputs, err := planInputs(spec.Source, spec.Profile, spec.Encoding, append([]string{spec.Input}, spec.Inputs...))
	if err != nil {
		return phases.Run{}, err
	}
	if spec.BatchSize <= 0 {
		spec.BatchSize = DefaultBatchSize
	}
	d, err := discover(ctx, inputs, prof, spec.Only, spec.Encoding, imp.limits)
	if err != nil {
		return phases.Run{}, err
	}
	d.fixWarnings(prof, spec.Tenant, spec.Source)
	files, side, notes := d.files, d.side, d.notes
	opts := runopts.Options{Input: inputs[0], Inputs: inputs[1:], Profile: prof.Name, SideFiles: side,
		BatchSize: spec.BatchSize, Strict: spec.Strict, Encoding: spec.Encoding, Reread: spec.Reread, Warnings: notes.warnings}
	if !prof.BuiltIn {
		opts.ProfileFile, _ = filepath.Abs(spec.Profile)
		opts.ProfileText = string(prof.Text())
	}
	for _, k := range spec.Only {
		opts.Only = append(opts.Only, string(k))
	}
	plan := phases.PlanSpec{Tenant: spec.Tenant, Source: spec.Source, Notices: notes.notices, Warnings: notes.warnings}
	for _, f := range files {
		plan.Tasks = append(plan.Tasks, phases.TaskSpec{Kind: f.Kind, Phase: phases.Phase(f.Kind), File: f.Path,
			Format: string(f.Format), Encoding: f.Encoding, Fingerprint: f.Info.Fingerprint,
			InputKey: inputKey(prof, f, opts), Size: input.Size(f.Path)})
	}
	// A dry run and the run that confirms it are the same plan: the
	// fingerprints above are what this run reads (R10).
	if opts.Plan, err = planDigest(spec.Tenant, spec.Source, opts, plan.Tasks); err != nil {
		return phases.Run{}, err
	}
	if spec.Plan != "" && spec.Plan != opts.Plan {
		return phases.Run{}, &PlanChangedError{Want: spec.Plan, Was: spec.Shown, Now: runopts.Files(plan.Tasks, opts)}
	}
	plan.Options = opts
	return imp.Engine.Plan(ctx, plan)
}

// Execute works on a planned or resumed import (see phases.Engine.Execute):
// its tasks read their files (Open). An undo's run is not an import: undo
// takes back its items (undo.Open, R16), and runs.Execute gives each run
// to its own.
func (imp *Importer) Execute(ctx context.Context, runID int64) (phases.Run, error) {
	run, err := phases.LoadRun(ctx, imp.Engine.DB, runID)
	if err != nil {
		return phases.Run{}, err
	}
	if run.Undoes != 0 {
		return phases.Run{}, fmt.Errorf("run %d is the undo of run %d, not an import: undo works on it (runs.Execute)", runID, run.Undoes)
	}
	return imp.Engine.Execute(ctx, runID, imp.Open)
}

// Resume re-arms a run after checking that the files its re-armed tasks
// read are still those it planned (R8, R10). A run loaded from a dump
// whose unfinished tasks have no file here is refused: see ResumeFrom.
func (imp *Importer) Resume(ctx context.Context, runID int64) (phases.Run, []phases.Task, error) {
	dump, err := phases.LoadedFrom(ctx, imp.Engine.DB, runID)
	if err != nil {
		return phases.Run{}, nil, err
	}
	run, err := phases.LoadRun(ctx, imp.Engine.DB, runID)
	if err != nil {
		return phases.Run{}, nil, err
	}
	if run.Undoes != 0 {
		return imp.Engine.Resume(ctx, runID, nil) // an undo reads no file: its items are in the database
	}
	if dump != "" {
		if err := imp.resumeLoaded(ctx, runID, dump); err != nil {
			return phases.Run{}, nil, err
		}
	}
	return imp.Engine.Resume(ctx, runID, imp.checkInputs)
}

// checkInputs refuses a resume into a file that changed since the plan:
// the files of the re-armed tasks, and the files tasks read beside their
// own (R10). A zip entry is checked against the CRC-32 and size the zip
// records for it, without reading it.
func (imp *Importer) checkInputs(ctx context.Context, run phases.Run, rearm []phases.Task) error {
	if len(rearm) == 0 {
		return nil
	}
	for _, t := range rearm {
		if t.File == "" {
			return &phases.ChangedInputError{Run: run.ID, File: t.Kind.Plural() + " task", Reason: "has no input file here"}
		}
		if err := imp.checkInput(ctx, run, t.File, "", t.Fingerprint); err != nil {
			return err
		}
	}
	opts, err := runopts.Decode(run)
	if err != nil {
		return err
	}
	for _, a := range opts.SideFiles {
		if err := imp.checkInput(ctx, run, a.File, a.Format, a.Fingerprint); err != nil {
			return err
		}
	}
	return nil
}

func (imp *Importer) checkInput(ctx context.Context, run phases.Run, file, format, want string) error {
	if err := input.Stat(file); err != nil {
		return &phases.ChangedInputError{Run: run.ID, File: file, Reason: "cannot be opened (" + err.Error() + ")"}
	}
	var got string
	var err error
	if format == "folder" {
		got, err = input.FolderFingerprint(file)
	} else {
		got, err = input.Fingerprint(ctx, file, imp.limits)
	}
	if err != nil && ctx.Err() != nil {
		return ctx.Err() // stopped while checking: nothing changed
	}
	if err != nil {
		return &phases.ChangedInputError{Run: run.ID, File: file, Reason: "cannot be read (" + err.Error() + ")"}
	}
	if got != want {
		return &phases.ChangedInputError{Run: run.ID, File: file,
			Reason: fmt.Sprintf("has changed (fingerprint %s, planned %s)", got, want)}
	}
	return nil
}

// openedTask is a task opened on its file: the input, its reader and
// mapper, and, once Open has readied it, the run's index, the feed, and
// where the task's batches stand.
type openedTask struct {
	imp       *Importer
	run       phases.Run
	task      phases.Task
	profile   *profile.Profile
	in        *input.Opened
	size      int64
	rr        *reader.RowReader
	mapper    *profile.Mapper
	idx       *runIndex
	feed      *feed
	batchSize int
	rows      int64
	line      int64
	noted     map[string]bool // notes already written to the run log
	revisits  []revisitAt     // the batch's records that failed or were skipped, where they stand
	// revisit is the task's work when it revisits the records an earlier
	// task left failed or skipped (revisit.go), nil when it reads its file.
	revisit *revisitWork
	// look holds a revisit's final slots, looked up by id (lookups.go).
	look *lookups
}

// Open opens a task's file at its checkpoint (phases.OpenFunc): the file,
// then what the task reads beside it (side files), the run's index made
// ready for the task's kind (what the kind needs loaded, what no task left
// needs let go of, the ids earlier tasks of the kind read rebuilt: SPEC §4
// step 2 holds across a resume, in a new process), the records before the
// checkpoint skipped, and a feed started from there. An error fails the
// task with a message naming the file. A stop (ctx) ends the long parts
// of an open (re-reading the ids of earlier tasks) early; what it reads
// from the database is never cut short.
func (imp *Importer) Open(stop context.Context, run phases.Run, t phases.Task) (_ *phases.Work, err error) {
	ctx := context.WithoutCancel(stop)
	opts, err := runopts.Decode(run)
	if err != nil {
		return nil, err
	}
	prof, err := RunProfile(opts)
	if err != nil {
		return nil, err
	}
	tasks, err := phases.LoadTasks(ctx, imp.Engine.DB, run.ID)
	if err != nil {
		return nil, err
	}
	if work, err := imp.openSameInput(ctx, run, t, tasks, opts); work != nil || err != nil {
		return work, err
	}
	if work, err := imp.openRevisit(ctx, run, t, tasks, opts, prof); work != nil || err != nil {
		return work, err
	}
	w, err := imp.openFile(prof, t, tasks)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			w.close()
		}
	}()
	if err = w.mapper.ReadSideFiles(ctx, opts.SideFiles, imp.limits); err != nil {
		return nil, err
	}
	w.run, w.idx = run, imp.index(run)
	if err = w.idx.need(ctx, imp.Engine.DB, t.Kind, remainingKinds(tasks)); err != nil {
		return nil, err
	}
	if err = imp.rereadSeen(stop, t, tasks, prof, w.idx); err != nil {
		return nil, err
	}
	if err = w.skipToCheckpoint(); err != nil {
		return nil, err
	}
	return w.start(opts.BatchSize), nil
}

// remainingKinds are the kinds of the tasks left to run.
func remainingKinds(tasks []phases.Task) []ledger.Kind {
	var remaining []ledger.Kind
	for _, u := range tasks {
		if u.Status == phases.TaskPending || u.Status == phases.TaskRunning {
			remaining = append(remaining, u.Kind)
		}
	}
	return remaining
}

// skipToCheckpoint reads past the records the task has committed, which
// are also added to the ids seen in this run.
func (w *openedTask) skipToCheckpoint() error {
	t := w.task
	for w.rows < t.Checkpoint.Rows {
		row, err := w.rr.Next()
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%s: ends after %d records, but the task's checkpoint is at record %d",
				input.Name(t.File), w.rows, t.Checkpoint.Rows)
		}
		if err != nil {
			return err
		}
		w.rows++
		w.line = int64(row.Line)
		r := w.mapper.Map(row)
		if id, ok := seenID(r); ok {
			w.idx.remember(t.Kind, id, firstSeen{file: r.File, line: r.Line})
		}
	}
	w.idx.loaded[t.ID] = true
	return nil
}

// start starts the feed from where the task stands, and returns the
// task's work for the engine: batches of batchSize records.
func (w *openedTask) start(batchSize int) *phases.Work {
	w.batchSize = batchSize
	if w.batchSize <= 0 {
		w.batchSize = DefaultBatchSize
	}
	// A run planned before the bound resumes in batches of the bound: a
	// batch is a unit of commit, and the checkpoint counts rows (R12).
	w.batchSize = min(w.batchSize, MaxBatchSize)
	var known *idTable
	if f := w.idx.finals[w.task.Kind]; f != nil {
		known = f.loaded
	}
	read := w.rr.BytesRead // a workbook's, read in place
	if w.in.Raw != nil {
		read = w.in.Raw.BytesRead // the file's bytes, before a gzip
	}
	w.feed = startFeed(w.rr, w.mapper, known, read)
	return &phases.Work{Size: w.size, Next: w.next, Close: func() error {
		w.feed.stop()
		return w.close()
	}}
}

// close lets go of the task's input and what it read beside it.
func (w *openedTask) close() error {
	w.mapper.Close()
	return w.in.Close()
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

// rereadSeen rebuilds, in a new process, the ids that earlier tasks of the
// kind of t read in this run before their checkpoints, for the tasks whose
// ids the index does not hold yet.
func (imp *Importer) rereadSeen(stop context.Context, t phases.Task, tasks []phases.Task, prof *profile.Profile, x *runIndex) error {
	for _, u := range tasks {
		if u.Kind != t.Kind || u.ID >= t.ID || x.loaded[u.ID] || u.Checkpoint.Rows == 0 {
			continue
		}
		w, err := imp.openFile(prof, u, tasks)
		if err != nil {
			return fmt.Errorf("re-read the ids of %s: %w", input.Name(u.File), err)
		}
		// Every record before the task's checkpoint was read once: one
		// that cannot be read again now would leave its id unseen, and a
		// duplicate of it unfound (SPEC §4 step 2). The task fails, naming
		// the file, and resume can try again.
		for n := int64(0); n < u.Checkpoint.Rows; n++ {
			row, err := w.rr.Next()
			if errors.Is(err, io.EOF) {
				w.close()
				return fmt.Errorf("re-read the ids of %s: it ends after %d records, but its task's checkpoint is at record %d",
					input.Name(u.File), n, u.Checkpoint.Rows)
			}
			if err != nil {
				w.close()
				return fmt.Errorf("re-read the ids of %s: %w", input.Name(u.File), err)
			}
			r := w.mapper.Map(row)
			if id, ok := seenID(r); ok {
				x.remember(t.Kind, id, firstSeen{file: r.File, line: r.Line})
			}
			if n%4096 == 0 && stop.Err() != nil {
				w.close()
				return context.Cause(stop)
			}
		}
		w.close()
		x.loaded[u.ID] = true
	}
	return nil
}

// openFile opens a task's input (a file, a gzip, a zip's entry) and reads
// its header (openTaskInput). Its mapper knows which kinds the run's
// tasks (of the run, tasks) read the same file for (SPEC §4: which of
// them counts the rows no kind takes, which fails a flag it cannot read).
func (imp *Importer) openFile(prof *profile.Profile, t phases.Task, tasks []phases.Task) (*openedTask, error) {
	ti, err := openTaskInput(prof, t.File, t.Kind, reader.Format(t.Format), t.Encoding, imp.limits)
	if err != nil {
		return nil, err
	}
	var kinds []ledger.Kind
	for _, u := range tasks {
		if u.File == t.File {
			kinds = append(kinds, u.Kind)
		}
	}
	ti.mapper.Planned(kinds)
	if err := ti.ready(); err != nil {
		ti.close()
		return nil, err
	}
	return &openedTask{imp: imp, task: t, profile: prof, in: ti.in, size: ti.in.Size, rr: ti.rr, mapper: ti.mapper}, nil
}

// logNotes writes to the run log, as warnings, what records say about
// their links (a name that names several parents: SPEC §4, never guessed)
// and the columns kept in extra that hold a NUL byte (SPEC §4: kept, and
// said), once per task and note, in the batch's transaction.
func (w *openedTask) logNotes(ctx context.Context, tx *sql.Tx, recs []profile.Record) error {
	for i := range recs {
		r := &recs[i]
		for _, l := range r.Links() {
			if err := w.logNote(ctx, tx, l.Note, r, l.Note); err != nil {
				return err
			}
		}
		for _, col := range r.NULKept() {
			note := fmt.Sprintf("a NUL byte in column %q, which the %s profile keeps in extra: kept there as \\u0000 — "+
				"text never holds one (binary data in the export?), and a NUL in a column the profile maps fails its row; "+
				"the run's summary counts the records imported with one", col, w.profile.Name)
			if err := w.logNote(ctx, tx, "NUL in "+col, r, note); err != nil {
				return err
			}
		}
	}
	return nil
}

// logNote writes note of record r to the run log as a warning, the first
// time the task meets key.
func (w *openedTask) logNote(ctx context.Context, tx *sql.Tx, key string, r *profile.Record, note string) error {
	if key == "" || w.noted[key] {
		return nil
	}
	if w.noted == nil {
		w.noted = map[string]bool{}
	}
	w.noted[key] = true
	return w.imp.Engine.Log(ctx, tx, w.run.ID, "warning", fmt.Sprintf("%s:%d: %s", r.File, r.Line, note))
}

// chunkSize is how many records are decided and then written together.
const chunkSize = 256

// batchWriter starts the writing of one batch in tx: the ledger, the
// target rows, the row ids of the task's table, and the stage of the
// index. The caller closes it.
func (w *openedTask) batchWriter(ctx context.Context, tx *sql.Tx) (*writer, *stage, error) {
	d := store.DialectOf(w.imp.Engine.DB)
	l := ledger.New(tx, d)
	now := w.imp.Engine.Now()
	imported := ledger.FormatTime(now)
	wr := &writer{ctx: ctx, tx: tx, ledger: l, run: w.run, task: w.task, now: now,
		imported: imported, rows: target.NewWriter(tx, d, w.run.Tenant, imported), stmts: map[string]*sql.Stmt{}}
	var err error
	if wr.ids, err = target.IDs(ctx, d, tx, w.task.Kind); err != nil {
		wr.close()
		return nil, nil, err
	}
	w.revisits = w.revisits[:0]
	st := newStage(w.idx, w.task.Kind)
	st.look = w.look
	return wr, st, nil
}

// next decides the next batch of records inside tx and writes them, many
// per statement (R12: the engine commits them with the checkpoint).
func (w *openedTask) next(ctx context.Context, tx *sql.Tx) (phases.Batch, error) {
	wr, st, err := w.batchWriter(ctx, tx)
	if err != nil {
		return phases.Batch{}, err
	}
	defer wr.close()
	var counts phases.Counts
	chunk := make([]profile.Record, 0, chunkSize)
	rows := make([]int64, 0, chunkSize)
	// writing is the chunk decided and not yet written: each chunk is
	// written while the next is decided (speculative deciding, above).
	var writing *decided
	defer func() {
		if writing != nil && writing.speculated != nil {
			<-writing.speculated // never left deciding once the batch ends
		}
	}()
	done := false
	for n := 0; n < w.batchSize && !done; n++ {
		r, held, err := w.feed.next()
		switch {
		case errors.Is(err, io.EOF):
			done = true
		case err != nil:
			return phases.Batch{}, err
		default:
			w.rows++
			w.line = int64(r.Line)
			if r.Excluded { // read, but not a record of the kind: no outcome, counted (SPEC §4)
				counts.Excluded++
				if r.Untaken {
					counts.Untaken++
				}
			} else {
				chunk = append(chunk, r)
				rows = append(rows, w.rows-1)
			}
		}
		if len(chunk) == chunkSize || (done || held || n == w.batchSize-1) && len(chunk) > 0 {
			if err := w.logNotes(ctx, tx, chunk); err != nil {
				return phases.Batch{}, err
			}
			c := &decided{recs: chunk, rows: rows}
			if writing == nil {
				if err := w.decideChunk(ctx, tx, wr, st, c); err != nil {
					return phases.Batch{}, err
				}
			} else {
				w.speculate(ctx, wr, st, c)
				err := wr.flush(writing.ds)
				ok := err == nil
				if !ok {
					<-c.speculated // the redo takes the speculated decisions back too
				}
				if err := w.finishChunk(ctx, tx, wr, st, writing, err, &counts); err != nil {
					writing = c
					return phases.Batch{}, err
				}
				writing = c
				if err := w.settle(ctx, tx, wr, st, c, ok); err != nil {
					return phases.Batch{}, err
				}
			}
			writing = c
			chunk, rows = make([]profile.Record, 0, chunkSize), make([]int64, 0, chunkSize)
		}
		if held {
			// The feed's budget in bytes is spent (feedBudget): what it
			// read is written now, and it reads on.
			if writing != nil {
				if err := w.finishChunk(ctx, tx, wr, st, writing, wr.flush(writing.ds), &counts); err != nil {
					return phases.Batch{}, err
				}
				writing = nil
			}
			w.feed.written()
		}
	}
	if writing != nil {
		if err := w.finishChunk(ctx, tx, wr, st, writing, wr.flush(writing.ds), &counts); err != nil {
			return phases.Batch{}, err
		}
		writing = nil
	}
	w.feed.written()
	if err := wr.ids.Save(ctx); err != nil { // the row ids given out, with the batch
		return phases.Batch{}, err
	}
	if err := w.saveRevisits(ctx, wr); err != nil {
		return phases.Batch{}, err
	}
	if done {
		// What the file holds past its records, said once, with the last
		// batch (the feed has read to the end: its reader is at rest).
		if f := w.rr.Footer(); f != nil {
			if err := w.imp.Engine.Log(ctx, tx, w.run.ID, "notice", f.Notice(input.Name(w.task.File))); err != nil {
				return phases.Batch{}, err
			}
		}
		for _, n := range sheetNotices(input.Name(w.task.File), w.rr, w.profile, w.task.Kind) {
			if err := w.imp.Engine.Log(ctx, tx, w.run.ID, "notice", n); err != nil {
				return phases.Batch{}, err
			}
		}
	}
	read := w.feed.bytes
	return phases.Batch{
		Checkpoint: phases.Checkpoint{Rows: w.rows, Line: w.line},
		Read:       read,
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

// writeChunk decides and writes a chunk of records in tx, each decision
// handed to the stage before the next record is decided. When the chunk's
// writes fail for one record's fault (a constraint; a claim refused), the
// chunk is taken back whole and redone record by record, so that only that
// record fails (R4) or is counted unchanged (R2).
//
// rows are the records' places in the file (records read before each):
// what a rerun revisits of those that fail or are skipped (revisit.go).
func (w *openedTask) writeChunk(ctx context.Context, tx *sql.Tx, wr *writer, st *stage, recs []profile.Record, rows []int64, counts *phases.Counts) error {
	c := &decided{recs: recs, rows: rows}
	if err := w.decideChunk(ctx, tx, wr, st, c); err != nil {
		return err
	}
	return w.finishChunk(ctx, tx, wr, st, c, wr.flush(c.ds), counts)
}

// decided is a chunk of records with their decisions, and where the stage
// and the row ids stood before them (to take them back).
type decided struct {
	recs       []profile.Record
	rows       []int64
	ds         []decision
	mark       int
	next       int64
	err        error         // of a speculative decideChunk
	speculated chan struct{} // closed when a speculative decideChunk ends
}

// decideChunk decides c's records in order, each handed to the stage
// before the next, the database read through q (the batch's transaction;
// noQueries while the chunk before still writes).
func (w *openedTask) decideChunk(ctx context.Context, q ledger.Querier, wr *writer, st *stage, c *decided) error {
	c.mark, c.next = st.mark(), wr.ids.Mark()
	c.ds = make([]decision, len(c.recs))
	for i, r := range c.recs {
		d, err := decide(ctx, q, st, w.profile, r, wr.ids.Next)
		if err != nil {
			return err
		}
		st.apply(&d)
		c.ds[i] = d
	}
	return nil
}

// finishChunk ends a chunk whose writes gave err (wr.flush): counts it
// when they succeeded; when they failed for one record's fault, takes its
// decisions back (and every later one: a chunk decided on them) and redoes
// the chunk record by record.
func (w *openedTask) finishChunk(ctx context.Context, tx *sql.Tx, wr *writer, st *stage, c *decided, err error, counts *phases.Counts) error {
	if err == nil {
		for i := range c.ds {
			count(counts, &c.ds[i])
			w.keepRevisit(c.rows[i], &c.ds[i])
		}
		return nil
	}
	if !isRecordFault(err) {
		return err
	}
	st.undo(c.mark)
	wr.ids.Reset(c.next)
	for i, r := range c.recs {
		m := st.mark()
		d, err := decide(ctx, tx, st, w.profile, r, wr.ids.Next)
		if err != nil {
			return err
		}
		st.apply(&d)
		err = wr.flush([]decision{d})
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
		w.keepRevisit(c.rows[i], &d)
	}
	return nil
}

// Speculative deciding (issue 16 goal 2): while a chunk's rows and slots
// are written, the next chunk of the batch is decided on another goroutine,
// against the stage with the writing chunk's decisions in it — what they
// will be once it commits. The writing touches neither the stage nor the
// row ids; the deciding touches neither the transaction nor the writer.
// When the writing chunk fails for a record's fault, its decisions are
// taken back and with them the speculated ones (the stage's marks nest),
// and the next chunk is decided again after its redo: R12's batch is the
// same as without speculation. A speculative decision never reads the
// database (an index loaded on first need would see the writing chunk's
// rows before its savepoint is released, and keep them if it rolled back):
// it stops at the first that would, and the chunk is decided again once
// the chunk before it has written.

// errNeedsDB is what noQueries gives: the speculation stops.
var errNeedsDB = errors.New("a speculative decision needed the database")

// noQueries is the Querier of a speculative decision.
type noQueries struct{}

func (noQueries) QueryContext(context.Context, string, ...any) (*sql.Rows, error) {
	return nil, errNeedsDB
}

// speculate starts deciding c on its own goroutine; settle waits for it.
func (w *openedTask) speculate(ctx context.Context, wr *writer, st *stage, c *decided) {
	c.speculated = make(chan struct{})
	go func() {
		defer close(c.speculated)
		c.err = w.decideChunk(ctx, noQueries{}, wr, st, c)
	}()
}

// settle waits for c's speculation and makes c a chunk decided as if on
// this goroutine after the one before it wrote (ok false: that chunk
// failed and took c's decisions back with its own, so c is decided again).
func (w *openedTask) settle(ctx context.Context, tx *sql.Tx, wr *writer, st *stage, c *decided, ok bool) error {
	<-c.speculated
	switch {
	case !ok:
	case errors.Is(c.err, errNeedsDB):
		st.undo(c.mark)
		wr.ids.Reset(c.next)
	case c.err != nil:
		return c.err
	default:
		return nil
	}
	c.err = nil
	return w.decideChunk(ctx, tx, wr, st, c)
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
		if d.outcome == created && len(d.rec.NULKept()) > 0 {
			c.NULKept++ // SPEC §4: its extra, with the NUL, is written (a matched record writes none)
		}
	}
}

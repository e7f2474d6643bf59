package importer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"crmimport/importer/fixmanifest"
	"crmimport/importer/input"
	"crmimport/importer/profile"
	"crmimport/importer/reader"
	"crmimport/importer/runopts"
	"crmimport/ledger"
	"crmimport/phases"
)

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
	// swept: a batch of the task committed, and with it the links that
	// waited for parents already there (relink.go).
	swept bool
	// wholeKind: at the task's end the run has read every record of the
	// task's kind the export holds — no later task of the run reads that
	// kind, and no input is a fix folder, which holds only the lines that
	// failed (lookalikes.go).
	wholeKind bool
	// copyClaims: the task's claims go by the engine's bulk path, until
	// one meets a slot already there (ledger.Ledger.Copying).
	copyClaims bool
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
	w.wholeKind = !slices.ContainsFunc(tasks, func(u phases.Task) bool { return u.Kind == t.Kind && u.ID > t.ID }) &&
		!slices.ContainsFunc(append([]string{opts.Input}, opts.Inputs...), isFixFolder)
	if err = w.idx.need(ctx, imp.Engine.DB, t.Kind, remainingKinds(tasks)); err != nil {
		return nil, err
	}
	// A task that reads its file whole reads its kind's final slots: the
	// next task's kind is read while this one works (loadAhead). A rerun
	// whose files are unchanged (R2's shortcut) reads none and loads none.
	if next, ok := nextKind(t, tasks); ok {
		w.idx.loadAhead(ctx, imp.beside, next)
	}
	if err = imp.rereadSeen(stop, t, tasks, prof, w.idx); err != nil {
		return nil, err
	}
	if err = w.skipToCheckpoint(); err != nil {
		return nil, err
	}
	return w.start(opts.BatchSize), nil
}

// isFixFolder tells whether path is a fix folder (its manifest there and
// readable): a part of an export.
func isFixFolder(path string) bool {
	m, err := fixmanifest.Read(path)
	return m != nil && err == nil
}

// nextKind is the kind of the first task after t (tasks are in the order
// they run: phases.LoadTasks) left to run that reads another kind than
// t's.
func nextKind(t phases.Task, tasks []phases.Task) (ledger.Kind, bool) {
	after := false
	for _, u := range tasks {
		if after && u.Kind != t.Kind && (u.Status == phases.TaskPending || u.Status == phases.TaskRunning) {
			return u.Kind, true
		}
		after = after || u.ID == t.ID
	}
	return "", false
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
	read := w.rr.BytesRead // a workbook's, read in place
	if w.in.Raw != nil {
		read = w.in.Raw.BytesRead // the file's bytes, before a gzip
	}
	w.feed = startFeed(w.rr, w.mapper, read)
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
		if o, err := runopts.Decode(run); err == nil {
			x.update = o.Update
		}
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
	return &openedTask{imp: imp, task: t, profile: prof, in: ti.in, size: ti.in.Size, rr: ti.rr, mapper: ti.mapper, copyClaims: true}, nil
}

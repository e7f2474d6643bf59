package importer

import (
	"bufio"
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"

	"crmimport/importer/input"
	"crmimport/importer/profile"
	"crmimport/importer/runopts"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store"
)

// A rerun of an export that an earlier task read whole need not read it
// whole again when that task left some records failed or skipped: every
// other record of it is still in its final slot (the ledger's epoch has not
// moved, phases.ReadBefore), and reading it again could only count it
// unchanged (R2). Only the records it did not finalize can come out
// otherwise, and the task revisits those alone, by where they stand in the
// file (task_revisits, written with the batch that decided them): each is
// read again, decided again and written as a full reading writes it — a
// skip's slot taken over by this run (R3), or imported now that its parent
// is there; a failure written again for this run (R4); a duplicate failed
// again, its id's first record given by the line kept with it (SPEC §4
// step 2). The records between them are counted unchanged as the task
// passes them, and each batch's checkpoint stands where a full reading's
// would, after the last record it revisited (R12): a resume goes on from
// there, by revisiting or by reading. `run --reread` reads every file.
//
// Only a file whose records know where they stand (a CSV file read as
// UTF-8: reader.RowReader.Spans) is revisited; JSON, JSON Lines, workbooks
// and files read in another encoding are read whole. As for the same-input
// shortcut (sameinput.go), the task and the earlier one must each be the
// only one of its kind in its run, so that a duplicate is the file's own.

// revisitAt is where a record that failed or was skipped stands in its
// file: a row of task_revisits.
type revisitAt struct {
	row, line  int64
	start, end int64
	firstLine  int64 // a duplicate's: the line of its id's first record; 0 otherwise
}

// keepRevisit keeps where the record of d stands, when it failed or was
// skipped and its reader knows (row: the records read before it).
func (w *openedTask) keepRevisit(row int64, d *decision) {
	listed := d.outcome == unchanged && d.change != nil && d.change.kind != ""
	if d.outcome != failed && d.outcome != skipped && !listed {
		return // R17: an outdated record, a conflict and one deleted since are revisited too
	}
	start, end := d.rec.Span()
	if end == 0 {
		return
	}
	w.revisits = append(w.revisits, revisitAt{row: row, line: int64(d.rec.Line), start: start, end: end, firstLine: int64(d.firstLine)})
}

const insertRevisitsHead = `INSERT INTO task_revisits (task_id, row, line, start_byte, end_byte, first_line) VALUES `
const revisitTuple = `(?, ?, ?, ?, ?, ?)`

// saveRevisits writes the batch's kept places in its transaction, with the
// decisions they come from (R12).
func (w *openedTask) saveRevisits(ctx context.Context, wr *writer) error {
	for start := 0; start < len(w.revisits); start += rowChunk {
		chunk := w.revisits[start:min(start+rowChunk, len(w.revisits))]
		st, err := wr.stmt(insertRevisitsHead + strings.TrimSuffix(strings.Repeat(revisitTuple+", ", len(chunk)), ", "))
		if err != nil {
			return fmt.Errorf("prepare the places of %s: %w", w.task.Kind.Plural(), err)
		}
		args := make([]any, 0, 6*len(chunk))
		for _, p := range chunk {
			var first any
			if p.firstLine > 0 {
				first = p.firstLine
			}
			args = append(args, w.task.ID, p.row, p.line, p.start, p.end, first)
		}
		if _, err := st.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("keep the places of %s that failed or were skipped: %w", w.task.Kind.Plural(), err)
		}
	}
	return nil
}

const countRevisitsSQL = `SELECT count(*) FROM task_revisits WHERE task_id = ?`

const loadRevisitsSQL = `
SELECT row, line, start_byte, end_byte, coalesce(first_line, 0) FROM task_revisits
WHERE task_id = ? AND row >= ? ORDER BY row`

// loadRevisits reads the places an earlier task kept, from the record
// from on, if it kept one for each record it failed or skipped.
func loadRevisits(ctx context.Context, q *sql.DB, rb phases.ReadBefore, from int64) ([]revisitAt, bool, error) {
	var n int64
	if err := q.QueryRowContext(ctx, countRevisitsSQL, rb.Task).Scan(&n); err != nil {
		return nil, false, fmt.Errorf("count the places task %d kept: %w", rb.Task, err)
	}
	if n != rb.Counts.Skipped+rb.Counts.Failed+rb.Counts.Outdated+rb.Counts.DeletedSince {
		return nil, false, nil
	}
	rows, err := q.QueryContext(ctx, loadRevisitsSQL, rb.Task, from)
	if err != nil {
		return nil, false, fmt.Errorf("read the places task %d kept: %w", rb.Task, err)
	}
	defer rows.Close()
	var at []revisitAt
	for rows.Next() {
		var p revisitAt
		if err := rows.Scan(&p.row, &p.line, &p.start, &p.end, &p.firstLine); err != nil {
			return nil, false, err
		}
		at = append(at, p)
	}
	return at, true, rows.Err()
}

// revisitWork is a task's revisit: the earlier task that vouches for the
// rest, the places still to revisit, and the file's raw bytes, read where
// each record stands (place) or, compressed, forward to each (raw).
type revisitWork struct {
	before phases.ReadBefore
	total  int64 // the records of the file
	at     []revisitAt
	place  io.ReaderAt
	raw    *bufio.Reader
	in     *input.Opened
	pos    int64 // raw bytes read so far
	buf    []byte
	logged bool
}

// openRevisit returns the work of a task that revisits the records an
// earlier task left failed or skipped (see above), or nil to read the file.
func (imp *Importer) openRevisit(ctx context.Context, run phases.Run, t phases.Task, tasks []phases.Task, opts runopts.Options, prof *profile.Profile) (_ *phases.Work, err error) {
	if opts.Reread || t.InputKey == "" {
		return nil, nil
	}
	for _, u := range tasks {
		if u.Kind == t.Kind && u.ID != t.ID {
			return nil, nil
		}
	}
	rb, found, err := phases.FindReadBefore(ctx, imp.Engine.DB, run, t)
	if err != nil || !found {
		return nil, err
	}
	c := rb.Counts
	total := c.Imported + c.Unchanged + c.Skipped + c.Failed
	if rb.Checkpoint.Rows != total || t.Checkpoint.Rows > total {
		return nil, nil // it read records of no outcome (a profile's where): their places are not kept
	}
	at, found, err := loadRevisits(ctx, imp.Engine.DB, rb, t.Checkpoint.Rows)
	if err != nil || !found {
		return nil, err
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
	if !w.rr.Spans() {
		w.close()
		return nil, nil
	}
	if err = w.mapper.ReadSideFiles(ctx, opts.SideFiles, imp.limits); err != nil {
		return nil, err
	}
	// The final slots it needs are looked up by id, chunk by chunk
	// (lookups.go): the index loads none of them.
	w.run, w.idx = run, imp.index(run)
	w.idx.release(t.Kind, remainingKinds(tasks))
	w.idx.loaded[t.ID] = true
	w.look = newLookups(run.Tenant, run.Source, store.DialectOf(imp.Engine.DB))
	v := &revisitWork{before: rb, total: total, at: at}
	// The records are read where they stand, if the file's bytes lie on
	// disk as they are read (a file, a zip's entry stored): the bytes
	// between them are never read. A gzip or a deflated entry is read
	// forward to each.
	in, inPlace, err := input.OpenInPlace(t.File, imp.limits)
	switch {
	case err != nil:
		return nil, err
	case inPlace:
		v.in, v.place = in, in.At
	default:
		if v.in, err = input.Open(t.File, imp.limits); err != nil {
			return nil, err
		}
		v.raw = bufio.NewReaderSize(v.in, 64<<10)
	}
	w.rows, w.line = t.Checkpoint.Rows, t.Checkpoint.Line
	w.batchSize = opts.BatchSize
	if w.batchSize <= 0 {
		w.batchSize = DefaultBatchSize
	}
	w.revisit = v
	return &phases.Work{Size: w.size, Next: w.nextRevisit, Close: func() error {
		return errors.Join(w.revisit.in.Close(), w.close())
	}}, nil
}

// record reads the record at p again, alone, as reading the file gives it.
func (v *revisitWork) record(w *openedTask, p revisitAt) (profile.Record, error) {
	name := input.Name(w.task.File)
	if p.start < v.pos || p.end <= p.start {
		return profile.Record{}, fmt.Errorf("%s:%d: the places kept of its records are out of order", name, p.line)
	}
	n := int(p.end - p.start)
	if cap(v.buf) < n {
		v.buf = make([]byte, n)
	}
	v.buf = v.buf[:n]
	if v.place != nil {
		if got, err := v.place.ReadAt(v.buf, p.start); got < n {
			return profile.Record{}, fmt.Errorf("%s: read line %d: %w", name, p.line, cmp.Or(err, io.ErrUnexpectedEOF))
		}
	} else {
		if _, err := v.raw.Discard(int(p.start - v.pos)); err != nil {
			return profile.Record{}, fmt.Errorf("%s: read to line %d: %w", name, p.line, err)
		}
		if _, err := io.ReadFull(v.raw, v.buf); err != nil {
			return profile.Record{}, fmt.Errorf("%s: read line %d: %w", name, p.line, err)
		}
	}
	v.pos = p.end
	row, err := w.rr.RecordAt(v.buf, int(p.line))
	if err != nil {
		return profile.Record{}, err
	}
	row.Start, row.End = p.start, p.end
	r := w.mapper.Map(row)
	if r.Excluded {
		return profile.Record{}, fmt.Errorf("%s:%d: not a record of %s, where one was", name, p.line, w.task.Kind.Plural())
	}
	w.mapper.Complete(&r)
	return r, nil
}

// nextRevisit revisits the next batch of places inside tx, and counts
// the records it passes unchanged: they are in their final slots (R2).
func (w *openedTask) nextRevisit(ctx context.Context, tx *sql.Tx) (phases.Batch, error) {
	v := w.revisit
	// Again inside the batch, which holds the write lock: the epoch cannot
	// move between this look and the commit.
	epoch, err := ledger.Epoch(ctx, tx, w.run.Tenant, w.run.Source)
	if err != nil {
		return phases.Batch{}, err
	}
	if epoch != v.before.Epoch {
		return phases.Batch{}, fmt.Errorf("%s: the ledger changed while the task ran (a final slot was removed): resume the run and it will be read",
			input.Name(w.task.File))
	}
	wr, st, err := w.batchWriter(ctx, tx)
	if err != nil {
		return phases.Batch{}, err
	}
	defer wr.close()
	if !v.logged {
		msg := fmt.Sprintf("task %d: %s is the file task %d of run %d read: %d %s it failed, skipped or found changed at the source read again, the others still in their final slots counted unchanged (R2; run --reread reads it whole)",
			w.task.ID, input.Name(w.task.File), v.before.Task, v.before.Run, len(v.at), w.task.Kind.Plural())
		if err := w.imp.Engine.Log(ctx, tx, w.run.ID, "info", msg); err != nil {
			return phases.Batch{}, err
		}
	}
	var counts phases.Counts
	from := w.rows
	taken, to, line, err := w.revisitRecords(ctx, tx, wr, st, &counts)
	if err != nil {
		return phases.Batch{}, err
	}
	done := len(v.at) == 0
	if done {
		to, line = v.total, v.before.Checkpoint.Line // the rest of the file is in final slots
	}
	counts.Unchanged += to - from - int64(taken)
	if err := wr.ids.Save(ctx); err != nil {
		return phases.Batch{}, err
	}
	if err := w.relink(ctx, tx, wr); err != nil {
		return phases.Batch{}, err
	}
	if err := w.saveRevisits(ctx, wr); err != nil {
		return phases.Batch{}, err
	}
	// The batch's own updates (R17) move the epoch: it is the batch's
	// now, and the next batch looks for another run's move from there.
	after, err := ledger.Epoch(ctx, tx, w.run.Tenant, w.run.Source)
	if err != nil {
		return phases.Batch{}, err
	}
	read := w.size
	if v.total > 0 {
		read = w.size * to / v.total // progress: of the records, the bytes read would be a guess
	}
	w.rows, w.line = to, line
	return phases.Batch{
		Checkpoint: phases.Checkpoint{Rows: to, Line: line},
		Read:       read,
		Counts:     counts,
		Done:       done,
		Committed: func() {
			w.swept = true
			v.logged = true
			v.before.Epoch = after
			st.commit()
			w.imp.kept.Keep(context.WithoutCancel(ctx))
			if w.imp.Progress != nil {
				w.imp.Progress(w.task, read, w.size)
			}
		},
	}, nil
}

// revisitRecords decides and writes the batch's places to revisit, chunk by
// chunk, adding their outcomes to counts. It returns how many places it
// took, and the rows read and the line after the last of them.
func (w *openedTask) revisitRecords(ctx context.Context, tx *sql.Tx, wr *writer, st *stage, counts *phases.Counts) (taken int, to, line int64, err error) {
	v := w.revisit
	chunk := make([]profile.Record, 0, chunkSize)
	rows := make([]int64, 0, chunkSize)
	var held int64 // the bytes of the records of chunk, bounded as a feed's are (feedBudget)
	to, line = w.rows, w.line
	write := func() error {
		if len(chunk) == 0 {
			return nil
		}
		if err := w.logNotes(ctx, tx, chunk); err != nil {
			return err
		}
		if err := w.look.prefetch(ctx, tx, st, chunk); err != nil {
			return err
		}
		err := w.writeChunk(ctx, tx, wr, st, chunk, rows, counts)
		clear(chunk) // the records written let go of their text
		chunk, rows, held = chunk[:0], rows[:0], 0
		return err
	}
	for taken < w.batchSize && len(v.at) > 0 {
		p := v.at[0]
		r, err := v.record(w, p)
		if err != nil {
			return 0, 0, 0, err
		}
		v.at = v.at[1:]
		taken++
		if id, ok := seenID(r); ok && p.firstLine > 0 {
			// A duplicate: where its id was first read is a fact of the
			// file, whatever commits. Its first record, if revisited in
			// this chunk, is decided first.
			if len(chunk) > 0 && p.firstLine >= int64(chunk[0].Line) {
				if err := write(); err != nil {
					return 0, 0, 0, err
				}
			}
			w.idx.remember(w.task.Kind, id, firstSeen{file: r.File, line: int(p.firstLine)})
		}
		chunk, rows = append(chunk, r), append(rows, p.row)
		held += p.end - p.start
		to, line = p.row+1, p.line
		if len(chunk) == chunkSize || held >= feedBudget {
			if err := write(); err != nil {
				return 0, 0, 0, err
			}
		}
	}
	if err := write(); err != nil {
		return 0, 0, 0, err
	}
	return taken, to, line, nil
}

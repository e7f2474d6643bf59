package importer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"

	"crmimport/importer/input"
	"crmimport/importer/profile"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store"
	"crmimport/target"
)

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
// 1024 rather than 256 since SetHashesMany no longer scans a kind's slots
// for statements of 64 slots and more: a rerun with --update of the
// realistic export at scale 1 in which a tenth changed went from 7.16 s
// to 6.39 s (median of five, alternated; 512: 6.63 s), a first run the
// same within the noise (13.99 s and 14.28 s, median of four).
const chunkSize = 1024

// batchWriter starts the writing of one batch in tx: the ledger, the
// target rows, the row ids of the task's table, and the stage of the
// index. The caller closes it.
func (w *openedTask) batchWriter(ctx context.Context, tx *sql.Tx) (*writer, *stage, error) {
	d := store.DialectOf(w.imp.Engine.DB)
	l := ledger.New(tx, d).Keeping(w.imp.kept).Copying(&w.copyClaims)
	now := w.imp.Engine.Now()
	imported := ledger.FormatTime(now)
	wr := &writer{ctx: ctx, tx: tx, ledger: l, dialect: d, run: w.run, task: w.task, now: now,
		imported: imported, rows: target.NewWriter(tx, d, w.run.Tenant, imported).Keeping(w.imp.kept), stmts: map[string]*sql.Stmt{},
		kept: w.imp.kept}
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
	done, err := w.writeRecords(ctx, tx, wr, st, &counts)
	if err != nil {
		return phases.Batch{}, err
	}
	if err := wr.ids.Save(ctx); err != nil { // the row ids given out, with the batch
		return phases.Batch{}, err
	}
	if err := w.relink(ctx, tx, wr); err != nil {
		return phases.Batch{}, err
	}
	if err := w.saveRevisits(ctx, wr); err != nil {
		return phases.Batch{}, err
	}
	if done {
		if err := w.logFileEnd(ctx, tx); err != nil {
			return phases.Batch{}, err
		}
		if err := w.logLookalikes(ctx, tx, st); err != nil {
			return phases.Batch{}, err
		}
	}
	read := w.feed.bytes
	return phases.Batch{
		Checkpoint: phases.Checkpoint{Rows: w.rows, Line: w.line},
		Read:       read,
		Counts:     counts,
		Done:       done,
		Committed: func() {
			w.swept = true
			st.commit()
			w.imp.kept.Keep(context.WithoutCancel(ctx))
			if w.imp.Progress != nil {
				w.imp.Progress(w.task, read, w.size)
			}
		},
	}, nil
}

// writeRecords reads the batch's records from the feed and decides and
// writes them chunk by chunk, each chunk written while the next is decided
// (speculative deciding, speculate.go), adding their outcomes to counts. It
// tells whether the file is read to its end.
func (w *openedTask) writeRecords(ctx context.Context, tx *sql.Tx, wr *writer, st *stage, counts *phases.Counts) (done bool, err error) {
	chunk := make([]profile.Record, 0, chunkSize)
	rows := make([]int64, 0, chunkSize)
	// writing is the chunk decided and not yet written.
	var writing *decided
	defer func() {
		if writing != nil && writing.speculated != nil {
			<-writing.speculated // never left deciding once the batch ends
		}
	}()
	for n := 0; n < w.batchSize && !done; n++ {
		r, held, err := w.feed.next()
		switch {
		case errors.Is(err, io.EOF):
			done = true
		case err != nil:
			return false, err
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
				return false, err
			}
			c := &decided{recs: chunk, rows: rows}
			err := w.decideBehind(ctx, tx, wr, st, writing, c, counts)
			writing = c // the batch ends waiting for c's speculation, if any
			if err != nil {
				return false, err
			}
			chunk, rows = make([]profile.Record, 0, chunkSize), make([]int64, 0, chunkSize)
		}
		if held {
			// The feed's budget in bytes is spent (feedBudget): what it
			// read is written now, and it reads on.
			if err := w.writeOut(ctx, tx, wr, st, &writing, counts); err != nil {
				return false, err
			}
			w.feed.written()
		}
	}
	if err := w.writeOut(ctx, tx, wr, st, &writing, counts); err != nil {
		return false, err
	}
	w.feed.written()
	return done, nil
}

// decideBehind decides chunk c while writing, the chunk decided before it
// (nil: none), writes, and ends that chunk; c is then the chunk that
// writes next.
func (w *openedTask) decideBehind(ctx context.Context, tx *sql.Tx, wr *writer, st *stage, writing, c *decided, counts *phases.Counts) error {
	if writing == nil {
		return w.decideChunk(ctx, tx, wr, st, c)
	}
	reads, err := w.prefetchChanges(ctx, tx, wr, st, c.recs) // what its deciding would ask the database (R17)
	if err != nil {
		return err
	}
	c.reads = &reads
	w.speculate(ctx, wr, st, c)
	err = wr.flush(writing.ds)
	ok := err == nil
	if !ok {
		<-c.speculated // the redo takes the speculated decisions back too
	}
	if err := w.finishChunk(ctx, tx, wr, st, writing, err, counts); err != nil {
		return err
	}
	return w.settle(ctx, tx, wr, st, c, ok)
}

// writeOut writes the chunk decided and not yet written, if any, and ends
// it.
func (w *openedTask) writeOut(ctx context.Context, tx *sql.Tx, wr *writer, st *stage, writing **decided, counts *phases.Counts) error {
	c := *writing
	if c == nil {
		return nil
	}
	if err := w.finishChunk(ctx, tx, wr, st, c, wr.flush(c.ds), counts); err != nil {
		return err
	}
	*writing = nil
	return nil
}

// logFileEnd says, with the last batch, what the file holds past its
// records (the feed has read to the end: its reader is at rest) and the
// sheets of a workbook left unread.
func (w *openedTask) logFileEnd(ctx context.Context, tx *sql.Tx) error {
	if f := w.rr.Footer(); f != nil {
		if err := w.imp.Engine.Log(ctx, tx, w.run.ID, "notice", f.Notice(input.Name(w.task.File))); err != nil {
			return err
		}
	}
	for _, n := range sheetNotices(input.Name(w.task.File), w.rr, w.profile, w.task.Kind) {
		if err := w.imp.Engine.Log(ctx, tx, w.run.ID, "notice", n); err != nil {
			return err
		}
	}
	return nil
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
	reads      *changeReads  // what its changed records' deciding reads (prefetchChanges), once read
	err        error         // of a speculative decideChunk
	speculated chan struct{} // closed when a speculative decideChunk ends
}

// decideChunk decides c's records in order, each handed to the stage
// before the next, the database read through q (the batch's transaction;
// noQueries while the chunk before still writes).
func (w *openedTask) decideChunk(ctx context.Context, q ledger.Querier, wr *writer, st *stage, c *decided) error {
	c.mark, c.next = st.mark(), wr.ids.Mark()
	if c.reads == nil {
		reads, err := w.prefetchChanges(ctx, q, wr, st, c.recs)
		if err != nil {
			return err
		}
		c.reads = &reads
	}
	st.reads = *c.reads
	c.ds = make([]decision, len(c.recs))
	for i, r := range c.recs {
		d, err := decide(ctx, q, st, w.profile, r, wr.ids.Next)
		if err != nil {
			return err
		}
		st.apply(&d)
		if d.change != nil {
			if _, err := d.change.text(d.outcome); err != nil { // its JSON, made here, off the writing goroutine
				return err
			}
		}
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
			wr.arrive(&c.ds[i])
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
		wr.arrive(&d)
		w.keepRevisit(c.rows[i], &d)
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
		if ch := d.change; ch != nil {
			switch ch.kind {
			case ledger.ChangeDeletedSince:
				c.DeletedSince++
			case ledger.ChangeOutdated:
				c.Outdated++
			case ledger.ChangeConflict:
				c.Outdated++
				c.Conflict++
			}
			if ch.adopted {
				c.Adopted++
			}
		}
	case updated:
		c.Imported++
		c.Updated++
		if d.change != nil && d.change.kind == ledger.ChangeOverwritten {
			c.Overwritten++
		}
		if d.unlinked {
			c.Unlinked++
		}
		if d.unowned {
			c.Unowned++
		}
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
		if d.unowned {
			c.Unowned++
		}
		if d.outcome == created && len(d.rec.NULKept()) > 0 {
			c.NULKept++ // SPEC §4: its extra, with the NUL, is written (a matched record writes none)
		}
	}
}

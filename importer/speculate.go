package importer

import (
	"context"
	"database/sql"
	"errors"
)

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

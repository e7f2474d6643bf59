package ledger

import (
	"context"
	"fmt"
	"strings"

	"crmimport/store"
)

// R4 Failures claim nothing: a record that failed writes no slot, only its
// row in record_failures, in the batch's transaction, with its reason's
// class (store.ReasonClass: what the Failed records page filters and
// counts by in SQL).

// Failure is one failed record, as record_failures keeps it.
type Failure struct {
	Run, Task int64
	Kind      Kind
	SourceID  string // "" when the row gave none (NULL)
	File      string
	Line      int
	Reason    string
	Raw       string // the row as read, as JSON
}

const (
	insertFailuresHead = `INSERT INTO record_failures (migration_id, task_id, kind, source_id, file, line, reason, reason_class, raw) VALUES `
	failureTuple       = `(?, ?, ?, ?, ?, ?, ?, ?, ?)`
)

// failureChunk is how many failures one insert statement holds.
const failureChunk = 256

// RecordFailures writes failed records to record_failures (R4), a chunk
// of them per statement, prepared once per transaction. what names them
// in an error ("contacts").
func (l *Ledger) RecordFailures(ctx context.Context, what string, failures []Failure) error {
	for start := 0; start < len(failures); start += failureChunk {
		chunk := failures[start:min(start+failureChunk, len(failures))]
		st, err := l.stmt(ctx, insertFailuresHead+strings.TrimSuffix(strings.Repeat(failureTuple+", ", len(chunk)), ", "))
		if err != nil {
			return fmt.Errorf("prepare record failures: %w", err)
		}
		args := make([]any, 0, 9*len(chunk))
		for _, f := range chunk {
			args = append(args, f.Run, f.Task, string(f.Kind), nullString(f.SourceID), f.File, f.Line, f.Reason, store.ReasonClass(f.Reason), f.Raw)
		}
		if _, err := st.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("record failures of %s: %w", what, err)
		}
	}
	return nil
}

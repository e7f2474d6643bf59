package forensics

import (
	"context"
	"fmt"
	"strings"
)

// The slots of a dump are many: they are staged in a temporary table
// (dump_slots; on SQLite in a file, as store.Open's connections keep
// temporary data; on PostgreSQL, the session's, which the load's one
// transaction keeps on one connection), numbered by the line they start
// on, checked there by SQL and then written in one statement. The
// statements below read and write it; none of them holds the dump in Go.

const createStageSQL = `
CREATE TEMP TABLE dump_slots (
    line         INTEGER PRIMARY KEY,
    tenant_id    TEXT    NOT NULL,
    source       TEXT    NOT NULL,
    kind         TEXT    NOT NULL,
    source_id    TEXT    NOT NULL,
    id           INTEGER, -- NULL: numbered here
    migration_id INTEGER,
    record_type  TEXT,
    record_id    INTEGER, -- NULL: none (a skip), or a placeholder numbered here
    action       TEXT    NOT NULL,
    reason       TEXT,
    detail       TEXT,
    created_at   TEXT    NOT NULL
)`

// stageColumns is the number of columns a staged slot gives.
const stageColumns = 13

// stageBatch is how many slots one INSERT stages.
const stageBatch = 256

// stageSQL stages n slots in one statement.
func stageSQL(n int) string {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", stageColumns), ", ") + ")"
	return `INSERT INTO dump_slots (line, tenant_id, source, kind, source_id, id, migration_id, record_type, record_id,
    action, reason, detail, created_at) VALUES ` + strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
}

// stageSlots reads the dump's slots into the temporary table, checking
// each row as it goes.
func (l *loader) stageSlots(ctx context.Context) error {
	file := l.files[tableSlots]
	if file == "" {
		return nil
	}
	if _, err := l.tx.ExecContext(ctx, createStageSQL); err != nil {
		return fmt.Errorf("load slots: %w", err)
	}
	full, err := l.tx.PrepareContext(ctx, stageSQL(stageBatch))
	if err != nil {
		return fmt.Errorf("load slots: %w", err)
	}
	defer full.Close()
	args := make([]any, 0, stageBatch*stageColumns)
	flush := func() error {
		n := len(args) / stageColumns
		var err error
		switch n {
		case 0:
			return nil
		case stageBatch:
			_, err = full.ExecContext(ctx, args...)
		default:
			_, err = l.tx.ExecContext(ctx, stageSQL(n), args...)
		}
		if err != nil {
			return fmt.Errorf("load slots: stage: %w", err)
		}
		l.staged += n
		args = args[:0]
		return nil
	}
	err = eachRow(file, tableSlots, func(row slotRow, line int) error {
		s, err := checkSlot(row, line)
		if err != nil {
			l.problems.add(file, line, err)
			return nil
		}
		recordType, recordID, id := l.noteSlot(s)
		args = append(args, line, s.key.Tenant, s.key.Source, string(s.key.Kind), s.key.SourceID, id, s.runID, recordType,
			recordID, string(s.action), s.reason, s.detail, s.created)
		if len(args) == cap(args) {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	return nil
}

// noteSlot keeps what a good slot of the dump tells the checks that span
// it (the rows its kind's final slots name, its id, its tenant) and counts
// it by action; it returns the record type, record id and id it is staged
// with, nil where it has none.
func (l *loader) noteSlot(s loadedSlot) (recordType, recordID, id any) {
	if s.action.Final() {
		recordType = s.key.Kind.Table()
		r := l.rows[s.key.Kind]
		if r == nil {
			r = &rows{}
			l.rows[s.key.Kind] = r
		}
		r.final++
		if s.recordID != 0 {
			recordID = s.recordID
			r.last = max(r.last, s.recordID)
		} else {
			r.without++
		}
	}
	if s.id != 0 {
		id = s.id
		l.ascending = l.ascending && (l.slotIDs.max < l.slotIDs.min || s.id > l.slotIDs.max)
		l.slotIDs.add(s.id)
	}
	switch {
	case l.tenantsN == 0:
		l.tenant, l.tenantsN = s.key.Tenant, 1
	case s.key.Tenant != l.tenant:
		l.tenantsN = 2
	}
	l.sum.Slots[string(s.action)]++
	return recordType, recordID, id
}

package forensics

import (
	"context"
	"fmt"

	"crmimport/ledger"
	"crmimport/store"
)

// span is the smallest and largest of some ids (valid when max >= min).
type span struct{ min, max int64 }

func (s *span) add(id int64) {
	if s.max < s.min {
		s.min, s.max = id, id
		return
	}
	s.min, s.max = min(s.min, id), max(s.max, id)
}

func (s span) overlaps(o span) bool {
	return s.min <= s.max && o.min <= o.max && s.min <= o.max && o.min <= s.max
}

// twiceIDSQL: a slot id twice in the dump; the rows after the first are
// bad rows.
const twiceIDSQL = `
SELECT line, id, first FROM (
    SELECT line, id, min(line) OVER (PARTITION BY id) AS first FROM dump_slots WHERE id IS NOT NULL) AS s
WHERE line > first ORDER BY line LIMIT ?`

// slotIDSpanSQL: the smallest and largest slot id of the ledger.
const slotIDSpanSQL = `SELECT coalesce(min(id), 1), coalesce(max(id), 0) FROM migration_records`

// takenSlotIDsSQL: the dump's slot ids that the ledger already uses.
const takenSlotIDsSQL = `
SELECT DISTINCT id FROM dump_slots WHERE id IN (SELECT id FROM migration_records) ORDER BY id`

// numberSlotsSQL gives the slots without an id the next ones, in the order
// of the dump: past the ledger's and the dump's own.
const numberSlotsSQL = `
UPDATE dump_slots SET id = ? + n.i - 1
FROM (SELECT line, row_number() OVER (ORDER BY line) AS i FROM dump_slots WHERE id IS NULL) AS n
WHERE dump_slots.line = n.line`

// slotsTable names the slot table's id allocator.
const slotsTable = "migration_records"

// numberSlots finds a slot id that the dump holds twice (unless its ids
// come in ascending order) or that the ledger already uses (unless the two
// spans of ids are apart), and numbers the slots without one.
func (l *loader) numberSlots(ctx context.Context) error {
	if l.staged == 0 {
		return nil
	}
	if !l.ascending {
		file := l.files[tableSlots]
		err := l.each(ctx, twiceIDSQL, []any{maxProblems}, func(s store.Scanner) error {
			var line, first int
			var id int64
			if err := s.Scan(&line, &id, &first); err != nil {
				return err
			}
			l.problems.add(file, line, fmt.Errorf("slot id %d is already on line %d", id, first))
			return nil
		})
		if err != nil {
			return fmt.Errorf("load slots: ids: %w", err)
		}
	}
	if err := l.tx.QueryRowContext(ctx, slotIDSpanSQL).Scan(&l.ledgerIDs.min, &l.ledgerIDs.max); err != nil {
		return fmt.Errorf("load: slot ids: %w", err)
	}
	if l.ledgerIDs.overlaps(l.slotIDs) {
		err := l.each(ctx, takenSlotIDsSQL, nil, func(s store.Scanner) error {
			var id int64
			if err := s.Scan(&id); err != nil {
				return err
			}
			l.conflict.SlotIDs.add(id)
			return nil
		})
		if err != nil {
			return fmt.Errorf("load: slot ids: %w", err)
		}
	}
	next, err := l.d.NextID(ctx, l.tx, slotsTable)
	if err != nil {
		return fmt.Errorf("load: next slot id: %w", err)
	}
	next = max(next, l.slotIDs.max+1)
	res, err := l.tx.ExecContext(ctx, numberSlotsSQL, next)
	if err != nil {
		return fmt.Errorf("load: number slots from %d: %w", next, err)
	}
	numbered, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("load: number slots from %d: %w", next, err)
	}
	// The ledger numbers new slots past every loaded one.
	if err := l.d.AdvanceIDs(ctx, l.tx, slotsTable, next+numbered-1); err != nil {
		return fmt.Errorf("load: number slots past the dump's: %w", err)
	}
	return nil
}

// takenSlotsSQL: the dump's slots whose key the ledger already holds.
const takenSlotsSQL = `
SELECT s.tenant_id, s.source, s.kind, s.source_id FROM dump_slots s
JOIN migration_records r ON r.tenant_id = s.tenant_id AND r.source = s.source AND r.kind = s.kind AND r.source_id = s.source_id
ORDER BY s.line`

// slotConflicts finds the dump's slots that the ledger already holds
// (when it holds any).
func (l *loader) slotConflicts(ctx context.Context) error {
	if l.staged == 0 || l.ledgerIDs.max < l.ledgerIDs.min {
		return nil
	}
	err := l.each(ctx, takenSlotsSQL, nil, func(s store.Scanner) error {
		var k ledger.Key
		if err := s.Scan(&k.Tenant, &k.Source, &k.Kind, &k.SourceID); err != nil {
			return err
		}
		l.conflict.Slots.add(fmt.Sprintf("%s/%s %s %s", k.Tenant, k.Source, k.Kind, k.SourceID))
		return nil
	})
	if err != nil {
		return fmt.Errorf("load: slots: %w", err)
	}
	return nil
}

// writeSlotsSQL restores the slots as production left them, in the
// ledger's key order. It is not a claim (R1-R3 are the importer's): a slot
// whose key is here already does nothing, and is a conflict (found above)
// or a key the dump holds twice (found below).
const writeSlotsSQL = `
INSERT INTO migration_records (tenant_id, source, kind, source_id, id, migration_id, record_type, record_id,
    action, reason, detail, created_at)
SELECT tenant_id, source, kind, source_id, id, migration_id, record_type, record_id, action, reason, detail, created_at
FROM dump_slots WHERE true
ON CONFLICT (tenant_id, source, kind, source_id) DO NOTHING`

// twiceKeySQL: a slot is unique on tenant, source, kind and source_id; the
// rows after the first of a key are bad rows.
const twiceKeySQL = `
SELECT line, tenant_id, source, kind, source_id, first FROM (
    SELECT line, tenant_id, source, kind, source_id,
           min(line) OVER (PARTITION BY tenant_id, source, kind, source_id) AS first
    FROM dump_slots) AS s
WHERE line > first ORDER BY line LIMIT ?`

// writeSlots writes the staged slots into the ledger; when some are not
// written, it finds the keys that the dump holds twice.
func (l *loader) writeSlots(ctx context.Context) error {
	if l.staged == 0 {
		return nil
	}
	res, err := l.tx.ExecContext(ctx, writeSlotsSQL)
	if err != nil {
		return fmt.Errorf("load slots: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("load slots: %w", err)
	}
	if n == int64(l.staged) {
		return nil
	}
	file := l.files[tableSlots]
	err = l.each(ctx, twiceKeySQL, []any{maxProblems}, func(s store.Scanner) error {
		var line, first int
		var k ledger.Key
		if err := s.Scan(&line, &k.Tenant, &k.Source, &k.Kind, &k.SourceID, &first); err != nil {
			return err
		}
		l.problems.add(file, line, fmt.Errorf("the slot %s/%s %s is already on line %d (a slot is unique on tenant, source, kind and source_id)",
			k.Tenant, k.Source, k, first))
		return nil
	})
	if err != nil {
		return fmt.Errorf("load slots: keys: %w", err)
	}
	return nil
}

-- crmimport schema 9: an undo moves the epoch once per batch, not once per
-- final slot it takes back (issue 16 goal 4: the per-row trigger was a
-- fifth to a third of the undo's time).
--
-- While epoch_hold has a row, the two triggers that move the epoch when a
-- final slot is removed or changed (schema 7) stand aside. Only an undo's
-- batch writes that row, first in its transaction, and deletes it before
-- its commit, having moved the epoch of every tenant and source whose final
-- slots it took back itself (undo/work.go): no other connection ever sees
-- the row, and a batch that does not commit leaves nothing of it. The epoch
-- is only compared for equality (R2's same-input shortcut, SPEC §10), so a
-- step of one for a batch means what a step per slot meant.
CREATE TABLE epoch_hold (
    held INTEGER PRIMARY KEY CHECK (held = 1)
);

DROP TRIGGER final_slot_deleted;
DROP TRIGGER final_slot_changed;

CREATE TRIGGER final_slot_deleted AFTER DELETE ON migration_records
WHEN OLD.action IN ('created', 'matched') AND NOT EXISTS (SELECT 1 FROM epoch_hold)
BEGIN
    INSERT INTO ledger_epochs (tenant_id, source, n) VALUES (OLD.tenant_id, OLD.source, 1)
    ON CONFLICT (tenant_id, source) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER final_slot_changed AFTER UPDATE ON migration_records
WHEN OLD.action IN ('created', 'matched') AND NOT EXISTS (SELECT 1 FROM epoch_hold)
BEGIN
    INSERT INTO ledger_epochs (tenant_id, source, n) VALUES (OLD.tenant_id, OLD.source, 1)
    ON CONFLICT (tenant_id, source) DO UPDATE SET n = n + 1;
END;

-- crmimport schema 7 (PostgreSQL): SQLite's schema 15. Writing a final
-- slot's digest and hashes (R17) no longer fires the trigger that moves
-- the epoch per slot: every writer of them holds the epoch and moves it
-- itself, once per transaction (ledger.HoldEpoch, ReleaseEpoch). Any other
-- change of a final slot moves the epoch as before.
DROP TRIGGER final_slot_changed ON migration_records;
CREATE TRIGGER final_slot_changed AFTER UPDATE OF
    tenant_id, source, kind, source_id, id, migration_id, record_type, record_id, action, reason, detail, created_at
ON migration_records
FOR EACH ROW WHEN (OLD.action IN ('created', 'matched'))
EXECUTE FUNCTION final_slot_moved();

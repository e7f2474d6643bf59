-- crmimport schema 3: a rerun over an export this ledger has already taken
-- whole counts its records unchanged without reading them again (R2).

-- What a task read, as one key: the file's fingerprint with everything
-- that decides which records it holds (format, encoding, the profile's
-- text, the files read beside it). NULL for tasks planned before this
-- schema and for tasks of runs loaded from a dump.
ALTER TABLE migration_tasks ADD COLUMN input_key TEXT;

-- The ledger's epoch when the task began, kept when it succeeds only if
-- no final slot was removed or changed meanwhile; otherwise NULL.
ALTER TABLE migration_tasks ADD COLUMN ledger_epoch INTEGER;

-- The epoch moves whenever a final slot is deleted or changed. crmimport
-- never does either (R2: a final slot is never touched again); a hand
-- repair does (doctor suggests one that frees slots), and from then on no
-- earlier task vouches for its records any more.
CREATE TABLE ledger_epoch (n INTEGER NOT NULL);
INSERT INTO ledger_epoch (n) VALUES (0);

CREATE TRIGGER final_slot_deleted AFTER DELETE ON migration_records
WHEN OLD.action IN ('created', 'matched')
BEGIN
    UPDATE ledger_epoch SET n = n + 1;
END;

CREATE TRIGGER final_slot_changed AFTER UPDATE ON migration_records
WHEN OLD.action IN ('created', 'matched')
BEGIN
    UPDATE ledger_epoch SET n = n + 1;
END;

-- crmimport schema 5: ids are given out by allocators, one per table whose
-- ids an undo (R16) may take back, so that an id is never given again once
-- its row or slot is deleted (max(id) + 1 would give the last one again).
-- `ledger load` moves them past every id it loads. slot_ids, the slot
-- table's allocator of schema 1, becomes one of them.
CREATE TABLE id_allocators (
    name TEXT    PRIMARY KEY,
    next INTEGER NOT NULL CHECK (next > 0)
) WITHOUT ROWID;

INSERT INTO id_allocators (name, next) SELECT 'companies',  coalesce(max(id), 0) + 1 FROM companies;
INSERT INTO id_allocators (name, next) SELECT 'contacts',   coalesce(max(id), 0) + 1 FROM contacts;
INSERT INTO id_allocators (name, next) SELECT 'deals',      coalesce(max(id), 0) + 1 FROM deals;
INSERT INTO id_allocators (name, next) SELECT 'notes',      coalesce(max(id), 0) + 1 FROM notes;
INSERT INTO id_allocators (name, next) SELECT 'activities', coalesce(max(id), 0) + 1 FROM activities;
INSERT INTO id_allocators (name, next) SELECT 'emails',     coalesce(max(id), 0) + 1 FROM emails;
INSERT INTO id_allocators (name, next)
SELECT 'migration_records', max(s.next, (SELECT coalesce(max(id), 0) + 1 FROM migration_records)) FROM slot_ids s;
DROP TABLE slot_ids;

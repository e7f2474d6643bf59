-- crmimport schema 14: changes at the source (R17, SPEC §11).
--
-- A created or matched slot keeps what was last written for it: per field,
-- a short hash of the value (the canonical fields after validation and
-- normalisation, the links as the parents' source ids, the extra columns
-- no kind maps; canon.Hashes), and a digest of the whole whose top byte is
-- the hashing's version. NULL for skips and for slots written before this
-- schema (a rerun compares those with their rows and gives them hashes).
-- Writing them to a final slot is a change of it: the epoch moves (schema
-- 3's trigger), so R2's shortcut never vouches across it.
ALTER TABLE migration_records ADD COLUMN digest INTEGER;
ALTER TABLE migration_records ADD COLUMN hashes TEXT;

-- A task's counts of R17 (SPEC §11): of imported, updated (overwritten:
-- those written over a hand edit); of unchanged, outdated (conflict: those
-- left because the row was edited since), deleted_since; adopted, the
-- slots without hashes (a dump's placeholder, an older file's) that took
-- the record's; and an undo's reverted (rows given their before-image).
ALTER TABLE migration_tasks ADD COLUMN updated       INTEGER NOT NULL DEFAULT 0;
ALTER TABLE migration_tasks ADD COLUMN overwritten   INTEGER NOT NULL DEFAULT 0;
ALTER TABLE migration_tasks ADD COLUMN outdated      INTEGER NOT NULL DEFAULT 0;
ALTER TABLE migration_tasks ADD COLUMN conflict      INTEGER NOT NULL DEFAULT 0;
ALTER TABLE migration_tasks ADD COLUMN deleted_since INTEGER NOT NULL DEFAULT 0;
ALTER TABLE migration_tasks ADD COLUMN adopted       INTEGER NOT NULL DEFAULT 0;
ALTER TABLE migration_tasks ADD COLUMN reverted      INTEGER NOT NULL DEFAULT 0;

-- What a run found changed at the source, record by record, written in
-- the batch that found it (R12): an outdated record (applicable: its slot
-- is created and its row as crmimport wrote it, so `run --update` applies
-- it), a conflict (the row was edited since: edited names those fields),
-- a record deleted in the source since (deleted_since), an update written
-- (updated, or overwritten over a hand edit), or an undo's removal of a
-- row edited by hand since it was written (removed_edited: the edit went
-- with the row, edited names its fields). fields are the fields whose
-- source value changed; before and after their values (JSON objects), for
-- the run page's before/after.
CREATE TABLE record_changes (
    id           INTEGER PRIMARY KEY,
    migration_id INTEGER NOT NULL REFERENCES migrations (id),
    task_id      INTEGER,
    kind         TEXT    NOT NULL,
    source_id    TEXT    NOT NULL,
    file         TEXT,
    line         INTEGER,
    change       TEXT    NOT NULL
        CHECK (change IN ('outdated', 'conflict', 'deleted_since', 'updated', 'overwritten', 'removed_edited')),
    applicable   INTEGER NOT NULL DEFAULT 0,
    fields       TEXT,
    edited       TEXT,
    before       TEXT,
    after        TEXT
);
CREATE INDEX record_changes_run ON record_changes (migration_id, kind, change);

-- An update's before-image (R17, R16): per slot and updating run, the
-- row's values (the columns the update wrote, as JSON) and the slot's
-- digest and hashes before the update, and the hashes it wrote, kept in
-- the update's own savepoint. `undo RUN` gives them back when the row is
-- still as RUN left it, and marks them reverted_by itself.
CREATE TABLE record_updates (
    id             INTEGER PRIMARY KEY,
    tenant_id      TEXT    NOT NULL,
    source         TEXT    NOT NULL,
    kind           TEXT    NOT NULL,
    source_id      TEXT    NOT NULL,
    record_id      INTEGER NOT NULL,
    migration_id   INTEGER NOT NULL REFERENCES migrations (id),
    before_values  TEXT    NOT NULL,
    before_digest  INTEGER,
    before_hashes  TEXT,
    after_digest   INTEGER NOT NULL,
    after_hashes   TEXT    NOT NULL,
    fields         TEXT    NOT NULL,
    reverted_by    INTEGER REFERENCES migrations (id),
    UNIQUE (tenant_id, source, kind, source_id, migration_id)
);
CREATE INDEX record_updates_run ON record_updates (migration_id);

-- crmimport schema 7: undo (R16, SPEC §10).

-- An undo is a run of its own: its row names the run it undoes, and the
-- undone run, once its undo has succeeded, names the undo. NULL otherwise.
ALTER TABLE migrations ADD COLUMN undoes INTEGER;
ALTER TABLE migrations ADD COLUMN undone_by INTEGER;

-- An undo's task counts what it took back: target rows removed with their
-- slots, matched slots released, slots given back their before-image, and
-- skips deleted because nothing earlier is there to give back.
ALTER TABLE migration_tasks ADD COLUMN removed  INTEGER NOT NULL DEFAULT 0;
ALTER TABLE migration_tasks ADD COLUMN released INTEGER NOT NULL DEFAULT 0;
ALTER TABLE migration_tasks ADD COLUMN restored INTEGER NOT NULL DEFAULT 0;
ALTER TABLE migration_tasks ADD COLUMN cleared  INTEGER NOT NULL DEFAULT 0;

-- The before-image of a slot that a run took over (R3: only a skip is
-- taken over): the state the slot had before its current owner, one per
-- slot. The claim's own statement keeps it, through the trigger below, in
-- the claim's transaction: an undo of the owner gives the slot this state
-- back, its reason, detail, owner and time. A slot claimed fresh has none:
-- its undo deletes it.
CREATE TABLE slot_before (
    tenant_id    TEXT    NOT NULL,
    source       TEXT    NOT NULL,
    kind         TEXT    NOT NULL,
    source_id    TEXT    NOT NULL,
    taken_by     INTEGER NOT NULL, -- the run that took the slot over
    migration_id INTEGER,          -- the skip's owner before it
    reason       TEXT,
    detail       TEXT,
    created_at   TEXT    NOT NULL,
    PRIMARY KEY (tenant_id, source, kind, source_id)
) WITHOUT ROWID;

-- A skip refreshed by its own run (the same owner) keeps no image: undoing
-- that run takes the slot back whole.
CREATE TRIGGER slot_taken_over BEFORE UPDATE OF migration_id ON migration_records
WHEN OLD.action = 'skipped' AND OLD.migration_id IS NOT NEW.migration_id
BEGIN
    -- An upsert, not INSERT OR REPLACE: the statement that fires a trigger
    -- imposes its own conflict policy on the trigger's statements.
    INSERT INTO slot_before
        (tenant_id, source, kind, source_id, taken_by, migration_id, reason, detail, created_at)
    VALUES (OLD.tenant_id, OLD.source, OLD.kind, OLD.source_id, NEW.migration_id,
        OLD.migration_id, OLD.reason, OLD.detail, OLD.created_at)
    ON CONFLICT (tenant_id, source, kind, source_id) DO UPDATE SET
        taken_by = excluded.taken_by, migration_id = excluded.migration_id, reason = excluded.reason,
        detail = excluded.detail, created_at = excluded.created_at;
END;

-- An undo's work, written with its plan (R10): every slot it takes back,
-- per kind in a fixed order, with what it expects to find there. A batch
-- takes the next items after its checkpoint; each item's statements name
-- that expectation, so that a slot changed since the plan is never touched.
CREATE TABLE undo_items (
    undo_id      INTEGER NOT NULL REFERENCES migrations (id),
    kind         TEXT    NOT NULL,
    seq          INTEGER NOT NULL,
    source       TEXT    NOT NULL,
    source_id    TEXT    NOT NULL,
    owner        INTEGER NOT NULL, -- the run whose slot it is (RUN, or a dependent's)
    action       TEXT    NOT NULL CHECK (action IN ('created', 'matched', 'skipped')),
    record_id    INTEGER,          -- the row a created slot names
    delete_row   INTEGER NOT NULL DEFAULT 0 CHECK (delete_row IN (0, 1)),
    PRIMARY KEY (undo_id, kind, seq)
) WITHOUT ROWID;

-- The epoch of R2's same-input shortcut, per tenant and source (SPEC §10):
-- removing or changing a final slot moves the epoch of its own tenant and
-- source only. Every pair that has runs starts at the global epoch it had,
-- so that the tasks that vouch for their input now still do.
CREATE TABLE ledger_epochs (
    tenant_id TEXT    NOT NULL,
    source    TEXT    NOT NULL,
    n         INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, source)
) WITHOUT ROWID;
INSERT INTO ledger_epochs (tenant_id, source, n)
SELECT DISTINCT m.tenant_id, m.source, (SELECT n FROM ledger_epoch) FROM migrations m;

DROP TRIGGER final_slot_deleted;
DROP TRIGGER final_slot_changed;
DROP TABLE ledger_epoch;

CREATE TRIGGER final_slot_deleted AFTER DELETE ON migration_records
WHEN OLD.action IN ('created', 'matched')
BEGIN
    INSERT INTO ledger_epochs (tenant_id, source, n) VALUES (OLD.tenant_id, OLD.source, 1)
    ON CONFLICT (tenant_id, source) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER final_slot_changed AFTER UPDATE ON migration_records
WHEN OLD.action IN ('created', 'matched')
BEGIN
    INSERT INTO ledger_epochs (tenant_id, source, n) VALUES (OLD.tenant_id, OLD.source, 1)
    ON CONFLICT (tenant_id, source) DO UPDATE SET n = n + 1;
END;

-- Deleting a parent row checks every child table's foreign key: without
-- these, each check reads the whole child table (an undo of 500 contacts
-- beside a tenant of 80,000 records: 9 s, against 0.1 s with them). Partial:
-- a NULL link needs no entry, and `col = ?` of the check implies the
-- index's condition, so SQLite uses it; a first run maintains 40% fewer
-- entries than with whole-column indexes.
CREATE INDEX contacts_company   ON contacts   (company_id) WHERE company_id IS NOT NULL;
CREATE INDEX deals_company      ON deals      (company_id) WHERE company_id IS NOT NULL;
CREATE INDEX deals_contact      ON deals      (contact_id) WHERE contact_id IS NOT NULL;
CREATE INDEX notes_contact      ON notes      (contact_id) WHERE contact_id IS NOT NULL;
CREATE INDEX notes_company      ON notes      (company_id) WHERE company_id IS NOT NULL;
CREATE INDEX notes_deal         ON notes      (deal_id) WHERE deal_id IS NOT NULL;
CREATE INDEX activities_contact ON activities (contact_id) WHERE contact_id IS NOT NULL;
CREATE INDEX activities_company ON activities (company_id) WHERE company_id IS NOT NULL;
CREATE INDEX activities_deal    ON activities (deal_id) WHERE deal_id IS NOT NULL;
CREATE INDEX emails_contact     ON emails     (contact_id) WHERE contact_id IS NOT NULL;
CREATE INDEX emails_company     ON emails     (company_id) WHERE company_id IS NOT NULL;
CREATE INDEX emails_deal        ON emails     (deal_id) WHERE deal_id IS NOT NULL;

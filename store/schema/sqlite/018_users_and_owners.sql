-- crmimport schema 18: users, and the owners of records (SPEC §1, §4, §6,
-- R6a; issue 26 item 1).
--
-- A kind column admits the user kind. SQLite cannot change a CHECK in
-- place: the two tables' text is rewritten in the schema table, the
-- documented way for a change that leaves every stored row valid (ALTER
-- TABLE, "making other kinds of table schema changes"); the step's fill
-- moves the schema's version so that every connection reads it again,
-- and reads both tables through the new text.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema
SET sql = replace(sql,
    'CHECK (kind IN (''company'', ''contact'', ''deal'', ''note'', ''activity'', ''email''))',
    'CHECK (kind IN (''user'', ''company'', ''contact'', ''deal'', ''note'', ''activity'', ''email''))')
WHERE type = 'table' AND name IN ('migration_tasks', 'migration_records');
PRAGMA writable_schema = OFF;

-- The people who own records: matched by email (R5) across sources, so
-- that one person owning records in two exports is one user.
CREATE TABLE users (
    id          INTEGER PRIMARY KEY,
    tenant_id   TEXT    NOT NULL,
    email       TEXT,
    email_key   TEXT,
    name        TEXT,
    active      INTEGER CHECK (active IN (0, 1)),
    created_at  TEXT,
    extra       TEXT,
    imported_at TEXT    NOT NULL,
    from_dump   INTEGER NOT NULL DEFAULT 0 CHECK (from_dump IN (0, 1))
);
CREATE INDEX users_email_key ON users (tenant_id, email_key) WHERE email_key IS NOT NULL;

-- A record's owner is a link like any other (R6): empty when it does not
-- resolve (counted unowned, the value kept and completed later, R6a).
-- Each has its index, for the foreign key's checks when a user is taken
-- back (R16).
ALTER TABLE companies ADD COLUMN owner_id INTEGER REFERENCES users (id);
ALTER TABLE contacts ADD COLUMN owner_id INTEGER REFERENCES users (id);
ALTER TABLE deals ADD COLUMN owner_id INTEGER REFERENCES users (id);
ALTER TABLE notes ADD COLUMN owner_id INTEGER REFERENCES users (id);
ALTER TABLE activities ADD COLUMN owner_id INTEGER REFERENCES users (id);
CREATE INDEX companies_owner ON companies (owner_id) WHERE owner_id IS NOT NULL;
CREATE INDEX contacts_owner ON contacts (owner_id) WHERE owner_id IS NOT NULL;
CREATE INDEX deals_owner ON deals (owner_id) WHERE owner_id IS NOT NULL;
CREATE INDEX notes_owner ON notes (owner_id) WHERE owner_id IS NOT NULL;
CREATE INDEX activities_owner ON activities (owner_id) WHERE owner_id IS NOT NULL;

-- What an import counts of a kind: records imported with an owner that
-- did not resolve.
ALTER TABLE migration_tasks ADD COLUMN unowned INTEGER NOT NULL DEFAULT 0;

-- Users' ids are given out like every target table's (schema 5).
INSERT INTO id_allocators (name, next) VALUES ('users', 1);

-- crmimport: foreign keys off
-- crmimport schema 4. (The first line tells Upgrade to run this step with
-- foreign keys off, as SQLite's way of changing a column's type needs:
-- deals is rebuilt while notes, activities and emails point at it; the
-- step checks every foreign key before it commits.)

-- A deal's amount is kept exactly as validated: a decimal text. A NUMERIC
-- column turned 12345678901234567.89 into 12345678901234568 and a
-- 400-digit amount into Inf. Amounts already stored are kept as SQLite
-- prints them: what NUMERIC rounded away is gone.
CREATE TABLE deals_new (
    id          INTEGER PRIMARY KEY,
    tenant_id   TEXT NOT NULL,
    name        TEXT NOT NULL,
    amount      TEXT,
    currency    TEXT,
    stage       TEXT,
    close_date  TEXT,
    company_id  INTEGER REFERENCES companies (id),
    contact_id  INTEGER REFERENCES contacts (id),
    created_at  TEXT,
    extra       TEXT,
    imported_at TEXT NOT NULL,
    from_dump   INTEGER NOT NULL DEFAULT 0 CHECK (from_dump IN (0, 1))
);
INSERT INTO deals_new (id, tenant_id, name, amount, currency, stage, close_date, company_id, contact_id,
    created_at, extra, imported_at, from_dump)
SELECT id, tenant_id, name, CAST(amount AS TEXT), currency, stage, close_date, company_id, contact_id,
    created_at, extra, imported_at, from_dump
FROM deals;
DROP TABLE deals;
ALTER TABLE deals_new RENAME TO deals;

-- R13: a run is live only while its owner process is alive and has this
-- very file open. The owner notes the file's identity (device and inode)
-- beside its host, pid and start time, so that in a copy of the database
-- the run shows as interrupted, never as live forever.
ALTER TABLE migrations ADD COLUMN owner_file TEXT;

-- The file says whose it is: crmimport (store.AppID).
PRAGMA application_id = 1668443497;

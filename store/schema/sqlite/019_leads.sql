-- crmimport schema 19: leads (SPEC §1, §4, §6; issue 26 item 2).
--
-- A kind column admits the lead kind: the two tables' text is rewritten in
-- the schema table, as schema 18 did for users (the step's fill moves the
-- schema's version and reads both tables through the new text).
PRAGMA writable_schema = ON;
UPDATE sqlite_schema
SET sql = replace(sql,
    'CHECK (kind IN (''user'', ''company'', ''contact'', ''deal'', ''note'', ''activity'', ''email''))',
    'CHECK (kind IN (''user'', ''company'', ''contact'', ''lead'', ''deal'', ''note'', ''activity'', ''email''))')
WHERE type = 'table' AND name IN ('migration_tasks', 'migration_records');
PRAGMA writable_schema = OFF;

-- People who showed interest and are not contacts yet. A lead is never
-- matched (R5 matches contacts, companies and users): a lead and the
-- contact it became are two records, linked by converted_contact_id.
CREATE TABLE leads (
    id                   INTEGER PRIMARY KEY,
    tenant_id            TEXT    NOT NULL,
    first_name           TEXT,
    last_name            TEXT,
    email                TEXT,
    phone                TEXT,
    title                TEXT,
    company_name         TEXT,
    status               TEXT,
    lead_source          TEXT,
    converted_contact_id INTEGER REFERENCES contacts (id),
    owner_id             INTEGER REFERENCES users (id),
    created_at           TEXT,
    extra                TEXT,
    imported_at          TEXT    NOT NULL,
    from_dump            INTEGER NOT NULL DEFAULT 0 CHECK (from_dump IN (0, 1))
);
CREATE INDEX leads_converted ON leads (converted_contact_id) WHERE converted_contact_id IS NOT NULL;
CREATE INDEX leads_owner ON leads (owner_id) WHERE owner_id IS NOT NULL;

-- A note, activity or email that names a lead (Salesforce's WhoId 00Q…)
-- links to it; the indexes serve the foreign key's checks when a lead is
-- taken back (R16).
ALTER TABLE notes ADD COLUMN lead_id INTEGER REFERENCES leads (id);
ALTER TABLE activities ADD COLUMN lead_id INTEGER REFERENCES leads (id);
ALTER TABLE emails ADD COLUMN lead_id INTEGER REFERENCES leads (id);
CREATE INDEX notes_lead ON notes (lead_id) WHERE lead_id IS NOT NULL;
CREATE INDEX activities_lead ON activities (lead_id) WHERE lead_id IS NOT NULL;
CREATE INDEX emails_lead ON emails (lead_id) WHERE lead_id IS NOT NULL;

INSERT INTO id_allocators (name, next) VALUES ('leads', 1);

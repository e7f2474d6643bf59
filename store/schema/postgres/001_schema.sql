-- crmimport on PostgreSQL (issue 17): the tables, indexes and triggers of
-- SQLite's schema 9 (schema/sqlite/001-009), in PostgreSQL's spelling, as
-- one first version; later versions are steps beside SQLite's. What
-- differs: ids are bigint, WITHOUT ROWID has no meaning (every table is a
-- heap with its primary key's index), and the triggers are functions.
-- Times stay text in ledger.TimeFormat (UTC, fixed width: text order is
-- time order), as the engine writes and compares them on both.

CREATE TABLE migrations (
    id                     bigint  PRIMARY KEY,
    tenant_id              text    NOT NULL,
    source                 text    NOT NULL,
    status                 text    NOT NULL
        CHECK (status IN ('running', 'succeeded', 'partial', 'failed', 'cancelled')),
    current_phase          integer NOT NULL DEFAULT 0,
    cancellation_requested integer NOT NULL DEFAULT 0 CHECK (cancellation_requested IN (0, 1)),
    stats                  text,
    options                text    NOT NULL DEFAULT '{}',
    started_at             text    NOT NULL,
    finished_at            text,
    duration_ms            bigint,
    message                text,
    owner_host             text,
    owner_pid              bigint,
    owner_started          text,
    heartbeat_at           text,
    attempts               integer NOT NULL DEFAULT 1,
    dump                   text,
    owner_file             text,
    undoes                 bigint,
    undone_by              bigint
);
-- R13: one live run per tenant, decided by the database.
CREATE UNIQUE INDEX migrations_one_live_run_per_tenant ON migrations (tenant_id) WHERE status = 'running';

CREATE TABLE migration_tasks (
    id                 bigint  PRIMARY KEY,
    migration_id       bigint  NOT NULL REFERENCES migrations (id),
    kind               text    NOT NULL
        CHECK (kind IN ('company', 'contact', 'deal', 'note', 'activity', 'email')),
    phase              integer NOT NULL,
    status             text    NOT NULL
        CHECK (status IN ('pending', 'running', 'succeeded', 'failed', 'cancelled')),
    file               text,
    format             text,
    encoding           text,
    fingerprint        text,
    checkpoint         text    NOT NULL DEFAULT '{"rows":0,"line":0}',
    attempts           integer NOT NULL DEFAULT 0,
    last_error         text,
    imported           bigint  NOT NULL DEFAULT 0,
    matched            bigint  NOT NULL DEFAULT 0,
    unchanged          bigint  NOT NULL DEFAULT 0,
    skipped            bigint  NOT NULL DEFAULT 0,
    failed             bigint  NOT NULL DEFAULT 0,
    duplicate          bigint  NOT NULL DEFAULT 0,
    unlinked           bigint  NOT NULL DEFAULT 0,
    updated_at         text    NOT NULL,
    input_key          text,
    ledger_epoch       bigint,
    input_size         bigint  NOT NULL DEFAULT 0 CHECK (input_size >= 0),
    read_bytes         bigint  NOT NULL DEFAULT 0 CHECK (read_bytes >= 0),
    attempt_started_at text,
    attempt_rows       bigint  NOT NULL DEFAULT 0 CHECK (attempt_rows >= 0),
    attempt_bytes      bigint  NOT NULL DEFAULT 0 CHECK (attempt_bytes >= 0),
    removed            bigint  NOT NULL DEFAULT 0,
    released           bigint  NOT NULL DEFAULT 0,
    restored           bigint  NOT NULL DEFAULT 0,
    cleared            bigint  NOT NULL DEFAULT 0
);
CREATE INDEX migration_tasks_run ON migration_tasks (migration_id, phase, status);

-- The ledger (SPEC §6): one slot per (tenant, source, kind, source id).
CREATE TABLE migration_records (
    tenant_id    text   NOT NULL,
    source       text   NOT NULL,
    kind         text   NOT NULL
        CHECK (kind IN ('company', 'contact', 'deal', 'note', 'activity', 'email')),
    source_id    text   NOT NULL,
    id           bigint NOT NULL, -- from the allocator migration_records
    migration_id bigint,
    record_type  text,
    record_id    bigint,
    action       text   NOT NULL CHECK (action IN ('created', 'matched', 'skipped')),
    reason       text,
    detail       text,
    created_at   text   NOT NULL,
    PRIMARY KEY (tenant_id, source, kind, source_id)
);

CREATE TABLE record_failures (
    id           bigint  PRIMARY KEY,
    migration_id bigint  NOT NULL REFERENCES migrations (id),
    task_id      bigint  REFERENCES migration_tasks (id),
    kind         text    NOT NULL,
    source_id    text,
    file         text,
    line         bigint,
    reason       text    NOT NULL,
    raw          text
);
CREATE INDEX record_failures_run ON record_failures (migration_id, kind);

CREATE TABLE run_log (
    id           bigint PRIMARY KEY,
    migration_id bigint NOT NULL REFERENCES migrations (id),
    at           text   NOT NULL,
    level        text   NOT NULL CHECK (level IN ('info', 'notice', 'warning', 'error')),
    message      text   NOT NULL
);
CREATE INDEX run_log_run ON run_log (migration_id, id);

CREATE TABLE companies (
    id          bigint  PRIMARY KEY,
    tenant_id   text    NOT NULL,
    name        text    NOT NULL,
    domain      text,
    domain_key  text, -- R5: the domain lower-cased, without scheme, www. or path
    phone       text,
    industry    text,
    created_at  text,
    extra       text,
    imported_at text    NOT NULL,
    from_dump   integer NOT NULL DEFAULT 0 CHECK (from_dump IN (0, 1))
);
CREATE INDEX companies_domain_key ON companies (tenant_id, domain_key) WHERE domain_key IS NOT NULL;

CREATE TABLE contacts (
    id          bigint  PRIMARY KEY,
    tenant_id   text    NOT NULL,
    first_name  text,
    last_name   text,
    email       text,
    email_key   text, -- R5: the email trimmed and lower-cased
    phone       text,
    title       text,
    company_id  bigint  REFERENCES companies (id),
    created_at  text,
    extra       text,
    imported_at text    NOT NULL,
    from_dump   integer NOT NULL DEFAULT 0 CHECK (from_dump IN (0, 1))
);
CREATE INDEX contacts_email_key ON contacts (tenant_id, email_key) WHERE email_key IS NOT NULL;

CREATE TABLE deals (
    id          bigint  PRIMARY KEY,
    tenant_id   text    NOT NULL,
    name        text    NOT NULL,
    amount      text, -- the exact decimal text it was validated as (schema 4)
    currency    text,
    stage       text,
    close_date  text,
    company_id  bigint  REFERENCES companies (id),
    contact_id  bigint  REFERENCES contacts (id),
    created_at  text,
    extra       text,
    imported_at text    NOT NULL,
    from_dump   integer NOT NULL DEFAULT 0 CHECK (from_dump IN (0, 1))
);

CREATE TABLE notes (
    id          bigint  PRIMARY KEY,
    tenant_id   text    NOT NULL,
    body        text    NOT NULL,
    contact_id  bigint  REFERENCES contacts (id),
    company_id  bigint  REFERENCES companies (id),
    deal_id     bigint  REFERENCES deals (id),
    created_at  text,
    extra       text,
    imported_at text    NOT NULL,
    from_dump   integer NOT NULL DEFAULT 0 CHECK (from_dump IN (0, 1))
);

CREATE TABLE activities (
    id          bigint  PRIMARY KEY,
    tenant_id   text    NOT NULL,
    type        text,
    subject     text,
    body        text,
    due_at      text,
    done        integer NOT NULL DEFAULT 0 CHECK (done IN (0, 1)),
    contact_id  bigint  REFERENCES contacts (id),
    company_id  bigint  REFERENCES companies (id),
    deal_id     bigint  REFERENCES deals (id),
    created_at  text,
    extra       text,
    imported_at text    NOT NULL,
    from_dump   integer NOT NULL DEFAULT 0 CHECK (from_dump IN (0, 1))
);

CREATE TABLE emails (
    id          bigint  PRIMARY KEY,
    tenant_id   text    NOT NULL,
    subject     text,
    body        text,
    "from"      text,
    "to"        text,
    sent_at     text,
    contact_id  bigint  REFERENCES contacts (id),
    company_id  bigint  REFERENCES companies (id),
    deal_id     bigint  REFERENCES deals (id),
    extra       text,
    imported_at text    NOT NULL,
    from_dump   integer NOT NULL DEFAULT 0 CHECK (from_dump IN (0, 1))
);

-- Schema 7: the child tables' foreign keys, for the parent rows an undo
-- deletes; partial, as NULL links are about 40% of them.
CREATE INDEX contacts_company   ON contacts   (company_id) WHERE company_id IS NOT NULL;
CREATE INDEX deals_company      ON deals      (company_id) WHERE company_id IS NOT NULL;
CREATE INDEX deals_contact      ON deals      (contact_id) WHERE contact_id IS NOT NULL;
CREATE INDEX notes_contact      ON notes      (contact_id) WHERE contact_id IS NOT NULL;
CREATE INDEX notes_company      ON notes      (company_id) WHERE company_id IS NOT NULL;
CREATE INDEX notes_deal         ON notes      (deal_id)    WHERE deal_id IS NOT NULL;
CREATE INDEX activities_contact ON activities (contact_id) WHERE contact_id IS NOT NULL;
CREATE INDEX activities_company ON activities (company_id) WHERE company_id IS NOT NULL;
CREATE INDEX activities_deal    ON activities (deal_id)    WHERE deal_id IS NOT NULL;
CREATE INDEX emails_contact     ON emails     (contact_id) WHERE contact_id IS NOT NULL;
CREATE INDEX emails_company     ON emails     (company_id) WHERE company_id IS NOT NULL;
CREATE INDEX emails_deal        ON emails     (deal_id)    WHERE deal_id IS NOT NULL;

-- Schema 5: an allocator per table of ids, never max(id) + 1.
CREATE TABLE id_allocators (
    name text   PRIMARY KEY,
    next bigint NOT NULL CHECK (next > 0)
);
INSERT INTO id_allocators (name, next) VALUES
    ('companies', 1), ('contacts', 1), ('deals', 1), ('notes', 1), ('activities', 1), ('emails', 1),
    ('migration_records', 1);

-- Schema 7: undo (R16).
CREATE TABLE slot_before (
    tenant_id    text   NOT NULL,
    source       text   NOT NULL,
    kind         text   NOT NULL,
    source_id    text   NOT NULL,
    taken_by     bigint NOT NULL, -- the run that took the slot over
    migration_id bigint,          -- the skip's owner before it
    reason       text,
    detail       text,
    created_at   text   NOT NULL,
    PRIMARY KEY (tenant_id, source, kind, source_id)
);

CREATE TABLE undo_items (
    undo_id    bigint  NOT NULL REFERENCES migrations (id),
    kind       text    NOT NULL,
    seq        bigint  NOT NULL,
    source     text    NOT NULL,
    source_id  text    NOT NULL,
    owner      bigint  NOT NULL, -- the run whose slot it is (RUN, or a dependent's)
    action     text    NOT NULL CHECK (action IN ('created', 'matched', 'skipped')),
    record_id  bigint,           -- the row a created slot names
    delete_row integer NOT NULL DEFAULT 0 CHECK (delete_row IN (0, 1)),
    PRIMARY KEY (undo_id, kind, seq)
);

CREATE TABLE ledger_epochs (
    tenant_id text   NOT NULL,
    source    text   NOT NULL,
    n         bigint NOT NULL,
    PRIMARY KEY (tenant_id, source)
);

-- Schema 8: where each failed or skipped record of a task stands in its file.
CREATE TABLE task_revisits (
    task_id    bigint NOT NULL,
    "row"      bigint NOT NULL, -- the records of the file read before it
    line       bigint NOT NULL, -- the line it starts on
    start_byte bigint NOT NULL, -- where it stands in the raw file, [start_byte, end_byte)
    end_byte   bigint NOT NULL,
    first_line bigint,          -- a duplicate: the line of the id's first record
    PRIMARY KEY (task_id, "row")
);

-- Schema 9: an undo's batch moves the epoch itself, once per source.
CREATE TABLE epoch_hold (
    held integer PRIMARY KEY CHECK (held = 1)
);

-- The claim keeps the before-image of each skip it takes over (R16).
CREATE FUNCTION slot_taken_over() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO slot_before
        (tenant_id, source, kind, source_id, taken_by, migration_id, reason, detail, created_at)
    VALUES (OLD.tenant_id, OLD.source, OLD.kind, OLD.source_id, NEW.migration_id,
        OLD.migration_id, OLD.reason, OLD.detail, OLD.created_at)
    ON CONFLICT (tenant_id, source, kind, source_id) DO UPDATE SET
        taken_by = excluded.taken_by, migration_id = excluded.migration_id, reason = excluded.reason,
        detail = excluded.detail, created_at = excluded.created_at;
    RETURN NEW;
END $$;
CREATE TRIGGER slot_taken_over BEFORE UPDATE OF migration_id ON migration_records
FOR EACH ROW WHEN (OLD.action = 'skipped' AND OLD.migration_id IS DISTINCT FROM NEW.migration_id)
EXECUTE FUNCTION slot_taken_over();

-- Removing or changing a final slot moves its tenant and source's epoch,
-- but inside an undo's batch, which moves it itself (epoch_hold).
CREATE FUNCTION final_slot_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM epoch_hold) THEN
        INSERT INTO ledger_epochs (tenant_id, source, n) VALUES (OLD.tenant_id, OLD.source, 1)
        ON CONFLICT (tenant_id, source) DO UPDATE SET n = ledger_epochs.n + 1;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER final_slot_deleted AFTER DELETE ON migration_records
FOR EACH ROW WHEN (OLD.action IN ('created', 'matched'))
EXECUTE FUNCTION final_slot_moved();
CREATE TRIGGER final_slot_changed AFTER UPDATE ON migration_records
FOR EACH ROW WHEN (OLD.action IN ('created', 'matched'))
EXECUTE FUNCTION final_slot_moved();

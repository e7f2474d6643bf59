-- crmimport schema 1. Kinds are singular everywhere; states are CHECKed
-- strings (STYLE 5); times are UTC text "YYYY-MM-DDTHH:MM:SS.ffffffZ".

-- Runs (SPEC §3). One live run per tenant is enforced by the index below
-- (R13), never by a check-then-insert.
CREATE TABLE migrations (
    id                     INTEGER PRIMARY KEY,
    tenant_id              TEXT    NOT NULL,
    source                 TEXT    NOT NULL,
    status                 TEXT    NOT NULL
        CHECK (status IN ('running', 'succeeded', 'partial', 'failed', 'cancelled')),
    current_phase          INTEGER NOT NULL DEFAULT 0,
    cancellation_requested INTEGER NOT NULL DEFAULT 0 CHECK (cancellation_requested IN (0, 1)),
    stats                  TEXT,
    options                TEXT    NOT NULL DEFAULT '{}',
    started_at             TEXT    NOT NULL,
    finished_at            TEXT,
    duration_ms            INTEGER,
    message                TEXT,
    -- The process that owns a running run: host, pid and the pid's start
    -- time (against pid reuse), and the time of its last committed batch.
    owner_host             TEXT,
    owner_pid              INTEGER,
    owner_started          TEXT,
    heartbeat_at           TEXT,
    attempts               INTEGER NOT NULL DEFAULT 1
);
CREATE UNIQUE INDEX migrations_one_live_run_per_tenant ON migrations (tenant_id) WHERE status = 'running';

-- Tasks: the work on one input file (one kind) inside a run.
CREATE TABLE migration_tasks (
    id           INTEGER PRIMARY KEY,
    migration_id INTEGER NOT NULL REFERENCES migrations (id),
    kind         TEXT    NOT NULL
        CHECK (kind IN ('company', 'contact', 'deal', 'note', 'activity', 'email')),
    phase        INTEGER NOT NULL,
    status       TEXT    NOT NULL
        CHECK (status IN ('pending', 'running', 'succeeded', 'failed', 'cancelled')),
    file         TEXT,
    format       TEXT,
    encoding     TEXT,
    fingerprint  TEXT,
    checkpoint   TEXT    NOT NULL DEFAULT '{"rows":0,"line":0}',
    attempts     INTEGER NOT NULL DEFAULT 0,
    last_error   TEXT,
    imported     INTEGER NOT NULL DEFAULT 0,
    matched      INTEGER NOT NULL DEFAULT 0,
    unchanged    INTEGER NOT NULL DEFAULT 0,
    skipped      INTEGER NOT NULL DEFAULT 0,
    failed       INTEGER NOT NULL DEFAULT 0,
    duplicate    INTEGER NOT NULL DEFAULT 0,
    unlinked     INTEGER NOT NULL DEFAULT 0,
    updated_at   TEXT    NOT NULL
);
CREATE INDEX migration_tasks_run ON migration_tasks (migration_id, phase, status);

-- The ledger (R1-R6): one slot per (tenant, source, kind, source_id). The
-- key is the table's own key (WITHOUT ROWID): one B-tree, not a table and
-- a unique index, since every imported record writes a slot.
CREATE TABLE migration_records (
    tenant_id    TEXT    NOT NULL,
    source       TEXT    NOT NULL,
    kind         TEXT    NOT NULL
        CHECK (kind IN ('company', 'contact', 'deal', 'note', 'activity', 'email')),
    source_id    TEXT    NOT NULL,
    id           INTEGER NOT NULL, -- numbered from slot_ids
    migration_id INTEGER,
    record_type  TEXT,
    record_id    INTEGER,
    action       TEXT    NOT NULL CHECK (action IN ('created', 'matched', 'skipped')),
    reason       TEXT,
    detail       TEXT,
    created_at   TEXT    NOT NULL,
    PRIMARY KEY (tenant_id, source, kind, source_id)
) WITHOUT ROWID;

-- The next slot id: a table without rowid numbers its rows itself.
CREATE TABLE slot_ids (next INTEGER NOT NULL);
INSERT INTO slot_ids (next) VALUES (1);

-- R4: a record that fails claims nothing and is written here instead.
CREATE TABLE record_failures (
    id           INTEGER PRIMARY KEY,
    migration_id INTEGER NOT NULL REFERENCES migrations (id),
    task_id      INTEGER REFERENCES migration_tasks (id),
    kind         TEXT    NOT NULL,
    source_id    TEXT,
    file         TEXT,
    line         INTEGER,
    reason       TEXT    NOT NULL,
    raw          TEXT
);
CREATE INDEX record_failures_run ON record_failures (migration_id, kind);

-- The run log, never capped.
CREATE TABLE run_log (
    id           INTEGER PRIMARY KEY,
    migration_id INTEGER NOT NULL REFERENCES migrations (id),
    at           TEXT    NOT NULL,
    level        TEXT    NOT NULL CHECK (level IN ('info', 'notice', 'warning', 'error')),
    message      TEXT    NOT NULL
);
CREATE INDEX run_log_run ON run_log (migration_id, id);

-- Target tables: the canonical fields, the source's own created_at, the
-- columns nothing mapped (extra, JSON), and when the row was written.
CREATE TABLE companies (
    id          INTEGER PRIMARY KEY,
    tenant_id   TEXT NOT NULL,
    name        TEXT NOT NULL,
    domain      TEXT,
    domain_key  TEXT, -- R5: the domain lower-cased, without scheme, www. or path
    phone       TEXT,
    industry    TEXT,
    created_at  TEXT,
    extra       TEXT,
    imported_at TEXT NOT NULL
);
CREATE INDEX companies_domain_key ON companies (tenant_id, domain_key) WHERE domain_key IS NOT NULL;

CREATE TABLE contacts (
    id          INTEGER PRIMARY KEY,
    tenant_id   TEXT NOT NULL,
    first_name  TEXT,
    last_name   TEXT,
    email       TEXT,
    email_key   TEXT, -- R5: the email trimmed and lower-cased
    phone       TEXT,
    title       TEXT,
    company_id  INTEGER REFERENCES companies (id),
    created_at  TEXT,
    extra       TEXT,
    imported_at TEXT NOT NULL
);
CREATE INDEX contacts_email_key ON contacts (tenant_id, email_key) WHERE email_key IS NOT NULL;

CREATE TABLE deals (
    id          INTEGER PRIMARY KEY,
    tenant_id   TEXT NOT NULL,
    name        TEXT NOT NULL,
    amount      NUMERIC,
    currency    TEXT,
    stage       TEXT,
    close_date  TEXT,
    company_id  INTEGER REFERENCES companies (id),
    contact_id  INTEGER REFERENCES contacts (id),
    created_at  TEXT,
    extra       TEXT,
    imported_at TEXT NOT NULL
);

CREATE TABLE notes (
    id          INTEGER PRIMARY KEY,
    tenant_id   TEXT NOT NULL,
    body        TEXT NOT NULL,
    contact_id  INTEGER REFERENCES contacts (id),
    company_id  INTEGER REFERENCES companies (id),
    deal_id     INTEGER REFERENCES deals (id),
    created_at  TEXT,
    extra       TEXT,
    imported_at TEXT NOT NULL
);

CREATE TABLE activities (
    id          INTEGER PRIMARY KEY,
    tenant_id   TEXT NOT NULL,
    type        TEXT,
    subject     TEXT,
    body        TEXT,
    due_at      TEXT,
    done        INTEGER NOT NULL DEFAULT 0 CHECK (done IN (0, 1)),
    contact_id  INTEGER REFERENCES contacts (id),
    company_id  INTEGER REFERENCES companies (id),
    deal_id     INTEGER REFERENCES deals (id),
    created_at  TEXT,
    extra       TEXT,
    imported_at TEXT NOT NULL
);

CREATE TABLE emails (
    id          INTEGER PRIMARY KEY,
    tenant_id   TEXT NOT NULL,
    subject     TEXT,
    body        TEXT,
    "from"      TEXT,
    "to"        TEXT,
    sent_at     TEXT,
    contact_id  INTEGER REFERENCES contacts (id),
    company_id  INTEGER REFERENCES companies (id),
    deal_id     INTEGER REFERENCES deals (id),
    extra       TEXT,
    imported_at TEXT NOT NULL
);

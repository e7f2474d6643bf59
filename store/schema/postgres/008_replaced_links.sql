-- crmimport schema 8 (PostgreSQL): SQLite's schema 16. The links an update
-- replaced (R17, R16, R6a): what an update that changes a link field
-- forgets of it in pending_links is kept here with the run that replaced
-- it, for the undo of that run to put back.
CREATE TABLE replaced_links (
    id               bigint PRIMARY KEY,
    tenant_id        text   NOT NULL,
    source           text   NOT NULL,
    kind             text   NOT NULL,
    source_id        text   NOT NULL,
    record_id        bigint NOT NULL,
    field            text   NOT NULL,
    kept             text,
    parent_kind      text   NOT NULL,
    parent_source_id text   NOT NULL,
    migration_id     bigint NOT NULL REFERENCES migrations (id),
    completed_by     bigint REFERENCES migrations (id),
    replaced_by      bigint NOT NULL REFERENCES migrations (id)
);

CREATE INDEX replaced_links_slot ON replaced_links (tenant_id, source, kind, source_id);
CREATE INDEX replaced_links_by ON replaced_links (replaced_by);

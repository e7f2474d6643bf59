-- crmimport schema 16: the links an update replaced (R17, R16, R6a).
--
-- An update that changes a link field forgets what pending_links held of
-- it (the value waiting for its parent, or completed by a run) and
-- remembers the new value where it does not resolve. What it forgot is
-- kept here, with the run that replaced it, so that the undo of that run
-- puts it back in pending_links as it was (the link waiting for the
-- parent the record names again) and forgets what the run remembered: the
-- ledger as before the run. An undo of the record's own run forgets these
-- with its slot.
CREATE TABLE replaced_links (
    id               INTEGER PRIMARY KEY, -- the link's id in pending_links
    tenant_id        TEXT    NOT NULL,
    source           TEXT    NOT NULL,
    kind             TEXT    NOT NULL,
    source_id        TEXT    NOT NULL,
    record_id        INTEGER NOT NULL,
    field            TEXT    NOT NULL,
    kept             TEXT,
    parent_kind      TEXT    NOT NULL,
    parent_source_id TEXT    NOT NULL,
    migration_id     INTEGER NOT NULL REFERENCES migrations (id),
    completed_by     INTEGER REFERENCES migrations (id),
    replaced_by      INTEGER NOT NULL REFERENCES migrations (id)
);

CREATE INDEX replaced_links_slot ON replaced_links (tenant_id, source, kind, source_id);
CREATE INDEX replaced_links_by ON replaced_links (replaced_by);

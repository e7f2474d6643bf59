-- crmimport schema 13: links completed when their parent arrives (R6a).
--
-- A link value that did not resolve when its record's row was written (a
-- deal's company, a note's deal beside the contact that did resolve) is
-- remembered here, in the record's own savepoint (R1): by the child's slot
-- key and row, the link field, and the parent's key. The run that gives the
-- parent a final slot sets the child's link column (a compare-and-set on
-- an empty link, R11) and marks the link completed_by itself, in the
-- parent's batch transaction (R12), taking the value kept for the link
-- out of the row's extra (a run of the fixed export keeps none). An undo of that run empties the link
-- (putting the value back in extra) and marks it pending again; an undo of the child's own run deletes it
-- with the child's row.
CREATE TABLE pending_links (
    id               INTEGER PRIMARY KEY,
    tenant_id        TEXT    NOT NULL,
    source           TEXT    NOT NULL,
    kind             TEXT    NOT NULL, -- the child's
    source_id        TEXT    NOT NULL, -- the child's
    record_id        INTEGER NOT NULL, -- the child's row
    field            TEXT    NOT NULL, -- the child's link column
    kept             TEXT,             -- the value kept for it in the row's extra (SPEC §4 step 7), taken out when completed
    parent_kind      TEXT    NOT NULL,
    parent_source_id TEXT    NOT NULL,
    migration_id     INTEGER NOT NULL REFERENCES migrations (id), -- the run that wrote the child
    completed_by     INTEGER REFERENCES migrations (id),          -- the run that completed the link, or NULL
    UNIQUE (tenant_id, source, kind, source_id, field)
);

-- The links still waiting for a parent, by the parent's key: what a batch
-- of parents completes.
CREATE INDEX pending_links_parent ON pending_links (tenant_id, source, parent_kind, parent_source_id) WHERE completed_by IS NULL;
-- The links a run completed: what its undo empties again.
CREATE INDEX pending_links_completed ON pending_links (completed_by) WHERE completed_by IS NOT NULL;

-- A run's counts of a kind that no task of that kind holds (R6a): links
-- completed (relinked), or emptied again by an undo (unlinked), on the
-- child's kind, which the run may not read at all. Written in the batch
-- transaction that completes or empties them (R12).
CREATE TABLE run_kind_counts (
    migration_id INTEGER NOT NULL REFERENCES migrations (id),
    kind         TEXT    NOT NULL,
    relinked     INTEGER NOT NULL DEFAULT 0,
    unlinked     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (migration_id, kind)
) WITHOUT ROWID;

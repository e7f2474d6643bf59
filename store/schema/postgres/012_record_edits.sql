-- crmimport schema 12 (PostgreSQL): SQLite's schema 20. The review grid's
-- pending edits (SPEC §9, Failed records; issue 27 item 1): a changed cell
-- per failure and column, kept until it is re-imported (fix_run names the
-- run that did), never in the browser; record_failures.raw stays the row
-- as read. Indexes of a run's failures per file, and per file and kind or
-- reason class (the grid shows one file at a time, in file order), the
-- failure's id last, which PostgreSQL's indexes do not hold of themselves.
CREATE TABLE record_edits (
    failure_id   bigint NOT NULL REFERENCES record_failures (id),
    migration_id bigint NOT NULL REFERENCES migrations (id),
    column_name  text   NOT NULL,
    value        text   NOT NULL,
    edited_at    text   NOT NULL,
    fix_run      bigint REFERENCES migrations (id),
    PRIMARY KEY (failure_id, column_name)
);
CREATE INDEX record_edits_pending ON record_edits (migration_id, fix_run);
CREATE INDEX record_edits_fix ON record_edits (fix_run) WHERE fix_run IS NOT NULL;

CREATE INDEX record_failures_file ON record_failures (migration_id, file, id);
CREATE INDEX record_failures_file_kind ON record_failures (migration_id, file, kind, id);
CREATE INDEX record_failures_file_class ON record_failures (migration_id, file, reason_class, id);
CREATE INDEX record_failures_file_kind_class ON record_failures (migration_id, file, kind, reason_class);

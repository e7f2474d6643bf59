-- crmimport schema 20: the review grid's pending edits (SPEC §9, Failed
-- records; issue 27 item 1).
--
-- A cell of a failed row that a person changed on the page is kept here,
-- per failure and column, until it is re-imported — never in the browser,
-- so that a refresh or a restart loses nothing. The row as read stays in
-- record_failures.raw (R4 wrote it; nothing rewrites it): an edit is beside
-- it, not over it. fix_run names the run that re-imported the edit (a run
-- over a fix folder, fixfile.WriteEdited); NULL while it waits. An edit
-- made again after its re-import waits again.
CREATE TABLE record_edits (
    failure_id   INTEGER NOT NULL REFERENCES record_failures (id),
    migration_id INTEGER NOT NULL REFERENCES migrations (id),
    column_name  TEXT    NOT NULL,
    value        TEXT    NOT NULL,
    edited_at    TEXT    NOT NULL,
    fix_run      INTEGER REFERENCES migrations (id),
    PRIMARY KEY (failure_id, column_name)
);
-- The edits of a run that wait (the grid's count, Re-import), and those a
-- fix run took (its rows' outcomes).
CREATE INDEX record_edits_pending ON record_edits (migration_id, fix_run);
CREATE INDEX record_edits_fix ON record_edits (fix_run) WHERE fix_run IS NOT NULL;

-- The grid shows one file of a run at a time (a row has its file's
-- columns): its counts and pages per kind and reason class within a file
-- come from this index, not from every failure of the run (400,000 rows:
-- issue 27 item 1 wants each under a second).
CREATE INDEX record_failures_file ON record_failures (migration_id, file, kind, reason_class);

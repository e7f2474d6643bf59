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
-- columns), in file order (the failure's id: SQLite's rowid, which every
-- index holds last): a page, a kind's and a reason class's pages and their
-- counts come from these indexes, not from every failure of the run, and
-- the last page skips index entries, not rows (400,000 rows: issue 27 item
-- 1 wants each under a second).
CREATE INDEX record_failures_file ON record_failures (migration_id, file);
CREATE INDEX record_failures_file_kind ON record_failures (migration_id, file, kind);
CREATE INDEX record_failures_file_class ON record_failures (migration_id, file, reason_class);
-- The counts per class of a kind (and per kind of a class) from an index
-- alone: read through the table they took 0.6 s at 400,000 rows.
CREATE INDEX record_failures_file_kind_class ON record_failures (migration_id, file, kind, reason_class);

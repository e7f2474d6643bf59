-- crmimport schema 3 (PostgreSQL): SQLite's schema 11. One file may feed
-- several kinds, a task per kind (SPEC §4, issue 23 item 9): a task counts
-- the rows it read that are not records of its kind (excluded), and the
-- first task of a file, of those, the rows no kind of the profile takes
-- (untaken). Both commit with the batch and its checkpoint (R12).
ALTER TABLE migration_tasks ADD COLUMN excluded bigint NOT NULL DEFAULT 0;
ALTER TABLE migration_tasks ADD COLUMN untaken  bigint NOT NULL DEFAULT 0;

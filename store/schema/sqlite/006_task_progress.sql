-- crmimport schema 6: a task's progress, stored with its checkpoint in the
-- batch's own UPDATE (R12), so that any process reading the file shows a
-- run live (SPEC §9 "Live updates"): records (the checkpoint's rows),
-- percent of its file, rate and time left, from these columns and a clock.
--
-- Columns, not fields of the checkpoint's JSON: the checkpoint stays
-- {"rows", "line"}, what resume reads, and a reader selects numbers
-- without parsing JSON. Tasks planned before this schema hold 0 and NULL
-- here: their size is unknown until a batch of theirs commits again.

-- The input's size in bytes, as progress measures it: a file's bytes, a
-- gzip's compressed bytes, a zip entry's uncompressed bytes. 0: unknown.
ALTER TABLE migration_tasks ADD COLUMN input_size INTEGER NOT NULL DEFAULT 0 CHECK (input_size >= 0);

-- How far into those bytes the committed checkpoint has read; it never goes
-- back, and is the size once the task succeeds.
ALTER TABLE migration_tasks ADD COLUMN read_bytes INTEGER NOT NULL DEFAULT 0 CHECK (read_bytes >= 0);

-- When the task last started (its first start, or the resume that re-armed
-- it), and the records and bytes its checkpoint held then: the rate is of
-- this attempt, never of the time its process lay dead. NULL for a task not
-- started since it was planned or re-armed.
ALTER TABLE migration_tasks ADD COLUMN attempt_started_at TEXT;
ALTER TABLE migration_tasks ADD COLUMN attempt_rows INTEGER NOT NULL DEFAULT 0 CHECK (attempt_rows >= 0);
ALTER TABLE migration_tasks ADD COLUMN attempt_bytes INTEGER NOT NULL DEFAULT 0 CHECK (attempt_bytes >= 0);

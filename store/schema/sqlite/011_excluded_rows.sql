-- crmimport schema 11: one file may feed several kinds, a task per kind
-- (SPEC §4, issue 23 item 9), and a profile's where reads only some of a
-- file's rows as records of a kind. A task counts the rows it read that are
-- not records of its kind (excluded: never a failure), and the first task
-- of a file counts, of those, the rows no kind of the profile takes
-- (untaken: the run's summary warns of them per file). Both commit with the
-- batch and its checkpoint (R12), like every counter of the task.
ALTER TABLE migration_tasks ADD COLUMN excluded INTEGER NOT NULL DEFAULT 0;
ALTER TABLE migration_tasks ADD COLUMN untaken  INTEGER NOT NULL DEFAULT 0;

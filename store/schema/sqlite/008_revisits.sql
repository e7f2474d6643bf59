-- crmimport schema 8: a rerun of an export an earlier task read whole
-- revisits only the records that task left without a final slot (failed or
-- skipped: the only ones whose outcome can change, R2), by where they stand
-- in the file (issue 16 goal 1).

-- One row per such record of a task, written in the batch transaction that
-- decided it (R12), so that a task that succeeds holds one per record it
-- failed or skipped. Only a task whose reader knows where its records
-- stand (a CSV file read as UTF-8) writes them; a rerun of any other reads
-- its file whole.
CREATE TABLE task_revisits (
    task_id    INTEGER NOT NULL,
    row        INTEGER NOT NULL, -- the records of the file read before it
    line       INTEGER NOT NULL, -- the line it starts on
    start_byte INTEGER NOT NULL, -- where it stands in the raw file, [start_byte, end_byte)
    end_byte   INTEGER NOT NULL,
    -- A duplicate (SPEC §4 step 2): the line of the id's first record in
    -- the file, which a revisit may not read again. NULL otherwise.
    first_line INTEGER,
    PRIMARY KEY (task_id, row)
) WITHOUT ROWID;

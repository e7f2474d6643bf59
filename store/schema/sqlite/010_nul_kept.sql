-- crmimport schema 10: per task, how many records it imported with a NUL
-- byte in a column kept in extra (SPEC §4: kept there as JSON \u0000 and
-- counted in a warning; a NUL in a mapped field fails its row instead).
-- Counted with the batch's other counters, in its transaction (R12), so
-- that a resumed run counts each record once.
ALTER TABLE migration_tasks ADD COLUMN nul_kept INTEGER NOT NULL DEFAULT 0 CHECK (nul_kept >= 0);

-- crmimport schema 2 (PostgreSQL; SQLite's 10): per task, how many records
-- it imported with a NUL byte in a column kept in extra (SPEC §4: kept
-- there as JSON \u0000 — extra is text, never jsonb, which cannot hold
-- \u0000 — and counted in a warning). Counted with the batch's other
-- counters, in its transaction (R12).
ALTER TABLE migration_tasks ADD COLUMN nul_kept bigint NOT NULL DEFAULT 0 CHECK (nul_kept >= 0);

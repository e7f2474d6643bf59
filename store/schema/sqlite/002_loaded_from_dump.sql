-- crmimport schema 2: what `crmimport ledger load` brings from a production
-- dump of the ledger tables (SPEC §5).

-- A run loaded from a dump names the dump it came from. Its plan has no
-- input files here: `resume RUN --from PATH` plans its re-armed tasks over a
-- local export (R10), and a plain `resume` refuses it.
ALTER TABLE migrations ADD COLUMN dump TEXT;

-- A dump carries slots, not target rows. Every created or matched slot it
-- loads gets a placeholder row, marked here, so that links resolve through
-- the ledger (R6) and foreign keys hold.
ALTER TABLE companies  ADD COLUMN from_dump INTEGER NOT NULL DEFAULT 0 CHECK (from_dump IN (0, 1));
ALTER TABLE contacts   ADD COLUMN from_dump INTEGER NOT NULL DEFAULT 0 CHECK (from_dump IN (0, 1));
ALTER TABLE deals      ADD COLUMN from_dump INTEGER NOT NULL DEFAULT 0 CHECK (from_dump IN (0, 1));
ALTER TABLE notes      ADD COLUMN from_dump INTEGER NOT NULL DEFAULT 0 CHECK (from_dump IN (0, 1));
ALTER TABLE activities ADD COLUMN from_dump INTEGER NOT NULL DEFAULT 0 CHECK (from_dump IN (0, 1));
ALTER TABLE emails     ADD COLUMN from_dump INTEGER NOT NULL DEFAULT 0 CHECK (from_dump IN (0, 1));

-- crmimport schema 9 (PostgreSQL): SQLite's schema 17. What became of a
-- deal (SPEC §4, issue 26): its status, open, won or lost, and its
-- pipeline.
ALTER TABLE deals ADD COLUMN status text CHECK (status IN ('open', 'won', 'lost'));
ALTER TABLE deals ADD COLUMN pipeline text;

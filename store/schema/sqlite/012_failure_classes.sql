-- crmimport schema 12: the Failed and Skipped records pages of a run page
-- through its records in the database, with filters, search and counts
-- that SQL answers over every record, not over what one page holds (issue
-- 23 item 15: a run of 400,000 failed rows).
--
-- A failure's reason class (store.ReasonClass: the reason without the value
-- it quotes or the line and column it points to) is kept beside its reason,
-- written with the failure in its batch (R4, R12), so that the page filters
-- and counts by class in SQL. The failures this step finds get theirs from
-- the step itself (store's fill of failure_classes, in this transaction).
ALTER TABLE record_failures ADD COLUMN reason_class TEXT;

-- Keyset paging in failure order (id: SQLite's rowid, which every index
-- holds last) for every filter: none, a kind (record_failures_run), a class,
-- both, a source id; and the counts per kind and class from the index
-- alone.
CREATE INDEX record_failures_order ON record_failures (migration_id);
CREATE INDEX record_failures_class ON record_failures (migration_id, reason_class);
CREATE INDEX record_failures_kind_class ON record_failures (migration_id, kind, reason_class);
CREATE INDEX record_failures_source ON record_failures (migration_id, source_id);

-- A run's skips (R3: the slots it still owns as skipped), per kind in
-- source id order: the Skipped page's keyset and counts, without reading
-- the tenant's whole ledger. Only skips are in it: a claim that makes a
-- slot final takes it out. It holds action (always 'skipped' here) and
-- detail too, so that SQLite answers the counts, and the skips whose
-- parents have arrived since, from the index alone: read from the table,
-- the counts of 400,000 skips took 0.5 s and the ready ones 1.4 s, from the
-- index 0.05 and 0.7.
CREATE INDEX migration_records_skips ON migration_records (migration_id, kind, source_id, action, detail) WHERE action = 'skipped';

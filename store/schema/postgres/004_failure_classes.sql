-- crmimport schema 4 (PostgreSQL): SQLite's schema 12. The Failed and
-- Skipped records pages page through a run's records in the database
-- (issue 23 item 15): a failure's reason class (store.ReasonClass) beside
-- its reason, written with the failure (R4, R12) and given to the failures
-- this step finds by store's fill of failure_classes in this transaction;
-- indexes for keyset paging in failure order under every filter (a source
-- id among them), and for a run's skips per kind in source id order.
-- PostgreSQL's indexes do not hold the row's id of themselves, so each
-- names it last.
ALTER TABLE record_failures ADD COLUMN reason_class text;

DROP INDEX record_failures_run;
CREATE INDEX record_failures_run ON record_failures (migration_id, kind, id);
CREATE INDEX record_failures_order ON record_failures (migration_id, id);
CREATE INDEX record_failures_class ON record_failures (migration_id, reason_class, id);
CREATE INDEX record_failures_kind_class ON record_failures (migration_id, kind, reason_class, id);
CREATE INDEX record_failures_source ON record_failures (migration_id, source_id, id);

CREATE INDEX migration_records_skips ON migration_records (migration_id, kind, source_id) INCLUDE (detail) WHERE action = 'skipped';

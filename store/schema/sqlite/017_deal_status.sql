-- crmimport schema 17: what became of a deal (SPEC §4, issue 26). Its
-- status is open, won or lost — a profile derives it from an export's own
-- words (Pipedrive's Status) or flags (Salesforce's IsClosed and IsWon) —
-- and its pipeline is the text the export gives. Deals imported before
-- have neither: their export's column, where it had one, is in extra, and
-- a rerun counts them outdated in these fields (R17), which `run --update`
-- applies.
ALTER TABLE deals ADD COLUMN status TEXT CHECK (status IN ('open', 'won', 'lost'));
ALTER TABLE deals ADD COLUMN pipeline TEXT;

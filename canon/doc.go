// Package canon is the canonical model (SPEC §4): the kinds' canonical
// fields in order, which of them are links and to which parent kind (R6),
// which hold values (ids, links, dates, numbers, flags, addresses) rather
// than free text, the natural keys that match (R5), and the validation of
// a record's values ("Fails" in SPEC §4) with their normalisation (SPEC
// §11: a date as a date — close_date a day — and a domain as a host, the
// one R5 matches on). Every other package asks canon;
// none lists fields of its own. It imports ledger (for its kinds) and no
// other package of the project.
package canon

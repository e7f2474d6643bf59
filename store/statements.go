package store

// statementRows are the sizes of the multi-row statements (INSERT … VALUES
// (…), (…)) the writers run, largest first.
var statementRows = [...]int{256, 64, 16, 4, 1}

// MaxStatementRows is the most rows one multi-row statement holds.
const MaxStatementRows = 256

// StatementRows is how many of n rows (n ≥ 1) the next multi-row statement
// takes: the largest of 256, 64, 16, 4 and 1 that is not above n. A
// statement's text, and so its prepared form, is one per size: writing
// chunks of any length in these sizes prepares at most five statements per
// table and transaction, where one per length prepared a new statement for
// nearly every chunk of a rerun (its chunks are the records that were not
// final, of every length) and for the shorter chunks of a first run (those
// that held a failure).
func StatementRows(n int) int {
	for _, s := range statementRows {
		if s <= n {
			return s
		}
	}
	return 1
}

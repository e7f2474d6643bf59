package importer

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store/storetest"
)

// contactsFile writes n contacts c1…cn, with the extra lines given after
// record at (1-based) in place of contact at.
func contactsFile(n int, at map[int]string) string {
	var b strings.Builder
	b.WriteString("id,first_name,email,company_id\n")
	for i := 1; i <= n; i++ {
		if l, ok := at[i]; ok {
			b.WriteString(l + "\n")
			continue
		}
		fmt.Fprintf(&b, "c%d,N%d,,\n", i, i)
	}
	return b.String()
}

// TestSpeculatedChunkDecidedAgainAfterARedo (issue 16 goal 2): the second
// chunk of a batch is decided while the first writes, against the first's
// decisions. When the first fails for one record (a foreign key to a
// company deleted behind the ledger's back) and is redone record by
// record, its row ids are given again — and the second chunk, decided on
// the first try's, is decided again: its contact matched by email names
// the row that was written, and its duplicate of a contact of the first
// chunk names the first's line; and the third chunk still knows the
// second's records (a duplicate of one is a duplicate, not a claim refused).
func TestSpeculatedChunkDecidedAgainAfterARedo(t *testing.T) {
	t.Parallel()
	db := storetest.OpenDB(t)
	imp := New(phases.New(db, nil))
	importDir(t, imp, export(t, map[string]string{"companies.csv": "id,name\nco1,Acme\nco2,Gone\n"}), 10)
	_, err := db.Exec(`DELETE FROM companies WHERE name = 'Gone'`)
	require.NoError(t, err)

	file := contactsFile(600, map[int]string{
		3:   "c3,Ann,,co2", // refused by the database: the chunk is redone
		5:   "c5,Bob,bob@example.com,co1",
		300: "c300,Robert,BOB@example.com,", // chunk 2: matched to c5's row (R5)
		301: "c5,Again,,",                   // chunk 2: a duplicate of line 6
		520: "c300,Dup,,",                   // chunk 3: a duplicate of line 301, known only if chunk 2 was decided again
	})
	run := importDir(t, New(phases.New(db, nil)), export(t, map[string]string{"contacts.csv": file}), 2000)
	require.Equal(t, phases.Counts{Imported: 597, Matched: 1, Failed: 3, Duplicate: 2}, run.Stats[ledger.Contact])
	reasons := failureReasons(t, db, run.ID)
	require.Contains(t, reasons["c3"], "the database refused the row")
	require.Contains(t, reasons["c5"], "first at contacts.csv:6")
	require.Contains(t, reasons["c300"], "first at contacts.csv:301")

	var bob, matched int64
	require.NoError(t, db.QueryRow(`SELECT id FROM contacts WHERE email = 'bob@example.com'`).Scan(&bob))
	require.NoError(t, db.QueryRow(`SELECT record_id FROM migration_records WHERE kind = 'contact' AND source_id = 'c300' AND action = 'matched'`).Scan(&matched))
	require.Equal(t, bob, matched, "the match names the row written, not the id the first try gave")
	var rows, slots int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM contacts`).Scan(&rows))
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM migration_records WHERE kind = 'contact' AND action = 'created'`).Scan(&slots))
	require.Equal(t, 596, rows)
	require.Equal(t, rows, slots)
	var orphans int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM migration_records s LEFT JOIN contacts c ON c.id = s.record_id
		WHERE s.kind = 'contact' AND s.action IN ('created', 'matched') AND c.id IS NULL`).Scan(&orphans))
	require.Zero(t, orphans, "every final slot names a row")
}

// TestSpeculationThatNeedsTheDatabaseDecidesAgain: a speculative decision
// never reads the database. The first company link of the run is in the
// second chunk, so the companies' final slots (R6) are read there for the
// first time: the speculation stops, and the chunk is decided again once
// the first has written — its contact links to the company of an earlier
// run.
func TestSpeculationThatNeedsTheDatabaseDecidesAgain(t *testing.T) {
	t.Parallel()
	db := storetest.OpenDB(t)
	imp := New(phases.New(db, nil))
	importDir(t, imp, export(t, map[string]string{"companies.csv": "id,name\nco1,Acme\n"}), 10)

	file := contactsFile(400, map[int]string{300: "c300,Ann,,co1"})
	run := importDir(t, New(phases.New(db, nil)), export(t, map[string]string{"contacts.csv": file}), 2000)
	require.Equal(t, phases.Counts{Imported: 400}, run.Stats[ledger.Contact])
	var acme, linked int64
	require.NoError(t, db.QueryRow(`SELECT id FROM companies WHERE name = 'Acme'`).Scan(&acme))
	require.NoError(t, db.QueryRow(`SELECT c.company_id FROM contacts c JOIN migration_records s ON s.record_id = c.id AND s.kind = 'contact'
		WHERE s.source_id = 'c300'`).Scan(&linked))
	require.Equal(t, acme, linked)
	var n int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM contacts`).Scan(&n))
	require.Equal(t, 400, n)
}

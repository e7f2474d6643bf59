package ledger_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/ledger"
	"crmimport/store"
	"crmimport/store/storetest"
)

// copied is how many slots the claims below take at once: enough for
// PostgreSQL's COPY (store.CopyMin).
const copied = 2 * store.CopyMin

// companySlots are slots of tenant's companies, one per source id: a skip,
// or a match of row 7, one in two.
func companySlots(tenant string, run int64, ids ...string) []ledger.Slot {
	slots := make([]ledger.Slot, len(ids))
	for i, id := range ids {
		s := ledger.Slot{Key: ledger.Key{Tenant: tenant, Source: "canonical", Kind: ledger.Company, SourceID: id}, RunID: run, At: later}
		if i%2 == 0 {
			s.Action, s.Reason, s.Detail = ledger.Skipped, "not linked to any record", fmt.Sprintf(`{"parent":"%d"}`, i)
		} else {
			s.Action, s.RecordType, s.RecordID, s.Digest, s.Hashes = ledger.Matched, "companies", 7, int64(1000+i), fmt.Sprintf(`{"name":"%d"}`, i)
		}
		slots[i] = s
	}
	return slots
}

func sourceIDs(prefix string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return ids
}

// slotsOf reads tenant's company slots as text, all but their ids.
func slotsOf(t *testing.T, db *sql.DB, tenant string) map[string]string {
	t.Helper()
	rows, err := db.Query(`SELECT source_id, action, coalesce(reason, '-'), coalesce(detail, '-'), coalesce(record_type, '-'),
		coalesce(record_id, 0), migration_id, coalesce(digest, 0), coalesce(hashes, '-'), created_at
		FROM migration_records WHERE tenant_id = ? AND kind = 'company'`, tenant)
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, action, reason, detail, rtype, hashes, at string
		var rid, run, digest int64
		require.NoError(t, rows.Scan(&id, &action, &reason, &detail, &rtype, &rid, &run, &digest, &hashes, &at))
		out[id] = fmt.Sprintf("%s|%s|%s|%s|%d|%d|%d|%s|%s", action, reason, detail, rtype, rid, run, digest, hashes, at)
	}
	require.NoError(t, rows.Err())
	return out
}

// TestCopiedClaims (issue 28; R1-R3): claims that go by COPY on
// PostgreSQL (Ledger.Copying) write the slots the claim statement writes;
// a chunk in which one key holds a skip is claimed by the statement, the
// skip taken over and keeping its id (R3), and one in which a key holds a
// final slot is refused whole (R2) — and either way the claims copy no
// more.
func TestCopiedClaims(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		pg := store.DialectOf(db) == store.Postgres
		inTx(t, db, func(l *ledger.Ledger, tx *sql.Tx) {
			require.NoError(t, insertCompany(7, "Found by domain")(ctx, tx))
			require.NoError(t, l.Record(ctx, companySlots("acme", 1, "skip"), nil))
			final := ledger.Slot{Key: ledger.Key{Tenant: "acme", Source: "canonical", Kind: ledger.Company, SourceID: "final"}, RunID: 1,
				Action: ledger.Created, RecordType: "companies", RecordID: 10, At: earlier}
			require.NoError(t, l.Record(ctx, []ledger.Slot{final}, insertCompany(10, "Acme")))
		})
		skip, ok := readSlot(t, db, "skip")
		require.True(t, ok)

		// New keys: copied, as the statement would have written them.
		copying := true
		inTx(t, db, func(l *ledger.Ledger, tx *sql.Tx) {
			require.NoError(t, l.Copying(&copying).Record(ctx, companySlots("acme", 2, sourceIDs("new", copied)...), nil))
			require.NoError(t, l.Record(ctx, companySlots("globex", 2, sourceIDs("new", copied)...), nil))
		})
		require.True(t, copying, "no key held a slot")
		byStatement := slotsOf(t, db, "globex")
		require.Len(t, byStatement, copied)
		got := slotsOf(t, db, "acme")
		for id, s := range byStatement {
			require.Equal(t, s, got[id], id)
		}

		// A skip among them: taken over (R3), by the statement.
		inTx(t, db, func(l *ledger.Ledger, tx *sql.Tx) {
			slots := companySlots("acme", 3, append(sourceIDs("more", copied-1), "skip")...)
			require.Equal(t, ledger.Matched, slots[copied-1].Action)
			require.NoError(t, l.Copying(&copying).Record(ctx, slots, nil))
		})
		require.Equal(t, !pg, copying, "a COPY met a slot: the claims copy no more (SQLite never copies)")
		after, _ := readSlot(t, db, "skip")
		require.Equal(t, "matched", after.Action, "R3: the skip is taken over")
		require.Equal(t, int64(3), after.RunID)
		require.Equal(t, skip.ID, after.ID, "the slot keeps its id")
		require.Equal(t, 1+2*copied, len(slotsOf(t, db, "acme")))

		// A final slot among them: the chunk is refused whole (R2).
		copying = true
		inTx(t, db, func(l *ledger.Ledger, tx *sql.Tx) {
			err := l.Copying(&copying).Record(ctx, companySlots("acme", 4, append(sourceIDs("last", copied-1), "final")...), nil)
			require.ErrorIs(t, err, ledger.ErrRefused)
		})
		require.Equal(t, !pg, copying)
		require.Equal(t, 1+2*copied, len(slotsOf(t, db, "acme")), "nothing of the refused chunk is written")
		final, _ := readSlot(t, db, "final")
		require.Equal(t, "created", final.Action)
		require.Equal(t, int64(1), final.RunID)

		// The slot ids given out are each once, the copied ones too.
		var n, distinct int
		require.NoError(t, db.QueryRow(`SELECT count(*), count(DISTINCT id) FROM migration_records`).Scan(&n, &distinct))
		require.Equal(t, n, distinct)
	})
}

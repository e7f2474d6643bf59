package ledger_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/store"
	"crmimport/store/storetest"
)

var (
	earlier = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	later   = time.Date(2026, 1, 12, 9, 0, 0, 0, time.UTC)
)

// inTx runs f in one transaction and commits it.
func inTx(t *testing.T, db *sql.DB, f func(l *ledger.Ledger, tx *sql.Tx)) {
	t.Helper()
	ctx := context.Background()
	tx, err := store.Begin(ctx, db)
	require.NoError(t, err)
	defer tx.Rollback()
	l := ledger.New(tx, store.DialectOf(db))
	f(l, tx)
	require.NoError(t, l.Close())
	require.NoError(t, tx.Commit())
}

// insertCompany writes a company row with its id.
func insertCompany(id int64, name string) ledger.WriteFunc {
	return func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO companies (id, tenant_id, name, imported_at) VALUES (?, 'acme', ?, 'now')`, id, name)
		return err
	}
}

// record claims one slot through Ledger.Record, the path production takes,
// and says whether the claim won.
func record(t *testing.T, l *ledger.Ledger, s ledger.Slot, write ledger.WriteFunc) bool {
	t.Helper()
	err := l.Record(context.Background(), []ledger.Slot{s}, write)
	if errors.Is(err, ledger.ErrRefused) {
		return false
	}
	require.NoError(t, err)
	return true
}

type slotRow struct {
	ID                 int64
	Action, Reason     string
	RunID              int64
	RecordType, Detail sql.NullString
	RecordID           sql.NullInt64
	CreatedAt          string
}

func readSlot(t *testing.T, db *sql.DB, sourceID string) (slotRow, bool) {
	t.Helper()
	var s slotRow
	var reason sql.NullString
	err := db.QueryRow(`SELECT id, action, reason, migration_id, record_type, record_id, detail, created_at FROM migration_records
		WHERE tenant_id = 'acme' AND source = 'canonical' AND kind = 'company' AND source_id = ?`, sourceID).
		Scan(&s.ID, &s.Action, &reason, &s.RunID, &s.RecordType, &s.RecordID, &s.Detail, &s.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return s, false
	}
	require.NoError(t, err)
	s.Reason = reason.String
	return s, true
}

func countCompanies(t *testing.T, db *sql.DB, name string) int {
	t.Helper()
	var n int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM companies WHERE name = ?`, name).Scan(&n))
	return n
}

// TestClaimTable crosses every existing slot state with every incoming action
// through Ledger.Record, the path production writes through. It pins the
// three directions of R3 (an import takes over a skip; a created slot refuses
// a later import and no row is written; a later skip refreshes reason and
// owner) and R2 for matched slots.
func TestClaimTable(t *testing.T) {
	t.Parallel()
	existing := []ledger.Action{"", ledger.Skipped, ledger.Created, ledger.Matched}
	incoming := []ledger.Action{ledger.Created, ledger.Matched, ledger.Skipped}
	for _, have := range existing {
		for _, in := range incoming {
			name := fmt.Sprintf("Existing%s/Incoming%s", title(have), title(in))
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				storetest.Run(t, func(t *testing.T, db *sql.DB) { claimCase(t, db, have, in) })
			})
		}
	}
}

// claimCase is one cell of TestClaimTable on db: a slot in state have (""
// for none), then a claim of action in.
func claimCase(t *testing.T, db *sql.DB, have, in ledger.Action) {
	ctx := context.Background()
	key := ledger.Key{Tenant: "acme", Source: "canonical", Kind: ledger.Company, SourceID: "42"}
	const matchTarget = 7
	inTx(t, db, func(l *ledger.Ledger, tx *sql.Tx) {
		require.NoError(t, insertCompany(matchTarget, "Found by domain")(ctx, tx))
		if have == "" {
			return
		}
		first := ledger.Slot{Key: key, RunID: 1, Action: have, At: earlier}
		var write ledger.WriteFunc
		switch have {
		case ledger.Created:
			first.RecordType, first.RecordID, write = "companies", 10, insertCompany(10, "Acme")
		case ledger.Matched:
			first.RecordType, first.RecordID = "companies", matchTarget
		case ledger.Skipped:
			first.Reason, first.Detail = "not linked to any record", `{"parent":"7"}`
		}
		require.True(t, record(t, l, first, write), "an empty slot takes any first claim")
	})
	before, _ := readSlot(t, db, "42")

	next := ledger.Slot{Key: key, RunID: 2, Action: in, At: later}
	var write ledger.WriteFunc
	switch in {
	case ledger.Created:
		next.RecordType, next.RecordID, write = "companies", 11, insertCompany(11, "Acme again")
	case ledger.Matched:
		next.RecordType, next.RecordID = "companies", matchTarget
	case ledger.Skipped:
		next.Reason, next.Detail = "empty body", `{"contact_id":"c9"}`
	}
	var won bool
	inTx(t, db, func(l *ledger.Ledger, _ *sql.Tx) { won = record(t, l, next, write) })

	wantWon := !have.Final() // R2 refuses, R3 takes over
	require.Equal(t, wantWon, won)
	after, ok := readSlot(t, db, "42")
	require.True(t, ok)
	if wantWon {
		require.Equal(t, string(in), after.Action)
		require.Equal(t, int64(2), after.RunID, "R3: the latest attempt owns the slot")
		require.Equal(t, next.Reason, after.Reason, "R3: the reason is refreshed")
		require.Equal(t, ledger.FormatTime(later), after.CreatedAt, "R3: the time is refreshed")
		// The claim's own row, type and detail: none of the slot
		// it took over is left behind.
		wantRecord := sql.NullInt64{Int64: next.RecordID, Valid: in != ledger.Skipped}
		require.Equal(t, wantRecord, after.RecordID, "the slot names the row of this claim")
		wantType := sql.NullString{String: next.RecordType, Valid: in != ledger.Skipped}
		require.Equal(t, wantType, after.RecordType)
		wantDetail := sql.NullString{String: next.Detail, Valid: next.Detail != ""}
		require.Equal(t, wantDetail, after.Detail, "R3: the detail is the latest attempt's (none for a final slot)")
		if have != "" {
			require.Equal(t, before.ID, after.ID, "a takeover keeps the slot's id")
		}
	} else {
		require.Equal(t, before, after, "R2: a final slot is left exactly as it was")
	}
	wantRow := 0
	if wantWon && in == ledger.Created {
		wantRow = 1
	}
	require.Equal(t, wantRow, countCompanies(t, db, "Acme again"),
		"R1: a refused claim writes no target row")
}

func title(a ledger.Action) string {
	if a == "" {
		return "None"
	}
	return string(a[0]-'a'+'A') + string(a[1:])
}

// TestRecordFailedWriteLeavesNothing: R1 and R4, a write that fails takes
// back the whole call — its claims and its rows — and the records before it
// in the same transaction stay.
func TestRecordFailedWriteLeavesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		key := func(id string) ledger.Key {
			return ledger.Key{Tenant: "acme", Source: "canonical", Kind: ledger.Company, SourceID: id}
		}
		inTx(t, db, func(l *ledger.Ledger, _ *sql.Tx) {
			ok := ledger.Slot{Key: key("1"), RunID: 1, Action: ledger.Created, RecordType: "companies", RecordID: 1, At: earlier}
			require.True(t, record(t, l, ok, insertCompany(1, "Kept")))

			chunk := []ledger.Slot{
				{Key: key("2"), RunID: 1, Action: ledger.Created, RecordType: "companies", RecordID: 2, At: earlier},
				{Key: key("3"), RunID: 1, Action: ledger.Skipped, Reason: "deleted in source", At: earlier},
			}
			err := l.Record(ctx, chunk, func(ctx context.Context, tx *sql.Tx) error {
				if err := insertCompany(2, "Half written")(ctx, tx); err != nil {
					return err
				}
				// A second row of the same write breaks a constraint.
				_, err := tx.ExecContext(ctx, `INSERT INTO contacts (tenant_id, company_id, imported_at) VALUES ('acme', 999999, 'now')`)
				return err
			})
			require.Error(t, err)
			require.True(t, store.IsConstraint(err))
		})
		require.Equal(t, 1, countCompanies(t, db, "Kept"))
		require.Equal(t, 0, countCompanies(t, db, "Half written"), "the whole write is undone, not only its last statement")
		for _, id := range []string{"2", "3"} {
			_, ok := readSlot(t, db, id)
			require.False(t, ok, "R4: the chunk's claims are taken back with its rows")
		}
		_, ok := readSlot(t, db, "1")
		require.True(t, ok)
	})
}

// TestClaimManyAtOnce: one statement claims many slots; the answer is
// whether every claim won, and a refused one leaves its slot as it was.
func TestClaimManyAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		slots := func(run int64, from, to int, a ledger.Action) []ledger.Slot {
			var out []ledger.Slot
			for i := from; i < to; i++ {
				out = append(out, ledger.Slot{Key: ledger.Key{Tenant: "acme", Source: "canonical", Kind: ledger.Note,
					SourceID: fmt.Sprint(i)}, RunID: run, Action: a, RecordID: int64(i + 1), Reason: "r", At: earlier})
			}
			return out
		}
		inTx(t, db, func(l *ledger.Ledger, _ *sql.Tx) {
			won, err := l.Claim(ctx, append(slots(1, 0, 300, ledger.Skipped), slots(1, 300, 600, ledger.Matched)...))
			require.NoError(t, err)
			require.True(t, won, "600 new slots, in more than one statement")
		})
		inTx(t, db, func(l *ledger.Ledger, _ *sql.Tx) {
			won, err := l.Claim(ctx, slots(2, 0, 300, ledger.Created))
			require.NoError(t, err)
			require.True(t, won, "R3: skips are taken over")
			won, err = l.Claim(ctx, slots(2, 299, 301, ledger.Skipped))
			require.NoError(t, err)
			require.False(t, won, "R2: slot 300 is final and refuses")
		})
		var ids, owners int
		require.NoError(t, db.QueryRow(`SELECT count(DISTINCT id), count(DISTINCT migration_id) FROM migration_records`).Scan(&ids, &owners))
		require.Equal(t, 600, ids, "every slot has an id of its own")
		require.Equal(t, 2, owners)
		var action string
		require.NoError(t, db.QueryRow(`SELECT action FROM migration_records WHERE source_id = '300'`).Scan(&action))
		require.Equal(t, "matched", action)
	})
}

// TestLoadFinalSeesOnlyFinalSlots: R6, links and "already there" resolve
// only through created or matched slots of the tenant and source.
func TestLoadFinalSeesOnlyFinalSlots(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		slot := func(tenant, source, id string, a ledger.Action, rid int64) ledger.Slot {
			return ledger.Slot{Key: ledger.Key{Tenant: tenant, Source: source, Kind: ledger.Company, SourceID: id},
				RunID: 1, Action: a, RecordType: "companies", RecordID: rid, Reason: "r", At: earlier}
		}
		inTx(t, db, func(l *ledger.Ledger, _ *sql.Tx) {
			for _, s := range []ledger.Slot{
				slot("acme", "canonical", "c", ledger.Created, 1), slot("acme", "canonical", "m", ledger.Matched, 2),
				slot("acme", "canonical", "s", ledger.Skipped, 0), slot("globex", "canonical", "g", ledger.Created, 3),
				slot("acme", "hubspot", "h", ledger.Created, 4),
			} {
				won, err := l.Claim(ctx, []ledger.Slot{s})
				require.NoError(t, err)
				require.True(t, won)
			}
		})
		got := map[string]int64{}
		require.NoError(t, ledger.LoadFinal(ctx, db, "acme", "canonical", ledger.Company, func(id string, rid, _ int64) { got[id] = rid }))
		require.Equal(t, map[string]int64{"c": 1, "m": 2}, got, "never a skip, another tenant's or another source's slot")
		none := map[string]int64{}
		require.NoError(t, ledger.LoadFinal(ctx, db, "acme", "canonical", ledger.Contact, func(id string, rid, _ int64) { none[id] = rid }))
		require.Empty(t, none)
	})
}

func TestParseKind(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]ledger.Kind{"contacts": ledger.Contact, "Contact": ledger.Contact,
		" activities ": ledger.Activity, "company": ledger.Company, "EMAILS": ledger.Email} {
		k, err := canon.ParseKind(in)
		require.NoError(t, err)
		require.Equal(t, want, k)
	}
	_, err := canon.ParseKind("tickets")
	require.ErrorContains(t, err, `unknown kind "tickets"`)
}

// BenchmarkClaim measures the claim statement alone: a new slot per call,
// committed in batches of 1,000.
func BenchmarkClaim(b *testing.B) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(b.TempDir(), "crm.db"))
	require.NoError(b, err)
	defer db.Close()
	n := 0
	for b.Loop() {
		b.StopTimer()
		tx, err := db.BeginTx(ctx, nil)
		require.NoError(b, err)
		l := ledger.New(tx, store.SQLite)
		b.StartTimer()
		slots := make([]ledger.Slot, 1000)
		for i := range slots {
			n++
			slots[i] = ledger.Slot{Key: ledger.Key{Tenant: "acme", Source: "canonical", Kind: ledger.Note,
				SourceID: fmt.Sprint(n)}, RunID: 1, Action: ledger.Skipped, Reason: "empty body", At: earlier}
		}
		won, err := l.Claim(ctx, slots)
		if err != nil || !won {
			b.Fatal(won, err)
		}
		b.StopTimer()
		require.NoError(b, l.Close())
		require.NoError(b, tx.Commit())
		b.StartTimer()
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "claims/s")
}

// BenchmarkTakeover prices the before-image that R16 needs of every slot a
// claim takes over (a skip of another run), kept in the claim's own
// transaction two ways: schema 7's BEFORE UPDATE trigger, inside the claim
// statement, and a read before the claim (one INSERT … SELECT of the
// chunk's skips into slot_before, the trigger dropped) — against no image
// at all. Each iteration takes 1,000 skips of run 1 over for run 2, and
// claims 1,000 fresh slots (the common case, where the read still reads).
//
//	go test ./ledger -run '^$' -bench Takeover -count 6
func BenchmarkTakeover(b *testing.B) {
	const readBefore = `
INSERT INTO slot_before (tenant_id, source, kind, source_id, taken_by, migration_id, reason, detail, created_at)
SELECT tenant_id, source, kind, source_id, ?, migration_id, reason, detail, created_at FROM migration_records
WHERE tenant_id = ? AND source = ? AND kind = ? AND action = 'skipped' AND migration_id IS NOT ? AND source_id IN (%s)
ON CONFLICT (tenant_id, source, kind, source_id) DO UPDATE SET
    taken_by = excluded.taken_by, migration_id = excluded.migration_id, reason = excluded.reason,
    detail = excluded.detail, created_at = excluded.created_at`
	for _, how := range []string{"Trigger", "ReadBefore", "NoImage"} {
		b.Run(how, func(b *testing.B) {
			ctx := context.Background()
			db, err := store.Open(ctx, filepath.Join(b.TempDir(), "crm.db"))
			require.NoError(b, err)
			defer db.Close()
			if how != "Trigger" {
				_, err := db.Exec(`DROP TRIGGER slot_taken_over`)
				require.NoError(b, err)
			}
			claim := func(run int64, ids []string) {
				tx, err := db.BeginTx(ctx, nil)
				require.NoError(b, err)
				l := ledger.New(tx, store.SQLite)
				slots := make([]ledger.Slot, len(ids))
				for i, id := range ids {
					slots[i] = ledger.Slot{Key: ledger.Key{Tenant: "acme", Source: "canonical", Kind: ledger.Note, SourceID: id},
						RunID: run, Action: ledger.Skipped, Reason: "empty body", At: earlier}
				}
				if how == "ReadBefore" && run == 2 {
					for start := 0; start < len(ids); start += 256 {
						part := ids[start:min(start+256, len(ids))]
						args := []any{run, "acme", "canonical", "note", run}
						for _, id := range part {
							args = append(args, id)
						}
						q := fmt.Sprintf(readBefore, strings.TrimSuffix(strings.Repeat("?, ", len(part)), ", "))
						_, err := tx.ExecContext(ctx, q, args...)
						require.NoError(b, err)
					}
				}
				won, err := l.Claim(ctx, slots)
				if err != nil || !won {
					b.Fatal(won, err)
				}
				require.NoError(b, l.Close())
				require.NoError(b, tx.Commit())
			}
			n := 0
			batch := func() []string {
				ids := make([]string, 1000)
				for i := range ids {
					n++
					ids[i] = fmt.Sprint(n)
				}
				return ids
			}
			for b.Loop() {
				b.StopTimer()
				old := batch()
				claim(1, old)
				b.StartTimer()
				claim(2, old)     // takes run 1's skips over
				claim(2, batch()) // fresh slots
			}
			b.ReportMetric(float64(b.N*2000)/b.Elapsed().Seconds(), "claims/s")
		})
	}
}

// TestSetHashesManyIsACompareAndSet (R17, R11): the hashes of many final
// slots are set in one statement only where each slot's digest is still
// what its reader saw; one that moved — or a skip, which keeps no hashes —
// fails the whole with ErrSlotMoved, and the caller's transaction takes it
// back.
func TestSetHashesManyIsACompareAndSet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		var slots []ledger.Slot
		var sets []ledger.HashSet
		for i := range 300 {
			a := ledger.Matched
			if i == 7 {
				a = ledger.Skipped
			}
			id := fmt.Sprintf("n%03d", i)
			slots = append(slots, ledger.Slot{Key: ledger.Key{Tenant: "acme", Source: "canonical", Kind: ledger.Note, SourceID: id},
				RunID: 1, Action: a, Reason: "r", At: earlier, Digest: int64(i + 1), Hashes: "1 old"})
			if i != 7 {
				sets = append(sets, ledger.HashSet{SourceID: id, Was: int64(i + 1), Digest: int64(1000 + i), Hashes: "1 new" + id})
			}
		}
		inTx(t, db, func(l *ledger.Ledger, _ *sql.Tx) {
			won, err := l.Claim(ctx, slots)
			require.NoError(t, err)
			require.True(t, won)
		})
		digests := func() map[string]string {
			out := map[string]string{}
			rows, err := db.Query(`SELECT source_id, coalesce(digest, 0), coalesce(hashes, '') FROM migration_records`)
			require.NoError(t, err)
			defer rows.Close()
			for rows.Next() {
				var id, h string
				var d int64
				require.NoError(t, rows.Scan(&id, &d, &h))
				out[id] = fmt.Sprint(d, " ", h)
			}
			require.NoError(t, rows.Err())
			return out
		}
		before := digests()
		fails := func(why string, sets []ledger.HashSet) {
			tx, err := store.Begin(ctx, db)
			require.NoError(t, err)
			l := ledger.New(tx, store.DialectOf(db))
			err = l.SetHashesMany(ctx, "acme", "canonical", ledger.Note, sets)
			require.ErrorIs(t, err, ledger.ErrSlotMoved, why)
			require.NoError(t, l.Close())
			require.NoError(t, tx.Rollback())
			require.Equal(t, before, digests(), why)
		}
		stale := slices.Clone(sets)
		stale[250].Was = 999999
		fails("a slot whose digest moved", stale)
		fails("a skip", append(slices.Clone(sets[:3]), ledger.HashSet{SourceID: "n007", Was: 8, Digest: 5, Hashes: "1 x"}))

		inTx(t, db, func(l *ledger.Ledger, _ *sql.Tx) {
			require.NoError(t, l.SetHashesMany(ctx, "acme", "canonical", ledger.Note, sets))
		})
		after := digests()
		require.Equal(t, "1006 1 newn006", after["n006"])
		require.Equal(t, "1299 1 newn299", after["n299"], "the second statement's")
		require.Equal(t, before["n007"], after["n007"], "the skip is left alone")
	})
}

// TestHashWritesMoveTheEpochOnce (R17, R2; schema 15): a final slot's
// digest and hashes written alone fire no trigger — their writers hold the
// epoch and move it once (HoldEpoch, ReleaseEpoch) — while any other
// change of a final slot still moves it.
func TestHashWritesMoveTheEpochOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		inTx(t, db, func(l *ledger.Ledger, _ *sql.Tx) {
			won, err := l.Claim(ctx, []ledger.Slot{{Key: ledger.Key{Tenant: "acme", Source: "canonical", Kind: ledger.Note, SourceID: "n1"},
				RunID: 1, Action: ledger.Matched, RecordType: "notes", RecordID: 7, At: earlier, Digest: 1, Hashes: "1 a"}})
			require.NoError(t, err)
			require.True(t, won)
		})
		epoch := func() int64 {
			var n int64
			require.NoError(t, db.QueryRow(`SELECT coalesce((SELECT n FROM ledger_epochs WHERE tenant_id = 'acme' AND source = 'canonical'), 0)`).Scan(&n))
			return n
		}
		e := epoch()
		_, err := db.Exec(`UPDATE migration_records SET digest = 2, hashes = '1 b' WHERE source_id = 'n1'`)
		require.NoError(t, err)
		require.Equal(t, e, epoch(), "hashes written alone move nothing by themselves")
		inTx(t, db, func(l *ledger.Ledger, tx *sql.Tx) {
			require.NoError(t, ledger.HoldEpoch(ctx, tx))
			require.NoError(t, l.SetHashesMany(ctx, "acme", "canonical", ledger.Note, []ledger.HashSet{{SourceID: "n1", Was: 2, Digest: 3, Hashes: "1 c"}}))
			require.NoError(t, ledger.ReleaseEpoch(ctx, tx, "acme", "canonical"))
		})
		require.Equal(t, e+1, epoch(), "their writer moves it, once")
		_, err = db.Exec(`UPDATE migration_records SET record_id = 8 WHERE source_id = 'n1'`)
		require.NoError(t, err)
		require.Equal(t, e+2, epoch(), "any other change of a final slot moves it")
	})
}

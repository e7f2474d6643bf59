package ledger_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"crmimport/ledger"
	"crmimport/store"
)

var (
	earlier = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	later   = time.Date(2026, 1, 12, 9, 0, 0, 0, time.UTC)
)

func openDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "crm.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// inTx runs f in one transaction and commits it.
func inTx(t *testing.T, db *sql.DB, f func(l *ledger.Ledger, tx *sql.Tx)) {
	t.Helper()
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer tx.Rollback()
	l := ledger.New(tx)
	f(l, tx)
	require.NoError(t, l.Close())
	require.NoError(t, tx.Commit())
}

func insertCompany(name string) ledger.WriteFunc {
	return func(ctx context.Context, tx *sql.Tx) (int64, error) {
		res, err := tx.ExecContext(ctx, `INSERT INTO companies (tenant_id, name, imported_at) VALUES ('acme', ?, 'now')`, name)
		if err != nil {
			return 0, err
		}
		return res.LastInsertId()
	}
}

type slotRow struct {
	Action, Reason string
	RunID          int64
	RecordID       sql.NullInt64
	CreatedAt      string
}

func readSlot(t *testing.T, db *sql.DB, sourceID string) (slotRow, bool) {
	t.Helper()
	var s slotRow
	var reason sql.NullString
	err := db.QueryRow(`SELECT action, reason, migration_id, record_id, created_at FROM migration_records
		WHERE tenant_id = 'acme' AND source = 'canonical' AND kind = 'company' AND source_id = ?`, sourceID).
		Scan(&s.Action, &reason, &s.RunID, &s.RecordID, &s.CreatedAt)
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
				ctx := context.Background()
				db := openDB(t)
				key := ledger.Key{Tenant: "acme", Source: "canonical", Kind: ledger.Company, SourceID: "42"}
				var matchTarget int64
				inTx(t, db, func(l *ledger.Ledger, tx *sql.Tx) {
					var err error
					matchTarget, err = insertCompany("Found by domain")(ctx, tx)
					require.NoError(t, err)
					if have == "" {
						return
					}
					first := ledger.Slot{Key: key, RunID: 1, Action: have, At: earlier}
					var write ledger.WriteFunc
					switch have {
					case ledger.Created:
						first.RecordType, write = "companies", insertCompany("Acme")
					case ledger.Matched:
						first.RecordType, first.RecordID = "companies", matchTarget
					case ledger.Skipped:
						first.Reason, first.Detail = "not linked to any record", `{"parent":"7"}`
					}
					won, err := l.Record(ctx, first, write)
					require.NoError(t, err)
					require.True(t, won, "an empty slot takes any first claim")
				})
				before, _ := readSlot(t, db, "42")

				next := ledger.Slot{Key: key, RunID: 2, Action: in, At: later}
				var write ledger.WriteFunc
				switch in {
				case ledger.Created:
					next.RecordType, write = "companies", insertCompany("Acme again")
				case ledger.Matched:
					next.RecordType, next.RecordID = "companies", matchTarget
				case ledger.Skipped:
					next.Reason = "empty body"
				}
				var won bool
				inTx(t, db, func(l *ledger.Ledger, _ *sql.Tx) {
					var err error
					won, err = l.Record(ctx, next, write)
					require.NoError(t, err)
				})

				wantWon := !have.Final() // R2 refuses, R3 takes over
				require.Equal(t, wantWon, won)
				after, ok := readSlot(t, db, "42")
				require.True(t, ok)
				if wantWon {
					require.Equal(t, string(in), after.Action)
					require.Equal(t, int64(2), after.RunID, "R3: the latest attempt owns the slot")
					require.Equal(t, next.Reason, after.Reason, "R3: the reason is refreshed")
					require.Equal(t, ledger.FormatTime(later), after.CreatedAt, "R3: the time is refreshed")
					require.Equal(t, in != ledger.Skipped, after.RecordID.Valid)
				} else {
					require.Equal(t, before, after, "R2: a final slot is left exactly as it was")
				}
				wantRow := 0
				if wantWon && in == ledger.Created {
					wantRow = 1
				}
				require.Equal(t, wantRow, countCompanies(t, db, "Acme again"),
					"R1: a refused claim writes no target row")
			})
		}
	}
}

func title(a ledger.Action) string {
	if a == "" {
		return "None"
	}
	return string(a[0]-'a'+'A') + string(a[1:])
}

// TestRecordFailedWriteLeavesNothing: R4, a write that fails claims nothing,
// and the records before it in the same transaction stay.
func TestRecordFailedWriteLeavesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t)
	inTx(t, db, func(l *ledger.Ledger, _ *sql.Tx) {
		ok := ledger.Slot{Key: ledger.Key{Tenant: "acme", Source: "canonical", Kind: ledger.Company, SourceID: "1"},
			RunID: 1, Action: ledger.Created, RecordType: "companies", At: earlier}
		won, err := l.Record(ctx, ok, insertCompany("Kept"))
		require.NoError(t, err)
		require.True(t, won)

		bad := ok
		bad.SourceID = "2"
		won, err = l.Record(ctx, bad, func(ctx context.Context, tx *sql.Tx) (int64, error) {
			if _, err := insertCompany("Half written")(ctx, tx); err != nil {
				return 0, err
			}
			// A second statement of the same write breaks a constraint.
			_, err := tx.ExecContext(ctx, `INSERT INTO contacts (tenant_id, company_id, imported_at) VALUES ('acme', 999999, 'now')`)
			return 0, err
		})
		require.Error(t, err)
		require.True(t, store.IsConstraint(err))
		require.False(t, won)
	})
	require.Equal(t, 1, countCompanies(t, db, "Kept"))
	require.Equal(t, 0, countCompanies(t, db, "Half written"), "the whole write is undone, not only its last statement")
	_, ok := readSlot(t, db, "2")
	require.False(t, ok, "R4: a failed record leaves no slot")
	_, ok = readSlot(t, db, "1")
	require.True(t, ok)
}

// TestFinalSeesOnlyFinalSlots: R6, links and "already there" resolve only
// through created or matched slots.
func TestFinalSeesOnlyFinalSlots(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t)
	base := ledger.Key{Tenant: "acme", Source: "canonical", Kind: ledger.Company}
	inTx(t, db, func(l *ledger.Ledger, tx *sql.Tx) {
		for _, c := range []struct {
			id     string
			action ledger.Action
		}{{"c", ledger.Created}, {"m", ledger.Matched}, {"s", ledger.Skipped}} {
			k := base
			k.SourceID = c.id
			s := ledger.Slot{Key: k, RunID: 1, Action: c.action, At: earlier}
			var w ledger.WriteFunc
			switch c.action {
			case ledger.Created:
				s.RecordType, w = "companies", insertCompany("C")
			case ledger.Matched:
				id, err := insertCompany("M")(ctx, tx)
				require.NoError(t, err)
				s.RecordType, s.RecordID = "companies", id
			case ledger.Skipped:
				s.Reason = "deleted in source"
			}
			won, err := l.Record(ctx, s, w)
			require.NoError(t, err)
			require.True(t, won)
		}
	})
	inTx(t, db, func(l *ledger.Ledger, _ *sql.Tx) {
		for id, want := range map[string]bool{"c": true, "m": true, "s": false, "absent": false} {
			k := base
			k.SourceID = id
			rid, found, err := l.Final(ctx, k)
			require.NoError(t, err)
			require.Equal(t, want, found, id)
			require.Equal(t, want, rid > 0, id)
		}
		other := base
		other.SourceID, other.Tenant = "c", "globex"
		_, found, err := l.Final(ctx, other)
		require.NoError(t, err)
		require.False(t, found, "slots are per tenant")
		other = base
		other.SourceID, other.Source = "c", "hubspot"
		_, found, err = l.Final(ctx, other)
		require.NoError(t, err)
		require.False(t, found, "slots are per source")
	})
}

// TestMatch: R5, natural keys, case-insensitive, oldest row, per tenant,
// empty keys never match.
func TestMatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t)
	_, err := db.Exec(`INSERT INTO contacts (id, tenant_id, email, email_key, imported_at) VALUES
		(10, 'acme', 'Ann@Example.com', 'ann@example.com', 'now'),
		(11, 'acme', 'ann@example.com', 'ann@example.com', 'now'),
		(12, 'globex', 'bob@example.com', 'bob@example.com', 'now'),
		(13, 'acme', '', NULL, 'now')`)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO companies (id, tenant_id, name, domain, domain_key, imported_at) VALUES
		(20, 'acme', 'Acme', 'https://www.Acme.example/about', 'acme.example', 'now')`)
	require.NoError(t, err)
	inTx(t, db, func(l *ledger.Ledger, _ *sql.Tx) {
		id, ok, err := l.MatchContact(ctx, "acme", ledger.EmailKey("  ANN@example.COM "))
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, int64(10), id, "with several candidates, the oldest row")
		_, ok, err = l.MatchContact(ctx, "acme", ledger.EmailKey("bob@example.com"))
		require.NoError(t, err)
		require.False(t, ok, "another tenant's rows never match")
		_, ok, err = l.MatchContact(ctx, "acme", ledger.EmailKey("   "))
		require.NoError(t, err)
		require.False(t, ok, "an empty key never matches")
		id, ok, err = l.MatchCompany(ctx, "acme", ledger.DomainKey("http://acme.EXAMPLE"))
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, int64(20), id)
	})
}

func TestDomainKey(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"acme.example":                      "acme.example",
		"  ACME.example ":                   "acme.example",
		"https://www.acme.example/":         "acme.example",
		"http://WWW.Acme.Example/contact?x": "acme.example",
		"www.acme.example:8080":             "acme.example",
		"acme.example.":                     "acme.example",
		"info@acme.example":                 "acme.example",
		"":                                  "",
		"wwwacme.example":                   "wwwacme.example",
	} {
		require.Equal(t, want, ledger.DomainKey(in), in)
	}
	require.Equal(t, "ann@example.com", ledger.EmailKey(" Ann@Example.COM\t"))
}

func TestParseKind(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]ledger.Kind{"contacts": ledger.Contact, "Contact": ledger.Contact,
		" activities ": ledger.Activity, "company": ledger.Company, "EMAILS": ledger.Email} {
		k, err := ledger.ParseKind(in)
		require.NoError(t, err)
		require.Equal(t, want, k)
	}
	_, err := ledger.ParseKind("leads")
	require.ErrorContains(t, err, `unknown kind "leads"`)
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
		l := ledger.New(tx)
		b.StartTimer()
		for range 1000 {
			n++
			won, err := l.Claim(ctx, ledger.Slot{Key: ledger.Key{Tenant: "acme", Source: "canonical", Kind: ledger.Note,
				SourceID: fmt.Sprint(n)}, RunID: 1, Action: ledger.Skipped, Reason: "empty body", At: earlier})
			if err != nil || !won {
				b.Fatal(won, err)
			}
		}
		b.StopTimer()
		require.NoError(b, l.Close())
		require.NoError(b, tx.Commit())
		b.StartTimer()
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "claims/s")
}

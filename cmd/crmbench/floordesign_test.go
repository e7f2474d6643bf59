package main

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/fixtures/gen"
	"crmimport/ledger"
	"crmimport/store"
)

// Every design of the schema floor writes what the default one writes (and
// that one what a real import writes: schemafloor_test.go): per kind, as
// many slots of each action, and as many rows in every table, with the
// natural-key indexes there at the end.
func TestFloorDesignsWriteWhatTheDefaultWrites(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	export := filepath.Join(dir, "export")
	_, err := gen.Write(mkdir(export), gen.Config{Contacts: 3000, Seed: 7, Shape: gen.ShapeRealistic, NoteMax: 300})
	require.NoError(t, err)

	load := func(name string) (slots, rows map[string]int) {
		d, err := parseDesign(name)
		require.NoError(t, err)
		require.Equal(t, name, d.String())
		path := filepath.Join(dir, name+".db")
		require.NoError(t, schemaFloor(export, path, floorOptions{ledger: true, fk: true, keys: true, design: d}))
		db, err := sql.Open("sqlite", path)
		require.NoError(t, err)
		defer db.Close()
		slots, err = floorSlotCounts(ctx, db, d)
		require.NoError(t, err)
		rows = map[string]int{}
		for _, k := range canon.Kinds() {
			var n int
			require.NoError(t, db.QueryRow(`SELECT count(*) FROM `+k.Table()).Scan(&n))
			rows[k.Table()] = n
		}
		var indexes int
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name IN ('contacts_email_key', 'companies_domain_key')`).Scan(&indexes))
		require.Equal(t, 2, indexes, "the natural-key indexes after %s", name)
		if d.slots != nil {
			var left int
			require.NoError(t, db.QueryRow(`SELECT count(*) FROM migration_records`).Scan(&left))
			require.Zero(t, left, "%s writes its slots into its own table only", name)
		}
		return slots, rows
	}
	wantSlots, wantRows := load("default")
	for _, a := range []string{"contact created", "contact matched", "contact skipped", "company matched", "note skipped"} {
		require.Positive(t, wantSlots[a], a)
	}
	for _, name := range []string{"scope", "scopekind", "compact", "keys-after", "compact,keys-after"} {
		t.Run(name, func(t *testing.T) {
			slots, rows := load(name)
			require.Equal(t, wantSlots, slots)
			require.Equal(t, wantRows, rows)
		})
	}
}

// A design's claim keeps the ledger's conflict clause: a skip is taken over
// (R3) and keeps its before-image, a final slot refuses every later claim
// (R2), and a key of another tenant, source or kind is a slot of its own
// (R1).
func TestFloorDesignClaimsAsTheLedgerDoes(t *testing.T) {
	ctx := context.Background()
	for name, l := range slotLayouts {
		t.Run(name, func(t *testing.T) {
			db, err := store.Open(ctx, filepath.Join(t.TempDir(), "d.db"))
			require.NoError(t, err)
			defer db.Close()
			d := floorDesign{slots: l}
			require.NoError(t, d.setup(ctx, db, "acme", "hubspot"))
			_, err = db.ExecContext(ctx, l.scope, "globex", "hubspot") // a second tenant's scopes
			require.NoError(t, err)
			at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
			claim := func(tenant string, k ledger.Kind, run int64, action ledger.Action, rid int64) bool {
				t.Helper()
				tx, err := db.BeginTx(ctx, nil)
				require.NoError(t, err)
				defer tx.Rollback()
				s := ledger.Slot{Key: ledger.Key{Tenant: tenant, Source: "hubspot", Kind: k, SourceID: "x-1"},
					RunID: run, Action: action, RecordID: rid, At: at}
				if action == ledger.Skipped {
					s.Reason = "deleted in source"
				} else {
					s.RecordType = k.Table()
				}
				stmts := map[int]*sql.Stmt{}
				won, err := l.claim(ctx, tx, stmts, []ledger.Slot{s})
				require.NoError(t, err)
				for _, st := range stmts {
					st.Close()
				}
				require.NoError(t, tx.Commit())
				return won
			}
			require.True(t, claim("acme", ledger.Contact, 1, ledger.Skipped, 0))
			require.True(t, claim("acme", ledger.Contact, 2, ledger.Created, 7), "a skip is taken over")
			require.False(t, claim("acme", ledger.Contact, 3, ledger.Skipped, 0), "a created slot refuses")
			require.False(t, claim("acme", ledger.Contact, 3, ledger.Created, 8), "a created slot refuses")
			require.True(t, claim("acme", ledger.Company, 1, ledger.Created, 7), "another kind, another slot")
			require.True(t, claim("globex", ledger.Contact, 1, ledger.Created, 7), "another tenant, another slot")

			counts, err := floorSlotCounts(ctx, db, d)
			require.NoError(t, err)
			require.Equal(t, map[string]int{"contact created": 2, "company created": 1}, counts)
			var before int
			require.NoError(t, db.QueryRow(`SELECT count(*) FROM floor_slot_before WHERE taken_by = 2 AND migration_id = 1`).Scan(&before))
			require.Equal(t, 1, before, "the skip taken over keeps its before-image")
			var owner, rid int64
			require.NoError(t, db.QueryRow(`SELECT migration_id, record_id FROM floor_slots ORDER BY id LIMIT 1`).Scan(&owner, &rid))
			require.Equal(t, []int64{2, 7}, []int64{owner, rid}, "the refused claims changed nothing")
		})
	}
}

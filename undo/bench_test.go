package undo_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"crmimport/fixtures/gen"
	"crmimport/importer"
	"crmimport/phases"
	"crmimport/store"
	"crmimport/undo"
)

// BenchmarkUndoBesideABigTenant prices the child tables' foreign-key
// indexes of schema 7 where they matter: an undo of a small run (500
// contacts and their notes) in a database whose other tenant holds a large
// import. Every parent row deleted checks its child tables for a row that
// still links to it; without an index on the child's column, each check
// reads the child table whole — the other tenant's rows too. NoIndexes
// drops them first.
//
//	go test ./undo -run '^$' -bench UndoBesideABigTenant -benchtime 3x
func BenchmarkUndoBesideABigTenant(b *testing.B) {
	big := filepath.Join(b.TempDir(), "big")
	_, err := gen.Write(big, gen.Config{Contacts: 20000, Seed: 1})
	require.NoError(b, err)
	small := filepath.Join(b.TempDir(), "small")
	require.NoError(b, os.MkdirAll(small, 0o755))
	var contacts, notes []byte
	contacts = append(contacts, "id,first_name,email\n"...)
	notes = append(notes, "id,body,contact_id\n"...)
	for i := range 500 {
		contacts = fmt.Appendf(contacts, "s%d,Sam,sam%d@small.example\n", i, i)
		notes = fmt.Appendf(notes, "sn%d,Called Sam,s%d\n", i, i)
	}
	require.NoError(b, os.WriteFile(filepath.Join(small, "contacts.csv"), contacts, 0o600))
	require.NoError(b, os.WriteFile(filepath.Join(small, "notes.csv"), notes, 0o600))

	ctx := context.Background()
	seed := filepath.Join(b.TempDir(), "seed.db")
	db, err := store.Open(ctx, seed)
	require.NoError(b, err)
	imp := importer.New(phases.New(db, nil))
	for _, spec := range []importer.RunSpec{{Tenant: "big", Source: "canonical", Input: big}, {Tenant: "small", Source: "canonical", Input: small}} {
		r, err := imp.Plan(ctx, spec)
		require.NoError(b, err)
		_, err = imp.Execute(ctx, r.ID)
		require.NoError(b, err)
	}
	require.NoError(b, db.Close())
	seedBytes, err := os.ReadFile(seed)
	require.NoError(b, err)

	for _, how := range []string{"Indexes", "NoIndexes"} {
		b.Run(how, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				path := filepath.Join(b.TempDir(), "crm.db")
				require.NoError(b, os.WriteFile(path, seedBytes, 0o600))
				db, err := store.Open(ctx, path)
				require.NoError(b, err)
				if how == "NoIndexes" {
					for _, ix := range []string{"contacts_company", "deals_company", "deals_contact", "notes_contact", "notes_company",
						"notes_deal", "activities_contact", "activities_company", "activities_deal", "emails_contact", "emails_company", "emails_deal"} {
						_, err := db.Exec(`DROP INDEX ` + ix)
						require.NoError(b, err)
					}
				}
				e := phases.New(db, nil)
				b.StartTimer()
				u, _, err := undo.Start(ctx, e, 2, false)
				require.NoError(b, err)
				u, err = e.Execute(ctx, u.ID, undo.Open(e.DB))
				require.NoError(b, err)
				b.StopTimer()
				require.Equal(b, phases.RunSucceeded, u.Status)
				require.NoError(b, db.Close())
				b.StartTimer()
			}
		})
	}
}

// BenchmarkUndoOfAFirstRun prices goal 4 of issue 16: the undo (R16) of a
// first run of a generated export, every record imported, beside nothing
// else — planning it (Start: reading the run's slots, finding dependents,
// writing its items) and taking it back (Execute), against the first run
// that imported it. CRMIMPORT_BENCH_CONTACTS sets the export's size (20,000
// contacts, about 60,000 records, by default; 100,000 is scale 1).
//
//	go test ./undo -run '^$' -bench UndoOfAFirstRun -benchtime 3x -cpuprofile cpu.out
func BenchmarkUndoOfAFirstRun(b *testing.B) {
	contacts := 20000
	if s := os.Getenv("CRMIMPORT_BENCH_CONTACTS"); s != "" {
		_, err := fmt.Sscan(s, &contacts)
		require.NoError(b, err)
	}
	export := filepath.Join(b.TempDir(), "export")
	st, err := gen.Write(export, gen.Config{Contacts: contacts, Seed: 1})
	require.NoError(b, err)
	records := 0
	for _, n := range st.Records {
		records += n
	}
	ctx := context.Background()
	seed := filepath.Join(b.TempDir(), "seed.db")
	db, err := store.Open(ctx, seed)
	require.NoError(b, err)
	imp := importer.New(phases.New(db, nil))
	t0 := time.Now()
	r, err := imp.Plan(ctx, importer.RunSpec{Tenant: "bench", Source: "canonical", Input: export})
	require.NoError(b, err)
	_, err = imp.Execute(ctx, r.ID)
	require.NoError(b, err)
	first := time.Since(t0)
	require.NoError(b, db.Close())
	seedBytes, err := os.ReadFile(seed)
	require.NoError(b, err)

	var plan, back time.Duration
	for b.Loop() {
		b.StopTimer()
		path := filepath.Join(b.TempDir(), "crm.db")
		require.NoError(b, os.WriteFile(path, seedBytes, 0o600))
		db, err := store.Open(ctx, path)
		require.NoError(b, err)
		e := phases.New(db, nil)
		b.StartTimer()
		t0 := time.Now()
		u, p, err := undo.Start(ctx, e, r.ID, false)
		require.NoError(b, err)
		t1 := time.Now()
		u, err = e.Execute(ctx, u.ID, undo.Open(e.DB))
		require.NoError(b, err)
		plan, back = plan+t1.Sub(t0), back+time.Since(t1)
		b.StopTimer()
		require.Equal(b, phases.RunSucceeded, u.Status)
		require.Equal(b, records, p.Total())
		require.NoError(b, db.Close())
		b.StartTimer()
	}
	b.ReportMetric(float64(records), "records")
	b.ReportMetric(first.Seconds(), "firstrun-s")
	b.ReportMetric(plan.Seconds()/float64(b.N), "plan-s/op")
	b.ReportMetric(back.Seconds()/float64(b.N), "takeback-s/op")
}

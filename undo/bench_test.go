package undo_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

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
				u, err = importer.New(e).Execute(ctx, u.ID)
				require.NoError(b, err)
				b.StopTimer()
				require.Equal(b, phases.RunSucceeded, u.Status)
				require.NoError(b, db.Close())
				b.StartTimer()
			}
		})
	}
}

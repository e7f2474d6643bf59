package importer

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/fixtures/gen"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store"
)

var benchContacts = flag.Int("import.contacts", 2000, "contacts in BenchmarkImport's generated export")

// BenchmarkImport measures a first import and a rerun of a generated
// export (by default 2,000 contacts, about 6,000 records), each into its
// own file. Records per second are reported; `make bench` runs it.
func BenchmarkImport(b *testing.B) {
	dir := b.TempDir()
	exp, err := gen.Write(dir, gen.Config{Contacts: *benchContacts, Seed: 1})
	require.NoError(b, err)
	var records int
	for _, n := range exp.Records {
		records += n
	}
	ctx := context.Background()
	for _, rerun := range []bool{false, true} {
		name := "First"
		if rerun {
			name = "Rerun"
		}
		b.Run(name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				b.StopTimer()
				db, err := store.Open(ctx, filepath.Join(b.TempDir(), fmt.Sprintf("bench-%d.db", i)))
				require.NoError(b, err)
				i++
				imp := New(phases.New(db, nil))
				if rerun {
					runOnce(b, imp, dir)
				}
				b.StartTimer()
				run := runOnce(b, imp, dir)
				b.StopTimer()
				want := phases.RunSucceeded
				require.Equal(b, want, run.Status)
				if rerun {
					require.Equal(b, int64(exp.Records[string(ledger.Contact)]), run.Stats[ledger.Contact].Unchanged)
				}
				db.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(records)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

func runOnce(b *testing.B, imp *Importer, dir string) phases.Run {
	ctx := context.Background()
	run, err := imp.Plan(ctx, RunSpec{Tenant: "bench", Source: "canonical", Input: dir})
	require.NoError(b, err)
	run, err = imp.Execute(ctx, run.ID)
	require.NoError(b, err)
	return run
}

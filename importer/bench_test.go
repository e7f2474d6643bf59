package importer

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"crmimport/fixtures/gen"
	"crmimport/importer/profile"
	"crmimport/importer/reader"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store"
	"crmimport/target"
)

var benchContacts = flag.Int("import.contacts", 2000, "contacts in BenchmarkImport's generated export")

// BenchmarkImport measures a first import, a rerun (whose files the ledger
// has taken whole: not read again) and a rerun with Reread (every file read
// and every record looked up) of a generated export (by default 2,000
// contacts, about 6,000 records), each into its own file. Records per
// second are reported; `make bench-layers` runs it.
func BenchmarkImport(b *testing.B) {
	dir := b.TempDir()
	exp, err := gen.Write(dir, gen.Config{Contacts: *benchContacts, Seed: 1})
	require.NoError(b, err)
	var records int
	for _, n := range exp.Records {
		records += n
	}
	ctx := context.Background()
	for _, c := range []struct {
		name          string
		rerun, reread bool
	}{{"First", false, false}, {"Rerun", true, false}, {"Reread", true, true}} {
		rerun := c.rerun
		b.Run(c.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				b.StopTimer()
				db, err := store.Open(ctx, filepath.Join(b.TempDir(), fmt.Sprintf("bench-%d.db", i)))
				require.NoError(b, err)
				i++
				imp := New(phases.New(db, nil))
				if rerun {
					runOnce(b, imp, dir, false)
				}
				b.StartTimer()
				run := runOnce(b, imp, dir, c.reread)
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

func runOnce(b *testing.B, imp *Importer, dir string, reread bool) phases.Run {
	ctx := context.Background()
	run, err := imp.Plan(ctx, RunSpec{Tenant: "bench", Source: "canonical", Input: dir, Reread: reread})
	require.NoError(b, err)
	run, err = imp.Execute(ctx, run.ID)
	require.NoError(b, err)
	return run
}

// BenchmarkDecideAndResolve is deciding alone: the order of decisions of
// SPEC §4 with every link resolved through the in-memory index of final
// slots (R6), no statement.
func BenchmarkDecideAndResolve(b *testing.B) {
	const n = 10000
	x := newRunIndex("bench", "canonical")
	for _, k := range []ledger.Kind{ledger.Contact, ledger.Company, ledger.Deal} {
		f := &finalSet{loaded: newIDTable[finalEntry](0), added: newIDTable[int64](0)}
		for i := range n {
			f.loaded.put(fmt.Sprintf("%s-%06d", k, i), finalEntry{rid: int64(i + 1)})
		}
		x.finals[k] = f
	}
	// The notes' own final slots (none): loaded on first need otherwise,
	// which would read the ledger through a querier this benchmark has not.
	x.finals[ledger.Note] = &finalSet{loaded: newIDTable[finalEntry](0), added: newIDTable[int64](0)}
	p := profile.Canonical()
	m := profile.NewMapper(p, ledger.Note, "notes.csv")
	var recs []profile.Record
	for i := range n {
		r := m.Map(reader.Row{Line: i + 2, Cols: []reader.Col{{Name: "id", Value: fmt.Sprintf("nt-%06d", i)},
			{Name: "body", Value: "Called about the renewal, they want a quote"},
			{Name: "contact_id", Value: fmt.Sprintf("contact-%06d", i)}, {Name: "deal_id", Value: fmt.Sprintf("deal-%06d", i)},
			{Name: "created_at", Value: "2024-03-01T10:00:00Z"}}})
		r.Validate()
		recs = append(recs, r)
	}
	ctx := context.Background()
	for b.Loop() {
		st := newStage(x, ledger.Note)
		next := int64(1)
		for _, r := range recs {
			d, err := decide(ctx, nil, st, p, r, func() int64 { next++; return next })
			if err != nil || d.outcome != created || len(d.links) != 2 {
				b.Fatal(err, d.outcome, d.reason)
			}
			st.apply(&d)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkWriteBatch is the writing layer alone: chunks of decided notes
// written as claims and rows (ledger.Record), a batch of 5,000 per
// transaction.
func BenchmarkWriteBatch(b *testing.B) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	require.NoError(b, err)
	defer db.Close()
	m := profile.NewMapper(profile.Canonical(), ledger.Note, "notes.csv")
	run := phases.Run{ID: 1, Tenant: "bench", Source: "canonical"}
	body := strings.Repeat("Called about the renewal, they want a quote. ", 15)
	id := 0
	for b.Loop() {
		tx, err := db.BeginTx(ctx, nil)
		require.NoError(b, err)
		l := ledger.New(tx, store.SQLite)
		wr := &writer{ctx: ctx, tx: tx, ledger: l, run: run, now: time.Now(), imported: "2026-01-01T00:00:00.000000Z",
			rows: target.NewWriter(tx, store.SQLite, run.Tenant, "2026-01-01T00:00:00.000000Z"), stmts: map[string]*sql.Stmt{}}
		wr.ids, err = target.IDs(ctx, store.SQLite, tx, ledger.Note)
		require.NoError(b, err)
		for c := 0; c < 5000; c += chunkSize {
			ds := make([]decision, chunkSize)
			for i := range ds {
				id++
				r := m.Map(reader.Row{Line: id, Cols: []reader.Col{{Name: "id", Value: fmt.Sprintf("nt-%07d", id)}, {Name: "body", Value: body}}})
				r.Validate()
				values, _ := r.Values()
				ds[i] = decision{rec: r, outcome: created, values: values, rowID: wr.ids.Next()}
			}
			require.NoError(b, wr.flush(ds))
		}
		require.NoError(b, wr.ids.Save(ctx))
		wr.close()
		require.NoError(b, l.Close())
		require.NoError(b, tx.Commit())
	}
	b.ReportMetric(float64(5000*b.N)/b.Elapsed().Seconds(), "records/s")
}

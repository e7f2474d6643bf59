package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"crmimport/fixtures/gen"
)

// BENCH.md (issue 28 goal 5) shows each column's median, its range over
// the rounds and its ratio to .import of the same round, and the goals'
// ratios taken round by round: a first run over the schema floor, the
// delta rerun over the first run (issue 25 item 8).
func TestBenchMarkdownShowsMediansRangesAndGoals(t *testing.T) {
	t.Parallel()
	s := func(xs ...float64) []measure {
		var ms []measure
		for _, x := range xs {
			ms = append(ms, measure{wall: time.Duration(x * float64(time.Second)), maxRSS: 100 << 20})
		}
		return ms
	}
	col := func(key, name string, floor bool, ms []measure, imp []measure) *column {
		c := &column{key: key, name: name, floor: floor, ms: ms}
		for i := range ms {
			c.ratio = append(c.ratio, ms[i].wall.Seconds()/imp[i].wall.Seconds())
		}
		return c
	}
	imp := s(2, 2, 4)
	rep := benchReport{started: time.Date(2026, 12, 3, 16, 0, 0, 0, time.UTC), command: "crmbench -scales 1", loadBefore: "0.5 0.4 0.3",
		loadAfter: "1.0 0.8 0.5", crmimport: "commit abc", sqlite3: "3.40.1", utils: "sqlite-utils, version 3.30",
		shapes: []shapeResult{{shape: gen.ShapeRealistic, scales: []scaleResult{{
			scale: "1", records: 300_000, size: 96e6, rounds: 3, growth: "—", loads: []float64{0.5, 1.2, 0.9, 1.0},
			cols: []*column{
				col("import", "sqlite3 .import", true, imp, imp),
				col("floor", "schema floor", true, s(10, 11, 12), imp),
				col("run", "crmimport run", false, s(12, 11, 15), imp),
				col("delta", "rerun, 10% changed, --update", false, s(6, 6.6, 6), imp),
			},
		}}}},
	}
	md := rep.markdown()
	for _, want := range []string{
		"### Scale 1: 300,000 records, 96 MB of CSV, 3 rounds (load average 0.5–1.2)",
		"| sqlite3 .import | 2.00 s | 2.00–4.00 s | 150,000 | 1 |  | — |",
		// Medians of each: 12 s; the ratios 6, 5.5, 3.75: median 5.5.
		"| crmimport run | 12.00 s | 11.00–15.00 s | 25,000 | 5.50x | 3.75–6.00 | 100 MiB |",
		// Per round 12/10, 11/11, 15/12.
		"| first run over the schema floor | 1.20x | 1.00–1.25 | ≤ 1.15 (issue 28) |",
		// Per round 6/12, 6.6/11, 6/15.
		"| rerun, 10% changed, --update over the first run | 0.50x | 0.40–0.60 | ≤ 0.5 (issue 25) |",
		"| load average (1, 5, 15 min) | 0.5 0.4 0.3 at the start, 1.0 0.8 0.5 at the end |",
		"| crmimport | commit abc |",
	} {
		require.Contains(t, md, want)
	}
	require.NotContains(t, md, "PostgreSQL run over", "a goal whose columns were not measured is left out")
}

// The PostgreSQL floor is psql's \copy of the same CSV files into bare
// tables: every record of every file, multi-line notes included, ends in
// its table.
func TestPsqlCopyLoadsEveryRow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	export := filepath.Join(dir, "export")
	_, err := gen.Write(mkdir(export), gen.Config{Contacts: 300, Seed: 3, Shape: gen.ShapeRealistic, NoteMax: 300})
	require.NoError(t, err)
	pg, err := startPG()
	require.NoError(t, err, "the PostgreSQL floor needs a local server (make tools installs it)")
	defer pg.stop()

	m, err := pg.copyCSV(export, "copy_check")
	require.NoError(t, err)
	require.Positive(t, m.wall)
	// copyCSV drops its schema after: load again, keeping it, to count.
	entries, err := os.ReadDir(export)
	require.NoError(t, err)
	want := map[string]int{}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".csv") {
			continue
		}
		f, err := os.Open(filepath.Join(export, e.Name()))
		require.NoError(t, err)
		recs, err := csv.NewReader(f).ReadAll()
		f.Close()
		require.NoError(t, err)
		want[strings.TrimSuffix(e.Name(), ".csv")] = len(recs) - 1
	}
	require.NotEmpty(t, want)
	_, err = pg.load(export, "keep_check")
	require.NoError(t, err)
	for table, n := range want {
		var got int
		require.NoError(t, pg.db.QueryRow(fmt.Sprintf(`SELECT count(*) FROM keep_check.%q`, table)).Scan(&got))
		require.Equal(t, n, got, "rows of %s", table)
	}
	var left int
	require.NoError(t, pg.db.QueryRow(`SELECT count(*) FROM information_schema.schemata WHERE schema_name = 'copy_check'`).Scan(&left))
	require.Zero(t, left, "the floor's schema is dropped after it is measured")
}

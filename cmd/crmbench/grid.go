package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"crmimport/grid"
	"crmimport/ledger"
	"crmimport/store"
)

// The review grid's case (-columns grid; issue 27 item 1): a run with many
// failed rows — written directly with the ledger's own RecordFailures, as
// a run writes them (R4), in batches of 10,000 — and the grid's answers
// over them, each timed in this process: the first and the last page, a
// reason filter, a search by id, a sort by a column and a bulk replace's
// preview; then this process's peak RSS (the grid's pages are bounded:
// it should not grow with the rows).

// gridBatch is how many failures one transaction of the case writes.
const gridBatch = 10_000

// gridResult is what the grid's case measured, for BENCH.md.
type gridResult struct {
	rows    int
	written time.Duration
	steps   []gridStep
	peakRSS int64 // bytes; 0 when unknown
}

type gridStep struct {
	name, what string
	took       time.Duration
}

// gridCase writes rows failed rows into a new SQLite file in dir and
// prints what each answer of the grid took.
func gridCase(dir string, rows int) (*gridResult, error) {
	ctx := context.Background()
	if dir == "" {
		d, err := os.MkdirTemp("", "crmimport-bench-grid-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	db, err := store.Open(ctx, filepath.Join(dir, "grid.db"))
	if err != nil {
		return nil, err
	}
	defer db.Close()
	start := time.Now()
	run, err := gridFailures(ctx, db, rows)
	if err != nil {
		return nil, err
	}
	res := &gridResult{rows: rows, written: time.Since(start)}
	fmt.Printf("review grid · %d failed rows of deals.csv written in %.1fs (ledger.RecordFailures, %d a transaction)\n",
		rows, res.written.Seconds(), gridBatch)
	last := int64(rows-1) / 100 * 100
	cases := []struct {
		name string
		do   func() (string, error)
	}{
		{"first page", page(ctx, db, run, grid.Query{File: "deals.csv", Limit: 100})},
		{"last page", page(ctx, db, run, grid.Query{File: "deals.csv", Limit: 100, Offset: last})},
		{"reason filter", page(ctx, db, run, grid.Query{File: "deals.csv", Limit: 100, Class: `close_date "…" is not a date (expected ISO 8601, e.g. 2024-03-01 or 2024-03-01T10:00:00Z)`})},
		{"kind filter", page(ctx, db, run, grid.Query{File: "deals.csv", Limit: 100, Kind: ledger.Kind("deal")})},
		{"id search", page(ctx, db, run, grid.Query{File: "deals.csv", Limit: 100, SourceID: fmt.Sprintf("d-%07d", rows/2)})},
		{"sort by a column", page(ctx, db, run, grid.Query{File: "deals.csv", Limit: 100, Sort: grid.SortColumn, By: "amount"})},
		{"bulk replace preview", func() (string, error) {
			res, err := grid.Bulk(ctx, db, nil, run, grid.Query{File: "deals.csv"}, grid.Op{Op: grid.OpReplace, Column: "amount", Find: ",", Replace: ""}, time.Now())
			return fmt.Sprintf("%d cells would change", res.Count), err
		}},
	}
	for _, c := range cases {
		t := time.Now()
		what, err := c.do()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		took := time.Since(t)
		res.steps = append(res.steps, gridStep{name: c.name, what: what, took: took})
		fmt.Printf("  %-22s %8.3fs  %s\n", c.name, took.Seconds(), what)
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		res.peakRSS = ru.Maxrss * 1024 // KiB on Linux
		fmt.Printf("  peak RSS of this process (writing the rows included): %d MiB\n", res.peakRSS>>20)
	}
	return res, nil
}

// page is one timed answer of the grid: a page of q.
func page(ctx context.Context, db *sql.DB, run int64, q grid.Query) func() (string, error) {
	return func() (string, error) {
		p, err := grid.Page(ctx, db, run, q)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%d rows of %d", len(p.Rows), p.Total), nil
	}
}

// gridFailures writes a partial run and rows failed deals of it: two in
// three for an amount with a thousands separator, one in three for a date
// written day first.
func gridFailures(ctx context.Context, db *sql.DB, rows int) (int64, error) {
	var run, task int64
	if err := db.QueryRowContext(ctx, `INSERT INTO migrations (tenant_id, source, status, current_phase, started_at)
		VALUES ('bench', 'canonical', 'partial', 3, '2026-01-01T00:00:00Z') RETURNING id`).Scan(&run); err != nil {
		return 0, fmt.Errorf("bench run: %w", err)
	}
	if err := db.QueryRowContext(ctx, `INSERT INTO migration_tasks (migration_id, kind, phase, status, checkpoint, updated_at)
		VALUES (?, 'deal', 3, 'failed', '{}', '2026-01-01T00:00:00Z') RETURNING id`, run).Scan(&task); err != nil {
		return 0, fmt.Errorf("bench task: %w", err)
	}
	for from := 0; from < rows; from += gridBatch {
		var fs []ledger.Failure
		for i := from; i < min(from+gridBatch, rows); i++ {
			id := fmt.Sprintf("d-%07d", i)
			f := ledger.Failure{Run: run, Task: task, Kind: "deal", SourceID: id, File: "deals.csv", Line: i + 2}
			if i%3 == 2 {
				f.Reason = fmt.Sprintf(`close_date "%02d/%02d/2024" is not a date (expected ISO 8601, e.g. 2024-03-01 or 2024-03-01T10:00:00Z)`, 1+i%28, 1+i%12)
				f.Raw = fmt.Sprintf(`{"id":%q,"name":"Deal %d","amount":"%d.00","close_date":"%02d/%02d/2024"}`, id, i, i%90000, 1+i%28, 1+i%12)
			} else {
				f.Reason = fmt.Sprintf(`amount "%d,%03d.00" is not a number (use digits and a dot, e.g. 12000.50)`, 1+i%90, i%1000)
				f.Raw = fmt.Sprintf(`{"id":%q,"name":"Deal %d","amount":"%d,%03d.00","close_date":"2024-03-01"}`, id, i, 1+i%90, i%1000)
			}
			fs = append(fs, f)
		}
		tx, err := store.Begin(ctx, db)
		if err != nil {
			return 0, err
		}
		l := ledger.New(tx, store.DialectOf(db))
		err = l.RecordFailures(ctx, "deals", fs)
		if cerr := l.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = tx.Commit()
		}
		if err != nil {
			_ = tx.Rollback()
			return 0, err
		}
	}
	_, err := db.ExecContext(ctx, `ANALYZE`)
	return run, err
}

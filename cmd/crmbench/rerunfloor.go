package main

// The rerun floor: a measured lower bound for a rerun of an unchanged
// export, on the database a first run left. It does what the rules
// require of such a rerun and nothing else:
//
//   - R10: it fingerprints every file of the export, as planning does
//     (input.InspectRef), to know that none changed;
//   - it reads again, by their places in the file (task_revisits, kept by
//     the last run's tasks), the bytes of the records that were not final,
//     the only ones whose outcome can change — without parsing them;
//   - R3: it refreshes every skipped slot of the tenant, through
//     crmimport's own claim (ledger.Claim, so the slot's before-image
//     trigger of R16 fires as in a rerun), for a run of its own, 10,000
//     slots per transaction as a rerun's batches are;
//   - R4: it writes every failure of the last run again for its run, with
//     one set statement per kind (no raw row built in Go).
//
// What a rerun does beyond it is crmimport's: parsing and mapping the
// records read again, deciding them, the lookups of their links' final
// slots, the duplicates, the places kept for the next rerun, the run's
// phases, log and report. It is a measure, not an importer: it assumes
// that every skip would be skipped again and every failure fail again, as
// they do on an unchanged export.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"crmimport/importer/input"
	"crmimport/ledger"
	"crmimport/store"
)

func rerunFloor(export, dbPath string) error {
	ctx := context.Background()
	db, err := store.Open(ctx, dbPath)
	if err != nil {
		return err
	}
	defer db.Close()

	began := time.Now()
	files, err := fingerprintExport(ctx, export)
	if err != nil {
		return err
	}
	fingerprinted := time.Since(began)
	r, err := startFloorRerun(ctx, db)
	if err != nil {
		return err
	}
	read, err := rereadPlaces(ctx, db, r.last)
	if err != nil {
		return err
	}
	reread := time.Since(began)
	refreshed, err := refreshSkips(ctx, db, r)
	if err != nil {
		return err
	}
	fmt.Printf("rerun floor: %d files fingerprinted (%.2fs), %d records read again (%.2fs), %d skips refreshed and the failures written again (%.2fs)\n",
		files, fingerprinted.Seconds(), read, (reread - fingerprinted).Seconds(), refreshed, (time.Since(began) - reread).Seconds())
	return nil
}

// fingerprintExport fingerprints every file of the export, as planning
// does (R10), and counts them.
func fingerprintExport(ctx context.Context, export string) (int, error) {
	files, err := filepath.Glob(filepath.Join(export, "*.csv"))
	if err != nil {
		return 0, err
	}
	for _, f := range files {
		if _, err := input.InspectRef(ctx, f, input.Limits{}); err != nil {
			return 0, err
		}
	}
	return len(files), nil
}

// floorRerun is the rerun floor's own run, over the last run's tenant and
// source.
type floorRerun struct {
	last, run      int64 // the last run's id, and this one's
	tenant, source string
	at             time.Time
}

// startFloorRerun finds the last run and inserts the floor's own run after
// it.
func startFloorRerun(ctx context.Context, db *sql.DB) (floorRerun, error) {
	var r floorRerun
	if err := db.QueryRowContext(ctx, `SELECT id, tenant_id, source FROM migrations ORDER BY id DESC LIMIT 1`).Scan(&r.last, &r.tenant, &r.source); err != nil {
		return r, fmt.Errorf("the last run: %w", err)
	}
	r.at = time.Now()
	tx, err := store.Begin(ctx, db)
	if err != nil {
		return r, err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `INSERT INTO migrations (tenant_id, source, status, options, started_at) VALUES (?, ?, 'succeeded', '{}', ?)`,
		r.tenant, r.source, ledger.FormatTime(r.at))
	if err != nil {
		return r, err
	}
	if r.run, err = res.LastInsertId(); err != nil {
		return r, err
	}
	return r, tx.Commit()
}

// revisitTask is a task of the last run that kept the places of its
// records that were not final.
type revisitTask struct {
	id   int64
	file string
}

// rereadPlaces reads again, by their places, the records of the last run
// that were not final, without parsing them, and counts them.
func rereadPlaces(ctx context.Context, db *sql.DB, last int64) (int, error) {
	tasks, err := db.QueryContext(ctx, `SELECT id, file FROM migration_tasks WHERE migration_id = ? AND file IS NOT NULL ORDER BY id`, last)
	if err != nil {
		return 0, err
	}
	var ts []revisitTask
	for tasks.Next() {
		var t revisitTask
		if err := tasks.Scan(&t.id, &t.file); err != nil {
			tasks.Close()
			return 0, err
		}
		ts = append(ts, t)
	}
	if err := errors.Join(tasks.Err(), tasks.Close()); err != nil {
		return 0, err
	}
	read := 0
	var buf []byte
	for _, t := range ts {
		n, err := rereadTask(ctx, db, t, &buf)
		if err != nil {
			return 0, err
		}
		read += n
	}
	return read, nil
}

// rereadTask reads again, into buf, the records whose places task t kept,
// and counts them.
func rereadTask(ctx context.Context, db *sql.DB, t revisitTask, buf *[]byte) (read int, err error) {
	f, err := os.Open(t.file)
	if err != nil {
		return 0, err
	}
	places, err := db.QueryContext(ctx, `SELECT start_byte, end_byte FROM task_revisits WHERE task_id = ? ORDER BY row`, t.id)
	if err != nil {
		f.Close()
		return 0, err
	}
	for places.Next() {
		var start, end int64
		if err := places.Scan(&start, &end); err != nil {
			break
		}
		if n := int(end - start); cap(*buf) < n {
			*buf = make([]byte, n)
		}
		if _, err := f.ReadAt((*buf)[:end-start], start); err != nil {
			places.Close()
			f.Close()
			return 0, fmt.Errorf("%s: %w", t.file, err)
		}
		read++
	}
	return read, errors.Join(places.Err(), places.Close(), f.Close())
}

// refreshSkips takes every skipped slot of the tenant over for the floor's
// run (R3) and writes the last run's failures again for it (R4), kind by
// kind, a transaction per 10,000 skips; it counts the skips.
func refreshSkips(ctx context.Context, db *sql.DB, r floorRerun) (int, error) {
	refreshed := 0
	for _, k := range floorKinds {
		skips, err := kindSkips(ctx, db, r, k)
		if err != nil {
			return 0, err
		}
		first := true
		for len(skips) > 0 || first {
			n := min(len(skips), floorBatch)
			if err := refresh(ctx, db, skips[:n], first, r.run, r.last, k); err != nil {
				return 0, fmt.Errorf("%s: %w", k.Plural(), err)
			}
			refreshed += n
			skips, first = skips[n:], false
		}
	}
	return refreshed, nil
}

// kindSkips are the skipped slots of kind k of the run's tenant and source,
// as claims of the floor's run.
func kindSkips(ctx context.Context, db *sql.DB, r floorRerun, k ledger.Kind) ([]ledger.Slot, error) {
	rows, err := db.QueryContext(ctx, `SELECT source_id, coalesce(reason, ''), coalesce(detail, '') FROM migration_records
		WHERE tenant_id = ? AND source = ? AND kind = ? AND action = 'skipped' ORDER BY source_id`, r.tenant, r.source, string(k))
	if err != nil {
		return nil, err
	}
	var skips []ledger.Slot
	for rows.Next() {
		s := ledger.Slot{Key: ledger.Key{Tenant: r.tenant, Source: r.source, Kind: k}, RunID: r.run, Action: ledger.Skipped, At: r.at}
		if err := rows.Scan(&s.SourceID, &s.Reason, &s.Detail); err != nil {
			rows.Close()
			return nil, err
		}
		skips = append(skips, s)
	}
	return skips, errors.Join(rows.Err(), rows.Close())
}

// refresh takes the skips over for run in one transaction and, in the
// first of a kind, writes the last run's failures of kind again for run.
func refresh(ctx context.Context, db *sql.DB, skips []ledger.Slot, failures bool, run, last int64, k ledger.Kind) error {
	tx, err := store.Begin(ctx, db)
	if err != nil {
		return err
	}
	if failures {
		if _, err := tx.ExecContext(ctx, `INSERT INTO record_failures (migration_id, task_id, kind, source_id, file, line, reason, reason_class, raw)
			SELECT ?, NULL, kind, source_id, file, line, reason, reason_class, raw FROM record_failures WHERE migration_id = ? AND kind = ?`, run, last, string(k)); err != nil {
			tx.Rollback()
			return err
		}
	}
	l := ledger.New(tx, store.SQLite)
	won, err := l.Claim(ctx, skips)
	l.Close()
	if err == nil && !won {
		err = errors.New("a skip refused its refresh")
	}
	if err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

package forensics

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"

	"crmimport/canon"
	"crmimport/importer/reader"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store"
)

// runSeen is what the load keeps of a run of the dump.
type runSeen struct {
	line    int
	here    bool // a run of its id is in the database: loaded now, or a conflict
	started string
	counts  map[ledger.Kind]phases.Counts // its stats, read; nil without
}

type runKind struct {
	run  int64
	kind ledger.Kind
}

// kindSeen: a run's tasks of one kind.
type kindSeen struct {
	n        int
	task     int64 // the first
	inserted bool  // the first was written
}

// The statements that load runs and tasks. Each inserts a row with the
// dump's id and does nothing where that id is taken, which the load then
// reports as a conflict (one changed row is a row loaded).

// insertDumpRunSQL: a loaded run has no owner here (a running one shows as
// interrupted, R13) and names its dump.
const insertDumpRunSQL = `
INSERT INTO migrations (id, tenant_id, source, status, current_phase, cancellation_requested, stats, options,
    started_at, finished_at, duration_ms, message, attempts, dump)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO NOTHING`

const liveRunOfTenantSQL = `SELECT id FROM migrations WHERE tenant_id = ? AND status = 'running'`

// loadLogSQL: a loaded run's log says where it came from; its production
// log is not part of a dump.
const loadLogSQL = `INSERT INTO run_log (migration_id, at, level, message) VALUES (?, ?, 'notice', ?)`

// loadRuns writes the dump's runs as it reads them. A run id twice, or two
// running runs of a tenant, is a bad row; an id this database holds is a
// conflict.
func (l *loader) loadRuns(ctx context.Context) error {
	file := l.files[tableRuns]
	stmt, err := l.tx.PrepareContext(ctx, insertDumpRunSQL)
	if err != nil {
		return fmt.Errorf("load runs: %w", err)
	}
	defer stmt.Close()
	return eachRow(file, tableRuns, func(row runRow, line int) error {
		r, err := checkRun(row, line, l.dir, l.notice)
		if err != nil {
			l.problems.add(file, line, err)
			return nil
		}
		if first, ok := l.runs[r.id]; ok {
			l.problems.add(file, line, fmt.Errorf("run id %d is already on line %d", r.id, first.line))
			return nil
		}
		if r.status == string(phases.RunRunning) {
			if other, ok := l.live[r.tenant]; ok {
				l.problems.add(file, line, fmt.Errorf("tenant %s has two running runs, %d and %d: at most one run of a tenant is live (R13)", r.tenant, other, r.id))
				return nil
			}
			l.live[r.tenant] = r.id
		}
		seen := &runSeen{line: line, here: true, started: r.started, counts: r.counts}
		l.runs[r.id] = seen
		// The one-live-run index may refuse the run (R13), and the load
		// goes on to say so: in a savepoint, as PostgreSQL refuses every
		// later statement of a transaction after a failed one.
		var res sql.Result
		err = store.Try(ctx, l.tx, func() (err error) {
			res, err = stmt.ExecContext(ctx, r.id, r.tenant, r.source, r.status, r.phase, boolInt(r.cancel),
				r.stats, r.options, r.started, r.finished, r.duration, r.message, r.attempts, r.dump)
			return err
		})
		if store.IsUnique(err) {
			seen.here = false // refused: its tasks are not written either
			var live int64
			if qerr := l.tx.QueryRowContext(ctx, liveRunOfTenantSQL, r.tenant).Scan(&live); qerr != nil {
				return errors.Join(err, qerr)
			}
			l.conflict.LiveRuns = append(l.conflict.LiveRuns, fmt.Sprintf("tenant %s already has a running run here (run %d), and the dump's run %d is running too (R13: one live run per tenant)", r.tenant, live, r.id))
			return nil
		}
		if err := oneRow(res, err); errors.Is(err, errNoRow) {
			l.conflict.Runs = append(l.conflict.Runs, r.id)
			return nil
		} else if err != nil {
			return fmt.Errorf("load run %d: %w", r.id, err)
		}
		l.sum.Runs = append(l.sum.Runs, r.id)
		l.tenants[r.tenant] = true
		msg := fmt.Sprintf("run %d was loaded from the dump %s by `crmimport ledger load` as %s; its production log is not part of the dump, "+
			"and it has no input files here (`crmimport resume %d --from PATH` plans its unfinished tasks over a local export)",
			r.id, l.dir, r.status, r.id)
		if _, err := l.tx.ExecContext(ctx, loadLogSQL, r.id, l.now, msg); err != nil {
			return fmt.Errorf("load run %d: log: %w", r.id, err)
		}
		return nil
	})
}

// insertDumpTaskSQL: a loaded task has no input file here (R10: resume
// --from plans one).
const insertDumpTaskSQL = `
INSERT INTO migration_tasks (id, migration_id, kind, phase, status, checkpoint, attempts, last_error,
    imported, matched, unchanged, skipped, failed, duplicate, unlinked, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO NOTHING`

// loadTasks writes the dump's tasks as it reads them. A task id twice, or
// a task of a run the dump does not hold, is a bad row.
func (l *loader) loadTasks(ctx context.Context) error {
	file := l.files[tableTasks]
	stmt, err := l.tx.PrepareContext(ctx, insertDumpTaskSQL)
	if err != nil {
		return fmt.Errorf("load tasks: %w", err)
	}
	defer stmt.Close()
	return eachRow(file, tableTasks, func(row taskRow, line int) error {
		t, err := checkTask(row, line, l.notice)
		if err != nil {
			l.problems.add(file, line, err)
			return nil
		}
		if first, ok := l.tasks[t.id]; ok {
			l.problems.add(file, line, fmt.Errorf("task id %d is already on line %d", t.id, first))
			return nil
		}
		l.tasks[t.id] = line
		run, ok := l.runs[t.runID]
		if !ok {
			l.problems.add(file, line, fmt.Errorf("task %d belongs to run %d, which the dump's migrations do not hold", t.id, t.runID))
			return nil
		}
		if t.at == "" {
			t.at = run.started
		}
		if t.counts != [7]int64{} {
			l.counted[t.runID] = true
		}
		if p := phases.Phase(t.kind); t.phase != int64(p) {
			l.misphased.add(fmt.Sprintf("task %d of run %d (%s) in phase %d instead of %d", t.id, t.runID, t.kind.Plural(), t.phase, p))
		}
		if !run.here {
			return nil
		}
		k := runKind{t.runID, t.kind}
		seen := l.kinds[k]
		if seen == nil {
			seen = &kindSeen{task: t.id}
			l.kinds[k] = seen
		}
		seen.n++
		c := t.counts
		res, err := stmt.ExecContext(ctx, t.id, t.runID, string(t.kind), t.phase, t.status, t.checkpoint,
			t.attempts, t.lastError, c[0], c[1], c[2], c[3], c[4], c[5], c[6], t.at)
		if err := oneRow(res, err); errors.Is(err, errNoRow) {
			l.conflict.Tasks = append(l.conflict.Tasks, t.id)
			return nil
		} else if err != nil {
			return fmt.Errorf("load task %d: %w", t.id, err)
		}
		if seen.task == t.id {
			seen.inserted = true
		}
		l.sum.Tasks++
		return nil
	})
}

// On PostgreSQL the id of a new run or task is an identity's (a
// sequence), which rows loaded with ids of their own do not move; it is
// set past the largest id of its table, and never back. SQLite's INTEGER
// PRIMARY KEY gives max(id) + 1 by itself.
const (
	advanceRunIdentityPG = `
SELECT setval(q.s, greatest(coalesce(pg_sequence_last_value(q.s), 0), (SELECT max(id) FROM migrations)))
FROM (SELECT pg_get_serial_sequence('migrations', 'id')::regclass AS s) AS q`
	advanceTaskIdentityPG = `
SELECT setval(q.s, greatest(coalesce(pg_sequence_last_value(q.s), 0), (SELECT max(id) FROM migration_tasks)))
FROM (SELECT pg_get_serial_sequence('migration_tasks', 'id')::regclass AS s) AS q`
)

// advanceIdentities moves the identities of runs and tasks past the ids
// the load wrote, so that the next run planned here gets a new id.
func (l *loader) advanceIdentities(ctx context.Context) error {
	switch l.d {
	case store.SQLite:
		return nil // a rowid goes on from the largest there
	case store.Postgres:
	default:
		panic(l.d.Untaught("forensics.loader.advanceIdentities"))
	}
	if len(l.sum.Runs) > 0 {
		if _, err := l.tx.ExecContext(ctx, advanceRunIdentityPG); err != nil {
			return fmt.Errorf("load: run ids past the dump's: %w", err)
		}
	}
	if l.sum.Tasks > 0 {
		if _, err := l.tx.ExecContext(ctx, advanceTaskIdentityPG); err != nil {
			return fmt.Errorf("load: task ids past the dump's: %w", err)
		}
	}
	return nil
}

// warnMisphased warns of tasks whose phase is not their kind's in
// crmimport's plan (R7): production ran them in another order than this
// engine would, so records may have been imported before their parents,
// their links lost for good (a created slot is final). resume --from
// re-arms such a task in its kind's phase.
func (l *loader) warnMisphased(context.Context) error {
	if l.misphased.N == 0 {
		return nil
	}
	l.sum.Warnings = append(l.sum.Warnings, fmt.Sprintf("%d %s in another phase than %s kind's in crmimport's plan "+
		"("+canon.PhasesInWords()+"): %s. Production's order may have imported "+
		"records before their parents, their links lost for good (R7); `crmimport resume RUN --from PATH` re-arms an "+
		"unfinished task in its kind's phase, and `crmimport doctor` names such tasks (%s)",
		l.misphased.N, reader.Plural(l.misphased.N, "task is", "tasks are"), reader.Plural(l.misphased.N, "its", "their"), l.misphased, MisphasedTasks))
	return nil
}

// setTaskCountersSQL gives a loaded task the counters of its run's stats.
const setTaskCountersSQL = `
UPDATE migration_tasks SET imported = ?, matched = ?, unchanged = ?, skipped = ?, failed = ?, duplicate = ?, unlinked = ?
WHERE id = ?`

// countersFromStats gives the tasks of a run whose dump carries no task
// counters the counters of the run's stats, kind by kind where the run has
// one task of the kind: a report sums the tasks of a run that is not
// finalized (and finalize, after resume --from, sums them again), so that
// what production counted is kept rather than read as zeros.
func (l *loader) countersFromStats(ctx context.Context) error {
	ids := make([]int64, 0, len(l.runs))
	for id := range l.runs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return l.runs[ids[i]].line < l.runs[ids[j]].line })
	for _, id := range ids {
		r := l.runs[id]
		if r.counts == nil || l.counted[id] {
			continue
		}
		moved := false
		for _, k := range canon.Kinds() {
			seen := l.kinds[runKind{id, k}]
			c, ok := r.counts[k]
			if !ok || seen == nil || seen.n != 1 || !seen.inserted {
				continue
			}
			res, err := l.tx.ExecContext(ctx, setTaskCountersSQL, c.Imported, c.Matched, c.Unchanged, c.Skipped, c.Failed,
				c.Duplicate, c.Unlinked, seen.task)
			if err := oneRow(res, err); err != nil {
				return fmt.Errorf("load task %d: counters from the stats of run %d: %w", seen.task, id, err)
			}
			moved = true
		}
		if moved {
			l.notice(fmt.Sprintf("run %d: its tasks carry no counters: each took its kind's from the run's stats", id))
		}
	}
	return nil
}

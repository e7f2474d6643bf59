package forensics

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"crmimport/canon"
	"crmimport/importer/reader"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store"
	"crmimport/target"
)

// LoadSummary is what a load brought in.
type LoadSummary struct {
	Dump         string         `json:"dump"`
	Files        []string       `json:"files"`
	Runs         []int64        `json:"runs"`
	Tenants      []string       `json:"tenants"`
	Tasks        int            `json:"tasks"`
	Slots        map[string]int `json:"slots"`        // by action
	Placeholders map[string]int `json:"placeholders"` // by target table
	Notices      []string       `json:"notices"`
	Warnings     []string       `json:"warnings"` // what the engine would do otherwise than production did
}

// Load loads a production dump (a folder of migrations, migration_tasks and
// migration_records as .csv or .jsonl) into db, keeping its ids, in one
// transaction: a dump with a bad row, or one whose ids the database already
// holds, loads nothing (*DumpError, *ConflictError). now is written as the
// time placeholder rows were made.
//
// The dump is streamed, never held whole: runs and tasks are written as
// they are read, with a few numbers per run and task kept for the checks
// that span tables; slots go through a temporary table, in a file, where
// SQL finds what no single row shows (an id or a key twice, ids this
// database holds already, the numbers of slots and rows the dump leaves
// out) before they are written. Memory does not grow with the dump.
func Load(ctx context.Context, db *sql.DB, dir string, now time.Time) (sum *LoadSummary, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("ledger load %s: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, &DumpError{File: dir, Msg: "is not a folder: a dump is a folder of migrations, migration_tasks and migration_records (.csv or .jsonl)"}
	}
	l := &loader{d: store.DialectOf(db), dir: abs, given: dir, now: ledger.FormatTime(now), files: map[string]string{},
		sum: &LoadSummary{Dump: abs, Slots: map[string]int{}, Placeholders: map[string]int{}, Notices: []string{},
			Warnings: []string{}},
		conflict: &ConflictError{Dump: abs, Rows: map[string]*IDs{}},
		runs:     map[int64]*runSeen{}, live: map[string]int64{}, tasks: map[int64]int{}, kinds: map[runKind]*kindSeen{},
		counted: map[int64]bool{}, tenants: map[string]bool{},
		slotIDs: span{min: 1, max: 0}, ledgerIDs: span{min: 1, max: 0}, ascending: true, rows: map[ledger.Kind]*rows{}}
	if err := l.findFiles(); err != nil {
		return nil, err
	}
	restore, err := store.SpillTemp(ctx, db)
	if err != nil {
		return nil, err
	}
	defer func() {
		if rerr := restore(); rerr != nil && err == nil {
			sum, err = nil, fmt.Errorf("ledger load %s: loaded, but %w", dir, rerr)
		}
	}()
	tx, err := store.Begin(ctx, db)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	l.tx = tx
	if err := l.load(ctx); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("ledger load %s: commit: %w", dir, err)
	}
	return l.sum, nil
}

// loader is one load in progress: what it has written in its transaction,
// and the little it keeps to check the rest.
type loader struct {
	d               store.Dialect // the database's: its id allocators
	dir, given, now string
	files           map[string]string
	tx              *sql.Tx
	sum             *LoadSummary
	problems        problems
	conflict        *ConflictError

	runs      map[int64]*runSeen // the dump's good runs
	live      map[string]int64   // tenant -> its running run in the dump (R13)
	tasks     map[int64]int      // the dump's good tasks -> their line
	kinds     map[runKind]*kindSeen
	misphased Names                 // tasks in another phase than their kind's
	counted   map[int64]bool        // runs with a task that carries counters
	tenants   map[string]bool       // of the runs loaded
	staged    int                   // slots in the temporary table
	slotIDs   span                  // of the dump
	ledgerIDs span                  // of the ledger before the load
	ascending bool                  // the dump's slot ids come in ascending order: none is there twice
	tenant    string                // the first tenant of the slots
	tenantsN  int                   // 1: every slot is of that tenant; 2: more than one
	rows      map[ledger.Kind]*rows // what the final slots of each kind name
}

// span is the smallest and largest of some ids (valid when max >= min).
type span struct{ min, max int64 }

func (s *span) add(id int64) {
	if s.max < s.min {
		s.min, s.max = id, id
		return
	}
	s.min, s.max = min(s.min, id), max(s.max, id)
}

func (s span) overlaps(o span) bool {
	return s.min <= s.max && o.min <= o.max && s.min <= o.max && o.min <= s.max
}

// rows: the created and matched slots of a kind, which name its rows.
type rows struct {
	final   int   // slots
	last    int64 // the largest record_id they name
	without int   // slots that name none: numbered here
}

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

// findFiles finds each table's file; a folder with none is no dump.
func (l *loader) findFiles() error {
	for _, table := range []string{tableRuns, tableTasks, tableSlots} {
		p, err := tableFile(l.dir, table)
		if err != nil {
			return err
		}
		l.files[table] = p
	}
	if l.files[tableRuns] == "" && l.files[tableTasks] == "" && l.files[tableSlots] == "" {
		return &DumpError{File: l.dir, Msg: "holds no dump: expected migrations, migration_tasks and migration_records as .csv (psql \\copy … CSV HEADER) or .jsonl"}
	}
	for _, table := range []string{tableRuns, tableTasks, tableSlots} {
		if f := l.files[table]; f != "" {
			l.sum.Files = append(l.sum.Files, filepath.Base(f))
		} else {
			l.notice(fmt.Sprintf("the dump has no %s (.csv or .jsonl): none loaded", table))
		}
	}
	return nil
}

func (l *loader) notice(s string) { l.sum.Notices = append(l.sum.Notices, s) }

// load writes the dump in the load's transaction, or says why it may not:
// its bad rows (problems) first, else the ids this database holds already.
func (l *loader) load(ctx context.Context) error {
	steps := []func(context.Context) error{l.loadRuns, l.loadTasks, l.advanceIdentities, l.warnMisphased, l.countersFromStats, l.stageSlots, l.numberSlots,
		l.numberRows, l.slotConflicts, l.writeSlots}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return err
		}
	}
	if err := errors.Join(l.problems...); err != nil {
		return fmt.Errorf("ledger load %s: nothing was loaded:\n%w", l.given, err)
	}
	if l.conflict.any() {
		return l.conflict
	}
	for _, step := range []func(context.Context) error{l.writePlaceholders, l.summarise} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
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

// The slots of a dump are many: they are staged in a temporary table
// (dump_slots, in a file: store.SpillTemp; on PostgreSQL, the session's,
// which the load's one transaction keeps on one connection), numbered by the line they
// start on, checked there by SQL and then written in one statement. The
// statements below read and write it; none of them holds the dump in Go.

const createStageSQL = `
CREATE TEMP TABLE dump_slots (
    line         INTEGER PRIMARY KEY,
    tenant_id    TEXT    NOT NULL,
    source       TEXT    NOT NULL,
    kind         TEXT    NOT NULL,
    source_id    TEXT    NOT NULL,
    id           INTEGER, -- NULL: numbered here
    migration_id INTEGER,
    record_type  TEXT,
    record_id    INTEGER, -- NULL: none (a skip), or a placeholder numbered here
    action       TEXT    NOT NULL,
    reason       TEXT,
    detail       TEXT,
    created_at   TEXT    NOT NULL
)`

// stageColumns is the number of columns a staged slot gives.
const stageColumns = 13

// stageBatch is how many slots one INSERT stages.
const stageBatch = 256

// stageSQL stages n slots in one statement.
func stageSQL(n int) string {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", stageColumns), ", ") + ")"
	return `INSERT INTO dump_slots (line, tenant_id, source, kind, source_id, id, migration_id, record_type, record_id,
    action, reason, detail, created_at) VALUES ` + strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
}

// stageSlots reads the dump's slots into the temporary table, checking
// each row as it goes.
func (l *loader) stageSlots(ctx context.Context) error {
	file := l.files[tableSlots]
	if file == "" {
		return nil
	}
	if _, err := l.tx.ExecContext(ctx, createStageSQL); err != nil {
		return fmt.Errorf("load slots: %w", err)
	}
	full, err := l.tx.PrepareContext(ctx, stageSQL(stageBatch))
	if err != nil {
		return fmt.Errorf("load slots: %w", err)
	}
	defer full.Close()
	args := make([]any, 0, stageBatch*stageColumns)
	flush := func() error {
		n := len(args) / stageColumns
		var err error
		switch n {
		case 0:
			return nil
		case stageBatch:
			_, err = full.ExecContext(ctx, args...)
		default:
			_, err = l.tx.ExecContext(ctx, stageSQL(n), args...)
		}
		if err != nil {
			return fmt.Errorf("load slots: stage: %w", err)
		}
		l.staged += n
		args = args[:0]
		return nil
	}
	err = eachRow(file, tableSlots, func(row slotRow, line int) error {
		s, err := checkSlot(row, line)
		if err != nil {
			l.problems.add(file, line, err)
			return nil
		}
		var recordType, recordID, id any
		if s.action.Final() {
			recordType = s.key.Kind.Table()
			r := l.rows[s.key.Kind]
			if r == nil {
				r = &rows{}
				l.rows[s.key.Kind] = r
			}
			r.final++
			if s.recordID != 0 {
				recordID = s.recordID
				r.last = max(r.last, s.recordID)
			} else {
				r.without++
			}
		}
		if s.id != 0 {
			id = s.id
			l.ascending = l.ascending && (l.slotIDs.max < l.slotIDs.min || s.id > l.slotIDs.max)
			l.slotIDs.add(s.id)
		}
		switch {
		case l.tenantsN == 0:
			l.tenant, l.tenantsN = s.key.Tenant, 1
		case s.key.Tenant != l.tenant:
			l.tenantsN = 2
		}
		l.sum.Slots[string(s.action)]++
		args = append(args, line, s.key.Tenant, s.key.Source, string(s.key.Kind), s.key.SourceID, id, s.runID, recordType,
			recordID, string(s.action), s.reason, s.detail, s.created)
		if len(args) == cap(args) {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	return nil
}

// twiceIDSQL: a slot id twice in the dump; the rows after the first are
// bad rows.
const twiceIDSQL = `
SELECT line, id, first FROM (
    SELECT line, id, min(line) OVER (PARTITION BY id) AS first FROM dump_slots WHERE id IS NOT NULL) AS s
WHERE line > first ORDER BY line LIMIT ?`

// slotIDSpanSQL: the smallest and largest slot id of the ledger.
const slotIDSpanSQL = `SELECT coalesce(min(id), 1), coalesce(max(id), 0) FROM migration_records`

// takenSlotIDsSQL: the dump's slot ids that the ledger already uses.
const takenSlotIDsSQL = `
SELECT DISTINCT id FROM dump_slots WHERE id IN (SELECT id FROM migration_records) ORDER BY id`

// numberSlotsSQL gives the slots without an id the next ones, in the order
// of the dump: past the ledger's and the dump's own.
const numberSlotsSQL = `
UPDATE dump_slots SET id = ? + n.i - 1
FROM (SELECT line, row_number() OVER (ORDER BY line) AS i FROM dump_slots WHERE id IS NULL) AS n
WHERE dump_slots.line = n.line`

// numberSlots finds a slot id that the dump holds twice (unless its ids
// come in ascending order) or that the ledger already uses (unless the two
// spans of ids are apart), and numbers the slots without one.
func (l *loader) numberSlots(ctx context.Context) error {
	if l.staged == 0 {
		return nil
	}
	if !l.ascending {
		file := l.files[tableSlots]
		err := l.each(ctx, twiceIDSQL, []any{maxProblems}, func(s scanner) error {
			var line, first int
			var id int64
			if err := s.Scan(&line, &id, &first); err != nil {
				return err
			}
			l.problems.add(file, line, fmt.Errorf("slot id %d is already on line %d", id, first))
			return nil
		})
		if err != nil {
			return fmt.Errorf("load slots: ids: %w", err)
		}
	}
	if err := l.tx.QueryRowContext(ctx, slotIDSpanSQL).Scan(&l.ledgerIDs.min, &l.ledgerIDs.max); err != nil {
		return fmt.Errorf("load: slot ids: %w", err)
	}
	if l.ledgerIDs.overlaps(l.slotIDs) {
		err := l.each(ctx, takenSlotIDsSQL, nil, func(s scanner) error {
			var id int64
			if err := s.Scan(&id); err != nil {
				return err
			}
			l.conflict.SlotIDs.add(id)
			return nil
		})
		if err != nil {
			return fmt.Errorf("load: slot ids: %w", err)
		}
	}
	next, err := l.d.NextID(ctx, l.tx, slotsTable)
	if err != nil {
		return fmt.Errorf("load: next slot id: %w", err)
	}
	next = max(next, l.slotIDs.max+1)
	res, err := l.tx.ExecContext(ctx, numberSlotsSQL, next)
	if err != nil {
		return fmt.Errorf("load: number slots from %d: %w", next, err)
	}
	numbered, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("load: number slots from %d: %w", next, err)
	}
	// The ledger numbers new slots past every loaded one.
	if err := l.d.AdvanceIDs(ctx, l.tx, slotsTable, next+numbered-1); err != nil {
		return fmt.Errorf("load: number slots past the dump's: %w", err)
	}
	return nil
}

// Every created or matched slot gets a placeholder target row: one per
// (table, record_id) that such slots name (two sources may match one row),
// and a new id, past the table's and the dump's, for a slot that names
// none. The statements per kind differ only in the table and its one
// visible text column, which says what the row is; NOT NULL columns are
// filled by it.

// slotsTable names the slot table's id allocator.
const slotsTable = "migration_records"

// placeholderRowsSQL: the placeholder rows of a kind's final slots, one
// per record_id, with the tenant, source and source_id of the first slot
// that names it (target.InsertPlaceholders writes the first of an id):
// ?1 the kind, ?2 the dump, ?3 the time. json_object is SQLite's
// spelling (store.Dialect); placeholderRowsPG is PostgreSQL's, whose JSON
// text has a space after each colon and comma.
const placeholderRowsSQL = `
SELECT record_id AS id, tenant_id, '(loaded from a dump: ' || ?1 || ' ' || source_id || ')' AS label,
       json_object('loaded_from_dump', ?2, 'source', source, 'source_id', source_id) AS extra, ?3 AS imported_at, line AS ord
FROM dump_slots WHERE kind = ?1 AND record_id IS NOT NULL`

const placeholderRowsPG = `
SELECT record_id AS id, tenant_id, '(loaded from a dump: ' || ?1 || ' ' || source_id || ')' AS label,
       jsonb_build_object('loaded_from_dump', ?2::text, 'source', source, 'source_id', source_id)::text AS extra,
       ?3::text AS imported_at, line AS ord
FROM dump_slots WHERE kind = ?1 AND record_id IS NOT NULL`

// dumpRowIDsSQL: the record ids the dump's final slots of a kind name.
const dumpRowIDsSQL = `SELECT record_id AS id FROM dump_slots WHERE kind = ?`

// numberRowsSQL gives the final slots of a kind that name no row the next
// ids after ?2, in the order of the dump.
const numberRowsSQL = `
UPDATE dump_slots SET record_id = ?2 + n.i
FROM (SELECT line, row_number() OVER (ORDER BY line) AS i FROM dump_slots
      WHERE kind = ?1 AND record_type IS NOT NULL AND record_id IS NULL) AS n
WHERE dump_slots.line = n.line`

// rowOfTwoTenantsSQL: a row belongs to one tenant; the first final slot
// that names a row which an earlier one gives to another tenant.
const rowOfTwoTenantsSQL = `
SELECT line, kind, source_id, tenant_id, record_id, first, first_tenant FROM (
    SELECT line, kind, source_id, tenant_id, record_id,
           first_value(line) OVER w AS first, first_value(tenant_id) OVER w AS first_tenant
    FROM dump_slots WHERE record_id IS NOT NULL
    WINDOW w AS (PARTITION BY kind, record_id ORDER BY line)) AS s
WHERE tenant_id <> first_tenant ORDER BY line LIMIT 1`

// numberRows numbers the placeholder rows that the dump's final slots
// leave without one, past the table's and the dump's; finds a row that two
// tenants' slots name (when the dump has several); and the record ids
// whose rows this database already holds (when the table has any).
func (l *loader) numberRows(ctx context.Context) error {
	taken := map[ledger.Kind]bool{}
	for _, k := range canon.Kinds() {
		r := l.rows[k]
		if r == nil {
			continue
		}
		inTable, err := target.MaxID(ctx, l.tx, k)
		if err != nil {
			return fmt.Errorf("load: %w", err)
		}
		taken[k] = inTable > 0
		// New rows are numbered past the table's allocator (which is past
		// every id the table ever held) and the dump's own ids; then the
		// allocator moves past them all.
		next, err := target.NextID(ctx, l.d, l.tx, k)
		if err != nil {
			return fmt.Errorf("load: %w", err)
		}
		last := r.last
		if r.without > 0 {
			base := max(next-1, r.last)
			if _, err := l.tx.ExecContext(ctx, numberRowsSQL, string(k), base); err != nil {
				return fmt.Errorf("load: number %s rows: %w", k, err)
			}
			last = base + int64(r.without)
		}
		if err := target.AdvanceIDs(ctx, l.d, l.tx, k, last); err != nil {
			return fmt.Errorf("load: %w", err)
		}
	}
	if l.tenantsN > 1 && len(l.rows) > 0 {
		var line, first int
		var kind ledger.Kind
		var sourceID, tenant, firstTenant string
		var recordID int64
		err := l.tx.QueryRowContext(ctx, rowOfTwoTenantsSQL).Scan(&line, &kind, &sourceID, &tenant, &recordID, &first, &firstTenant)
		switch {
		case err == nil:
			l.problems.add(l.files[tableSlots], line, fmt.Errorf(
				"%s %s of tenant %s names %s row %d, which line %d gives to tenant %s: a row belongs to one tenant",
				kind, sourceID, tenant, kind.Table(), recordID, first, firstTenant))
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("load: rows of two tenants: %w", err)
		}
	}
	for _, k := range canon.Kinds() {
		if !taken[k] {
			continue
		}
		ids := &IDs{}
		err := target.Taken(ctx, l.tx, k, dumpRowIDsSQL, []any{string(k)}, func(id int64) error {
			ids.add(id)
			return nil
		})
		if err != nil {
			return fmt.Errorf("load: %s rows: %w", k.Table(), err)
		}
		if ids.N > 0 {
			l.conflict.Rows[k.Table()] = ids
		}
	}
	return nil
}

// takenSlotsSQL: the dump's slots whose key the ledger already holds.
const takenSlotsSQL = `
SELECT s.tenant_id, s.source, s.kind, s.source_id FROM dump_slots s
JOIN migration_records r ON r.tenant_id = s.tenant_id AND r.source = s.source AND r.kind = s.kind AND r.source_id = s.source_id
ORDER BY s.line`

// slotConflicts finds the dump's slots that the ledger already holds
// (when it holds any).
func (l *loader) slotConflicts(ctx context.Context) error {
	if l.staged == 0 || l.ledgerIDs.max < l.ledgerIDs.min {
		return nil
	}
	err := l.each(ctx, takenSlotsSQL, nil, func(s scanner) error {
		var k ledger.Key
		if err := s.Scan(&k.Tenant, &k.Source, &k.Kind, &k.SourceID); err != nil {
			return err
		}
		l.conflict.Slots.add(fmt.Sprintf("%s/%s %s %s", k.Tenant, k.Source, k.Kind, k.SourceID))
		return nil
	})
	if err != nil {
		return fmt.Errorf("load: slots: %w", err)
	}
	return nil
}

// writeSlotsSQL restores the slots as production left them, in the
// ledger's key order. It is not a claim (R1-R3 are the importer's): a slot
// whose key is here already does nothing, and is a conflict (found above)
// or a key the dump holds twice (found below).
const writeSlotsSQL = `
INSERT INTO migration_records (tenant_id, source, kind, source_id, id, migration_id, record_type, record_id,
    action, reason, detail, created_at)
SELECT tenant_id, source, kind, source_id, id, migration_id, record_type, record_id, action, reason, detail, created_at
FROM dump_slots WHERE true
ON CONFLICT (tenant_id, source, kind, source_id) DO NOTHING`

// twiceKeySQL: a slot is unique on tenant, source, kind and source_id; the
// rows after the first of a key are bad rows.
const twiceKeySQL = `
SELECT line, tenant_id, source, kind, source_id, first FROM (
    SELECT line, tenant_id, source, kind, source_id,
           min(line) OVER (PARTITION BY tenant_id, source, kind, source_id) AS first
    FROM dump_slots) AS s
WHERE line > first ORDER BY line LIMIT ?`

// writeSlots writes the staged slots into the ledger; when some are not
// written, it finds the keys that the dump holds twice.
func (l *loader) writeSlots(ctx context.Context) error {
	if l.staged == 0 {
		return nil
	}
	res, err := l.tx.ExecContext(ctx, writeSlotsSQL)
	if err != nil {
		return fmt.Errorf("load slots: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("load slots: %w", err)
	}
	if n == int64(l.staged) {
		return nil
	}
	file := l.files[tableSlots]
	err = l.each(ctx, twiceKeySQL, []any{maxProblems}, func(s scanner) error {
		var line, first int
		var k ledger.Key
		if err := s.Scan(&line, &k.Tenant, &k.Source, &k.Kind, &k.SourceID, &first); err != nil {
			return err
		}
		l.problems.add(file, line, fmt.Errorf("the slot %s/%s %s is already on line %d (a slot is unique on tenant, source, kind and source_id)",
			k.Tenant, k.Source, k, first))
		return nil
	})
	if err != nil {
		return fmt.Errorf("load slots: keys: %w", err)
	}
	return nil
}

// writePlaceholders writes the placeholder rows of the final slots.
func (l *loader) writePlaceholders(ctx context.Context) error {
	for _, k := range canon.Kinds() {
		if l.rows[k] == nil {
			continue
		}
		var q string
		switch l.d {
		case store.SQLite:
			q = placeholderRowsSQL
		case store.Postgres:
			q = placeholderRowsPG
		default:
			panic(l.d.Untaught("forensics.loader.writePlaceholders"))
		}
		n, err := target.InsertPlaceholders(ctx, l.tx, k, q, []any{string(k), l.dir, l.now})
		if err != nil {
			return fmt.Errorf("load placeholders of %s: %w", k.Table(), err)
		}
		l.sum.Placeholders[k.Table()] = int(n)
	}
	return nil
}

// stagedTenantsSQL: the tenants of the dump's slots.
const stagedTenantsSQL = `SELECT DISTINCT tenant_id FROM dump_slots`

// strangerRunsSQL: the runs that slots name and the dump does not hold.
const strangerRunsSQL = `
SELECT DISTINCT s.migration_id FROM dump_slots s
WHERE s.migration_id IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM migrations m WHERE m.id = s.migration_id AND m.dump = ?)
ORDER BY 1`

// dropStageSQL: the temporary table goes with the load. Unqualified, the
// name is the temporary table's on both dialects (SQLite and PostgreSQL
// look in a session's temporary tables first).
const dropStageSQL = `DROP TABLE dump_slots`

// summarise completes the summary and drops the temporary table.
func (l *loader) summarise(ctx context.Context) error {
	if l.staged > 0 && len(l.runs) > 0 {
		var strangers IDs
		err := l.each(ctx, strangerRunsSQL, []any{l.dir}, func(s scanner) error {
			var id int64
			if err := s.Scan(&id); err != nil {
				return err
			}
			strangers.add(id)
			return nil
		})
		if err != nil {
			return fmt.Errorf("load: runs of slots: %w", err)
		}
		if strangers.N > 0 {
			l.notice("slots name runs the dump's migrations do not hold: " + strangers.String())
		}
	}
	if l.files[tableSlots] != "" {
		err := l.each(ctx, stagedTenantsSQL, nil, func(s scanner) error {
			var t string
			if err := s.Scan(&t); err != nil {
				return err
			}
			l.tenants[t] = true
			return nil
		})
		if err != nil {
			return fmt.Errorf("load: tenants: %w", err)
		}
		if _, err := l.tx.ExecContext(ctx, dropStageSQL); err != nil {
			return fmt.Errorf("load: %w", err)
		}
	}
	for t := range l.tenants {
		l.sum.Tenants = append(l.sum.Tenants, t)
	}
	sort.Strings(l.sum.Tenants)
	return nil
}

// each runs a query in the load's transaction and calls f for every row.
func (l *loader) each(ctx context.Context, query string, args []any, f func(scanner) error) error {
	return queryEach(ctx, l.tx, query, args, f)
}

var errNoRow = errors.New("no row changed")

// oneRow tells an insert that changed one row from one that changed none
// (its id was taken: ON CONFLICT DO NOTHING).
func oneRow(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return errNoRow
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

package forensics

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"crmimport/ledger"
	"crmimport/store"
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
func Load(ctx context.Context, db *sql.DB, dir string, now time.Time) (*LoadSummary, error) {
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
		err := l.each(ctx, strangerRunsSQL, []any{l.dir}, func(s store.Scanner) error {
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
		err := l.each(ctx, stagedTenantsSQL, nil, func(s store.Scanner) error {
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
func (l *loader) each(ctx context.Context, query string, args []any, f func(store.Scanner) error) error {
	return store.EachRow(ctx, l.tx, query, args, f)
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

package forensics

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"crmimport/ledger"
	"crmimport/phases"
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
}

// loadedRun, loadedTask and loadedSlot are a dump's rows, checked and in
// the database's own terms.
type loadedRun struct {
	id, attempts                          int64
	tenant, source, status, started, dump string
	phase                                 int64
	cancel                                bool
	stats, options, finished, duration    any
	message                               any
	counts                                map[ledger.Kind]phases.Counts // stats, read
	line                                  int
}

type loadedTask struct {
	id, runID, phase, attempts int64
	kind                       ledger.Kind
	status, checkpoint, at     string
	lastError                  any
	counts                     [7]int64 // imported, matched, unchanged, skipped, failed, duplicate, unlinked
	line                       int
}

type loadedSlot struct {
	key      ledger.Key
	id       int64 // 0: numbered here
	runID    any
	action   ledger.Action
	recordID int64 // 0: none (a skip), or a placeholder numbered here
	reason   any
	detail   any
	created  string
	line     int
}

// dump is a whole dump, read and checked, before anything is written.
type dump struct {
	dir      string
	files    map[string]string
	runs     []loadedRun
	tasks    []loadedTask
	slots    []loadedSlot
	notices  []string
	problems []error
}

// maxProblems is how many bad rows a refused load names.
const maxProblems = 20

func (d *dump) problem(file string, line int, err error) {
	if len(d.problems) < maxProblems {
		d.problems = append(d.problems, &DumpError{File: filepath.Base(file), Line: line, Msg: err.Error()})
	}
}

// Load loads a production dump (a folder of migrations, migration_tasks and
// migration_records as .csv or .jsonl) into db, keeping its ids, in one
// transaction: a dump with a bad row, or one whose ids the database already
// holds, loads nothing (*DumpError, *ConflictError). now is written as the
// time placeholder rows were made.
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
	d, err := readDump(abs)
	if err != nil {
		return nil, err
	}
	if err := errors.Join(d.problems...); err != nil {
		return nil, fmt.Errorf("ledger load %s: nothing was loaded:\n%w", dir, err)
	}
	tx, err := store.Begin(ctx, db)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	sum, err := d.write(ctx, tx, ledger.FormatTime(now))
	if err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("ledger load %s: commit: %w", dir, err)
	}
	return sum, nil
}

// readDump reads and checks the three tables.
func readDump(dir string) (*dump, error) {
	d := &dump{dir: dir, files: map[string]string{}}
	for _, table := range []string{tableRuns, tableTasks, tableSlots} {
		p, err := tableFile(dir, table)
		if err != nil {
			return nil, err
		}
		d.files[table] = p
	}
	if d.files[tableRuns] == "" && d.files[tableTasks] == "" && d.files[tableSlots] == "" {
		return nil, &DumpError{File: dir, Msg: "holds no dump: expected migrations, migration_tasks and migration_records as .csv (psql \\copy … CSV HEADER) or .jsonl"}
	}
	for _, table := range []string{tableRuns, tableTasks, tableSlots} {
		if d.files[table] == "" {
			d.notices = append(d.notices, fmt.Sprintf("the dump has no %s (.csv or .jsonl): none loaded", table))
		}
	}
	runs, err := readTable[runRow](d.files[tableRuns], tableRuns)
	if err != nil {
		return nil, err
	}
	tasks, err := readTable[taskRow](d.files[tableTasks], tableTasks)
	if err != nil {
		return nil, err
	}
	slots, err := readTable[slotRow](d.files[tableSlots], tableSlots)
	if err != nil {
		return nil, err
	}
	for _, r := range runs {
		d.addRun(r.row, r.line)
	}
	for _, t := range tasks {
		d.addTask(t.row, t.line)
	}
	for _, s := range slots {
		d.addSlot(s.row, s.line)
	}
	d.crossCheck()
	d.countersFromStats()
	return d, nil
}

var runStatuses = []string{string(phases.RunRunning), string(phases.RunSucceeded), string(phases.RunPartial),
	string(phases.RunFailed), string(phases.RunCancelled)}

var taskStatuses = []string{string(phases.TaskPending), string(phases.TaskRunning), string(phases.TaskSucceeded),
	string(phases.TaskFailed), string(phases.TaskCancelled)}

var actions = []string{string(ledger.Created), string(ledger.Matched), string(ledger.Skipped)}

func (d *dump) addRun(row runRow, line int) {
	file := d.files[tableRuns]
	r := loadedRun{line: line, dump: d.dir}
	var err error
	check := func(e error) bool {
		if e != nil && err == nil {
			err = e
		}
		return err == nil
	}
	r.id, err = row.ID.int64("id", 0)
	if check(err) && r.id < 1 {
		err = &cellError{"id", "is empty or not a run id"}
	}
	if check(err) {
		r.tenant, err = row.TenantID.required("tenant_id")
	}
	if check(err) {
		r.source, err = row.Source.required("source")
	}
	if check(err) {
		r.status, err = row.Status.oneOf("status", "run status", runStatuses...)
	}
	if check(err) {
		r.phase, err = row.CurrentPhase.int64("current_phase", 0)
	}
	if check(err) {
		r.cancel, err = row.CancellationRequested.bool("cancellation_requested")
	}
	if check(err) {
		r.started, err = row.StartedAt.time("started_at")
	}
	if check(err) {
		r.finished, err = row.FinishedAt.nullTime("finished_at")
	}
	if check(err) {
		r.duration, err = row.DurationMS.nullInt64("duration_ms")
	}
	if check(err) {
		r.attempts, err = row.Attempts.int64("attempts", 1)
	}
	if !check(err) {
		d.problem(file, line, err)
		return
	}
	r.message = row.Message.nullText()
	r.stats, r.counts = d.normaliseStats(r.id, row.Stats)
	r.options = "{}"
	if !row.Options.null() {
		// The production options are kept for the record; crmimport's own
		// (input, profile) are written by resume --from.
		var v any = json.RawMessage(row.Options.text())
		if !json.Valid([]byte(row.Options.text())) {
			v = row.Options.text()
		}
		b, _ := json.Marshal(map[string]any{"dump_options": v})
		r.options = string(b)
	}
	d.runs = append(d.runs, r)
}

// normaliseStats keeps a run's stats rollup when it reads as crmimport's
// (per kind the outcome counters), with plural kinds made singular; other
// shapes are dropped with a notice, and reports then sum the tasks.
func (d *dump) normaliseStats(runID int64, c Cell) (any, map[ledger.Kind]phases.Counts) {
	if c.null() {
		return nil, nil
	}
	var raw map[string]json.RawMessage
	out := map[ledger.Kind]phases.Counts{}
	err := json.Unmarshal([]byte(c.text()), &raw)
	for k, v := range raw {
		if err != nil {
			break
		}
		kind, kerr := ledger.ParseKind(k)
		if kerr != nil {
			err = kerr
			break
		}
		var counts phases.Counts
		if err = json.Unmarshal(v, &counts); err == nil {
			sum := out[kind]
			sum.Add(counts)
			out[kind] = sum
		}
	}
	if err != nil {
		d.notices = append(d.notices, fmt.Sprintf("run %d: its stats are not crmimport's per-kind counters (%v): dropped, reports sum its tasks instead", runID, err))
		return nil, nil
	}
	b, _ := json.Marshal(out)
	return string(b), out
}

// countersFromStats gives the tasks of a run whose dump carries no task
// counters the counters of the run's stats, kind by kind where the run has
// one task of the kind: a report sums the tasks of a run that is not
// finalized (and finalize, after resume --from, sums them again), so that
// what production counted is kept rather than read as zeros.
func (d *dump) countersFromStats() {
	type key struct {
		run  int64
		kind ledger.Kind
	}
	n := map[key]int{}
	withCounters := map[int64]bool{}
	for _, t := range d.tasks {
		n[key{t.runID, t.kind}]++
		if t.counts != [7]int64{} {
			withCounters[t.runID] = true
		}
	}
	for _, r := range d.runs {
		if r.counts == nil || withCounters[r.id] {
			continue
		}
		moved := false
		for i := range d.tasks {
			t := &d.tasks[i]
			c, ok := r.counts[t.kind]
			if t.runID != r.id || !ok || n[key{r.id, t.kind}] != 1 {
				continue
			}
			t.counts = [7]int64{c.Imported, c.Matched, c.Unchanged, c.Skipped, c.Failed, c.Duplicate, c.Unlinked}
			moved = true
		}
		if moved {
			d.notices = append(d.notices, fmt.Sprintf("run %d: its tasks carry no counters: each took its kind's from the run's stats", r.id))
		}
	}
}

func (d *dump) addTask(row taskRow, line int) {
	file := d.files[tableTasks]
	t := loadedTask{line: line}
	var err error
	check := func(e error) bool {
		if e != nil && err == nil {
			err = e
		}
		return err == nil
	}
	t.id, err = row.ID.int64("id", 0)
	if check(err) && t.id < 1 {
		err = &cellError{"id", "is empty or not a task id"}
	}
	if check(err) {
		t.runID, err = row.MigrationID.int64("migration_id", 0)
	}
	if check(err) {
		t.kind, err = row.Kind.kind("kind")
	}
	if check(err) {
		t.phase, err = row.Phase.int64("phase", int64(phases.Phase(t.kind)))
	}
	if check(err) {
		t.status, err = row.Status.oneOf("status", "task status", taskStatuses...)
	}
	if check(err) {
		t.attempts, err = row.Attempts.int64("attempts", 0)
	}
	if check(err) && !row.UpdatedAt.null() {
		t.at, err = row.UpdatedAt.time("updated_at")
	}
	counters := []struct {
		c    Cell
		name string
	}{{row.Imported, "imported"}, {row.Matched, "matched"}, {row.Unchanged, "unchanged"}, {row.Skipped, "skipped"},
		{row.Failed, "failed"}, {row.Duplicate, "duplicate"}, {row.Unlinked, "unlinked"}}
	for i, c := range counters {
		if check(err) {
			t.counts[i], err = c.c.int64(c.name, 0)
		}
	}
	if !check(err) {
		d.problem(file, line, err)
		return
	}
	t.lastError = row.LastError.nullText()
	t.checkpoint = `{"rows":0,"line":0}`
	if !row.Checkpoint.null() {
		var cp phases.Checkpoint
		if json.Unmarshal([]byte(row.Checkpoint.text()), &cp) == nil && cp.Rows >= 0 && cp.Line >= 0 {
			b, _ := json.Marshal(cp)
			t.checkpoint = string(b)
		} else {
			d.notices = append(d.notices, fmt.Sprintf("task %d: checkpoint %s is not crmimport's {rows, line}: loaded as the start", t.id, row.Checkpoint.text()))
		}
	}
	d.tasks = append(d.tasks, t)
}

func (d *dump) addSlot(row slotRow, line int) {
	file := d.files[tableSlots]
	s := loadedSlot{line: line}
	var err error
	check := func(e error) bool {
		if e != nil && err == nil {
			err = e
		}
		return err == nil
	}
	s.key.Tenant, err = row.TenantID.required("tenant_id")
	if check(err) {
		s.key.Source, err = row.Source.required("source")
	}
	if check(err) {
		s.key.Kind, err = row.Kind.kind("kind")
	}
	if check(err) {
		s.key.SourceID, err = row.SourceID.required("source_id")
	}
	if check(err) {
		s.id, err = row.ID.int64("id", 0)
	}
	if check(err) {
		s.runID, err = row.MigrationID.nullInt64("migration_id")
	}
	var action string
	if check(err) {
		action, err = row.Action.oneOf("action", "slot action", actions...)
		s.action = ledger.Action(action)
	}
	if check(err) && s.action.Final() {
		s.recordID, err = row.RecordID.int64("record_id", 0)
	}
	if check(err) {
		s.created, err = row.CreatedAt.time("created_at")
	}
	if !check(err) {
		d.problem(file, line, err)
		return
	}
	s.reason, s.detail = row.Reason.nullText(), row.Detail.nullText()
	d.slots = append(d.slots, s)
}

// crossCheck finds what no single row shows: an id twice, a task of a run
// the dump does not hold, two running runs of one tenant.
func (d *dump) crossCheck() {
	runs := map[int64]int{}
	live := map[string]int64{}
	for _, r := range d.runs {
		if first, ok := runs[r.id]; ok {
			d.problem(d.files[tableRuns], r.line, fmt.Errorf("run id %d is already on line %d", r.id, first))
		}
		runs[r.id] = r.line
		if r.status == string(phases.RunRunning) {
			if other, ok := live[r.tenant]; ok {
				d.problem(d.files[tableRuns], r.line, fmt.Errorf("tenant %s has two running runs, %d and %d: at most one run of a tenant is live (R13)", r.tenant, other, r.id))
			}
			live[r.tenant] = r.id
		}
	}
	started := map[int64]string{}
	for _, r := range d.runs {
		started[r.id] = r.started
	}
	tasks := map[int64]int{}
	for i := range d.tasks {
		t := &d.tasks[i]
		if first, ok := tasks[t.id]; ok {
			d.problem(d.files[tableTasks], t.line, fmt.Errorf("task id %d is already on line %d", t.id, first))
		}
		tasks[t.id] = t.line
		if _, ok := runs[t.runID]; !ok {
			d.problem(d.files[tableTasks], t.line, fmt.Errorf("task %d belongs to run %d, which the dump's migrations do not hold", t.id, t.runID))
		}
		if t.at == "" {
			t.at = started[t.runID]
		}
	}
	keys := map[ledger.Key]int{}
	ids := map[int64]int{}
	missing := map[int64]bool{}
	for _, s := range d.slots {
		if first, ok := keys[s.key]; ok {
			d.problem(d.files[tableSlots], s.line, fmt.Errorf("the slot %s/%s %s is already on line %d (a slot is unique on tenant, source, kind and source_id)",
				s.key.Tenant, s.key.Source, s.key, first))
		}
		keys[s.key] = s.line
		if s.id > 0 {
			if first, ok := ids[s.id]; ok {
				d.problem(d.files[tableSlots], s.line, fmt.Errorf("slot id %d is already on line %d", s.id, first))
			}
			ids[s.id] = s.line
		}
		if id, ok := s.runID.(int64); ok {
			if _, held := runs[id]; !held {
				missing[id] = true
			}
		}
	}
	if len(missing) > 0 && len(d.runs) > 0 {
		d.notices = append(d.notices, fmt.Sprintf("slots name runs the dump's migrations do not hold: %s", idList(sortedIDs(missing))))
	}
}

// ConflictError refuses a load whose ids the database already holds: the
// dump's ids are kept, so they must be free here.
type ConflictError struct {
	Dump     string
	Runs     []int64
	Tasks    []int64
	Slots    []string // tenant/source kind source_id
	SlotIDs  []int64
	Rows     map[string][]int64 // table -> ids
	LiveRuns []string
}

func (e *ConflictError) Error() string {
	var parts []string
	if len(e.Runs) > 0 {
		parts = append(parts, plural(len(e.Runs), "run ", "runs ")+idList(e.Runs))
	}
	if len(e.Tasks) > 0 {
		parts = append(parts, plural(len(e.Tasks), "task ", "tasks ")+idList(e.Tasks))
	}
	if len(e.Slots) > 0 {
		parts = append(parts, plural(len(e.Slots), "the slot ", "the slots ")+nameList(e.Slots))
	}
	if len(e.SlotIDs) > 0 {
		parts = append(parts, plural(len(e.SlotIDs), "slot id ", "slot ids ")+idList(e.SlotIDs))
	}
	if len(e.Rows) > 0 {
		var tables []string
		n := 0
		for _, k := range ledger.Kinds() {
			if ids := e.Rows[k.Table()]; len(ids) > 0 {
				tables = append(tables, k.Table()+" "+idList(ids))
				n += len(ids)
			}
		}
		parts = append(parts, plural(n, "the target row ", "the target rows ")+strings.Join(tables, ", "))
	}
	msg := fmt.Sprintf("ledger load %s: refused, nothing was loaded: the database already holds %s", e.Dump, strings.Join(parts, "; "))
	if len(e.LiveRuns) > 0 {
		if len(parts) == 0 {
			msg = fmt.Sprintf("ledger load %s: refused, nothing was loaded", e.Dump)
		}
		msg += "; " + strings.Join(e.LiveRuns, "; ")
	}
	return msg + " — a dump keeps its ids: load it into a new file (--db other.db)"
}

func (e *ConflictError) any() bool {
	return len(e.Runs)+len(e.Tasks)+len(e.Slots)+len(e.SlotIDs)+len(e.Rows)+len(e.LiveRuns) > 0
}

// The statements of a load. Each inserts a row with the dump's id and does
// nothing where that id is taken, which the load then reports as a
// conflict (one changed row is a row loaded).

// insertDumpRunSQL: a loaded run has no owner here (a running one shows as
// interrupted, R13) and names its dump.
const insertDumpRunSQL = `
INSERT INTO migrations (id, tenant_id, source, status, current_phase, cancellation_requested, stats, options,
    started_at, finished_at, duration_ms, message, attempts, dump)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO NOTHING`

// insertDumpTaskSQL: a loaded task has no input file here (R10: resume
// --from plans one).
const insertDumpTaskSQL = `
INSERT INTO migration_tasks (id, migration_id, kind, phase, status, checkpoint, attempts, last_error,
    imported, matched, unchanged, skipped, failed, duplicate, unlinked, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO NOTHING`

// insertDumpSlotSQL restores a slot as production left it. It is not a
// claim (R1-R3 are the importer's): a slot already here is a conflict.
const insertDumpSlotSQL = `
INSERT INTO migration_records (tenant_id, source, kind, source_id, id, migration_id, record_type, record_id,
    action, reason, detail, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (tenant_id, source, kind, source_id) DO NOTHING`

const slotIDsSQL = `SELECT id FROM migration_records`

const nextSlotIDSQL = `SELECT next FROM slot_ids`

// bumpSlotIDsSQL: the ledger numbers new slots past every loaded one.
const bumpSlotIDsSQL = `UPDATE slot_ids SET next = max(next, ?)`

// placeholderSQL inserts the placeholder row of a created or matched slot
// whose row the dump does not carry, with the slot's record_id. Its one
// visible text says what it is; NOT NULL columns are filled by it.
var placeholderSQL = map[ledger.Kind]string{
	ledger.Company:  `INSERT INTO companies (id, tenant_id, name, extra, imported_at, from_dump) VALUES (?, ?, ?, ?, ?, 1) ON CONFLICT (id) DO NOTHING`,
	ledger.Contact:  `INSERT INTO contacts (id, tenant_id, last_name, extra, imported_at, from_dump) VALUES (?, ?, ?, ?, ?, 1) ON CONFLICT (id) DO NOTHING`,
	ledger.Deal:     `INSERT INTO deals (id, tenant_id, name, extra, imported_at, from_dump) VALUES (?, ?, ?, ?, ?, 1) ON CONFLICT (id) DO NOTHING`,
	ledger.Note:     `INSERT INTO notes (id, tenant_id, body, extra, imported_at, from_dump) VALUES (?, ?, ?, ?, ?, 1) ON CONFLICT (id) DO NOTHING`,
	ledger.Activity: `INSERT INTO activities (id, tenant_id, subject, extra, imported_at, from_dump) VALUES (?, ?, ?, ?, ?, 1) ON CONFLICT (id) DO NOTHING`,
	ledger.Email:    `INSERT INTO emails (id, tenant_id, subject, extra, imported_at, from_dump) VALUES (?, ?, ?, ?, ?, 1) ON CONFLICT (id) DO NOTHING`,
}

// maxRowIDSQL: a final slot without a record_id gets a placeholder row
// past every row of its table.
var maxRowIDSQL = map[ledger.Kind]string{
	ledger.Company:  `SELECT coalesce(max(id), 0) FROM companies`,
	ledger.Contact:  `SELECT coalesce(max(id), 0) FROM contacts`,
	ledger.Deal:     `SELECT coalesce(max(id), 0) FROM deals`,
	ledger.Note:     `SELECT coalesce(max(id), 0) FROM notes`,
	ledger.Activity: `SELECT coalesce(max(id), 0) FROM activities`,
	ledger.Email:    `SELECT coalesce(max(id), 0) FROM emails`,
}

const liveRunOfTenantSQL = `SELECT id FROM migrations WHERE tenant_id = ? AND status = 'running'`

// loadLogSQL: a loaded run's log says where it came from; its production
// log is not part of a dump.
const loadLogSQL = `INSERT INTO run_log (migration_id, at, level, message) VALUES (?, ?, 'notice', ?)`

// write inserts the dump in tx, or returns a *ConflictError naming every
// id the database already holds.
func (d *dump) write(ctx context.Context, tx *sql.Tx, now string) (*LoadSummary, error) {
	conflict := &ConflictError{Dump: d.dir}
	sum := &LoadSummary{Dump: d.dir, Slots: map[string]int{}, Placeholders: map[string]int{}, Notices: d.notices}
	for _, table := range []string{tableRuns, tableTasks, tableSlots} {
		if f := d.files[table]; f != "" {
			sum.Files = append(sum.Files, filepath.Base(f))
		}
	}
	tenants := map[string]bool{}
	for _, r := range d.runs {
		res, err := tx.ExecContext(ctx, insertDumpRunSQL, r.id, r.tenant, r.source, r.status, r.phase, boolInt(r.cancel),
			r.stats, r.options, r.started, r.finished, r.duration, r.message, r.attempts, r.dump)
		if store.IsUnique(err) {
			var live int64
			if qerr := tx.QueryRowContext(ctx, liveRunOfTenantSQL, r.tenant).Scan(&live); qerr != nil {
				return nil, errors.Join(err, qerr)
			}
			conflict.LiveRuns = append(conflict.LiveRuns, fmt.Sprintf("tenant %s already has a running run here (run %d), and the dump's run %d is running too (R13: one live run per tenant)", r.tenant, live, r.id))
			continue
		}
		if err := oneRow(res, err); errors.Is(err, errNoRow) {
			conflict.Runs = append(conflict.Runs, r.id)
			continue
		} else if err != nil {
			return nil, fmt.Errorf("load run %d: %w", r.id, err)
		}
		sum.Runs = append(sum.Runs, r.id)
		tenants[r.tenant] = true
		msg := fmt.Sprintf("run %d was loaded from the dump %s by `crmimport ledger load` as %s; its production log is not part of the dump, "+
			"and it has no input files here (`crmimport resume %d --from PATH` plans its unfinished tasks over a local export)",
			r.id, d.dir, r.status, r.id)
		if _, err := tx.ExecContext(ctx, loadLogSQL, r.id, now, msg); err != nil {
			return nil, fmt.Errorf("load run %d: log: %w", r.id, err)
		}
	}
	for _, t := range d.tasks {
		c := t.counts
		res, err := tx.ExecContext(ctx, insertDumpTaskSQL, t.id, t.runID, string(t.kind), t.phase, t.status, t.checkpoint,
			t.attempts, t.lastError, c[0], c[1], c[2], c[3], c[4], c[5], c[6], t.at)
		if err := oneRow(res, err); errors.Is(err, errNoRow) {
			conflict.Tasks = append(conflict.Tasks, t.id)
			continue
		} else if err != nil {
			return nil, fmt.Errorf("load task %d: %w", t.id, err)
		}
		sum.Tasks++
	}
	if err := d.numberSlots(ctx, tx, conflict); err != nil {
		return nil, err
	}
	rows, err := d.placeholders(ctx, tx)
	if err != nil {
		return nil, err
	}
	// A dump holds many slots and rows: one statement each, prepared once.
	slotStmt, err := tx.PrepareContext(ctx, insertDumpSlotSQL)
	if err != nil {
		return nil, fmt.Errorf("load slots: %w", err)
	}
	defer slotStmt.Close()
	rowStmts := map[ledger.Kind]*sql.Stmt{}
	for _, s := range d.slots {
		var recordType, recordID any
		if s.action.Final() {
			recordType, recordID = s.key.Kind.Table(), s.recordID
		}
		res, err := slotStmt.ExecContext(ctx, s.key.Tenant, s.key.Source, string(s.key.Kind), s.key.SourceID, s.id,
			s.runID, recordType, recordID, string(s.action), s.reason, s.detail, s.created)
		if err := oneRow(res, err); errors.Is(err, errNoRow) {
			conflict.Slots = append(conflict.Slots, fmt.Sprintf("%s/%s %s %s", s.key.Tenant, s.key.Source, s.key.Kind, s.key.SourceID))
			continue
		} else if err != nil {
			return nil, fmt.Errorf("load slot %s: %w", s.key, err)
		}
		sum.Slots[string(s.action)]++
		tenants[s.key.Tenant] = true
	}
	for _, p := range rows {
		extra, _ := json.Marshal(map[string]string{"loaded_from_dump": d.dir, "source": p.source, "source_id": p.sourceID})
		text := fmt.Sprintf("(loaded from a dump: %s %s)", p.kind, p.sourceID)
		st, ok := rowStmts[p.kind]
		if !ok {
			if st, err = tx.PrepareContext(ctx, placeholderSQL[p.kind]); err != nil {
				return nil, fmt.Errorf("load placeholders of %s: %w", p.kind.Table(), err)
			}
			defer st.Close()
			rowStmts[p.kind] = st
		}
		res, err := st.ExecContext(ctx, p.id, p.tenant, text, string(extra), now)
		if err := oneRow(res, err); errors.Is(err, errNoRow) {
			if conflict.Rows == nil {
				conflict.Rows = map[string][]int64{}
			}
			conflict.Rows[p.kind.Table()] = append(conflict.Rows[p.kind.Table()], p.id)
			continue
		} else if err != nil {
			return nil, fmt.Errorf("load placeholder %s %s: %w", p.kind, p.sourceID, err)
		}
		sum.Placeholders[p.kind.Table()]++
	}
	if conflict.any() {
		return nil, conflict
	}
	var maxID int64
	for _, s := range d.slots {
		maxID = max(maxID, s.id)
	}
	if _, err := tx.ExecContext(ctx, bumpSlotIDsSQL, maxID+1); err != nil {
		return nil, fmt.Errorf("load: number slots past %d: %w", maxID, err)
	}
	for t := range tenants {
		sum.Tenants = append(sum.Tenants, t)
	}
	sort.Strings(sum.Tenants)
	if sum.Notices == nil {
		sum.Notices = []string{}
	}
	return sum, nil
}

// numberSlots gives the slots without an id one past the ledger's and the
// dump's, and finds the dump's slot ids that the ledger already uses.
func (d *dump) numberSlots(ctx context.Context, tx *sql.Tx, conflict *ConflictError) error {
	taken := map[int64]bool{}
	rows, err := tx.QueryContext(ctx, slotIDsSQL)
	if err != nil {
		return fmt.Errorf("load: read slot ids: %w", err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		taken[id] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	var next int64
	if err := tx.QueryRowContext(ctx, nextSlotIDSQL).Scan(&next); err != nil {
		return fmt.Errorf("load: next slot id: %w", err)
	}
	for _, s := range d.slots {
		next = max(next, s.id+1)
		if s.id > 0 && taken[s.id] {
			conflict.SlotIDs = append(conflict.SlotIDs, s.id)
		}
	}
	for i := range d.slots {
		if d.slots[i].id == 0 {
			d.slots[i].id = next
			next++
		}
	}
	return nil
}

// placeholder is one target row that stands for a row of production.
type placeholder struct {
	kind     ledger.Kind
	id       int64
	tenant   string
	source   string
	sourceID string
	line     int
}

// placeholders decides the placeholder rows: one per (table, record_id)
// that created or matched slots name (two sources may match one row), and
// a new id, past the table's and the dump's, for a final slot that names
// none.
func (d *dump) placeholders(ctx context.Context, tx *sql.Tx) ([]placeholder, error) {
	type rowKey struct {
		kind ledger.Kind
		id   int64
	}
	dumpMax := map[ledger.Kind]int64{}
	for _, s := range d.slots {
		if s.action.Final() {
			dumpMax[s.key.Kind] = max(dumpMax[s.key.Kind], s.recordID)
		}
	}
	next := map[ledger.Kind]int64{} // the last id given to a slot without one
	seen := map[rowKey]int{}
	var out []placeholder
	for i := range d.slots {
		s := &d.slots[i]
		if !s.action.Final() {
			continue
		}
		if s.recordID == 0 {
			if _, ok := next[s.key.Kind]; !ok {
				var m int64
				if err := tx.QueryRowContext(ctx, maxRowIDSQL[s.key.Kind]).Scan(&m); err != nil {
					return nil, fmt.Errorf("load: next %s id: %w", s.key.Kind, err)
				}
				next[s.key.Kind] = max(m, dumpMax[s.key.Kind])
			}
			next[s.key.Kind]++
			s.recordID = next[s.key.Kind]
		}
		k := rowKey{s.key.Kind, s.recordID}
		if j, ok := seen[k]; ok {
			if out[j].tenant != s.key.Tenant {
				return nil, &DumpError{File: filepath.Base(d.files[tableSlots]), Line: s.line, Msg: fmt.Sprintf(
					"%s %s of tenant %s names %s row %d, which line %d gives to tenant %s: a row belongs to one tenant",
					s.key.Kind, s.key.SourceID, s.key.Tenant, s.key.Kind.Table(), s.recordID, out[j].line, out[j].tenant)}
			}
			continue
		}
		seen[k] = len(out)
		out = append(out, placeholder{kind: s.key.Kind, id: s.recordID, tenant: s.key.Tenant, source: s.key.Source,
			sourceID: s.key.SourceID, line: s.line})
	}
	return out, nil
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

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func sortedIDs(m map[int64]bool) []int64 {
	out := make([]int64, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// idList writes ids compactly: 1–4, 7, 9 (and at most a dozen spans).
func idList(ids []int64) string {
	s := append([]int64(nil), ids...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	var parts []string
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] <= s[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d–%d", s[i], s[j]))
		} else {
			parts = append(parts, fmt.Sprint(s[i]))
		}
		i = j + 1
	}
	if len(parts) > 12 {
		return strings.Join(parts[:12], ", ") + fmt.Sprintf(" (and %d more spans)", len(parts)-12)
	}
	return strings.Join(parts, ", ")
}

// nameList writes names, at most eight.
func nameList(names []string) string {
	if len(names) > 8 {
		return strings.Join(names[:8], ", ") + fmt.Sprintf(" (and %d more)", len(names)-8)
	}
	return strings.Join(names, ", ")
}

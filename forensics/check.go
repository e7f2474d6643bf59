package forensics

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"crmimport/ledger"
	"crmimport/phases"
)

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

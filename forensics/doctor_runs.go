package forensics

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store"
)

// strandedSQL: R7, a run works only on tasks of its current phase and the
// barrier only moves forward, so a pending or running task below it is
// never picked up — incident two of the write-up, where a retry re-armed
// failed contacts under a barrier already at phase 5 (R8 rewinds it).
const strandedSQL = `
SELECT m.id, m.tenant_id, m.source, m.status, m.current_phase, t.id, t.kind, t.phase, t.status
FROM migration_tasks t JOIN migrations m ON m.id = t.migration_id
WHERE t.status IN ('pending', 'running') AND t.phase < m.current_phase AND (?1 = '' OR m.tenant_id = ?1)
ORDER BY m.tenant_id, m.id, t.phase, t.id`

func (d *doctor) stranded() error {
	type run struct {
		id             int64
		tenant, source string
		status         phases.RunStatus
		phase          int
		tasks          []string
		kinds          []ledger.Kind
	}
	var runs []*run
	err := d.each(strandedSQL, []any{d.opts.Tenant}, func(s store.Scanner) error {
		var r run
		var taskID int64
		var kind ledger.Kind
		var phase int
		var status string
		if err := s.Scan(&r.id, &r.tenant, &r.source, &r.status, &r.phase, &taskID, &kind, &phase, &status); err != nil {
			return err
		}
		if len(runs) == 0 || runs[len(runs)-1].id != r.id {
			runs = append(runs, &r)
		}
		last := runs[len(runs)-1]
		last.tasks = append(last.tasks, fmt.Sprintf("%s task %d is %s in phase %d", kind.Plural(), taskID, status, phase))
		last.kinds = append(last.kinds, kind)
		f := d.finding(StrandedWork, r.tenant)
		f.Count++
		f.example(fmt.Sprintf("task %d", taskID))
		return nil
	})
	if err != nil {
		return fmt.Errorf("doctor: stranded work: %w", err)
	}
	for _, r := range runs {
		f := d.finding(StrandedWork, r.tenant)
		f.runs[r.id] = true
		f.Details = append(f.Details, fmt.Sprintf("run %d (%s) is at phase %d, but its %s", r.id, r.status, r.phase,
			strings.Join(r.tasks, "; ")))
		if cmd, note := d.resumeCommand(r.id, r.status, r.kinds); cmd != "" {
			f.repair(cmd, joinNotes(note, "R8: resume rewinds the barrier to the earliest queued phase"))
		} else {
			cmd, note := d.runCommand(r.tenant, r.source, r.kinds)
			f.repair(cmd, note+"; a succeeded run is not resumed, and a new run is safe")
		}
	}
	return nil
}

// kindPhase is phases.Phase in SQL: the phase of task t's kind in
// crmimport's plan, from the table of kinds (canon.Table.PhaseCase).
var kindPhase = canon.KindTable().PhaseCase("t.kind")

// misphasedSQL: R7, tasks whose phase is not their kind's in crmimport's
// plan, which a plan made here never has: a dump's production engine put
// them there.
var misphasedSQL = `
SELECT m.id, m.tenant_id, m.source, m.status, t.id, t.kind, t.phase, t.status, ` + kindPhase + `
FROM migration_tasks t JOIN migrations m ON m.id = t.migration_id
WHERE t.phase <> ` + kindPhase + ` AND (?1 = '' OR m.tenant_id = ?1)
  AND m.undoes IS NULL -- an undo's phases go children first (R16)
ORDER BY m.tenant_id, m.id, t.id`

// misphased: R7, tasks in another phase than their kind's. An unfinished
// one is re-armed in its kind's phase by resume (--from for a loaded run);
// a finished one has run in production's order, and what it left is in
// the ledger.
func (d *doctor) misphased() error {
	type run struct {
		id             int64
		tenant, source string
		status         phases.RunStatus
		tasks          []string
		unfinished     []ledger.Kind
	}
	var runs []*run
	err := d.each(misphasedSQL, []any{d.opts.Tenant}, func(s store.Scanner) error {
		var r run
		var taskID int64
		var kind ledger.Kind
		var phase, want int
		var status phases.TaskStatus
		if err := s.Scan(&r.id, &r.tenant, &r.source, &r.status, &taskID, &kind, &phase, &status, &want); err != nil {
			return err
		}
		if len(runs) == 0 || runs[len(runs)-1].id != r.id {
			runs = append(runs, &r)
		}
		last := runs[len(runs)-1]
		last.tasks = append(last.tasks, fmt.Sprintf("%s task %d (%s) is in phase %d, its kind's is %d", kind.Plural(), taskID, status, phase, want))
		if status != phases.TaskSucceeded {
			last.unfinished = append(last.unfinished, kind)
		}
		f := d.finding(MisphasedTasks, r.tenant)
		f.Count++
		f.example(fmt.Sprintf("task %d", taskID))
		return nil
	})
	if err != nil {
		return fmt.Errorf("doctor: misphased tasks: %w", err)
	}
	for _, r := range runs {
		f := d.finding(MisphasedTasks, r.tenant)
		f.runs[r.id] = true
		f.Details = append(f.Details, fmt.Sprintf("run %d (%s): its %s", r.id, r.status, strings.Join(r.tasks, "; ")))
		if len(r.unfinished) > 0 {
			// The resume reads every kind the run has left to do.
			tasks, err := phases.LoadTasks(d.ctx, d.db, r.id)
			if err != nil {
				return err
			}
			var left []ledger.Kind
			for _, t := range tasks {
				if t.Status != phases.TaskSucceeded {
					left = append(left, t.Kind)
				}
			}
			if cmd, note := d.resumeCommand(r.id, r.status, left); cmd != "" {
				if note != "" {
					note += "; "
				}
				f.repair(cmd, note+"R7: resume re-arms each unfinished task in its kind's phase, parents first")
				continue
			}
		}
		f.repair(d.crmimport("ledger", "why", "--tenant", r.tenant, "--run", strconv.FormatInt(r.id, 10)), fmt.Sprintf(
			"nothing to re-run for run %d: its tasks finished in production's order; what they left is in the ledger, "+
				"and a record imported before its parent kept its link empty (R6: counted unlinked)", r.id))
	}
	return nil
}

// failedRecordsSQL: R4, the records a run failed, as this database keeps
// them (a loaded run's are in its stats and task counters).
const failedRecordsSQL = `SELECT count(*) FROM record_failures WHERE migration_id = ?`

// falseSuccess: R9, no terminal status while work is queued (tasks of the
// current phase or later: those below it are stranded work), and no
// success over a failed task or a failed record.
func (d *doctor) falseSuccess() error {
	runs, err := phases.ListRuns(d.ctx, d.db, d.opts.Tenant)
	if err != nil {
		return err
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].ID < runs[j].ID })
	for _, r := range runs {
		if r.Status == phases.RunRunning {
			continue
		}
		tasks, err := phases.LoadTasks(d.ctx, d.db, r.ID)
		if err != nil {
			return err
		}
		t, err := d.troubleOf(r, tasks)
		if err != nil {
			return err
		}
		lines := t.lines(r)
		if len(lines) == 0 {
			continue
		}
		f := d.finding(FalseSuccess, r.Tenant)
		f.Count++
		f.runs[r.ID] = true
		f.example(fmt.Sprintf("run %d", r.ID))
		f.Details = append(f.Details, lines...)
		kinds := append(t.queuedKinds, t.failedKinds...)
		for _, task := range tasks {
			if task.Status == phases.TaskPending || task.Status == phases.TaskRunning {
				kinds = append(kinds, task.Kind)
			}
		}
		if cmd, note := d.resumeCommand(r.ID, r.Status, kinds); cmd != "" {
			f.repair(cmd, note)
		} else {
			cmd, note := d.runCommand(r.Tenant, r.Source, kinds)
			f.repair(cmd, note+"; a succeeded run is not resumed, and a new run is safe")
		}
	}
	return nil
}

// runTrouble is what a terminal run's tasks, stats and failed records
// say against its status (R9).
type runTrouble struct {
	queued, failedTasks      []string      // the tasks, as the finding names them
	queuedKinds, failedKinds []ledger.Kind // what a repair runs again
	failedRecords            int64         // the most of the stats, the task counters and the records kept
	byKind                   []string      // the stats' failed records per kind
}

// troubleOf reads what a terminal run r and its tasks say against its
// status: tasks still queued (of the current phase or later), failed
// tasks, and failed records.
func (d *doctor) troubleOf(r phases.Run, tasks []phases.Task) (runTrouble, error) {
	var t runTrouble
	var taskFailed int64
	for _, task := range tasks {
		taskFailed += task.Counts.Failed
		switch {
		case (task.Status == phases.TaskPending || task.Status == phases.TaskRunning) && task.Phase >= r.CurrentPhase:
			t.queued = append(t.queued, fmt.Sprintf("%s task %d (%s)", task.Kind.Plural(), task.ID, task.Status))
			t.queuedKinds = append(t.queuedKinds, task.Kind)
		case task.Status == phases.TaskFailed:
			what := fmt.Sprintf("%s task %d", task.Kind.Plural(), task.ID)
			if task.LastError != "" {
				what += fmt.Sprintf(" (%s)", task.LastError)
			}
			t.failedTasks = append(t.failedTasks, what)
			t.failedKinds = append(t.failedKinds, task.Kind)
		}
	}
	var statsFailed int64
	for _, k := range canon.Kinds() {
		if c := r.Stats[k]; c.Failed > 0 {
			statsFailed += c.Failed
			t.byKind = append(t.byKind, fmt.Sprintf("%d %s", c.Failed, k.Plural()))
			t.failedKinds = append(t.failedKinds, k)
		}
	}
	var rejected int64
	if err := d.db.QueryRowContext(d.ctx, failedRecordsSQL, r.ID).Scan(&rejected); err != nil {
		return t, fmt.Errorf("doctor: failed records of run %d: %w", r.ID, err)
	}
	t.failedRecords = max(statsFailed, taskFailed, rejected)
	return t, nil
}

// lines are the finding's details of run r: none when its status holds.
func (t runTrouble) lines(r phases.Run) []string {
	var lines []string
	if len(t.queued) > 0 {
		lines = append(lines, fmt.Sprintf("run %d ended %s with work still queued: %s", r.ID, r.Status, strings.Join(t.queued, ", ")))
	}
	if r.Status == phases.RunSucceeded && len(t.failedTasks) > 0 {
		lines = append(lines, fmt.Sprintf("run %d is succeeded, but its %s failed", r.ID, strings.Join(t.failedTasks, ", ")))
	}
	if r.Status == phases.RunSucceeded && t.failedRecords > 0 {
		s := fmt.Sprintf("run %d is succeeded over %d failed records", r.ID, t.failedRecords)
		if len(t.byKind) > 0 {
			s += " (" + strings.Join(t.byKind, ", ") + ")"
		}
		lines = append(lines, s)
	}
	return lines
}

// unfinalized: R15, finalized or visibly not: a terminal run without
// duration_ms (the four green Mondays of write-up 004), or a running run
// whose process is gone (interrupted; a run loaded from a dump has no
// owner here).
func (d *doctor) unfinalized() error {
	runs, err := phases.ListRuns(d.ctx, d.db, d.opts.Tenant)
	if err != nil {
		return err
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].ID < runs[j].ID })
	for _, r := range runs {
		id := strconv.FormatInt(r.ID, 10)
		var line string
		var repairs [][2]string // command, note
		switch {
		case r.Status == phases.RunRunning && d.engine.Interrupted(r):
			line = fmt.Sprintf("run %d is running, but no process owns it: interrupted at phase %d", r.ID, r.CurrentPhase)
			if _, ok := d.loaded[r.ID]; ok {
				if d.opts.asIs {
					line += " (it is running in the ledger as read: whether production's engine still runs it cannot be told from the ledger)"
				} else {
					line += " (it was running when the dump was taken)"
				}
				tasks, err := phases.LoadTasks(d.ctx, d.db, r.ID)
				if err != nil {
					return err
				}
				var kinds []ledger.Kind
				for _, t := range tasks {
					if t.Status != phases.TaskSucceeded {
						kinds = append(kinds, t.Kind)
					}
				}
				cmd, note := d.resumeCommand(r.ID, r.Status, kinds)
				repairs = append(repairs, [2]string{cmd, note})
			} else {
				cmd := d.crmimport("resume", id)
				d.acts[cmd] = Action{Do: DoResume, Run: r.ID}
				repairs = append(repairs, [2]string{cmd, "continues it"})
			}
			repairs = append(repairs, [2]string{d.crmimport("stop", id), "or cancels it"})
		case r.Status != phases.RunRunning && r.DurationMS == nil:
			line = fmt.Sprintf("run %d ended %s without duration_ms", r.ID, r.Status)
			repairs = append(repairs, [2]string{d.crmimport("report", id),
				fmt.Sprintf("nothing estimates a lost duration (R15): record run %d as a gap, as its report shows it", r.ID)})
		default:
			continue
		}
		f := d.finding(Unfinalized, r.Tenant)
		f.Count++
		f.runs[r.ID] = true
		f.example(fmt.Sprintf("run %d", r.ID))
		f.Details = append(f.Details, line)
		for _, rp := range repairs {
			f.repair(rp[0], rp[1])
		}
	}
	return nil
}

// joinNotes joins the notes of a repair that are not empty.
func joinNotes(notes ...string) string {
	var out []string
	for _, n := range notes {
		if n != "" {
			out = append(out, n)
		}
	}
	return strings.Join(out, "; ")
}

// incidents names the write-up's incidents in a diagnosis: the poisoned
// ledger is stale skips whose parents have arrived since (records blocked
// by a verdict that was only a placeholder; uniform skips come with it);
// the stranded retry is one run with work
// stranded behind its barrier that was finalized as if it had none.
func incidents(fs []Finding) []Incident {
	byTenant := map[string]map[string]*Finding{}
	var tenants []string
	for i := range fs {
		f := &fs[i]
		if byTenant[f.Tenant] == nil {
			byTenant[f.Tenant] = map[string]*Finding{}
			tenants = append(tenants, f.Tenant)
		}
		byTenant[f.Tenant][f.Name] = f
	}
	out := []Incident{}
	for _, t := range tenants {
		m := byTenant[t]
		if stale, ready := m[StaleSkips], m[ReadyToTakeOver]; stale != nil && ready != nil {
			inc := Incident{Name: PoisonedLedger, Tenant: t, Findings: []string{StaleSkips, ReadyToTakeOver}, Runs: sortedIDs(stale.runs)}
			if m[UniformSkip] != nil {
				inc.Findings = append([]string{UniformSkip}, inc.Findings...)
			}
			inc.Summary = fmt.Sprintf("the poisoned ledger (write-up 000_724f8abccd17c4ae, incident one): %d records were skipped "+
				"while their parents were missing, and a later run read those skips as verdicts, so they still carry an older "+
				"run's reason and id; %d of them could be imported now. A skip is a placeholder, not a verdict (R3): a run of "+
				"their kinds takes them over", stale.Count, ready.Count)
			out = append(out, inc)
		}
		if st, fsx := m[StrandedWork], m[FalseSuccess]; st != nil && fsx != nil {
			var both []int64
			for id := range st.runs {
				if fsx.runs[id] {
					both = append(both, id)
				}
			}
			if len(both) > 0 {
				sort.Slice(both, func(i, j int) bool { return both[i] < both[j] })
				out = append(out, Incident{Name: StrandedRetry, Tenant: t, Findings: []string{StrandedWork, FalseSuccess}, Runs: both,
					Summary: fmt.Sprintf("the stranded retry (write-up 000_724f8abccd17c4ae, incident two): run %s re-armed work in a phase "+
						"below its barrier, which never came back for it, and was finalized over it as if nothing were queued; "+
						"resume rewinds the barrier to where the work is (R8) and finalize refuses while work is queued (R9)",
						idList(both))})
			}
		}
	}
	return out
}

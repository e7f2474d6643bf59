package forensics

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"crmimport/canon"
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

// maxProblems is how many bad rows a refused load names.
const maxProblems = 20

// problems are the bad rows of a dump: the first maxProblems of them.
type problems []error

func (p *problems) add(file string, line int, err error) {
	if len(*p) < maxProblems {
		*p = append(*p, &DumpError{File: filepath.Base(file), Line: line, Msg: err.Error()})
	}
}

var runStatuses = []string{string(phases.RunRunning), string(phases.RunSucceeded), string(phases.RunPartial),
	string(phases.RunFailed), string(phases.RunCancelled)}

var taskStatuses = []string{string(phases.TaskPending), string(phases.TaskRunning), string(phases.TaskSucceeded),
	string(phases.TaskFailed), string(phases.TaskCancelled)}

var actions = []string{string(ledger.Created), string(ledger.Matched), string(ledger.Skipped)}

// checkRun reads a row of migrations in the database's terms, or says
// what is wrong with it. Its notices go to notice.
func checkRun(row runRow, line int, dump string, notice func(string)) (loadedRun, error) {
	r := loadedRun{line: line, dump: dump}
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
		return r, err
	}
	r.message = row.Message.nullText()
	r.stats, r.counts = normaliseStats(r.id, row.Stats, notice)
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
	return r, nil
}

// normaliseStats keeps a run's stats rollup when it reads as crmimport's
// (per kind the outcome counters), with plural kinds made singular; other
// shapes are dropped with a notice, and reports then sum the tasks.
func normaliseStats(runID int64, c Cell, notice func(string)) (any, map[ledger.Kind]phases.Counts) {
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
		kind, kerr := canon.ParseKind(k)
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
		notice(fmt.Sprintf("run %d: its stats are not crmimport's per-kind counters (%v): dropped, reports sum its tasks instead", runID, err))
		return nil, nil
	}
	b, _ := json.Marshal(out)
	return string(b), out
}

// checkTask reads a row of migration_tasks, or says what is wrong with it.
func checkTask(row taskRow, line int, notice func(string)) (loadedTask, error) {
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
		return t, err
	}
	t.lastError = row.LastError.nullText()
	t.checkpoint = `{"rows":0,"line":0}`
	if !row.Checkpoint.null() {
		var cp phases.Checkpoint
		if json.Unmarshal([]byte(row.Checkpoint.text()), &cp) == nil && cp.Rows >= 0 && cp.Line >= 0 {
			b, _ := json.Marshal(cp)
			t.checkpoint = string(b)
		} else {
			notice(fmt.Sprintf("task %d: checkpoint %s is not crmimport's {rows, line}: loaded as the start", t.id, row.Checkpoint.text()))
		}
	}
	return t, nil
}

// checkSlot reads a row of migration_records, or says what is wrong with
// it.
func checkSlot(row slotRow, line int) (loadedSlot, error) {
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
		return s, err
	}
	s.reason, s.detail = row.Reason.nullText(), row.Detail.nullText()
	return s, nil
}

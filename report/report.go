package report

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"time"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store"
	"crmimport/undo"
)

// Reason is a skip or failure reason with how many records gave it.
type Reason struct {
	Reason   string   `json:"reason"`
	Count    int64    `json:"count"`
	Examples []string `json:"examples"` // a few source ids that gave it
}

// maxReasonExamples is how many example ids a reason keeps.
const maxReasonExamples = 3

// Kind is one kind's part of a run.
type Kind struct {
	Kind ledger.Kind
	phases.Counts
	Skips    []Reason // this run's skipped slots by reason, most first
	Failures []Reason // this run's record failures by reason class, most first
	// FailedRows is how many of the kind's failed records have their row
	// here (record_failures, R4): all of them for a run of this database;
	// for a run loaded from a dump, which carries no failed rows, only
	// those that failed again here (dump.go).
	FailedRows int64
	// UniformSkip is the one reason every record of the kind was skipped
	// for (R9), or "".
	UniformSkip string
}

// Report is everything known about one run.
type Report struct {
	Run         phases.Run
	Interrupted bool
	Tasks       []phases.Task
	Kinds       []Kind // in plan order
	Total       phases.Counts
	FailedRows  int64 // the failed records whose row is here (Kind.FailedRows)
	Strict      bool
	// DryRun is the database a dry run left untouched, "" for a real run:
	// the run itself is in a throwaway copy, so nothing said names it.
	DryRun string
	Log    []LogEntry
	Dump   string // the dump the run was loaded from, or "" (dump.go)
	// TakenBack is what undos under --cascade took back of the run's
	// records (R16): the run keeps its status and counts, and says so.
	TakenBack []undo.Part
	// Changes are what the run found changed at the source, per kind in
	// plan order (R17, changes.go); nil when it found nothing.
	Changes []KindChanges
	// Lookalikes say, per task of a kind whose id is made of columns, how
	// many records no longer in the export look like new ones in it, with
	// examples (SPEC §4; lookalikes.go): nil for none.
	Lookalikes []string
	// Now is the instant the report was read at (the engine's clock): the
	// tasks' rates and time left are as of then (progress.go).
	Now time.Time
}

// LogEntry is a line of the run log.
type LogEntry struct {
	At      string `json:"at"`
	Level   string `json:"level"`
	Message string `json:"message"`
}

// Build reads a run's report.
func Build(ctx context.Context, db *sql.DB, e *phases.Engine, runID int64, withLog bool) (*Report, error) {
	run, err := phases.LoadRun(ctx, db, runID)
	if err != nil {
		return nil, err
	}
	tasks, err := phases.LoadTasks(ctx, db, runID)
	if err != nil {
		return nil, err
	}
	r := &Report{Run: run, Interrupted: e.Interrupted(run), Tasks: tasks, Now: e.Now()}
	if r.Dump, err = phases.LoadedFrom(ctx, db, runID); err != nil {
		return nil, err
	}
	if r.TakenBack, err = undo.TakenBack(ctx, db, run); err != nil {
		return nil, err
	}
	stats := run.Stats
	if run.Status == phases.RunRunning || stats == nil {
		// not finalized: what the tasks hold now
		if stats, err = phases.RollupRun(ctx, db, runID, tasks); err != nil {
			return nil, err
		}
	}
	kinds := map[ledger.Kind]*Kind{}
	for _, k := range canon.Kinds() {
		c, ok := stats[k]
		if !ok {
			continue
		}
		kinds[k] = &Kind{Kind: k, Counts: c}
		r.Total.Add(c)
	}
	if err := readSkips(ctx, db, runID, kinds); err != nil {
		return nil, err
	}
	if r.FailedRows, err = readFailures(ctx, db, runID, kinds); err != nil {
		return nil, err
	}
	for _, k := range canon.Kinds() {
		kr, ok := kinds[k]
		if !ok {
			continue
		}
		// R9: every record of the kind skipped, for one and the same reason.
		if kr.Total() > 0 && kr.Skipped == kr.Total() && len(kr.Skips) == 1 {
			kr.UniformSkip = kr.Skips[0].Reason
		}
		r.Kinds = append(r.Kinds, *kr)
	}
	order := make([]ledger.Kind, len(r.Kinds))
	for i, k := range r.Kinds {
		order[i] = k.Kind
	}
	if r.Changes, err = readChanges(ctx, db, runID, order); err != nil {
		return nil, err
	}
	if r.Lookalikes, err = readLookalikes(ctx, db, runID); err != nil {
		return nil, err
	}
	if withLog {
		if r.Log, err = readLog(ctx, db, runID); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// skipsSQL: the skips this run left in the ledger. A skip slot always
// carries its latest attempt (R3), so a later run that takes it over takes
// it from this report too; the counts above stay what the run saw. The
// subquery has a name (s), which PostgreSQL requires of one in FROM.
const skipsSQL = `
SELECT kind, reason, n, source_id FROM (
    SELECT kind, coalesce(reason, '') AS reason, source_id,
           count(*) OVER w AS n, row_number() OVER (PARTITION BY kind, reason ORDER BY source_id) AS i
    FROM migration_records WHERE migration_id = ? AND action = 'skipped'
    WINDOW w AS (PARTITION BY kind, reason)) AS s
WHERE i <= 3
ORDER BY kind, reason, source_id`

// List reads the report of every run of tenant ("" for all), newest
// first, without their logs: what `runs` shows.
func List(ctx context.Context, db *sql.DB, e *phases.Engine, tenant string) ([]*Report, error) {
	runs, err := phases.ListRuns(ctx, db, tenant)
	if err != nil {
		return nil, err
	}
	out := make([]*Report, 0, len(runs))
	for _, r := range runs {
		rep, err := Build(ctx, db, e, r.ID, false)
		if err != nil {
			return nil, err
		}
		out = append(out, rep)
	}
	return out, nil
}

func readSkips(ctx context.Context, db *sql.DB, runID int64, kinds map[ledger.Kind]*Kind) error {
	rows, err := db.QueryContext(ctx, skipsSQL, runID)
	if err != nil {
		return fmt.Errorf("read skip reasons: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k, reason, id string
		var n int64
		if err := rows.Scan(&k, &reason, &n, &id); err != nil {
			return err
		}
		kr, ok := kinds[ledger.Kind(k)]
		if !ok {
			continue
		}
		if last := len(kr.Skips) - 1; last >= 0 && kr.Skips[last].Reason == reason {
			kr.Skips[last].Examples = append(kr.Skips[last].Examples, id)
			continue
		}
		kr.Skips = append(kr.Skips, Reason{Reason: reason, Count: n, Examples: []string{id}})
	}
	for _, kr := range kinds {
		sortReasons(kr.Skips)
	}
	return rows.Err()
}

const failuresSQL = `
SELECT kind, reason, count(*), coalesce(min(source_id), '') FROM record_failures WHERE migration_id = ? GROUP BY kind, reason`

// readFailures reads the run's failed rows by kind and reason class into
// kinds, and returns how many there are.
func readFailures(ctx context.Context, db *sql.DB, runID int64, kinds map[ledger.Kind]*Kind) (total int64, err error) {
	rows, err := db.QueryContext(ctx, failuresSQL, runID)
	if err != nil {
		return 0, fmt.Errorf("read failure reasons: %w", err)
	}
	defer rows.Close()
	classes := map[ledger.Kind]map[string]*Reason{}
	for rows.Next() {
		var k, reason, id string
		var n int64
		if err := rows.Scan(&k, &reason, &n, &id); err != nil {
			return 0, err
		}
		total += n
		kind := ledger.Kind(k)
		if kr, ok := kinds[kind]; ok {
			kr.FailedRows += n
		}
		if classes[kind] == nil {
			classes[kind] = map[string]*Reason{}
		}
		c := store.ReasonClass(reason)
		r := classes[kind][c]
		if r == nil {
			r = &Reason{Reason: c, Examples: []string{}}
			classes[kind][c] = r
		}
		r.Count += n
		if id != "" && len(r.Examples) < maxReasonExamples {
			r.Examples = append(r.Examples, id)
		}
	}
	for k, m := range classes {
		kr, ok := kinds[k]
		if !ok {
			continue
		}
		for _, r := range m {
			sort.Strings(r.Examples)
			kr.Failures = append(kr.Failures, *r)
		}
		sortReasons(kr.Failures)
	}
	return total, rows.Err()
}

func sortReasons(rs []Reason) {
	sort.Slice(rs, func(i, j int) bool {
		if rs[i].Count != rs[j].Count {
			return rs[i].Count > rs[j].Count
		}
		return rs[i].Reason < rs[j].Reason
	})
}

const logSQL = `SELECT at, level, message FROM run_log WHERE migration_id = ? ORDER BY id`

func readLog(ctx context.Context, db *sql.DB, runID int64) ([]LogEntry, error) {
	rows, err := db.QueryContext(ctx, logSQL, runID)
	if err != nil {
		return nil, fmt.Errorf("read run log: %w", err)
	}
	defer rows.Close()
	var out []LogEntry
	for rows.Next() {
		var l LogEntry
		if err := rows.Scan(&l.At, &l.Level, &l.Message); err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// UndoWord says what a run has to do with undo (R16): "undone by run 9",
// "undo of run 7", "partly undone by run 9 (cascade of run 5): 12
// contacts" (PartlyWord), or "".
func (r *Report) UndoWord() string {
	var words []string
	switch {
	case r.Run.UndoneBy != 0:
		words = append(words, fmt.Sprintf("undone by run %d", r.Run.UndoneBy))
	case r.Run.Undoes != 0:
		words = append(words, fmt.Sprintf("undo of run %d", r.Run.Undoes))
	}
	if p := r.PartlyWord(); p != "" {
		words = append(words, p)
	}
	return strings.Join(words, "; ")
}

// PartlyWord says what undos under --cascade took back of the run's
// records: "partly undone by run 9 (cascade of run 5): 12 contacts, 3
// notes", a clause per undo; "" for none.
func (r *Report) PartlyWord() string {
	var clauses []string
	for _, u := range r.Partly() {
		clauses = append(clauses, fmt.Sprintf("partly undone by run %d (cascade of run %d): %s", u.Undo, u.Undoes, u.What))
	}
	return strings.Join(clauses, "; ")
}

// Partly is what one undo under --cascade took back of a run's records.
type Partly struct {
	Undo, Undoes int64
	What         string   // "12 contacts, 3 notes"
	Count        int64    // records
	parts        []string // What's parts, for a sentence
}

// Partly is TakenBack per undo, in its order.
func (r *Report) Partly() []Partly {
	var out []Partly
	for _, p := range r.TakenBack {
		if len(out) == 0 || out[len(out)-1].Undo != p.Undo {
			out = append(out, Partly{Undo: p.Undo, Undoes: p.Undoes})
		}
		k := ledger.Kind(p.Kind)
		word := k.Plural()
		if p.Count == 1 {
			word = string(k)
		}
		last := &out[len(out)-1]
		last.parts = append(last.parts, Count(p.Count)+" "+word)
		last.What = strings.Join(last.parts, ", ")
		last.Count += p.Count
	}
	return out
}

// PartlyCount is how many of the run's records undos under --cascade took
// back.
func (r *Report) PartlyCount() int64 {
	var n int64
	for _, p := range r.TakenBack {
		n += p.Count
	}
	return n
}

// StatusWord is the status as shown: an interrupted run says so.
func (r *Report) StatusWord() string {
	if r.Interrupted {
		return "interrupted"
	}
	return string(r.Run.Status)
}

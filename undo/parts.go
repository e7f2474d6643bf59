package undo

import (
	"context"
	"fmt"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/phases"
)

// An undo under --cascade takes back records of other runs, not whole runs
// (R16, SPEC §10): those runs keep their status and counts — what they did
// — and are marked with what was taken back of them, so that no page says
// "succeeded, 40 imported" of a run whose records are partly gone.

// Part is what one undo under --cascade took back of another run's
// records, for one kind, as far as the undo went.
type Part struct {
	Undo   int64  `json:"undo"`   // the undo
	Undoes int64  `json:"undoes"` // the run it undoes
	Kind   string `json:"kind"`
	Count  int64  `json:"count"` // records taken back
}

// Taken is, in an undo's options, how many records of one kind of another
// run its plan takes back under --cascade (from its dependents): what
// TakenBack reads instead of the undo's items.
type Taken struct {
	Run   int64  `json:"run"`
	Kind  string `json:"kind"`
	Count int64  `json:"count"`
}

// taken sums the plan's dependents per run and kind.
func taken(deps []Dependent) []Taken {
	var out []Taken
	at := map[[2]string]int{}
	for _, d := range deps {
		if d.How == "updates" {
			continue // rows given their values back, not records taken back
		}
		key := [2]string{fmt.Sprint(d.Run), d.Kind}
		i, ok := at[key]
		if !ok {
			i = len(out)
			at[key] = i
			out = append(out, Taken{Run: d.Run, Kind: d.Kind})
		}
		out[i].Count += int64(d.Count)
	}
	return out
}

// undosAfterSQL lists the undos of a tenant planned after a run, but its
// own: those that may have taken records of it back under --cascade.
const undosAfterSQL = `
SELECT id FROM migrations WHERE tenant_id = ? AND id > ? AND undoes IS NOT NULL AND undoes <> ? ORDER BY id`

// doneOfSQL counts the items of one kind of an undo that belong to a run
// and that the undo's task has done (items up to its checkpoint: R12).
const doneOfSQL = `SELECT count(*) FROM undo_items WHERE undo_id = ? AND kind = ? AND seq <= ? AND owner = ?`

// plannedOfSQL counts the items of an undo that belong to a run, per
// kind: for an undo planned before its options kept Taken.
const plannedOfSQL = `SELECT kind, count(*) FROM undo_items WHERE undo_id = ? AND owner = ? GROUP BY kind`

// TakenBack is what undos under --cascade took back of run's records, per
// undo and kind, as far as each undo went: all it planned once it
// succeeded, else the items its tasks have committed (R12). Nothing for an
// undo, which no undo takes records of.
func TakenBack(ctx context.Context, q Querier, run phases.Run) ([]Part, error) {
	if run.Undoes != 0 {
		return nil, nil
	}
	rows, err := q.QueryContext(ctx, undosAfterSQL, run.Tenant, run.ID, run.ID)
	if err != nil {
		return nil, fmt.Errorf("read the undos after run %d: %w", run.ID, err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read the undos after run %d: %w", run.ID, err)
		}
		ids = append(ids, id)
	}
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("read the undos after run %d: %w", run.ID, err)
	}
	var out []Part
	for _, id := range ids {
		parts, err := takenBy(ctx, q, id, run.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, parts...)
	}
	return out, nil
}

// takenBy is what undo id took back of run's records.
func takenBy(ctx context.Context, q Querier, id, run int64) ([]Part, error) {
	u, err := phases.LoadRun(ctx, q, id)
	if err != nil {
		return nil, err
	}
	o, _, err := OptionsOf(u)
	if err != nil || !o.Cascade {
		return nil, err
	}
	planned := map[ledger.Kind]int64{}
	if o.Taken != nil {
		for _, t := range o.Taken {
			if t.Run == run {
				planned[ledger.Kind(t.Kind)] += t.Count
			}
		}
	} else if planned, err = plannedOf(ctx, q, id, run); err != nil {
		return nil, err
	}
	if len(planned) == 0 {
		return nil, nil
	}
	var tasks map[ledger.Kind]phases.Task
	if u.Status != phases.RunSucceeded {
		all, err := phases.LoadTasks(ctx, q, id)
		if err != nil {
			return nil, err
		}
		tasks = map[ledger.Kind]phases.Task{}
		for _, t := range all {
			tasks[t.Kind] = t
		}
	}
	var out []Part
	for _, k := range canon.Kinds() {
		n, ok := planned[k]
		if !ok {
			continue
		}
		if t, ok := tasks[k]; ok && t.Status != phases.TaskSucceeded {
			if err := q.QueryRowContext(ctx, doneOfSQL, id, string(k), t.Checkpoint.Rows, run).Scan(&n); err != nil {
				return nil, fmt.Errorf("read what undo %d took back of run %d: %w", id, run, err)
			}
		}
		if n > 0 {
			out = append(out, Part{Undo: id, Undoes: u.Undoes, Kind: string(k), Count: n})
		}
	}
	return out, nil
}

func plannedOf(ctx context.Context, q Querier, id, run int64) (map[ledger.Kind]int64, error) {
	rows, err := q.QueryContext(ctx, plannedOfSQL, id, run)
	if err != nil {
		return nil, fmt.Errorf("read what undo %d takes back of run %d: %w", id, run, err)
	}
	defer rows.Close()
	out := map[ledger.Kind]int64{}
	for rows.Next() {
		var k string
		var n int64
		if err := rows.Scan(&k, &n); err != nil {
			return nil, fmt.Errorf("read what undo %d takes back of run %d: %w", id, run, err)
		}
		out[ledger.Kind(k)] = n
	}
	return out, rows.Err()
}

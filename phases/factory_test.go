package phases

import (
	"context"
	"database/sql"
	"fmt"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/store"
)

// The test factory: runs and tasks inserted in the states a test needs,
// into the real databases of store/storetest.

var t0 = time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)

// clock is a deterministic Engine.Now that advances one second per call.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Second)
	return c.now
}

func newEngine(db *sql.DB) *Engine {
	e := New(db, nil)
	c := &clock{now: t0}
	e.Now = c.Now
	return e
}

// deadOwner is a process of this host that has exited.
func deadOwner(t *testing.T) Owner {
	t.Helper()
	cmd := exec.Command("true")
	require.NoError(t, cmd.Start())
	pid := cmd.Process.Pid
	require.NoError(t, cmd.Wait())
	self := CurrentOwner()
	return Owner{Host: self.Host, PID: pid, Started: self.Started + "-gone"}
}

type taskState struct {
	kind   ledger.Kind
	status TaskStatus
	rows   int64 // checkpoint
}

// seedRun inserts a run of tenant "acme" in status at current phase, owned
// by owner, with tasks in the given states (phase from the kind).
// thisOwner is this process working on db's file, as an engine on db is.
func thisOwner(t *testing.T, db *sql.DB) Owner {
	t.Helper()
	o := CurrentOwner()
	var err error
	o.File, err = store.FileID(context.Background(), db)
	require.NoError(t, err)
	return o
}

func seedRun(t *testing.T, db *sql.DB, status RunStatus, current int, owner Owner, tasks ...taskState) int64 {
	t.Helper()
	ctx := context.Background()
	var id int64
	err := db.QueryRowContext(ctx, `INSERT INTO migrations (tenant_id, source, status, current_phase, started_at,
		owner_host, owner_pid, owner_started, owner_file, heartbeat_at) VALUES ('acme', 'canonical', ?, ?, ?, ?, ?, ?, nullif(?, ''), ?) RETURNING id`,
		string(status), current, ledger.FormatTime(t0), owner.Host, owner.PID, owner.Started, owner.File, ledger.FormatTime(t0)).Scan(&id)
	require.NoError(t, err)
	for _, ts := range tasks {
		_, err := db.ExecContext(ctx, `INSERT INTO migration_tasks (migration_id, kind, phase, status, file, checkpoint, last_error, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, id, string(ts.kind), Phase(ts.kind), string(ts.status),
			ts.kind.Plural()+".csv", fmt.Sprintf(`{"rows":%d,"line":%d}`, ts.rows, ts.rows+1),
			map[bool]any{true: "boom", false: nil}[ts.status == TaskFailed], ledger.FormatTime(t0))
		require.NoError(t, err)
	}
	return id
}

func tasksOf(t *testing.T, db *sql.DB, runID int64) map[ledger.Kind]Task {
	t.Helper()
	ts, err := LoadTasks(context.Background(), db, runID)
	require.NoError(t, err)
	out := map[ledger.Kind]Task{}
	for _, x := range ts {
		out[x.Kind] = x
	}
	return out
}

func runOf(t *testing.T, db *sql.DB, id int64) Run {
	t.Helper()
	r, err := LoadRun(context.Background(), db, id)
	require.NoError(t, err)
	return r
}

// fakeInput is what the fake importer reads for one kind: batches of 10
// records; failAt makes that batch (counted within the task's file, from 1)
// return an error; failedRecords makes each batch report that many failed
// records.
type fakeInput struct {
	batches       int
	failAt        int
	failedRecords int64
}

// fakeOpen is an OpenFunc that, for each batch, writes one company row
// named after the batch inside the batch's transaction, so that tests see
// what committed and what rolled back.
func fakeOpen(inputs map[ledger.Kind]*fakeInput, onBatch func(k ledger.Kind, n int)) OpenFunc {
	var mu sync.Mutex
	return func(ctx context.Context, run Run, t Task) (*Work, error) {
		mu.Lock()
		in := inputs[t.Kind]
		mu.Unlock()
		if in == nil {
			return nil, fmt.Errorf("%s: no such file", t.File)
		}
		done := int(t.Checkpoint.Rows / 10)
		return &Work{
			Next: func(ctx context.Context, tx *sql.Tx) (Batch, error) {
				n := done + 1
				if onBatch != nil {
					onBatch(t.Kind, n)
				}
				if _, err := tx.ExecContext(ctx, `INSERT INTO companies (tenant_id, name, imported_at) VALUES ('acme', ?, 'now')`,
					fmt.Sprintf("%s batch %d", t.Kind, n)); err != nil {
					return Batch{}, err
				}
				if n == in.failAt {
					return Batch{}, fmt.Errorf("%s: line %d: cannot read", t.File, n*10)
				}
				imported := 10 - in.failedRecords
				return Batch{
					Checkpoint: Checkpoint{Rows: int64(n) * 10, Line: int64(n)*10 + 1},
					Counts:     Counts{Imported: imported, Failed: in.failedRecords},
					Done:       n >= in.batches,
					Committed:  func() { done = n },
				}, nil
			},
			Close: func() error { return nil },
		}, nil
	}
}

func batchRows(t *testing.T, db *sql.DB, k ledger.Kind) []string {
	t.Helper()
	rows, err := db.Query(`SELECT name FROM companies WHERE name LIKE ? ORDER BY id`, string(k)+" batch %")
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		out = append(out, s)
	}
	return out
}

func fullPlan() PlanSpec {
	var tasks []TaskSpec
	for _, k := range canon.Kinds() {
		tasks = append(tasks, TaskSpec{Kind: k, Phase: Phase(k), File: k.Plural() + ".csv", Format: "csv", Fingerprint: "fp-" + string(k)})
	}
	return PlanSpec{Tenant: "acme", Source: "canonical", Options: map[string]any{"batch_size": 10}, Tasks: tasks}
}

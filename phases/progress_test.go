package phases

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTaskProgress: a task's progress from its row and a clock alone
// (SPEC §9, live updates): percent of a known size, nil for an unknown
// one, below 100 until the task succeeds; rates over the current attempt
// (from its start to now while it runs, to its last update once it has
// ended); time left at the byte rate.
func TestTaskProgress(t *testing.T) {
	t.Parallel()
	start := t0
	now := start.Add(10 * time.Second)
	f := func(v float64) *float64 { return &v }
	task := func(status TaskStatus, rows, read, size int64, attempt *Attempt, updated time.Time) Task {
		tk := Task{Status: status, Checkpoint: Checkpoint{Rows: rows}, Read: read, Size: size, UpdatedAt: updated}
		if attempt != nil {
			tk.Attempt = *attempt
		}
		return tk
	}
	first := &Attempt{StartedAt: &start}
	resumed := &Attempt{StartedAt: &start, Rows: 1000, Bytes: 40_000}
	for _, tc := range []struct {
		name string
		task Task
		want Progress
	}{
		{"Running", task(TaskRunning, 2000, 25_000, 100_000, first, start.Add(9*time.Second)), Progress{
			Records: 2000, ReadBytes: 25_000, SizeBytes: 100_000, Percent: f(25),
			RecordsPerSecond: f(200), BytesPerSecond: f(2500), SecondsLeft: f(30)}},
		// A resumed attempt's rate counts what it read since it began,
		// never the time the task lay dead before.
		{"ResumedAttempt", task(TaskRunning, 3000, 60_000, 100_000, resumed, start), Progress{
			Records: 3000, ReadBytes: 60_000, SizeBytes: 100_000, Percent: f(60),
			RecordsPerSecond: f(200), BytesPerSecond: f(2000), SecondsLeft: f(20)}},
		{"UnknownSize", task(TaskRunning, 2000, 25_000, 0, first, start), Progress{
			Records: 2000, ReadBytes: 25_000, RecordsPerSecond: f(200), BytesPerSecond: f(2500)}},
		// The reader's buffers may hold the whole of a small file before
		// its records are committed: not 100% until it succeeds.
		{"ReadWholeNotDone", task(TaskRunning, 20, 11_519, 11_519, first, start), Progress{
			Records: 20, ReadBytes: 11_519, SizeBytes: 11_519, Percent: f(99.9),
			RecordsPerSecond: f(2), BytesPerSecond: f(1151.9), SecondsLeft: f(0)}},
		{"Succeeded", task(TaskSucceeded, 5000, 100_000, 100_000, first, start.Add(4*time.Second)), Progress{
			Records: 5000, ReadBytes: 100_000, SizeBytes: 100_000, Percent: f(100),
			RecordsPerSecond: f(1250), BytesPerSecond: f(25_000), SecondsLeft: f(0)}},
		{"SucceededBeforeSchema6", task(TaskSucceeded, 5000, 0, 0, nil, start), Progress{
			Records: 5000, SecondsLeft: f(0)}},
		{"CancelledKeepsItsAttemptsRate", task(TaskCancelled, 400, 10_000, 100_000, first, start.Add(2*time.Second)), Progress{
			Records: 400, ReadBytes: 10_000, SizeBytes: 100_000, Percent: f(10),
			RecordsPerSecond: f(200), BytesPerSecond: f(5000)}},
		{"PendingReArmed", task(TaskPending, 400, 10_000, 100_000, nil, start), Progress{
			Records: 400, ReadBytes: 10_000, SizeBytes: 100_000, Percent: f(10)}},
		{"PendingNeverStarted", task(TaskPending, 0, 0, 100_000, nil, start), Progress{SizeBytes: 100_000, Percent: f(0)}},
		// Started this very instant: no time has passed, no rate yet.
		{"JustStarted", task(TaskRunning, 0, 0, 100_000, &Attempt{StartedAt: &now}, now), Progress{SizeBytes: 100_000, Percent: f(0)}},
		{"NothingReadYet", task(TaskRunning, 0, 0, 100_000, first, start), Progress{
			SizeBytes: 100_000, Percent: f(0), RecordsPerSecond: f(0), BytesPerSecond: f(0)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, TaskProgress(tc.task, now))
		})
	}
}

// TestTasksProgress: a run's (or a phase's) tasks together: sums, a size
// unknown when any task's is, the rate of the task at work, the time left
// of all the bytes still to read.
func TestTasksProgress(t *testing.T) {
	t.Parallel()
	start := t0
	now := start.Add(10 * time.Second)
	f := func(v float64) *float64 { return &v }
	done := Task{Status: TaskSucceeded, Checkpoint: Checkpoint{Rows: 1000}, Read: 50_000, Size: 50_000,
		Attempt: Attempt{StartedAt: &start}, UpdatedAt: start.Add(time.Second)}
	working := Task{Status: TaskRunning, Checkpoint: Checkpoint{Rows: 500}, Read: 20_000, Size: 100_000,
		Attempt: Attempt{StartedAt: &start}}
	queued := Task{Status: TaskPending, Size: 50_000}

	require.Equal(t, Progress{Records: 1500, ReadBytes: 70_000, SizeBytes: 200_000, Percent: f(35),
		RecordsPerSecond: f(50), BytesPerSecond: f(2000), SecondsLeft: f(65)},
		TasksProgress([]Task{done, working, queued}, now))

	old := queued
	old.Size = 0 // planned before schema 6
	require.Equal(t, Progress{Records: 1500, ReadBytes: 70_000, RecordsPerSecond: f(50), BytesPerSecond: f(2000)},
		TasksProgress([]Task{done, working, old}, now))

	require.Equal(t, Progress{Records: 2000, ReadBytes: 100_000, SizeBytes: 100_000, Percent: f(100), SecondsLeft: f(0)},
		TasksProgress([]Task{done, done}, now))
	require.Equal(t, Progress{}, TasksProgress(nil, now))
}

package phases

import "time"

// A task's progress is stored with its checkpoint, in the batch's own
// UPDATE (R12: checkpointTask): the input's size, how far the committed
// checkpoint has read of it, and, from startTask, when the task's attempt
// began and the checkpoint it began from. Any process that reads the
// database can therefore show a run live (SPEC §9, live updates): the run
// page, `runs`, `report` and the CLI's own bar all take their numbers from
// TaskProgress over the rows LoadTasks reads, and agree.
//
// The bytes read are the raw input's (a file's bytes, a gzip's compressed
// bytes, a zip entry's uncompressed bytes: what Task.Size measures) as the
// reader had taken them in when it handed over the checkpoint's last
// record. Reading is buffered, so they run ahead of that record by what
// the reader holds (a few hundred KiB at most: a file smaller than that
// reads as whole after its first batch), and Percent stays below 100 until
// the task succeeds, when the bytes are the size.

// Progress is how far a task stands, or a run's tasks together
// (TasksProgress), as the database holds it at one instant.
type Progress struct {
	// Records are the records the committed checkpoint has consumed.
	Records int64 `json:"records"`
	// ReadBytes is how far into its input the committed checkpoint has
	// read; SizeBytes is the input's size, 0 when unknown (a task
	// planned before schema 6, until a batch of it commits again).
	ReadBytes int64 `json:"read_bytes"`
	SizeBytes int64 `json:"size_bytes"`
	// Percent is 100·ReadBytes/SizeBytes, at most 99.9 until the task
	// has succeeded; nil when the size is unknown.
	Percent *float64 `json:"percent"`
	// RecordsPerSecond and BytesPerSecond are the task's rates over its
	// current attempt: what it committed since the attempt began, over
	// the time from the attempt's start to now while it runs, or to its
	// last update once it has ended (succeeded, failed, cancelled). The
	// time counts the opening of its input (on a resume, the reading up
	// to its checkpoint). nil for a task not started since it was planned
	// or re-armed, and while no time has passed.
	RecordsPerSecond *float64 `json:"records_per_second"`
	BytesPerSecond   *float64 `json:"bytes_per_second"`
	// SecondsLeft is the bytes still to read at BytesPerSecond, for a
	// running task of known size that has read something in this
	// attempt; 0 for a task that succeeded; nil otherwise.
	SecondsLeft *float64 `json:"seconds_left"`
}

// maxUnfinished is the most Percent says of a task that has not
// succeeded: its reader may have taken in the whole input before all of
// its records are committed.
const maxUnfinished = 99.9

// TaskProgress is the progress of t, read from the database (LoadTasks),
// at the instant now (the caller's clock: Engine.Now). It reads nothing
// else: two processes given the same row and instant give the same
// numbers.
func TaskProgress(t Task, now time.Time) Progress {
	p := Progress{Records: t.Checkpoint.Rows, ReadBytes: t.Read, SizeBytes: t.Size}
	p.Percent = percent(p.ReadBytes, p.SizeBytes, t.Status == TaskSucceeded)
	if t.Status == TaskSucceeded {
		p.SecondsLeft = ptr(0.0)
	}
	if t.Attempt.StartedAt == nil {
		return p
	}
	var end time.Time
	switch t.Status {
	case TaskRunning:
		end = now
	case TaskSucceeded, TaskFailed, TaskCancelled:
		end = t.UpdatedAt // the attempt ended with the task's last update
	default:
		return p // pending: its last attempt is over (re-armed)
	}
	elapsed := end.Sub(*t.Attempt.StartedAt).Seconds()
	if elapsed <= 0 {
		return p
	}
	records, bytes := float64(p.Records-t.Attempt.Rows)/elapsed, float64(p.ReadBytes-t.Attempt.Bytes)/elapsed
	p.RecordsPerSecond, p.BytesPerSecond = ptr(max(records, 0)), ptr(max(bytes, 0))
	if t.Status == TaskRunning && p.SizeBytes > 0 && bytes > 0 {
		p.SecondsLeft = ptr(float64(max(p.SizeBytes-p.ReadBytes, 0)) / bytes)
	}
	return p
}

// TasksProgress is the progress of tasks together (a run's, or a phase's)
// at now: their records and bytes summed; their size, and so Percent,
// unknown when any task's is; the rates those of the tasks at work (a run
// works on one task at a time); the time left the bytes still to read of
// them all at that rate, 0 when every task has succeeded.
func TasksProgress(tasks []Task, now time.Time) Progress {
	var p Progress
	known, done, working := true, true, false
	var records, bytes float64
	for _, t := range tasks {
		tp := TaskProgress(t, now)
		p.Records += tp.Records
		p.ReadBytes += tp.ReadBytes
		p.SizeBytes += tp.SizeBytes
		known = known && tp.SizeBytes > 0
		done = done && t.Status == TaskSucceeded
		if t.Status == TaskRunning && tp.BytesPerSecond != nil {
			working = true
			records += *tp.RecordsPerSecond
			bytes += *tp.BytesPerSecond
		}
	}
	if !known {
		p.SizeBytes = 0
	}
	p.Percent = percent(p.ReadBytes, p.SizeBytes, done)
	switch {
	case done && len(tasks) > 0:
		p.SecondsLeft = ptr(0.0)
	case working:
		p.RecordsPerSecond, p.BytesPerSecond = ptr(records), ptr(bytes)
		if p.SizeBytes > 0 && bytes > 0 {
			p.SecondsLeft = ptr(float64(max(p.SizeBytes-p.ReadBytes, 0)) / bytes)
		}
	}
	return p
}

// percent is 100·read/size, nil when the size is unknown, below 100 until
// done.
func percent(read, size int64, done bool) *float64 {
	if size <= 0 {
		return nil
	}
	pct := min(100*float64(max(read, 0))/float64(size), 100)
	if !done {
		pct = min(pct, maxUnfinished)
	}
	return &pct
}

func ptr[T any](v T) *T { return &v }

// Package phases runs a run: the plan, its tasks, the phase barrier, retry,
// stop and finalize (SPEC §3, R7-R15).
//
//   - R7  Barrier: a run works only on tasks of its current phase; the phase
//     closes when none of its tasks is pending or running, and the move to
//     the next phase that has tasks is fenced on the current phase. A phase
//     that closes with a failed task stops the run: later phases' tasks are
//     cancelled ("not started: phase N failed").
//   - R8  Resume rewinds: failed, cancelled and orphaned running tasks are
//     re-armed with their checkpoints, the barrier moves back to the earliest
//     pending phase, and the run is taken over with one fenced UPDATE.
//   - R9  Finalize refuses a terminal status while work is queued.
//   - R10 Identity first: the run row and its whole plan commit before the
//     first record; a resume recomputes nothing.
//   - R11 Every UPDATE of a run or a task goes through expectRows, which
//     fails on any affected-row count but the expected one.
//   - R12 A batch's records, counters and checkpoint commit in one
//     transaction owned here; the importer only fills it (Work.Next). The
//     task's progress (its input's size, the bytes its checkpoint has
//     read) is stored in the same UPDATE, so that any process shows it
//     (TaskProgress, progress.go).
//   - R13 Admission control: one live run per tenant, by a unique index; an
//     owner is its host, pid, the pid's start time and the database file it
//     has open (device and inode): in a copy of the file the run is
//     interrupted, never live forever.
//   - R14 Stop: a request in the run's row, never a signal; the owner reads
//     it with every batch and every StopPoll between batches; the task in
//     flight keeps its checkpoint.
//   - R15 Finalize writes status, finished_at, duration_ms and stats in one
//     statement: the tasks' counts with the counts per kind that no task
//     holds (links completed or emptied again on a child's kind, R6a:
//     run_kind_counts, kindcounts.go).
//
// The package never imports the importer: it receives the work as function
// values (OpenFunc, Work). Time comes from Engine.Now.
//
// # States and their edges
//
// Each edge is one named function whose UPDATE names its from-state:
//
//	run   (new)       -> running     Plan         INSERT, refused by the one-live-run index
//	run   running     -> running     heartbeat    fenced on the owner; reads the stop request
//	run   running     -> running     requestStop  stop RUN from another process
//	run   running     -> running     takeOver     resume of an interrupted run (fenced on the dead owner)
//	run   partial|failed|cancelled -> running  reopen   resume (fenced on the old status)
//	run   running     -> succeeded|partial|failed|cancelled  finalizeRun
//	task  pending     -> running     startTask
//	task  running     -> running     checkpointTask   one per committed batch, with the task's progress
//	task  running     -> succeeded   succeedTask      with the last batch
//	task  running     -> failed      failTask
//	task  running     -> cancelled   cancelTask       stop, checkpoint kept
//	task  pending     -> cancelled   cancelLater (a failed phase) / cancelQueued (stop)
//	task  failed|cancelled|running -> pending  rearmTasks (resume)
//
// A task notes the ledger's epoch when it starts at its first record, and
// keeps it at success only if no final slot went away meanwhile; such a
// task vouches for the records of its input (FindSameInput, sameinput.go).
//
// A run loaded from a dump (`ledger load`) has no plan here; ResumeFrom
// (replan.go) plans its unfinished tasks over local files (R10):
//
//	run   any status, but a live running one -> running   takeOver or reopen, as resume
//	task  pending|running|failed|cancelled -> pending    replanTask: a local file, from its start, in its kind's phase (R7)
//	task  pending|running|failed|cancelled -> cancelled  dropTask: another task of its kind reads the file
package phases

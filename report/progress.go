package report

import (
	"fmt"
	"math"
	"strings"
	"time"

	"crmimport/phases"
)

// A task's progress is computed by phases.TaskProgress from its row alone
// (the checkpoint's records and bytes, the input's size, the attempt's
// start) and a clock, here the report's Now: the run page, `runs`,
// `report` and the CLI's bar show the same numbers, from any process.

// TaskProgress is the progress of one of the report's tasks at r.Now.
func (r *Report) TaskProgress(t phases.Task) phases.Progress {
	return phases.TaskProgress(t, r.Now)
}

// Percent writes a progress's percent, rounded down ("37%"), or "—" when
// the input's size is unknown.
func Percent(p phases.Progress) string {
	if p.Percent == nil {
		return "—"
	}
	return fmt.Sprintf("%d%%", int(math.Floor(*p.Percent)))
}

// Pace writes the rate and time left of a task at work ("4,210 records/s,
// 12s left"), what of them is known; "" for none.
func Pace(p phases.Progress) string {
	var parts []string
	if p.RecordsPerSecond != nil {
		parts = append(parts, Count(int64(math.Round(*p.RecordsPerSecond)))+" records/s")
	}
	if p.SecondsLeft != nil && *p.SecondsLeft > 0 {
		parts = append(parts, Left(*p.SecondsLeft)+" left")
	}
	return strings.Join(parts, ", ")
}

// Left writes a time left, rounded up to the second: "12s", "3m4s", "1h2m".
func Left(seconds float64) string {
	d := time.Duration(math.Ceil(seconds)) * time.Second
	if d >= time.Hour {
		d = d.Round(time.Minute)
		return fmt.Sprintf("%dh%dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return d.String()
}

// progressCell is a task's progress in the report's table of tasks: its
// percent, and while it works its rate and time left (none for the task of
// an interrupted run: no process works on it).
func (r *Report) progressCell(t phases.Task) string {
	p := r.TaskProgress(t)
	s := Percent(p)
	if pace := Pace(p); pace != "" && t.Status == phases.TaskRunning && !r.Interrupted {
		s += " (" + pace + ")"
	}
	return s
}

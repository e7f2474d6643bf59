package phases

import (
	"os"
	"time"
)

// StaleAfter is how old a heartbeat must be before a run whose owner cannot
// be checked directly (another host, or no process table to read) is
// considered interrupted. Heartbeats are written with every batch.
const StaleAfter = 2 * time.Minute

// CurrentOwner describes this process.
func CurrentOwner() Owner {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	pid := os.Getpid()
	started, _ := processStart(pid) // "" where the OS does not tell; liveness then falls back to the heartbeat
	return Owner{Host: host, PID: pid, Started: started}
}

// ownerAlive reports whether the owner of a running run is still at work
// on this very file. On this host it asks the process table at once (pid
// and its start time, against pid reuse) after comparing the file the
// owner has open with this one: in a copy of the database the owner works
// on the original, so the run here is interrupted. Elsewhere, or where
// that cannot be read, a heartbeat older than StaleAfter means gone.
func ownerAlive(self, o Owner, heartbeat *time.Time, now time.Time) bool {
	if o.Host == self.Host && o.File != "" && self.File != "" && o.File != self.File {
		return false
	}
	if o.Host == self.Host && o.Started != "" && self.Started != "" {
		started, ok := processStart(o.PID)
		return ok == nil && started == o.Started
	}
	if heartbeat == nil {
		return false
	}
	return now.Sub(*heartbeat) < StaleAfter
}

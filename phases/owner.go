package phases

import (
	"os"
	"strings"
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
//
// A process of this host in another PID namespace (a container that shares
// the hostname and the kernel) is not in this process table: its pid names
// another process here, or none. Its start time records its namespace
// (processStart), and only an owner of this very namespace is looked up;
// another's is judged by its heartbeat, as a remote one is.
func ownerAlive(self, o Owner, heartbeat *time.Time, now time.Time) bool {
	if o.Host == self.Host && o.File != "" && self.File != "" && o.File != self.File {
		return false
	}
	if o.Host == self.Host && o.Started != "" && self.Started != "" && sameNamespace(self.Started, o.Started) {
		started, ok := processStart(o.PID)
		return ok == nil && sameStart(started, o.Started)
	}
	if heartbeat == nil {
		return false
	}
	return now.Sub(*heartbeat) < StaleAfter
}

// sameNamespace says whether two start times of this host's processes
// (processStart: "BOOT/NAMESPACE/TICKS", or "BOOT/TICKS" as runs of an
// older binary recorded them) were taken in one PID namespace. An older
// one, which names none, is taken as this one's, as it always was.
func sameNamespace(self, other string) bool {
	a, b := strings.Split(self, "/"), strings.Split(other, "/")
	if len(a) != 3 || len(b) != 3 {
		return true
	}
	return a[1] == b[1]
}

// sameStart says whether a process's start time now is the one recorded:
// a start time recorded without a namespace is compared without it.
func sameStart(now, recorded string) bool {
	if now == recorded {
		return true
	}
	a, b := strings.Split(now, "/"), strings.Split(recorded, "/")
	return len(a) == 3 && len(b) == 2 && a[0] == b[0] && a[2] == b[1]
}

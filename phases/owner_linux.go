//go:build linux

package phases

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// processStart returns the boot id and the start time (in clock ticks since
// boot) of a live process: two processes never share both. A zombie (killed,
// not yet reaped) counts as gone.
func processStart(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", err
	}
	// The command name, in parentheses, may hold spaces: read after the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", errors.New("unreadable /proc stat")
	}
	fields := strings.Fields(s[i+1:])
	// fields[0] is field 3 (state); starttime is field 22.
	if len(fields) < 20 {
		return "", errors.New("short /proc stat")
	}
	if st := fields[0]; st == "Z" || st == "X" || st == "x" {
		return "", errors.New("process has exited")
	}
	if _, err := strconv.ParseUint(fields[19], 10, 64); err != nil {
		return "", fmt.Errorf("bad start time %q", fields[19])
	}
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(boot)) + "/" + fields[19], nil
}

// signalStop asks the owner of a run to stop, as Ctrl-C would: SIGTERM,
// which its command line turns into a stop after the batch in flight
// (R14). It needs no lock on the database, which a busy run holds batch
// after batch. The signal goes only to the process that owns the run (pid
// and start time), and never to this one.
func signalStop(o Owner) error {
	if o.PID == os.Getpid() {
		return errors.New("the owner is this process")
	}
	started, err := processStart(o.PID)
	if err != nil {
		return err
	}
	if started != o.Started {
		return errors.New("the pid belongs to another process now")
	}
	return syscall.Kill(o.PID, syscall.SIGTERM)
}

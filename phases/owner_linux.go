//go:build linux

package phases

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// processStart returns the boot id, the PID namespace and the start time
// (in clock ticks since boot) of a live process, "BOOT/pid:[N]/TICKS": two
// processes never share all three. The namespace is this process's own,
// whose process table /proc shows: a pid is a number in one namespace, and
// the same run's owner seen from a container sharing this host's name is
// another namespace's (ownerAlive). A zombie (killed, not yet reaped)
// counts as gone. Where the namespace cannot be read, "BOOT/TICKS".
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
	if ns, err := os.Readlink("/proc/self/ns/pid"); err == nil && !strings.Contains(ns, "/") {
		return strings.TrimSpace(string(boot)) + "/" + ns + "/" + fields[19], nil
	}
	return strings.TrimSpace(string(boot)) + "/" + fields[19], nil
}

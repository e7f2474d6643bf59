//go:build unix

package store

import (
	"os"
	"strconv"
	"syscall"
)

// fdFolder lists the process's open descriptors by number (on Linux a link
// to /proc/self/fd).
const fdFolder = "/dev/fd"

// readHeld reads up to n bytes from the start of the file st describes
// through a descriptor this process already has open on it, when there is
// one (ok=false when there is none, or it could not be read): pread moves
// no offset and nothing is closed, so SQLite's locks stay as they are.
func readHeld(st os.FileInfo, n int) (head []byte, ok bool) {
	want, isUnix := st.Sys().(*syscall.Stat_t)
	if !isUnix {
		return nil, false
	}
	entries, err := os.ReadDir(fdFolder)
	if err != nil {
		return nil, false
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || !sameFile(fd, want) {
			continue
		}
		head = make([]byte, n)
		got := 0
		for got < n {
			m, err := syscall.Pread(fd, head[got:], int64(got))
			if err != nil {
				break
			}
			if m == 0 {
				break
			}
			got += m
		}
		// The descriptor might have been closed and its number reused
		// meanwhile: the bytes count only if it is still the file.
		if sameFile(fd, want) {
			return head[:got], true
		}
	}
	return nil, false
}

// sameFile says whether descriptor fd is open on the file want describes.
func sameFile(fd int, want *syscall.Stat_t) bool {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return false
	}
	return st.Dev == want.Dev && st.Ino == want.Ino
}

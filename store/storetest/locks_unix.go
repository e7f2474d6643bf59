//go:build unix

package storetest

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// Where SQLite's unix VFS places its locks (os_unix.c, wal.c): the
// database file's pending byte at 1 GiB, its shared range after the
// reserved byte; in the -shm file, the eight WAL locks from byte 120 (the
// first is the writer's), and the dead man switch after them.
const (
	pendingByte = 0x40000000
	sharedFirst = pendingByte + 2
	sharedSize  = 510
	walLocks    = 120
	walWrite    = walLocks
	walDMS      = walLocks + 8
)

// probe reads, as another process, who holds the locks of a connection on
// the database at path. Opening and closing the files here drops nothing
// of the process under test: POSIX locks belong to the process that took
// them.
func probe(path string) (Locks, error) {
	var l Locks
	var err error
	if l.Shared, err = holder(path, sharedFirst, sharedSize); err != nil {
		return l, err
	}
	if l.DMS, err = holder(path+"-shm", walDMS, 1); err != nil {
		return l, err
	}
	l.Writer, err = holder(path+"-shm", walWrite, 1)
	return l, err
}

// holder is the pid of a process holding a lock that a write lock on
// [start, start+n) of the file would conflict with, 0 for none (or no
// such file).
func holder(path string, start, n int64) (int, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: start, Len: n}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &lk); err != nil {
		return 0, err
	}
	if lk.Type == syscall.F_UNLCK {
		return 0, nil
	}
	return int(lk.Pid), nil
}

package store

import (
	"errors"
	"io"
	"os"
)

// SQLite's locks on a database file are POSIX advisory locks, which belong
// to the process and the file, not to a descriptor: closing any descriptor
// of the file in the process drops every lock the process holds on it —
// SQLite's own connections' included (SQLite's documented pitfall, "How To
// Corrupt An SQLite Database File", 2.2). A process that lost them lets
// another process's connection, closing, take the file as the last one,
// checkpoint it and delete its -wal and -shm from under the connections
// still open here: their commits then go to an unlinked log, invisible to
// every other process, and a later checkpoint writes stale pages back over
// the file.
//
// So no code of crmimport opens and closes the database file, or its -wal
// and -shm, outside SQLite while a connection to it is open (make lint
// forbids opening the database's path outside this package). The few reads
// of a file's first bytes that this package makes by name (is this a
// SQLite file, ours, in WAL mode; is an output file a database) go through
// readHead, which reads through a descriptor the process already holds on
// the same file, when it holds one, rather than open and close another.

// readHead reads up to n bytes from the start of the file at path. When
// this process already has the file open (a connection of its own, opened
// by SQLite), the bytes are read through that descriptor, which is neither
// closed nor moved (pread); otherwise the file is opened, read and closed,
// which drops no lock because the process holds none on it. A file shorter
// than n gives what it holds.
func readHead(path string, n int) ([]byte, error) {
	if st, err := os.Stat(path); err == nil {
		if head, ok := readHeld(st, n); ok {
			return head, nil
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, n)
	got, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return head[:got], nil
}

package input

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Every file of an export is opened through openRegular or openZip: a
// path that is not a regular file — a named pipe, a device such as a link
// to /dev/zero, a socket — is refused, naming it, before it is opened. A
// FIFO would hang the open and the read; a device would never end.

// notRegular says why the file at p is no regular file, or "" for one (or
// for a path that cannot be stat'ed: the open that follows says why).
func notRegular(p string) string {
	st, err := os.Stat(p) // follows links: a link to /dev/zero is a device
	if err != nil || st.Mode().IsRegular() || st.IsDir() {
		return ""
	}
	switch m := st.Mode(); {
	case m&fs.ModeNamedPipe != 0:
		return "is a named pipe (FIFO), not a file: crmimport reads files, folders and zips; save the data to a file first"
	case m&fs.ModeCharDevice != 0, m&fs.ModeDevice != 0:
		return "is a device, not a file: crmimport reads files, folders and zips"
	case m&fs.ModeSocket != 0:
		return "is a socket, not a file: crmimport reads files, folders and zips"
	}
	return "is not a regular file: crmimport reads files, folders and zips"
}

// openRegular opens the regular file at p.
func openRegular(p string) (*os.File, error) {
	if why := notRegular(p); why != "" {
		return nil, &fs.PathError{Op: "open", Path: p, Err: fmt.Errorf("%s", why)}
	}
	return os.Open(p)
}

// openZip opens the zip at p, a regular file.
func openZip(p string) (*zip.ReadCloser, error) {
	if why := notRegular(p); why != "" {
		return nil, &fs.PathError{Op: "open", Path: p, Err: fmt.Errorf("%s", why)}
	}
	return zip.OpenReader(p)
}

// stopReader ends a read when ctx is done: planning reads every byte of an
// export (fingerprints, R10), and a stop (Ctrl-C, SIGTERM) must not wait
// for a file of many gigabytes to end.
type stopReader struct {
	ctx context.Context
	r   io.Reader
}

func (s stopReader) Read(p []byte) (int, error) {
	if err := s.ctx.Err(); err != nil {
		return 0, err
	}
	return s.r.Read(p)
}

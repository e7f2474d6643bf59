package fixfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// checkDir refuses a folder a fix folder may not be written in: one of the
// run's input folders (the folder it read, or the one holding the file or
// zip it read), a folder inside one, or one holding one — the next run of
// that export would read the fixes as its own rows.
func (s *source) checkDir(dir string) error {
	real := realPath(dir)
	for _, in := range append([]string{s.opts.Input}, s.opts.Inputs...) {
		folder := in
		if st, err := os.Stat(in); err != nil || !st.IsDir() {
			folder = filepath.Dir(in)
		}
		folder = realPath(folder)
		switch {
		case real == folder:
			return fmt.Errorf("%s is the input folder of run %d (it read %s): write the fix folder elsewhere, "+
				"so that a run of the export never reads the fixes as its own rows", dir, s.run.ID, in)
		case within(real, folder):
			return fmt.Errorf("%s is inside the input folder of run %d, %s: write the fix folder elsewhere, "+
				"so that a run of the export never reads the fixes as its own rows", dir, s.run.ID, folder)
		case within(folder, real):
			return fmt.Errorf("%s holds the input folder of run %d, %s: write the fix folder elsewhere", dir, s.run.ID, folder)
		}
	}
	return nil
}

// realPath is path with the links of its longest existing part resolved,
// so that two names of one folder compare equal.
func realPath(p string) string {
	p = filepath.Clean(p)
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// within reports whether p is below folder.
func within(p, folder string) bool {
	rel, err := filepath.Rel(folder, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// prepare makes dir a private folder to write into: a new one (made is
// true), or an existing empty one. Anything else is refused, and nothing
// is written.
func prepare(dir string) (made bool, err error) {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return false, fmt.Errorf("make the fix folder %s: %w", dir, err)
		}
		return true, nil
	case err != nil:
		return false, fmt.Errorf("fix folder %s: %w", dir, err)
	case !st.IsDir():
		return false, fmt.Errorf("%s is a file, not a folder: name a new or empty folder for the fix files", dir)
	}
	f, err := os.Open(dir)
	if err != nil {
		return false, fmt.Errorf("fix folder %s: %w", dir, err)
	}
	names, err := f.Readdirnames(1)
	f.Close()
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("fix folder %s: %w", dir, err)
	}
	if len(names) > 0 {
		return false, fmt.Errorf("%s is not empty (it holds %s): name a new or empty folder for the fix files, "+
			"so that nothing in it is mistaken for a fix or overwritten", dir, names[0])
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return false, fmt.Errorf("fix folder %s: %w", dir, err)
	}
	return false, nil
}

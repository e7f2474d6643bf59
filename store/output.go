package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// sqliteHeader is how every SQLite database file begins.
const sqliteHeader = "SQLite format 3\x00"

// walMagic and walMagicBE begin a SQLite write-ahead log (its checksums in
// little- or big-endian order).
var (
	walMagic   = [4]byte{0x37, 0x7f, 0x06, 0x82}
	walMagicBE = [4]byte{0x37, 0x7f, 0x06, 0x83}
)

// sidecars are the files SQLite keeps beside a database: its write-ahead
// log, the log's shared-memory index, and the rollback journal of a file
// not in WAL mode. Writing over one of them loses or corrupts committed
// data as surely as writing over the database.
var sidecars = []struct{ suffix, what string }{
	{"", "the database in use"},
	{"-wal", "the write-ahead log of the database in use"},
	{"-shm", "the shared-memory index of the database in use"},
	{"-journal", "the rollback journal of the database in use"},
}

// RefusedOutputError is an output file that WriteOutput will not write,
// because writing it would destroy a database.
type RefusedOutputError struct {
	Path   string // as the user named it
	What   string // what the file is
	Advice string // what to do instead
}

func (e *RefusedOutputError) Error() string {
	return fmt.Sprintf("will not write %s: it is %s, and writing over it would destroy it; %s", e.Path, e.What, e.Advice)
}

// WriteOutput writes a file the user named (rejects --out, report --out,
// and every other file a command writes where it is told to) with what
// write produces, never over a database: it refuses path when it is the
// database at dbPath or one of its -wal, -shm or -journal files — the same
// file by os.SameFile (a symlink, a hard link, another spelling of the
// path), or by name when that file does not exist at the moment — and any
// existing file that begins with SQLite's header, ours or not.
//
// Anything else is replaced whole: write fills a temporary file of mode
// 0600 in the target's folder, which is synced and then renamed over the
// target (a symlink's target, the link kept), so that a write that fails
// leaves the old file as it was and a reader never sees half a file. A file
// that is replaced keeps its permissions; a new one is 0600 (what crmimport
// writes holds customer data). A target that is no regular file (a device
// such as /dev/stdout, a FIFO) is written directly.
func WriteOutput(dbPath, path string, write func(io.Writer) error) error {
	if path == "" {
		return errors.New("write output: no file name given")
	}
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return fmt.Errorf("write %s: it is a folder; name a file", path)
	case err == nil && !st.Mode().IsRegular():
		return writeDirect(path, write) // never a database: SQLite's files are regular
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("write %s: %w", path, err)
	}
	target, err := resolveLinks(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := refuseDatabase(DialectAt(dbPath).fileOf(dbPath), path, target); err != nil {
		return err
	}
	return replaceFile(path, target, write)
}

// fileOf is the file of the database that name names: name itself for
// SQLite; "" for a server's database, which is no file here (any SQLite
// file is still refused: refuseDatabase).
func (d Dialect) fileOf(name string) string {
	switch d {
	case SQLite:
		return name
	case Postgres:
		return ""
	default:
		panic(d.Untaught("store.WriteOutput"))
	}
}

// refuseDatabase says whether target (path with its links followed) is
// the database at dbPath, one of its sidecars, or any SQLite file.
func refuseDatabase(dbPath, path, target string) error {
	tst, terr := os.Stat(target)
	if dbPath != "" {
		db, err := resolveLinks(dbPath)
		if err != nil {
			return fmt.Errorf("write %s: the database %s: %w", path, dbPath, err)
		}
		for _, s := range sidecars {
			name := db + s.suffix
			what := fmt.Sprintf("%s (%s)", s.what, dbPath+s.suffix)
			if target == name {
				return &RefusedOutputError{Path: path, What: what, Advice: "name another file"}
			}
			if terr != nil {
				continue
			}
			if st, err := os.Stat(name); err == nil && os.SameFile(st, tst) {
				return &RefusedOutputError{Path: path, What: what + " under another name (a hard link)", Advice: "name another file"}
			}
		}
	}
	if terr != nil {
		return nil // a new file
	}
	head, err := readHead(target, len(sqliteHeader))
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if bytes.Equal(head, []byte(sqliteHeader)) {
		return &RefusedOutputError{Path: path, What: "a SQLite database (it begins with SQLite's header)",
			Advice: "name another file, or delete this one first if it is really meant to go"}
	}
	if len(head) >= 4 && (bytes.Equal(head[:4], walMagic[:]) || bytes.Equal(head[:4], walMagicBE[:])) {
		return &RefusedOutputError{Path: path, What: "the write-ahead log of a SQLite database (it begins with its magic number)",
			Advice: "name another file"}
	}
	return nil
}

// replaceFile writes a temporary file beside target and renames it over
// target.
func replaceFile(path, target string, write func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := write(tmp); err != nil {
		return fmt.Errorf("%w (%s is left as it was)", err, path)
	}
	if st, err := os.Stat(target); err == nil {
		if err := tmp.Chmod(st.Mode().Perm()); err != nil {
			return fmt.Errorf("write %s: %w (the file is left as it was)", path, err)
		}
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: %w (the file is left as it was)", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w (the file is left as it was)", path, err)
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return fmt.Errorf("write %s: %w (the file is left as it was)", path, err)
	}
	return nil
}

// writeDirect writes to a file that is no regular file (a device, a FIFO).
func writeDirect(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// maxLinks is how many symbolic links resolveLinks follows, as Linux does.
const maxLinks = 40

// resolveLinks makes path absolute with every symbolic link in it
// followed, also a last one that points at a file that does not exist (yet):
// the file that a write to path would create or replace. Its folder must
// exist.
func resolveLinks(path string) (string, error) {
	p, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	for range maxLinks {
		dir, err := filepath.EvalSymlinks(filepath.Dir(p))
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("folder %s does not exist", filepath.Dir(p))
		}
		if err != nil {
			return "", err
		}
		p = filepath.Join(dir, filepath.Base(p))
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil
		}
		if err != nil {
			return "", err
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			return p, nil
		}
		link, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(dir, link)
		}
		p = link
	}
	return "", fmt.Errorf("more than %d symbolic links", maxLinks)
}

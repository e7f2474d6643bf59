// Package pgtest starts a throwaway PostgreSQL cluster for the test suites
// (issue 17): initdb into a temporary folder, a server listening on a Unix
// socket in a private folder and on no TCP port, its log in a file, and a
// stop that ends it however the tests ended. As root (CI), the cluster is
// made and run as the postgres user through runuser, since PostgreSQL
// refuses to run as root.
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Install is what to do when PostgreSQL is missing.
const Install = "install Debian's postgresql package (apt-get install postgresql; `make test` installs it where it can)"

// Cluster is a running throwaway server.
type Cluster struct {
	dir    string // the cluster's folder: data, socket, log
	bin    string // the folder of initdb and pg_ctl
	runAs  string // "postgres" under root, else ""
	socket string
	Log    string // the server's log file
}

// Start makes a cluster in a new folder under base ("" for the system's
// temporary folder; under root, a folder the postgres user can reach) and
// starts it; Stop ends it and removes the folder. settings ("name=value")
// are the server's, after the tests' own (no fsync: a cluster that lives
// for one test run), which they override: the bench's server writes as a
// real one does.
func Start(ctx context.Context, base string, settings ...string) (*Cluster, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	Sweep(base)
	dir, err := os.MkdirTemp(base, "crmimport-pg-")
	if err != nil {
		return nil, err
	}
	// Whose cluster it is: a test binary that died before its Stop (a
	// panic, a kill) leaves one running, and the next Start ends it.
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	c := &Cluster{dir: dir, bin: bin, socket: filepath.Join(dir, "socket"), Log: filepath.Join(dir, "server.log")}
	fail := func(err error) (*Cluster, error) {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if err := os.Mkdir(c.socket, 0o700); err != nil {
		return fail(err)
	}
	if os.Geteuid() == 0 {
		c.runAs = "postgres"
		u, err := user.Lookup(c.runAs)
		if err != nil {
			return fail(fmt.Errorf("PostgreSQL refuses to run as root and there is no postgres user: %s", Install))
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		for _, p := range []string{dir, c.socket} {
			if err := os.Chown(p, uid, gid); err != nil {
				return fail(err)
			}
		}
	}
	data := filepath.Join(dir, "data")
	if out, err := c.run(ctx, "initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync", "--locale=C.UTF-8"); err != nil {
		return fail(fmt.Errorf("initdb: %v: %s", err, out))
	}
	// No TCP port, a socket only its owner can reach; fsync off: a cluster
	// that lives for one test run.
	opts := []string{"-c listen_addresses=''", "-k " + c.socket, "-c fsync=off", "-c synchronous_commit=off",
		"-c full_page_writes=off", "-c max_connections=200"}
	for _, kv := range settings {
		opts = append(opts, "-c "+kv)
	}
	if out, err := c.run(ctx, "pg_ctl", "-D", data, "-l", c.Log, "-o", strings.Join(opts, " "), "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(c.Log)
		return fail(fmt.Errorf("start PostgreSQL: %v: %s\n%s", err, out, log))
	}
	return c, nil
}

// ownerFile holds the pid of the process that started a cluster.
const ownerFile = "owner.pid"

// Sweep stops and removes the clusters under base ("" for the system's
// temporary folder) whose owner process is gone.
func Sweep(base string) {
	if base == "" {
		base = os.TempDir()
	}
	dirs, _ := filepath.Glob(filepath.Join(base, "crmimport-pg-*"))
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue // being made, or not ours
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || alive(pid) {
			continue
		}
		c := &Cluster{dir: dir, socket: filepath.Join(dir, "socket")}
		if c.bin, err = binDir(); err != nil {
			return
		}
		if os.Geteuid() == 0 {
			c.runAs = "postgres"
		}
		_ = c.Stop()
	}
}

// alive tells whether process pid still runs.
func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return p.Signal(syscall.Signal(0)) == nil
}

// DSN is the address of the cluster's postgres database, for pgx.
func (c *Cluster) DSN() string { return c.DSNOf("postgres") }

// DSNOf is the address of one database of the cluster.
func (c *Cluster) DSNOf(db string) string {
	return "postgres://postgres@/" + db + "?host=" + c.socket + "&sslmode=disable"
}

// Stop ends the server at once and removes the cluster's folder.
func (c *Cluster) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := c.run(ctx, "pg_ctl", "-D", filepath.Join(c.dir, "data"), "-m", "immediate", "-w", "stop")
	if err != nil {
		err = fmt.Errorf("stop PostgreSQL: %v: %s", err, out)
	}
	return errors.Join(err, os.RemoveAll(c.dir))
}

// run runs one of the cluster's programs, as its user.
func (c *Cluster) run(ctx context.Context, prog string, args ...string) ([]byte, error) {
	name := filepath.Join(c.bin, prog)
	if c.runAs != "" {
		args = append([]string{"-u", c.runAs, "--", name}, args...)
		name = "runuser"
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = c.dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

// binDir finds the folder of initdb and pg_ctl: Debian keeps them in
// /usr/lib/postgresql/VERSION/bin, off the PATH; the newest is taken.
func binDir() (string, error) {
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if _, err := exec.LookPath("initdb"); err == nil {
			real, err := filepath.EvalSymlinks(p)
			if err == nil {
				return filepath.Dir(real), nil
			}
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("PostgreSQL's initdb and pg_ctl are not on this machine: %s", Install)
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

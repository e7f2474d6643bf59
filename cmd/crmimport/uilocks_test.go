package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// uiProc is `crmimport ui` as a real process, and how to talk to it.
type uiProc struct {
	cmd   *exec.Cmd
	addr  string
	token string
	errb  *strings.Builder
}

// startUI starts `crmimport --json ui --no-open --create` on path in a
// child process and waits until it listens.
func startUI(t *testing.T, path string) *uiProc {
	t.Helper()
	b, err := json.Marshal([]string{"--db", path, "--json", "ui", "--no-open", "--create"})
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CRMIMPORT_TEST_CHILD=1", "CRMIMPORT_TEST_ARGS="+string(b))
	u := &uiProc{cmd: cmd, errb: &strings.Builder{}}
	cmd.Stderr = u.errb
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	var doc struct{ URL, Addr string }
	require.NoError(t, json.NewDecoder(stdout).Decode(&doc), "the ui's JSON document: %s", u.errb)
	u.addr = doc.Addr
	u.token = doc.URL[strings.Index(doc.URL, "token=")+len("token="):]
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return u
}

// call sends one API request as a script does (the token as a bearer, a
// POST with X-Requested-By) and decodes the JSON answer into v.
func (u *uiProc) call(t *testing.T, method, path string, body any, v any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = strings.NewReader(string(b))
	}
	req, err := http.NewRequest(method, "http://"+u.addr+path, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+u.token)
	if method == http.MethodPost {
		req.Header.Set("X-Requested-By", "crmimport")
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	if v != nil {
		require.NoError(t, json.Unmarshal(b, v), "%s %s: %s", method, path, b)
	}
	return res.StatusCode
}

// runOf is GET /api/runs/ID: its status, or the error when there is none.
func (u *uiProc) runOf(t *testing.T, id int64) (code int, status string) {
	t.Helper()
	var doc struct {
		Status string `json:"status"`
		Error  string `json:"error"`
	}
	code = u.call(t, http.MethodGet, fmt.Sprintf("/api/runs/%d", id), nil, &doc)
	return code, doc.Status
}

// shell runs the sqlite3 shell on path, as doctor's repair lines do, from
// another process.
func shell(t *testing.T, path, sql string) string {
	t.Helper()
	sh, err := exec.LookPath("sqlite3")
	require.NoError(t, err, "this test runs the sqlite3 shell: apt-get install -y sqlite3 (make test installs it)")
	out, err := exec.Command(sh, path, sql).CombinedOutput()
	require.NoError(t, err, string(out))
	return strings.TrimSpace(string(out))
}

// TestTheUIAndTheShellAndTheCLIShareTheFile (issue 23 item 1): with
// `crmimport ui` open on a file, the sqlite3 shell reads the file from
// another shell (what doctor's repairs do) and leaves its -wal and -shm in
// place; an import from the page and one from the command line both land
// in the file with their own ids, both visible to `runs`; and whether the
// ui then stops cleanly (SIGTERM) or is killed (SIGKILL), both runs stay,
// and the file's integrity check says ok. Before the fix the ui dropped
// its locks as it started: the shell deleted the -wal from under it, the
// page's run was invisible to the CLI, which took the same id, and a
// clean stop wrote stale pages back over the file.
func TestTheUIAndTheShellAndTheCLIShareTheFile(t *testing.T) {
	t.Parallel()
	for _, stop := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(stop.String(), func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "crm.db")
			r := crm(t, nil, "--db", path, "--json", "run", "--tenant", "first", "--source", "canonical", "--only", "companies", demo)
			require.Equal(t, exitPartial, r.code, r.stderr)
			ui := startUI(t, path)

			require.Equal(t, "1", shell(t, path, "SELECT count(*) FROM migrations"))
			for _, f := range []string{path + "-wal", path + "-shm"} {
				_, err := os.Stat(f)
				require.NoError(t, err, "the shell left %s in place: the ui holds its locks", filepath.Base(f))
			}

			var started struct {
				Run int64 `json:"run"`
			}
			abs, err := filepath.Abs(demo)
			require.NoError(t, err)
			code := ui.call(t, http.MethodPost, "/api/imports", map[string]any{"path": abs, "tenant": "page", "source": "canonical"}, &started)
			require.Equal(t, http.StatusAccepted, code)
			deadline := time.Now().Add(60 * time.Second)
			for {
				code, status := ui.runOf(t, started.Run)
				require.Equal(t, http.StatusOK, code)
				if status != "running" {
					require.Equal(t, "partial", status, "the demo export ends partial")
					break
				}
				require.True(t, time.Now().Before(deadline), "the page's run never ended")
				time.Sleep(50 * time.Millisecond)
			}

			cli := startChild(t, nil, "--db", path, "--json", "run", "--tenant", "cli", "--source", "canonical", demo)
			require.Equal(t, exitPartial, cli.wait(t), cli.stderr.String())
			var cliRun struct {
				Run int64 `json:"run"`
			}
			require.NoError(t, json.Unmarshal(cli.stdout.Bytes(), &cliRun))
			require.NotEqual(t, started.Run, cliRun.Run, "the page's run and the CLI's have their own ids")

			runs := func(step string) {
				t.Helper()
				got := shell(t, path, "SELECT group_concat(id || ' ' || tenant_id || ' ' || status, ', ') FROM (SELECT * FROM migrations ORDER BY id)")
				require.Equal(t, fmt.Sprintf("1 first partial, %d page partial, %d cli partial", started.Run, cliRun.Run), got, step)
			}
			runs("with the ui open")
			r = crm(t, nil, "--db", path, "--json", "runs")
			require.Equal(t, exitOK, r.code, r.stderr)
			for _, id := range []int64{1, started.Run, cliRun.Run} {
				require.Contains(t, r.stdout, fmt.Sprintf(`"run": %d,`, id), "`runs` lists run %d", id)
			}
			code, status := ui.runOf(t, cliRun.Run)
			require.Equal(t, http.StatusOK, code)
			require.Equal(t, "partial", status, "the page sees the CLI's run")

			require.NoError(t, ui.cmd.Process.Signal(stop))
			err = ui.cmd.Wait()
			if stop == syscall.SIGTERM {
				require.NoError(t, err, "a stopped ui exits 0: %s", ui.errb)
			}
			runs("after the ui stopped")
			require.Equal(t, "ok", shell(t, path, "PRAGMA integrity_check"))
		})
	}
}

// TestTheUIShowsALaterCLIRunLive (issue 23 item 1, SPEC §9): the ui is
// started on a file whose last run closed cleanly (no -wal), the sqlite3
// shell reads the file, then the command line starts a run in another
// process; while it works, the API
// answers for it (running) and its event stream carries its state, not
// "no such run" (before the fix, the shell had deleted the -wal and -shm
// that the ui still read, and the ui never saw the run).
func TestTheUIShowsALaterCLIRunLive(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "crm.db")
	r := crm(t, nil, "--db", path, "--json", "run", "--tenant", "first", "--source", "canonical", "--only", "companies", demo)
	require.Equal(t, exitPartial, r.code, r.stderr)
	_, err := os.Stat(path + "-wal")
	require.ErrorIs(t, err, os.ErrNotExist, "the first run closed the file cleanly")
	ui := startUI(t, path)
	require.Equal(t, "1", shell(t, path, "SELECT count(*) FROM migrations"), "a look at the file from another shell meanwhile")

	cli := startChild(t, map[string]string{"CRMIMPORT_FAILPOINTS": "batch:contact:2=sleep:4s"},
		"--db", path, "--json", "run", "--tenant", "cli", "--source", "canonical", "--batch-size", "10", demo)
	id := waitForRun(t, path, "cli", cli)
	code, status := ui.runOf(t, id)
	require.Equal(t, http.StatusOK, code, "the API knows the CLI's run while it works")
	require.Equal(t, "running", status)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://%s/api/runs/%d/events", ui.addr, id), nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+ui.token)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var first struct {
		Run    int64  `json:"run"`
		Status string `json:"status"`
	}
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			require.NoError(t, json.Unmarshal([]byte(data), &first))
			break
		}
	}
	require.Equal(t, id, first.Run, "the stream's first event is the CLI's run")
	require.Equal(t, "running", first.Status, "seen live, while the CLI works on it")
	require.Equal(t, exitPartial, cli.wait(t), cli.stderr.String())
}

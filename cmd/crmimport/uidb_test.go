package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUIAsksBeforeMakingADatabase (issue 27, SPEC §9): `ui --db` naming a
// file that does not exist says so and makes nothing — a script is told to
// add --create, a person at a terminal is asked, and only a yes goes on to
// the desktop.
func TestUIAsksBeforeMakingADatabase(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "typo.db")
	// A port already taken: after a yes, the desktop makes the database and
	// then stops, unable to listen.
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()

	r := crm(t, nil, "--db", path, "ui", "--no-open", "--addr", taken.Addr().String())
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "there is no database at "+path)
	require.Contains(t, r.stderr, "--create")
	require.NoFileExists(t, path, "nothing made for a script")

	asked := func(answer string) (int, string) {
		var out, errb bytes.Buffer
		a := newApp(&out, &errb, func(string) string { return "" })
		a.stdin = strings.NewReader(answer)
		a.asking = func() bool { return true }
		oneApp.Lock()
		defer oneApp.Unlock()
		return a.run(context.Background(), []string{"crmimport", "--db", path, "ui", "--no-open", "--addr", taken.Addr().String()}), errb.String()
	}
	for _, no := range []string{"\n", "n\n", "nope\n", ""} {
		code, stderr := asked(no)
		require.Equal(t, 1, code, "%q: %s", no, stderr)
		require.Contains(t, stderr, "There is no database at "+path+". Make a new, empty one there? [y/N]")
		require.Contains(t, stderr, "nothing made at "+path)
		require.NoFileExists(t, path, "%q", no)
	}
	code, stderr := asked("y\n")
	require.NotContains(t, stderr, "nothing made", "code %d", code)
	require.Contains(t, stderr, "listen on", "the desktop went on to listen")
	_, err = os.Stat(path)
	require.NoError(t, err, "made on a yes: %s", stderr)
}

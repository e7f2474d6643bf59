package report

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestShellWordRoundTrips: each word, quoted and given to a real POSIX
// shell, comes back as exactly one argument, byte for byte, and nothing in
// it runs (no file X appears).
func TestShellWordRoundTrips(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"acme", "acme"},
		{"--tenant", "--tenant"},
		{"/tmp/a-b_c.d/crm.db", "/tmp/a-b_c.d/crm.db"},
		{"notes,activities", "notes,activities"},
		{"", "''"},
		{"Acme Corp", "'Acme Corp'"},
		{"it's", `"it's"`},
		{"WHERE tenant_id = 'acme'", `"WHERE tenant_id = 'acme'"`},
		{`say "hi"`, `'say "hi"'`},
		{"$(touch X)", "'$(touch X)'"},
		{"`touch X`", "'`touch X`'"},
		{"it's $(touch X)", `'it'\''s $(touch X)'`},
		{`'"'"'`, `''\''"'\''"'\'''`},
		{`a\b`, `'a\b'`},
		{"x; touch X", "'x; touch X'"},
		{"x && touch X", "'x && touch X'"},
		{"x | touch X", "'x | touch X'"},
		{"> X", "'> X'"},
		{"~root", "'~root'"},
		{"#comment", "'#comment'"},
		{"*", "'*'"},
		{"a\nb", "'a\nb'"},
		{"it's !x", `'it'\''s !x'`},
		{"$HOME's", `'$HOME'\''s'`},
		{"Müller", "'Müller'"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			t.Parallel()
			got := shellWord(tc.in)
			require.Equal(t, tc.want, got)
			dir := t.TempDir()
			cmd := exec.Command("sh", "-c", `printf '%s\0' `+got)
			cmd.Dir = dir
			out, err := cmd.Output()
			require.NoError(t, err)
			require.Equal(t, tc.in+"\x00", string(out), "one argument, as it was")
			_, err = os.Stat(filepath.Join(dir, "X"))
			require.ErrorIs(t, err, os.ErrNotExist, "nothing ran")
		})
	}
	require.Equal(t, `crmimport --db "/tmp/it's/crm.db" run --tenant 'a b'`,
		ShellCommand("crmimport", "--db", "/tmp/it's/crm.db", "run", "--tenant", "a b"))
}

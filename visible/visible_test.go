package visible

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestString: every character a terminal acts on, and every byte that is
// not UTF-8, as a visible escape; newline, tab, printable text in any
// script and backslashes as they are; escaping twice changes nothing.
func TestString(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"Plain", "Acme GmbH · Müller 東京", "Acme GmbH · Müller 東京"},
		{"NewlineAndTab", "a\tb\nc", "a\tb\nc"},
		{"Backslashes", `C:\exports\x1b`, `C:\exports\x1b`},
		{"TitleChange", "\x1b]0;pwned\x07x", `\x1b]0;pwned\x07x`},
		{"ClearScreen", "\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},
		{"Hyperlink", "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\", `\x1b]8;;https://evil.example/\x1b\click\x1b]8;;\x1b\`},
		{"CarriageReturn", "ok\rfail", `ok\x0dfail`},
		{"EveryC0", "\x00\x01\x08\x0b\x0c\x1f", `\x00\x01\x08\x0b\x0c\x1f`},
		{"DEL", "a\x7fb", `a\x7fb`},
		{"C1", "\u0080\u0085\u009b31m\u009f", `\u0080\u0085\u009b31m\u009f`},
		{"Bidi", "\u202aa\u202bb\u202cc\u202dd\u202ee", `\u202aa\u202bb\u202cc\u202dd\u202ee`},
		{"Isolates", "\u2066a\u2067b\u2068c\u2069", `\u2066a\u2067b\u2068c\u2069`},
		{"TrojanFileName", "invoice\u202efdp.exe", `invoice\u202efdp.exe`},
		{"NotUTF8", "caf\xe9 \xff\xfe", `caf\xe9 \xff\xfe`},
		{"CutRune", "\xe6\x9d", `\xe6\x9d`},
		{"Neighbours", "\u00a0\u200b\u2028\u2065\u206a", "\u00a0\u200b\u2028\u2065\u206a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := String(tc.in)
			require.Equal(t, tc.want, got)
			require.Equal(t, got, String(got), "escaping twice changes nothing")
			var b bytes.Buffer
			n, err := Writer(&b).Write([]byte(tc.in))
			require.NoError(t, err)
			require.Equal(t, len(tc.in), n, "Write reports what it was given")
			require.Equal(t, tc.want, b.String(), "the writer escapes as String does")
		})
	}
}

// TestWriterThroughFmt: fmt writes whole lines through the writer.
func TestWriterThroughFmt(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	fmt.Fprintf(Writer(&b), "run %d · tenant %s\n", 3, "acme\x1b[2J")
	require.Equal(t, "run 3 · tenant acme\\x1b[2J\n", b.String())
}

// TestJSON: the controls encoding/json leaves raw become \u escapes, and
// the document decodes to the very same values.
func TestJSON(t *testing.T) {
	t.Parallel()
	values := map[string]string{
		"c0": "\x1b]0;pwned\x07", "del": "a\x7fb", "c1": "\u009b31m\u0085", "bidi": "x\u202ey\u2066z\u2069",
		"plain": "Müller \\ \"q\" <b>", "bad": "caf\xe9",
	}
	doc, err := json.Marshal(values)
	require.NoError(t, err)
	got := JSON(doc)
	require.False(t, needs(string(got)), "nothing a terminal acts on is left: %s", got)
	require.Contains(t, string(got), `a\u007fb`)
	require.Contains(t, string(got), `\u009b31m\u0085`)
	require.Contains(t, string(got), `x\u202ey\u2066z\u2069`)
	var back map[string]string
	require.NoError(t, json.Unmarshal(got, &back))
	var want map[string]string
	require.NoError(t, json.Unmarshal(doc, &want))
	require.Equal(t, want, back, "the same values")
	require.Equal(t, values["del"], back["del"])
	require.Equal(t, values["bidi"], back["bidi"])

	plain := []byte(`{"a":"b"}`)
	require.Equal(t, plain, JSON(plain))
}

package report

import (
	"strings"
)

// shellWord quotes s as one argument for a POSIX shell: as it is when it
// holds only characters no shell gives a meaning to (acme, --tenant,
// ./export, PATH), else in single quotes, inside which nothing is special,
// each single quote of s closing them, escaped, and opening them again —
// so that a command pasted into a shell runs with exactly the arguments
// it was given, whatever a tenant, a source, an id or the database's path
// holds ($(…), backticks, quotes, spaces, ;). A word whose only quotes are
// single ones, and which holds nothing that is special inside double
// quotes ($, `, \, ", and bash's !), is set in double quotes instead, which
// reads better ("… WHERE tenant_id = 'acme'").
func shellWord(s string) string {
	switch {
	case s != "" && strings.Trim(s, shellSafe) == "":
		return s
	case strings.Contains(s, "'") && !strings.ContainsAny(s, "$`\\\"!"):
		return `"` + s + `"`
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellSafe are the characters that mean nothing to a POSIX shell
// anywhere in a word (not ~ or #, which do at its start, nor = in the
// first word: doctor's commands start with a program name).
const shellSafe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=.,/:@%"

// ShellCommand is a command line for a POSIX shell, every word quoted:
// what to do next, to paste (doctor's repairs, a fix folder's run).
func ShellCommand(words ...string) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = shellWord(w)
	}
	return strings.Join(quoted, " ")
}

package forensics

import (
	"strings"
)

// commented is a repair line: a command and, after a shell comment, what
// it does, so that the whole line can be pasted. The note is doctor's own
// words: it never holds data, whose newline would end the comment.
func commented(cmd, note string) string {
	if note == "" {
		return cmd
	}
	return cmd + "   # " + strings.ReplaceAll(note, "\n", " ")
}

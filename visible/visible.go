// Package visible makes text from data safe to show on a terminal: every
// character a terminal would act on instead of showing — a C0 control but
// newline and tab, DEL, a C1 control, a bidirectional control that
// reorders what follows (U+202A–U+202E, U+2066–U+2069) — and every byte
// that is not UTF-8 is written as a visible escape (\x1b, \x7f, \u009b,
// \u202e, \xff), so that a customer's note, a zip's folder or a dump's
// message can neither retitle the window, clear the screen, forge a
// hyperlink nor turn a file name around. Everything else, backslashes
// included, is written as it is, so that escaping twice changes nothing.
//
// It is for human text only. Files of data (rejects CSV) keep their values
// as they are, and JSON keeps them too: JSON escapes a JSON document's
// strings the standard way, which a decoder reads back as the same values.
//
// It imports no package of the project, so that every writer of text can
// use it.
package visible

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// unsafe reports whether a terminal would act on r instead of showing it.
func unsafe(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// needs reports whether s holds anything String would change.
func needs(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f || c == '\n' || c == '\t' {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 || unsafe(r) {
			return true
		}
		i += n
	}
	return false
}

// String returns s with every unsafe character and every byte that is not
// UTF-8 written as a visible escape: \xNN for a C0 control, DEL and a stray
// byte, \uNNNN for a C1 or bidirectional control.
func String(s string) string {
	if !needs(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafe(r) && r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafe(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Writer returns a writer that passes what is written to w through String:
// the writer of human text on a terminal, so that no caller can forget.
// Each Write is escaped on its own, so a character split across two Writes
// shows as the escapes of its bytes; fmt, text/tabwriter and the like write
// whole characters.
func Writer(w io.Writer) io.Writer { return &writer{w: w} }

type writer struct{ w io.Writer }

func (v *writer) Write(p []byte) (int, error) {
	s := string(p)
	if !needs(s) {
		return v.w.Write(p)
	}
	if _, err := io.WriteString(v.w, String(s)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// JSON returns the JSON document doc with the unsafe characters that
// encoding/json leaves as they are (DEL, the C1 and the bidirectional
// controls; it escapes C0 itself and replaces bytes that are not UTF-8)
// written as \uNNNN escapes: the same document to any decoder, and one that
// a terminal shows as it is. doc must be valid JSON, where such characters
// can only stand inside strings.
func JSON(doc []byte) []byte {
	s := string(doc)
	if !needs(s) {
		return doc
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r >= 0x7f && unsafe(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return []byte(b.String())
}

package store

import (
	"strconv"
	"strings"
)

// Rebind gives a statement written with SQLite's placeholders PostgreSQL's:
// ?N becomes $N, and a bare ? the next number after the largest given so
// far, as SQLite numbers it (so `?1 … ?6, ?, ?` is $1 … $6, $7, $8). What
// stands in a string literal, a quoted name or a comment is left as it is.
// Every statement of the engine is written once, with ? and ?N (SPEC §6's
// claim reads the same on both); the PostgreSQL driver rebinds it on its
// way to the server (postgres.go).
func Rebind(query string) string {
	if !strings.ContainsRune(query, '?') {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	largest := 0
	for i := 0; i < len(query); {
		c := query[i]
		switch {
		case c == '\'' || c == '"':
			j := closing(query, i+1, c)
			b.WriteString(query[i:j])
			i = j
		case c == '-' && strings.HasPrefix(query[i:], "--"):
			j := strings.IndexByte(query[i:], '\n')
			if j < 0 {
				j = len(query) - i
			}
			b.WriteString(query[i : i+j])
			i += j
		case c == '/' && strings.HasPrefix(query[i:], "/*"):
			j := strings.Index(query[i+2:], "*/")
			if j < 0 {
				j = len(query) - i - 2
			} else {
				j += 2
			}
			b.WriteString(query[i : i+2+j])
			i += 2 + j
		case c == '?':
			j := i + 1
			for j < len(query) && query[j] >= '0' && query[j] <= '9' {
				j++
			}
			n := largest + 1
			if j > i+1 {
				n, _ = strconv.Atoi(query[i+1 : j])
			}
			largest = max(largest, n)
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// closing is the index just past the quote q that closes a literal or a
// quoted name begun before from (a doubled quote stands for itself).
func closing(s string, from int, q byte) int {
	for i := from; i < len(s); i++ {
		if s[i] != q {
			continue
		}
		if i+1 < len(s) && s[i+1] == q {
			i++
			continue
		}
		return i + 1
	}
	return len(s)
}

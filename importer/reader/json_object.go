package reader

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// A record of JSON is read whole, then its keys and values from memory:
// each string value is made in one allocation, where a decoder reading it
// as a value (json.RawMessage) then unquoting it (json.Unmarshal) makes
// three, which for a record near the bound (MaxRecordBytes) are three
// copies of 16 MiB at once (issue 23 item 21).

// objectRow is the row of raw, one JSON object that a decoder (or
// json.Valid) has found valid, starting at line: its keys in order, each
// value as jsonSource.value gives it (a string unquoted as encoding/json
// unquotes it, null as "", a number, true or false as written, an object or
// array as compact JSON, marked nested), and invalidUTF8Reason when a value
// is not UTF-8 while it should be.
func (s *jsonSource) objectRow(raw []byte, line int) Row {
	var cols []Col
	badUTF8 := false
	i := skipJSONSpace(raw, 0) + 1 // past the {
	for {
		i = skipJSONSpace(raw, i)
		switch raw[i] {
		case '}':
			return s.row(line, cols, badUTF8)
		case ',':
			i = skipJSONSpace(raw, i+1)
		}
		end := stringEnd(raw, i)
		key := unquoteJSON(raw[i:end])
		i = skipJSONSpace(raw, end) + 1 // past the :
		i = skipJSONSpace(raw, i)
		end = valueEnd(raw, i)
		v := raw[i:end]
		badUTF8 = badUTF8 || s.checkUTF8 && !utf8.Valid(v)
		c := Col{Name: key}
		switch v[0] {
		case '"':
			c.Value = unquoteJSON(v)
		case 'n':
		case '{', '[':
			var b bytes.Buffer
			_ = json.Compact(&b, v) // valid: the object is
			c.Value, c.Nested = b.String(), true
		default:
			c.Value = string(v) // a number's literal, true, false
		}
		cols = append(cols, c)
		i = end
	}
}

// skipJSONSpace is the index of the first byte of raw at or after i that
// is not white space.
func skipJSONSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\r' || raw[i] == '\n') {
		i++
	}
	return i
}

// stringEnd is the index past the closing quote of the string that starts
// at raw[i].
func stringEnd(raw []byte, i int) int {
	for i++; ; {
		j := bytes.IndexAny(raw[i:], `"\`)
		if raw[i+j] == '"' {
			return i + j + 1
		}
		i += j + 2 // an escape: its next byte is not the end
	}
}

// valueEnd is the index past the end of the valid value that starts at
// raw[i].
func valueEnd(raw []byte, i int) int {
	switch raw[i] {
	case '"':
		return stringEnd(raw, i)
	case '{', '[':
		depth := 0
		for {
			switch raw[i] {
			case '"':
				i = stringEnd(raw, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
	}
	for i < len(raw) && !strings.ContainsRune(" \t\r\n,]}", rune(raw[i])) {
		i++
	}
	return i
}

// unquoteJSON is the text of the valid JSON string q (quotes included), as
// encoding/json gives it: escapes read, a \u surrogate that pairs with no
// other and a byte that is not UTF-8 read as U+FFFD.
func unquoteJSON(q []byte) string {
	q = q[1 : len(q)-1]
	if bytes.IndexByte(q, '\\') < 0 && utf8.Valid(q) {
		return string(q)
	}
	var b strings.Builder
	b.Grow(len(q))
	for i := 0; i < len(q); {
		switch c := q[i]; {
		case c == '\\':
			switch q[i+1] {
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r := hex4(q[i+2 : i+6])
				i += 6
				if utf16.IsSurrogate(r) {
					if i+6 <= len(q) && q[i] == '\\' && q[i+1] == 'u' {
						if pair := utf16.DecodeRune(r, hex4(q[i+2:i+6])); pair != unicode.ReplacementChar {
							b.WriteRune(pair)
							i += 6
							continue
						}
					}
					r = unicode.ReplacementChar
				}
				b.WriteRune(r)
				continue
			default: // " \ /
				b.WriteByte(q[i+1])
			}
			i += 2
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			i++
		default:
			r, size := utf8.DecodeRune(q[i:])
			b.WriteRune(r) // U+FFFD for a byte that is not UTF-8
			i += size
		}
	}
	return b.String()
}

// hex4 is the value of four hex digits (valid JSON has them after \u).
func hex4(h []byte) rune {
	var r rune
	for _, c := range h {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		default:
			c = c - 'A' + 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

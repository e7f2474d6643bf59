package reader

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestObjectRowAgainstDecoder: a record read from memory (objectRow) is
// the row that reading it token by token with encoding/json gives (its
// keys, values, nested marks and reason), whatever its strings hold:
// escapes, surrogates paired or alone, bytes that are not UTF-8, control
// characters escaped, nested values, numbers, repeated keys, white space.
func TestObjectRowAgainstDecoder(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(7, 21))
	pieces := []string{"a", "é", "€", "😀", `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u00e9`, `\u0000`, `\ud83d\ude00`,
		`\ud83d`, `\ude00`, `\ud83dx`, `\ud83d\u0041`, "\xff", "\xe2\x82", "\xed\xa0\x80", " ", ",", "]", "}", "{", "[", ":"}
	str := func() string {
		var b strings.Builder
		b.WriteByte('"')
		for range rnd.IntN(12) {
			b.WriteString(pieces[rnd.IntN(len(pieces))])
		}
		b.WriteByte('"')
		return b.String()
	}
	var value func(depth int) string
	value = func(depth int) string {
		switch k := rnd.IntN(9); {
		case k < 3:
			return str()
		case k == 3:
			return []string{"0", "-12.5e+3", "1E2", "12345678901234567890"}[rnd.IntN(4)]
		case k == 4:
			return []string{"true", "false", "null"}[rnd.IntN(3)]
		case k == 5 && depth < 3:
			return "[ " + value(depth+1) + " ,\n" + value(depth+1) + " ]"
		case k == 6 && depth < 3:
			return "{" + str() + " : " + value(depth+1) + "}"
		}
		return str()
	}
	compared := 0
	for n := range 3000 {
		var b strings.Builder
		b.WriteString(" {")
		for i := range rnd.IntN(6) {
			if i > 0 {
				b.WriteString([]string{",", " , ", ",\n\t"}[rnd.IntN(3)])
			}
			b.WriteString(str() + []string{":", " : ", ":\r\n"}[rnd.IntN(3)] + value(0))
		}
		b.WriteString("} ")
		raw := []byte(b.String())
		if !json.Valid(raw) {
			continue // a piece made it invalid (a raw byte of a lone surrogate's UTF-8 is valid: kept)
		}
		for _, checkUTF8 := range []bool{true, false} {
			s := &jsonSource{name: "o.json", checkUTF8: checkUTF8}
			got := s.objectRow(bytes.TrimLeft(raw, " "), 3)
			d := &jsonSource{name: "o.json", checkUTF8: checkUTF8, lines: &lineCounter{r: bytes.NewReader(raw), line: 3}}
			d.dec = json.NewDecoder(d.lines)
			d.dec.UseNumber()
			tok, err := d.token(false)
			require.NoError(t, err)
			want, err := d.readRecord(tok)
			require.NoError(t, err)
			require.Equal(t, want, got, fmt.Sprintf("object %d: %q", n, raw))
			compared++
		}
	}
	require.Greater(t, compared, 5000)
}

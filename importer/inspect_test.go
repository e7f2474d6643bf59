package importer

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

func TestInspectFingerprint(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"Empty", "", "crc32c:00000000:0"},
		{"CheckValue", "123456789", "crc32c:e3069283:9"}, // the published CRC-32C check value
		{"OneByteChanged", "123456780", "crc32c:9bb4494f:9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			info, err := Inspect(strings.NewReader(tt.in))
			require.NoError(t, err)
			require.Equal(t, tt.want, info.Fingerprint)
			require.Equal(t, int64(len(tt.in)), info.Size)

			again, err := Inspect(iotest.OneByteReader(strings.NewReader(tt.in)))
			require.NoError(t, err)
			require.Equal(t, info, again, "the fingerprint does not depend on how the bytes arrive")
		})
	}
}

// TestInspectFile: a real file, larger than the read buffer, gives the
// same answer every time and a different one once a byte changes.
func TestInspectFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	content := bytes.Repeat([]byte("Id,Name,Description\n001,Acme,\"Café, “quoted”\"\n"), 10000)
	a := filepath.Join(dir, "a.csv")
	require.NoError(t, os.WriteFile(a, content, 0o600))
	changed := bytes.Clone(content)
	changed[len(changed)/2] = 'X'
	b := filepath.Join(dir, "b.csv")
	require.NoError(t, os.WriteFile(b, changed, 0o600))

	inspect := func(path string) FileInfo {
		f, err := os.Open(path)
		require.NoError(t, err)
		defer f.Close()
		info, err := Inspect(f)
		require.NoError(t, err)
		return info
	}
	first, second, other := inspect(a), inspect(a), inspect(b)
	require.Equal(t, first, second)
	require.Equal(t, int64(len(content)), first.Size)
	require.True(t, first.ValidUTF8)
	require.NotEqual(t, first.Fingerprint, other.Fingerprint)
	require.Equal(t, first.Size, other.Size)
	require.Regexp(t, `^crc32c:[0-9a-f]{8}:\d+$`, first.Fingerprint)
}

func TestInspectValidUTF8(t *testing.T) {
	t.Parallel()
	euro := "€"   // 3 bytes
	emoji := "😀"  // 4 bytes
	eacute := "é" // 2 bytes
	pad := func(n int) string { return strings.Repeat("a", n) }
	tests := []struct {
		name string
		in   string
		want bool
	}{
		{"ASCII", "id,name\n1,Ann\n", true},
		{"MultiByte", "Ren" + eacute + " " + euro + " " + emoji, true},
		{"Empty", "", true},
		{"Windows1252Byte", "Ren\xe9\n", false},
		{"Windows1252EuroAtEnd", "price \x80", false},
		{"LoneContinuationByte", "a\x80b", false},
		{"TruncatedRuneAtEnd", "abc\xe2\x82", false},
		{"TruncatedRuneThenASCII", "abc\xe2\x82z", false},
		{"Overlong", "\xc0\xaf", false},
		{"Surrogate", "\xed\xa0\x80", false},
		// The read buffer of Inspect is 64 KiB: put runes across it.
		{"EuroAcrossBufferBoundary", pad(64<<10-1) + euro + pad(10), true},
		{"EmojiAcrossBufferBoundaryBy1", pad(64<<10-1) + emoji, true},
		{"EmojiAcrossBufferBoundaryBy3", pad(64<<10-3) + emoji + "z", true},
		{"InvalidAcrossBufferBoundary", pad(64<<10-1) + "\xe2\x82z", false},
		{"InvalidAfterBufferBoundary", pad(64<<10+5) + "\xff", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, r := range []struct {
				name string
				r    io.Reader
			}{
				{"Whole", strings.NewReader(tt.in)},
				{"OneByte", iotest.OneByteReader(strings.NewReader(tt.in))},
				{"HalfReader", iotest.HalfReader(strings.NewReader(tt.in))},
			} {
				info, err := Inspect(r.r)
				require.NoError(t, err, r.name)
				require.Equal(t, tt.want, info.ValidUTF8, r.name)
				require.Equal(t, int64(len(tt.in)), info.Size, r.name)
			}
		})
	}
}

// TestInspectSplitRunes: every way of cutting a multi-byte rune between
// two reads is still valid.
func TestInspectSplitRunes(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"é", "€", "😀", "a😀é€b"} {
		for cut := 0; cut <= len(s); cut++ {
			r := &chunkReader{chunks: [][]byte{[]byte(s[:cut]), []byte(s[cut:])}}
			info, err := Inspect(r)
			require.NoError(t, err)
			require.True(t, info.ValidUTF8, "%q cut at %d", s, cut)
		}
	}
	// And cut in three.
	r := &chunkReader{chunks: [][]byte{[]byte("x\xf0"), []byte("\x9f"), []byte("\x98\x80y")}}
	info, err := Inspect(r)
	require.NoError(t, err)
	require.True(t, info.ValidUTF8)
	// A rune start followed, in the next read, by a byte that is not a continuation.
	r = &chunkReader{chunks: [][]byte{[]byte("x\xe2\x82"), []byte("y")}}
	info, err = Inspect(r)
	require.NoError(t, err)
	require.False(t, info.ValidUTF8)
}

func TestInspectReadError(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	_, err := Inspect(io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(boom)))
	require.ErrorIs(t, err, boom)
	require.ErrorContains(t, err, "after 3 bytes")
}

// chunkReader returns its chunks one per Read.
type chunkReader struct{ chunks [][]byte }

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.chunks[0])
	c.chunks[0] = c.chunks[0][n:]
	if len(c.chunks[0]) == 0 {
		c.chunks = c.chunks[1:]
	}
	return n, nil
}

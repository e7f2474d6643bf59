package input

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

	"crmimport/importer/reader"
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

// TestInspectTextEvidence: the evidence of a file's encoding, gathered
// over the whole file in the fingerprinting pass, whatever the size of the
// pieces it arrives in (SPEC §4: one count of UTF-8 sequences against
// bytes that are not UTF-8, never a stop at the first of each).
func TestInspectTextEvidence(t *testing.T) {
	t.Parallel()
	pad := func(n int) string { return strings.Repeat("a", n) }
	// seen is the evidence but its histogram of high bytes, checked apart.
	type seen struct {
		multiByte, invalid, firstInvalid int64
		invalidByte                      byte
		undefined, firstUndefined        int64
		undefinedByte                    byte
	}
	none := seen{firstInvalid: -1, firstUndefined: -1}
	tests := []struct {
		name string
		in   string
		want seen
	}{
		{"ASCII", "id,name\n1,Ann\n", none},
		{"UTF8", "1,José\n", seen{multiByte: 1, firstInvalid: -1, firstUndefined: -1}},
		{"UTF8WithAStrayByte", "1,José\n2,O\x92Brien\n", seen{multiByte: 1, invalid: 1, firstInvalid: 11, invalidByte: 0x92, firstUndefined: -1}},
		{"StrayByteBeforeTheUTF8", "2,O\x92Brien\n1,José\n", seen{multiByte: 1, invalid: 1, firstInvalid: 3, invalidByte: 0x92, firstUndefined: -1}},
		{"ASCIIWithOneApostrophe", "1,O\x92Brien\n", seen{invalid: 1, firstInvalid: 3, invalidByte: 0x92, firstUndefined: -1}},
		{"Windows1252", "Caf\xe9 M\xfcller \x80 \x96", seen{invalid: 4, firstInvalid: 3, invalidByte: 0xE9, firstUndefined: -1}},
		{"UndefinedIn1252", "a\xe9b\x81c\x9d", seen{invalid: 3, firstInvalid: 1, invalidByte: 0xE9, undefined: 2, firstUndefined: 3, undefinedByte: 0x81}},
		{"UndefinedIn1252ThenUTF8", "a\x8fb é", seen{multiByte: 1, invalid: 1, firstInvalid: 1, invalidByte: 0x8F, undefined: 1, firstUndefined: 1, undefinedByte: 0x8F}},
		// Every sequence and every stray byte counts, to the end of the file.
		{"CountedToTheEnd", "Jos\xc3\xa9,\xe9,\xc3\x81,\xfc\xfc\xdf,\xe2\x82\xac,\x81", seen{multiByte: 3, invalid: 5, firstInvalid: 6,
			invalidByte: 0xE9, undefined: 1, firstUndefined: 19, undefinedByte: 0x81}},
		// A pair of Windows-1252 characters that happens to be UTF-8 ("Ã©"),
		// and "Ã" + 0x81 ("Á" once): sequences, not bytes that are not UTF-8.
		{"MojibakePairsAreSequences", "Cr\xc3\xa9ations \xc3\x81guila", seen{multiByte: 2, firstInvalid: -1, firstUndefined: -1}},
		{"TruncatedRuneAtTheEnd", "abc\xe2\x82", seen{invalid: 2, firstInvalid: 3, invalidByte: 0xE2, firstUndefined: -1}},
		{"UTF8AcrossTheBufferBoundary", pad(64<<10-1) + "€" + pad(10), seen{multiByte: 1, firstInvalid: -1, firstUndefined: -1}},
		{"StrayByteFarIn", pad(64<<10+5) + "\x92" + "é", seen{multiByte: 1, invalid: 1, firstInvalid: 64<<10 + 5, invalidByte: 0x92, firstUndefined: -1}},
		{"UndefinedFarIn", pad(200<<10) + "\x9d", seen{invalid: 1, firstInvalid: 200 << 10, invalidByte: 0x9D, undefined: 1, firstUndefined: 200 << 10, undefinedByte: 0x9D}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var high [128]int64
			for _, b := range []byte(tt.in) {
				if b >= 0x80 {
					high[b-0x80]++
				}
			}
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
				ev := info.Text
				require.Equal(t, tt.want, seen{ev.MultiByte, ev.Invalid, ev.FirstInvalid, ev.InvalidByte, ev.Undefined, ev.FirstUndefined, ev.UndefinedByte}, r.name)
				require.Equal(t, high, ev.High, "every byte above 0x7F, wherever it stands (%s)", r.name)
				require.Equal(t, tt.want.invalid == 0, info.ValidUTF8, r.name)
			}
		})
	}
}

// TestChooseEncoding: how a file is read, on the evidence of its bytes
// (issue 11 item 2): UTF-8 as soon as it holds UTF-8, its stray bytes
// failing their rows; Windows-1252 only for a file without UTF-8 whose high
// bytes are all Windows-1252 characters, and that is a warning; neither
// when it holds bytes Windows-1252 leaves undefined; UTF-16 by its NULs.
func TestChooseEncoding(t *testing.T) {
	t.Parallel()
	utf16le := func(s string) string {
		var b strings.Builder
		for _, r := range s {
			b.WriteByte(byte(r))
			b.WriteByte(byte(r >> 8))
		}
		return b.String()
	}
	tests := []struct {
		name, in, asked string
		want            string
		notice, warning string // substrings; "" for none
		why             string // a substring of the evidence the choice rests on (crmimport inspect shows it)
	}{
		{"ASCII", "id,name\n1,Ann\n", "", "utf-8", "", "", "it is ASCII (valid UTF-8)"},
		{"UTF8", "id,name\n1,José\n", "", "utf-8", "", "", "it is valid UTF-8"},
		{"UTF8WithAStray0x92", "id,name\n1,José\n2,O\x92Brien\n", "", "utf-8",
			"c.csv is UTF-8 (it holds 1 UTF-8 sequence) with 1 byte that is not (0x92, at byte offset 19)", "",
			"it holds as many UTF-8 sequences (1) as bytes that are not UTF-8 (1; 0x92, at byte offset 19)"},
		{"ASCIIWithOne0x92", "id,name\n1,O\x92Brien\n", "", "windows-1252", "",
			"c.csv was read as Windows-1252, not UTF-8: it holds no UTF-8 sequence, and every byte above 0x7F in it is a Windows-1252 character (the first: 0x92 \"’\", at byte offset 11)",
			"it holds no UTF-8 sequence, and every byte above 0x7F in it is a Windows-1252 character (the first: 0x92 \"’\", at byte offset 11)"},
		{"Neither", "id,name\n1,Ren\xe9\n2,\x81x\n", "", "utf-8",
			"c.csv is neither UTF-8 (it holds no UTF-8 sequence) nor Windows-1252 (byte 0x81 at byte offset 17 is undefined there)", "",
			"neither UTF-8 (it holds no UTF-8 sequence) nor Windows-1252 (byte 0x81 at byte offset 17 is undefined there): nothing is guessed"},
		// Issue 23 item 7: the whole file's evidence decides, never one
		// sequence — a Windows-1252 export in which a few byte pairs happen
		// to form UTF-8 (mojibake already stored in the data) is Windows-1252.
		{"MoreWindows1252BytesThanUTF8Sequences", "id,name\n1,Cr\xc3\xa9ations\n2,Caf\xe9 M\xfcller\n", "", "windows-1252", "",
			"c.csv was read as Windows-1252, not UTF-8: it holds more bytes that are not UTF-8 (2) than UTF-8 sequences (1)",
			"it holds more bytes that are not UTF-8 (2) than UTF-8 sequences (1), and each of those bytes is a Windows-1252 character"},
		{"ATieIsUTF8", "id,name\n1,Jos\xc3\xa9\n2,Caf\xe9\n", "", "utf-8",
			"c.csv is UTF-8 (it holds 1 UTF-8 sequence) with 1 byte that is not (0xE9, at byte offset 21)", "",
			"it holds as many UTF-8 sequences (1) as bytes that are not UTF-8 (1; 0xE9, at byte offset 21)"},
		// The bytes Windows-1252 leaves undefined, inside the pairs that
		// happen to be UTF-8 ("Ã\x81" for "Á"): the file is Windows-1252 all
		// the same, and they are read as the Encoding Standard reads them,
		// counted in the warning.
		{"UndefinedBytesInsideUTF8Pairs", "id,name\n1,\xc3\x81guila\n2,\xc3\x8dslandia\n3,Caf\xe9 M\xfcller Gr\xfc\xdfe\n", "", "windows-1252", "",
			"2 bytes that Windows-1252 leaves undefined (0x81, 0x8D) were read as the control characters U+0081 and U+008D, as the Encoding Standard reads them",
			"it holds more bytes that are not UTF-8 (4) than UTF-8 sequences (2)"},
		{"AskedWins", "id,name\n1,José\n", "windows-1252", "windows-1252", "", "", "--encoding"},
		// Asked for, the bytes the encoding leaves undefined are counted in a
		// warning, never turned into U+FFFD without a word.
		{"AskedWithUndefinedBytes", "id,name\n1,\x81x\x8d\x81\n", "windows-1252", "windows-1252", "",
			"c.csv: 3 bytes that Windows-1252 leaves undefined (0x81 ×2, 0x8D) were read as the control characters U+0081 and U+008D, as the Encoding Standard reads them",
			"--encoding"},
		{"AskedWithAByteLeftUndefinedOutsideC1", "id,name\n1,\xae\n", "iso-8859-7", "iso-8859-7", "",
			"c.csv: 1 byte that ISO-8859-7 leaves undefined (0xAE) was read as U+FFFD, the Encoding Standard's replacement character",
			"--encoding"},
		{"UTF16BOM", "\xff\xfe" + utf16le("id,name\n"), "", "utf-16", "reading it as UTF-16", "", "it starts with a UTF-16 byte-order mark"},
		{"UTF16LEWithoutBOM", utf16le("id\tname\r\n1\tJosé\r\n"), "", "utf-16le",
			`c.csv is UTF-16LE text without a byte-order mark (as Excel saves "Unicode text"): reading it as UTF-16LE`, "",
			"it is UTF-16LE text without a byte-order mark (NUL in every other byte of its start)"},
		{"UTF32BOMIsNotUTF16", "\xff\xfe\x00\x00i\x00\x00\x00", "", "utf-8", "", "", "it is UTF-32 text, which crmimport does not read"},
		{"PNG", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe\xe9", "", "utf-8", "", "", "it is a PNG image, not text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			info, err := Inspect(strings.NewReader(tt.in))
			require.NoError(t, err)
			c := reader.ChooseEncoding("c.csv", info.Head, info.Text, tt.asked)
			enc, notice, warning := c.Encoding, c.Notice, c.Warning
			require.Contains(t, c.Why, tt.why)
			// Guessed (issue 27 item 4: New import's encoding field): the
			// bytes do not settle the encoding.
			guessed := map[string]bool{"UTF8WithAStray0x92": true, "ASCIIWithOne0x92": true, "Neither": true,
				"MoreWindows1252BytesThanUTF8Sequences": true, "ATieIsUTF8": true, "UndefinedBytesInsideUTF8Pairs": true}
			require.Equal(t, guessed[tt.name], c.Guessed)
			require.Equal(t, tt.want, enc)
			if tt.notice == "" {
				require.Empty(t, notice)
			} else {
				require.Contains(t, notice, tt.notice)
			}
			if tt.warning == "" {
				require.Empty(t, warning)
			} else {
				require.Contains(t, warning, tt.warning)
			}
			// The reader agrees: a file planned as text is not refused, and
			// reads in the encoding chosen.
			if tt.name != "PNG" && tt.name != "UTF32BOMIsNotUTF16" {
				rr, err := reader.NewRowReader(strings.NewReader(tt.in), reader.ReadOptions{Name: "c.csv", Format: reader.FormatCSV, Encoding: enc})
				for err == nil {
					_, err = rr.Next()
				}
				if errors.Is(err, io.EOF) {
					err = nil
				}
				require.NoError(t, err)
			}
		})
	}
}

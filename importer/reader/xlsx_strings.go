package reader

import "strings"

// sstChunk is the size of one chunk of a shared-string table's arena, and
// of one chunk of its offsets.
const sstChunk = 1 << 20

const offsetsPerChunk = sstChunk / 4

// sharedStrings are a workbook's shared-string table, held in an arena of
// chunks of sstChunk bytes filled one after the other, and never copied
// once full; the offsets where the strings start are kept the same way.
// String i is the arena's bytes from offset i to offset i+1, which may
// span two chunks. A slice grown by append copies itself as it grows and
// holds both copies for a moment: near its bound (maxSharedStrings, 128
// MiB) the table cost over 256 MiB so (issue 23 item 20). Only a first
// chunk grows by append, up to sstChunk, so that a small table stays
// small.
type sharedStrings struct {
	text  [][]byte
	start [][]uint32
	size  int64 // bytes in text
	n     int   // offsets in start: the strings, and one
}

// add appends a string to the table.
func (t *sharedStrings) add(s []byte) {
	if t.n == 0 {
		t.mark()
	}
	for len(s) > 0 {
		if len(t.text) == 0 || len(t.text[len(t.text)-1]) == sstChunk {
			t.text = append(t.text, make([]byte, 0, min(len(t.text), 1)*sstChunk))
		}
		last := &t.text[len(t.text)-1]
		k := min(len(s), sstChunk-len(*last))
		*last = append(*last, s[:k]...)
		s = s[k:]
		t.size += int64(k)
	}
	t.mark()
}

// mark ends a string where the arena ends.
func (t *sharedStrings) mark() {
	if t.n%offsetsPerChunk == 0 {
		t.start = append(t.start, make([]uint32, 0, min(len(t.start), 1)*offsetsPerChunk))
	}
	last := &t.start[len(t.start)-1]
	*last = append(*last, uint32(t.size))
	t.n++
}

// held is the memory the table holds its strings in, as maxSharedStrings
// bounds it: their bytes, and 4 bytes a string for where it starts.
func (t *sharedStrings) held() int64 { return t.size + 4*int64(t.n) }

func (t *sharedStrings) offset(i int) int64 {
	return int64(t.start[i/offsetsPerChunk][i%offsetsPerChunk])
}

// get is string i.
func (t *sharedStrings) get(i int) (string, bool) {
	if i < 0 || i+1 >= t.n {
		return "", false
	}
	a, b := t.offset(i), t.offset(i+1)
	if a/sstChunk == (b-1)/sstChunk || a == b {
		c, off := a/sstChunk, a%sstChunk
		if a == b {
			return "", true
		}
		return string(t.text[c][off : off+b-a]), true
	}
	var s strings.Builder
	s.Grow(int(b - a))
	for a < b {
		c, off := a/sstChunk, a%sstChunk
		end := min(int64(sstChunk), off+b-a)
		s.Write(t.text[c][off:end])
		a += end - off
	}
	return s.String(), true
}

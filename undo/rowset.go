package undo

import (
	"math/bits"

	"crmimport/ledger"
)

// rowSet is a set of row ids of one target table, one bit per id: what
// planning keeps of the rows an undo takes back (R16). Row ids are given
// out in order by the table's allocator (store.IDs), so a table of n rows
// costs about n/8 bytes — 150 KiB for 1.2 million rows — where a map of
// them cost over 40 bytes a row.
type rowSet struct{ words []uint64 }

func (s *rowSet) add(id int64) {
	if id <= 0 {
		return
	}
	w := int(id >> 6)
	if w >= len(s.words) {
		s.words = append(s.words, make([]uint64, w+1-len(s.words))...)
	}
	s.words[w] |= 1 << (uint(id) & 63)
}

func (s *rowSet) has(id int64) bool {
	if s == nil || id <= 0 {
		return false
	}
	w := int(id >> 6)
	return w < len(s.words) && s.words[w]&(1<<(uint(id)&63)) != 0
}

// each calls f with every id of s that is not in not, in order, until f
// returns false.
func (s *rowSet) each(not *rowSet, f func(id int64) bool) {
	if s == nil {
		return
	}
	for w, word := range s.words {
		if not != nil && w < len(not.words) {
			word &^= not.words[w]
		}
		for word != 0 {
			bit := bits.TrailingZeros64(word)
			if !f(int64(w)<<6 | int64(bit)) {
				return
			}
			word &= word - 1
		}
	}
}

// rowSets are a rowSet per kind.
type rowSets map[ledger.Kind]*rowSet

func (m rowSets) of(kind ledger.Kind) *rowSet {
	s := m[kind]
	if s == nil {
		s = &rowSet{}
		m[kind] = s
	}
	return s
}

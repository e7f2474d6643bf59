package importer

import "hash/maphash"

// idTable maps ids (source ids, email and domain keys) to numbers, with
// little memory and nothing for the garbage collector to scan: the ids'
// bytes live back to back in one arena, and an open-addressing table of
// fixed-size slots refers to them. The run's index holds about a million
// of these at the seed's scale and four million at four times it, where Go
// maps of strings took three times the memory. Ids are never removed; a
// table is dropped whole when no task needs it any more.
type idTable[V any] struct {
	seed  maphash.Seed
	arena []byte
	slots []idSlot[V] // a power of two in length
	n     int
	// long holds the ids a slot cannot refer to: longer than maxIDBytes
	// (which no CRM writes, but a ledger loaded from a dump may hold), or
	// past the arena's 4 GiB. Nil until one comes.
	long map[string]V
}

// idSlot is one entry: where its id is in the arena (off+1, so that zero
// means empty), its length, a few bits of its hash to skip most
// comparisons, and its value.
type idSlot[V any] struct {
	off  uint32
	size uint16
	tag  uint16
	val  V
}

// maxIDBytes bounds an id that a slot refers to; longer ids go to the map
// on the side (long).
const maxIDBytes = 1<<16 - 1

func newIDTable[V any](hint int) *idTable[V] {
	size := 16
	for size*3 < hint*4 { // room for hint entries at a load of 3/4
		size *= 2
	}
	return &idTable[V]{seed: maphash.MakeSeed(), slots: make([]idSlot[V], size)}
}

func (t *idTable[V]) len() int { return t.n + len(t.long) }

// find returns the slot of id, or the empty slot where it would go.
func (t *idTable[V]) find(id string, h uint64) int {
	mask := len(t.slots) - 1
	tag := uint16(h >> 48)
	for i := int(h) & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.off == 0 {
			return i
		}
		if s.tag == tag && int(s.size) == len(id) && string(t.arena[s.off-1:int(s.off-1)+len(id)]) == id {
			return i
		}
	}
}

// get returns the value of id.
func (t *idTable[V]) get(id string) (V, bool) {
	if t == nil {
		var zero V
		return zero, false
	}
	if i, ok := t.slot(id); ok {
		return t.slots[i].val, true
	}
	v, ok := t.long[id]
	return v, ok
}

// put sets the value of id, of any length.
func (t *idTable[V]) put(id string, v V) {
	if len(id) > maxIDBytes || len(t.arena)+len(id) >= 1<<32-1 {
		if i, ok := t.slot(id); ok {
			t.slots[i].val = v
			return
		}
		if t.long == nil {
			t.long = map[string]V{}
		}
		t.long[id] = v
		return
	}
	h := maphash.String(t.seed, id)
	i := t.find(id, h)
	if t.slots[i].off != 0 {
		t.slots[i].val = v
		return
	}
	t.slots[i] = idSlot[V]{off: uint32(len(t.arena)) + 1, size: uint16(len(id)), tag: uint16(h >> 48), val: v}
	t.arena = append(t.arena, id...)
	t.n++
	if t.n*4 >= len(t.slots)*3 {
		t.grow()
	}
}

// each calls f with every id and its value, in no order; a nil table has
// none.
func (t *idTable[V]) each(f func(id string, v V)) {
	if t == nil {
		return
	}
	for _, s := range t.slots {
		if s.off != 0 {
			f(string(t.arena[s.off-1:int(s.off-1)+int(s.size)]), s.val)
		}
	}
	for id, v := range t.long {
		f(id, v)
	}
}

// slot finds id among the slots.
func (t *idTable[V]) slot(id string) (int, bool) {
	if len(id) > maxIDBytes || t.n == 0 {
		return 0, false
	}
	i := t.find(id, maphash.String(t.seed, id))
	return i, t.slots[i].off != 0
}

// grow doubles the table, keeping the arena.
func (t *idTable[V]) grow() {
	old := t.slots
	t.slots = make([]idSlot[V], 2*len(old))
	mask := len(t.slots) - 1
	for _, s := range old {
		if s.off == 0 {
			continue
		}
		id := t.arena[s.off-1 : int(s.off-1)+int(s.size)]
		i := int(maphash.Bytes(t.seed, id)) & mask
		for t.slots[i].off != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
}

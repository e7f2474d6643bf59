package forensics

import (
	"fmt"
	"sort"
	"strings"

	"crmimport/canon"
	"crmimport/importer/reader"
)

// ConflictError refuses a load whose ids the database already holds: the
// dump's ids are kept, so they must be free here. However many there are,
// it names them compactly: slot and row ids by their spans, slots by the
// first few.
type ConflictError struct {
	Dump     string
	Runs     []int64
	Tasks    []int64
	Slots    Names // tenant/source kind source_id
	SlotIDs  IDs
	Rows     map[string]*IDs // table -> ids
	LiveRuns []string
}

func (e *ConflictError) Error() string {
	var parts []string
	if len(e.Runs) > 0 {
		parts = append(parts, reader.Plural(len(e.Runs), "run ", "runs ")+idList(e.Runs))
	}
	if len(e.Tasks) > 0 {
		parts = append(parts, reader.Plural(len(e.Tasks), "task ", "tasks ")+idList(e.Tasks))
	}
	if e.Slots.N > 0 {
		parts = append(parts, reader.Plural(e.Slots.N, "the slot ", "the slots ")+e.Slots.String())
	}
	if e.SlotIDs.N > 0 {
		parts = append(parts, reader.Plural(int(e.SlotIDs.N), "slot id ", "slot ids ")+e.SlotIDs.String())
	}
	var tables []string
	var n int64
	for _, k := range canon.Kinds() {
		if ids := e.Rows[k.Table()]; ids != nil && ids.N > 0 {
			tables = append(tables, k.Table()+" "+ids.String())
			n += ids.N
		}
	}
	if n > 0 {
		parts = append(parts, reader.Plural(int(n), "the target row ", "the target rows ")+strings.Join(tables, ", "))
	}
	msg := fmt.Sprintf("ledger load %s: refused, nothing was loaded: the database already holds %s", e.Dump, strings.Join(parts, "; "))
	if len(e.LiveRuns) > 0 {
		if len(parts) == 0 {
			msg = fmt.Sprintf("ledger load %s: refused, nothing was loaded", e.Dump)
		}
		msg += "; " + strings.Join(e.LiveRuns, "; ")
	}
	return msg + " — a dump keeps its ids: load it into a new file (--db other.db)"
}

func (e *ConflictError) any() bool {
	n := int64(len(e.Runs) + len(e.Tasks) + e.Slots.N + len(e.LiveRuns))
	n += e.SlotIDs.N
	for _, ids := range e.Rows {
		n += ids.N
	}
	return n > 0
}

// maxSpans is how many spans of ids a message names; maxNames how many
// names.
const (
	maxSpans = 12
	maxNames = 8
)

// IDs is a set of ids, however large, kept as what a message says of it:
// how many, and the first maxSpans spans of consecutive ids. Ids are added
// in ascending order.
type IDs struct {
	N     int64
	spans [][2]int64
	more  int // spans past the kept ones
	last  int64
}

func (s *IDs) add(id int64) {
	switch {
	case s.N > 0 && id <= s.last:
		return // ascending: a repeat
	case s.N > 0 && id == s.last+1:
		if s.more == 0 {
			s.spans[len(s.spans)-1][1] = id
		}
	case len(s.spans) < maxSpans:
		s.spans = append(s.spans, [2]int64{id, id})
	default:
		s.more++
	}
	s.N++
	s.last = id
}

// String writes the ids compactly: 1–4, 7, 9 (and at most a dozen spans).
func (s IDs) String() string {
	var parts []string
	for _, sp := range s.spans {
		if sp[1] > sp[0] {
			parts = append(parts, fmt.Sprintf("%d–%d", sp[0], sp[1]))
		} else {
			parts = append(parts, fmt.Sprint(sp[0]))
		}
	}
	out := strings.Join(parts, ", ")
	if s.more > 0 {
		out += fmt.Sprintf(" (and %d more spans)", s.more)
	}
	return out
}

// Names is a list of names, however long, kept as what a message says of
// it: how many, and the first maxNames.
type Names struct {
	N     int
	first []string
}

func (n *Names) add(name string) {
	if len(n.first) < maxNames {
		n.first = append(n.first, name)
	}
	n.N++
}

func (n Names) String() string {
	out := strings.Join(n.first, ", ")
	if n.N > len(n.first) {
		out += fmt.Sprintf(" (and %d more)", n.N-len(n.first))
	}
	return out
}

func sortedIDs(m map[int64]bool) []int64 {
	out := make([]int64, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// idList writes ids compactly: 1–4, 7, 9 (and at most a dozen spans).
func idList(ids []int64) string {
	sorted := append([]int64(nil), ids...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	var set IDs
	for _, id := range sorted {
		set.add(id)
	}
	return set.String()
}

package forensics

import (
	"fmt"
	"sort"
	"strings"

	"crmimport/ledger"
)

// ConflictError refuses a load whose ids the database already holds: the
// dump's ids are kept, so they must be free here.
type ConflictError struct {
	Dump     string
	Runs     []int64
	Tasks    []int64
	Slots    []string // tenant/source kind source_id
	SlotIDs  []int64
	Rows     map[string][]int64 // table -> ids
	LiveRuns []string
}

func (e *ConflictError) Error() string {
	var parts []string
	if len(e.Runs) > 0 {
		parts = append(parts, plural(len(e.Runs), "run ", "runs ")+idList(e.Runs))
	}
	if len(e.Tasks) > 0 {
		parts = append(parts, plural(len(e.Tasks), "task ", "tasks ")+idList(e.Tasks))
	}
	if len(e.Slots) > 0 {
		parts = append(parts, plural(len(e.Slots), "the slot ", "the slots ")+nameList(e.Slots))
	}
	if len(e.SlotIDs) > 0 {
		parts = append(parts, plural(len(e.SlotIDs), "slot id ", "slot ids ")+idList(e.SlotIDs))
	}
	if len(e.Rows) > 0 {
		var tables []string
		n := 0
		for _, k := range ledger.Kinds() {
			if ids := e.Rows[k.Table()]; len(ids) > 0 {
				tables = append(tables, k.Table()+" "+idList(ids))
				n += len(ids)
			}
		}
		parts = append(parts, plural(n, "the target row ", "the target rows ")+strings.Join(tables, ", "))
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
	return len(e.Runs)+len(e.Tasks)+len(e.Slots)+len(e.SlotIDs)+len(e.Rows)+len(e.LiveRuns) > 0
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
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
	s := append([]int64(nil), ids...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	var parts []string
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] <= s[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d–%d", s[i], s[j]))
		} else {
			parts = append(parts, fmt.Sprint(s[i]))
		}
		i = j + 1
	}
	if len(parts) > 12 {
		return strings.Join(parts[:12], ", ") + fmt.Sprintf(" (and %d more spans)", len(parts)-12)
	}
	return strings.Join(parts, ", ")
}

// nameList writes names, at most eight.
func nameList(names []string) string {
	if len(names) > 8 {
		return strings.Join(names[:8], ", ") + fmt.Sprintf(" (and %d more)", len(names)-8)
	}
	return strings.Join(names, ", ")
}

package target_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/target"
)

// ValueEditsOf, which an undo asks of every row it removes, says what
// ValueEdits says of the same row and hashes (SPEC §11's removed_edited):
// seeded rows of every kind, written with values, links and extra columns
// (names with spaces and equals signs among them), then edited in seeded
// ways — a value changed, emptied or given, an extra column changed,
// added or dropped, a link changed (never an edit: links are not looked
// for) — and texts written before a kind gained its last fields.
func TestValueEditsOfSaysWhatValueEditsSays(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 4))
	edited := 0
	for _, k := range canon.Kinds() {
		h := canon.NewHasher(k)
		for n := range 400 {
			written, stored := writtenRow(rng, k)
			row := editRow(rng, k, written)
			text := stored.Encode(k)
			if n%5 == 0 {
				text = beforeLastFields(k, text)
			}
			decoded, ok := canon.DecodeHashes(k, text)
			require.True(t, ok, "%s %d: %q", k, n, text)
			want := target.ValueEdits(k, row, decoded)
			got, ok := target.ValueEditsOf(h, k, row, text)
			require.True(t, ok)
			require.Equal(t, want, got, "%s %d: %q against %v", k, n, text, row.Values)
			if len(want) > 0 {
				edited++
			}
		}
		_, ok := target.ValueEditsOf(h, k, target.State{Values: map[string]any{}}, "0 ........")
		require.False(t, ok, "another version tells nothing")
	}
	require.Greater(t, edited, 500, "the seeded edits must reach both answers")
}

// writtenRow is a row of kind k as a run wrote it, and its slot's hashes.
func writtenRow(rng *rand.Rand, k ledger.Kind) (target.State, canon.Hashes) {
	s := target.State{Values: map[string]any{}}
	h := canon.HashFields{}
	for _, f := range canon.FieldsOf(k).Names {
		switch {
		case canon.Hashed(f):
			if rng.IntN(4) > 0 {
				v := fmt.Sprintf("%s %d", f, rng.IntN(3))
				s.Values[f] = v
				h.Set(f, v)
			}
		case strings.HasSuffix(f, "_id") && f != "id":
			if rng.IntN(2) == 0 {
				s.Values[f] = int64(1 + rng.IntN(9))
				h.Set(f, fmt.Sprintf("p%d", rng.IntN(9)))
			}
		}
	}
	extra := map[string]any{}
	for _, col := range []string{"Region", "Lead Source", "a=b", "100%"} {
		if rng.IntN(2) == 0 {
			extra[col] = fmt.Sprintf("v%d", rng.IntN(3))
			h.Set(canon.ExtraField(col), canon.ExtraText(extra[col]))
		}
	}
	for _, l := range canon.Parents(k) {
		if _, set := s.Values[l.Field]; !set && rng.IntN(3) == 0 {
			extra[l.Field] = "waiting" // a link's value kept while it is empty
		}
	}
	if len(extra) > 0 {
		b, _ := json.Marshal(extra)
		s.Values["extra"] = string(b)
	}
	return s, h.Hash()
}

// editRow is row edited in a seeded way, or not at all.
func editRow(rng *rand.Rand, k ledger.Kind, row target.State) target.State {
	out := target.State{Values: map[string]any{}}
	for f, v := range row.Values {
		out.Values[f] = v
	}
	names := canon.FieldsOf(k).Names
	switch rng.IntN(6) {
	case 0: // as written
	case 1:
		f := names[rng.IntN(len(names))]
		if canon.Hashed(f) {
			out.Values[f] = "edited by hand"
		}
	case 2:
		f := names[rng.IntN(len(names))]
		if canon.Hashed(f) {
			delete(out.Values, f)
		}
	case 3:
		f := names[rng.IntN(len(names))]
		if strings.HasSuffix(f, "_id") && f != "id" {
			out.Values[f] = int64(42)
		}
	default:
		extra := map[string]any{}
		if e := row.Extra(); e != "" {
			_ = json.Unmarshal([]byte(e), &extra)
		}
		cols := []string{"Region", "Lead Source", "a=b", "100%", "Added"}
		col := cols[rng.IntN(len(cols))]
		if _, ok := extra[col]; ok && rng.IntN(2) == 0 {
			delete(extra, col)
		} else {
			extra[col] = "changed"
		}
		b, _ := json.Marshal(extra)
		out.Values["extra"] = string(b)
	}
	return out
}

// beforeLastFields is text as a slot written before kind k gained its last
// fields keeps it, when those are empty: without their places.
func beforeLastFields(k ledger.Kind, text string) string {
	last := len(canon.AddedFields(k))
	ver, rest, _ := strings.Cut(text, " ")
	byPlace, named, hasNamed := strings.Cut(rest, " ")
	if last == 0 || !strings.HasSuffix(byPlace, strings.Repeat(".", last)) {
		return text
	}
	out := ver + " " + byPlace[:len(byPlace)-last]
	if hasNamed {
		out += " " + named
	}
	return out
}

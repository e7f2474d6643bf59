package undo

import (
	"fmt"
	"sort"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/phases"
)

// account adds up a plan from its items: counts per kind, parts, the
// dependents with a few examples each, and the digest.
type account struct {
	p      *Plan
	digest *digest
	parts  map[partKey]int64
	deps   map[depKey]*Dependent
}

type partKey struct {
	run  int64
	kind ledger.Kind
	fate string
}

type depKey struct {
	run  int64
	kind ledger.Kind
	how  string
}

func newAccount(p *Plan) *account {
	return &account{p: p, digest: newDigest(p.Run, p.Cascade), parts: map[partKey]int64{}, deps: map[depKey]*Dependent{}}
}

func (a *account) add(it walked) {
	c := a.p.Counts[it.Kind]
	fate := tally(&c, it.Item, it.image)
	a.p.Counts[it.Kind] = c
	a.p.total++
	a.parts[partKey{it.Owner, it.Kind, fate}]++
	a.digest.item(it, fate)
	if it.dependent != "" {
		a.depend(depKey{it.Owner, it.Kind, it.dependent}, it.Source, it.SourceID)
	}
}

func (a *account) depend(key depKey, source, example string) {
	d := a.deps[key]
	if d == nil {
		d = &Dependent{Run: key.run, Source: source, Kind: string(key.kind), How: key.how}
		a.deps[key] = d
	}
	d.Count++
	if len(d.Examples) < maxExamples {
		d.Examples = append(d.Examples, example)
	}
}

// finish names the rows that go by their links but that no run's slot
// names (rows written by no run, which refuse the undo), and orders the
// dependents and the parts: by run, then kind in plan order.
func (a *account) finish(w *walk) {
	for _, k := range canon.Kinds() {
		w.linked[k].each(w.claimed[k], func(id int64) bool {
			a.depend(depKey{0, k, "links"}, "", fmt.Sprintf("%s row %d", k, id))
			return true
		})
	}
	p := a.p
	for _, d := range a.deps {
		sort.Strings(d.Examples)
		p.Dependents = append(p.Dependents, *d)
	}
	sort.Slice(p.Dependents, func(i, j int) bool {
		a, b := p.Dependents[i], p.Dependents[j]
		if a.Run != b.Run {
			return a.Run < b.Run
		}
		if a.Kind != b.Kind {
			return kindOrder(a.Kind) < kindOrder(b.Kind)
		}
		return a.How < b.How
	})
	for key, n := range a.parts {
		p.Parts = append(p.Parts, PlanPart{Run: key.run, Kind: string(key.kind), Fate: key.fate, Count: n})
	}
	sortParts(p.Parts)
	p.Digest = a.digest.sum()
	p.taken = taken(p.Dependents)
}

// restores reports whether an item's slot gets its before-image back: an
// image of this very takeover, whose owner was not undone (SPEC §10).
func restores(it Item, im image, found bool) bool {
	return found && im.takenBy == it.Owner && !im.ownerGone
}

// The fates of an item's slot, as the undo's counts name them.
const (
	fateRemoved  = "removed"
	fateReleased = "released"
	fateRestored = "restored"
	fateCleared  = "cleared"
	// fateReverted is a row given its before-image back: not a slot, an
	// update of one (R17, updates.go).
	fateReverted = "reverted"
)

// tally counts one item by what becomes of its slot, and returns it: given
// its before-image back (restored; a created one's row is removed with it,
// as the takeover wrote it), else deleted — with its row (removed),
// leaving the matched row (released), or a skip of its own (cleared).
func tally(c *phases.Counts, it Item, im image) string {
	switch {
	case restores(it, im, im.takenBy != 0):
		c.Restored++
		return fateRestored
	case it.Action == ledger.Created:
		c.Removed++
		return fateRemoved
	case it.Action == ledger.Matched:
		c.Released++
		return fateReleased
	default:
		c.Cleared++
		return fateCleared
	}
}

package undo

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"sort"
	"strings"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/phases"
)

// A preview and the undo that confirms it are the same plan, provably
// (R16, SPEC §11 "a preview and its commit are the same plan"): the
// preview's digest covers every item — not the counts, which another run
// can leave as they were while it changes which records they are — and
// the undo commits its items only if the items it writes, in its own
// transaction, have that digest.

// digestVersion names how the digest is made: a plan digested otherwise is
// another plan.
const digestVersion = "crmimport undo plan 1"

// digest is the running SHA-256 of a plan: what it undoes, then each item
// in the order the undo takes them, every field length-prefixed.
type digest struct {
	h   hash.Hash
	buf []byte
}

func newDigest(run phases.Run, cascade bool) *digest {
	d := &digest{h: sha256.New()}
	d.str(digestVersion)
	d.str(run.Tenant)
	d.int(run.ID)
	d.bool(cascade)
	return d
}

// item adds one item: its slot (kind, source, source id), what the plan
// found there (owner, action, row, whether the row goes), the before-image
// it would be given back (who took the slot over, and the image's owner)
// and what becomes of it.
func (d *digest) item(it walked, fate string) {
	d.str(string(it.Kind))
	d.str(it.Source)
	d.str(it.SourceID)
	d.int(it.Owner)
	d.str(string(it.Action))
	d.int(it.RecordID)
	d.bool(it.DeleteRow)
	d.int(it.image.takenBy)
	d.int(it.imageRun)
	d.str(fate)
}

func (d *digest) str(s string) {
	d.buf = binary.AppendUvarint(d.buf[:0], uint64(len(s)))
	d.buf = append(d.buf, s...)
	d.h.Write(d.buf)
}

func (d *digest) int(n int64) {
	d.buf = binary.AppendVarint(d.buf[:0], n)
	d.h.Write(d.buf)
}

func (d *digest) bool(b bool) {
	if b {
		d.int(1)
	} else {
		d.int(0)
	}
}

func (d *digest) sum() string { return hex.EncodeToString(d.h.Sum(nil)) }

// ValidDigest reports whether s reads as a plan's digest (64 hex digits).
func ValidDigest(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// PlanPart is how many slots of one run and kind a plan takes back with
// one fate (removed, released, restored, cleared).
type PlanPart struct {
	Run   int64  `json:"run"`
	Kind  string `json:"kind"`
	Fate  string `json:"fate"`
	Count int64  `json:"count"`
}

// kindOrder is a kind's place in the one list of kinds (plan order); a
// kind that is none (parts a client sent back: CheckParts) comes last.
func kindOrder(kind string) int {
	for i, k := range canon.Kinds() {
		if string(k) == kind {
			return i
		}
	}
	return len(canon.Kinds())
}

// fateOrder is the order in which the counts show the fates; a fate that
// is none (parts a client sent back: CheckParts) comes last.
func fateOrder(f string) int {
	switch f {
	case fateRemoved:
		return 0
	case fateReleased:
		return 1
	case fateRestored:
		return 2
	case fateCleared:
		return 3
	}
	return 4
}

// CheckParts refuses parts that no preview answered: a kind or a fate
// that is none, or a count below one.
func CheckParts(parts []PlanPart) error {
	for _, p := range parts {
		switch {
		case kindOrder(p.Kind) == len(canon.Kinds()):
			return fmt.Errorf("part of a plan: %q is not a kind", p.Kind)
		case fateOrder(p.Fate) == 4:
			return fmt.Errorf("part of a plan: %q is not a fate (removed, released, restored, cleared)", p.Fate)
		case p.Count < 1:
			return fmt.Errorf("part of a plan: %d %s %s is not a count of records", p.Count, p.Kind, p.Fate)
		}
	}
	return nil
}

func sortParts(parts []PlanPart) {
	sort.Slice(parts, func(i, j int) bool {
		a, b := parts[i], parts[j]
		if a.Run != b.Run {
			return a.Run < b.Run
		}
		if a.Kind != b.Kind {
			return kindOrder(a.Kind) < kindOrder(b.Kind)
		}
		return fateOrder(a.Fate) < fateOrder(b.Fate)
	})
}

// PlanChangedError refuses an undo whose plan is not the one its preview
// showed (Options.Plan): nothing is written. It names what changed when
// the preview's parts are known (the page sends them back), else what the
// plan is now.
type PlanChangedError struct {
	Run     int64
	Cascade bool
	Want    string     // the digest the preview showed
	Was     []PlanPart // the preview's parts, when known
	Now     *Plan      // the plan as it stands
}

func (e *PlanChangedError) Error() string {
	var what string
	if e.Was != nil {
		what = "since the preview: " + changes(e.Was, e.Now.Parts)
	} else {
		what = fmt.Sprintf("since the preview that showed plan %s: it now %s", short(e.Want), describe(e.Now.Parts))
	}
	cascade := ""
	if e.Cascade {
		cascade = " --cascade"
	}
	return fmt.Sprintf("the undo of run %d was not started: its plan changed %s; nothing was written — "+
		"look at it again (`crmimport undo %d%s --dry-run`, or Undo on the run's page) and confirm the plan it shows",
		e.Run, what, e.Run, cascade)
}

// short is a digest as messages name it.
func short(d string) string {
	if len(d) > 12 {
		return d[:12] + "…"
	}
	return d
}

// verb says what a plan does to a slot of a fate.
func verb(fate string) string {
	switch fate {
	case fateRemoved:
		return "remove"
	case fateReleased:
		return "release"
	case fateRestored:
		return "restore"
	case fateCleared:
		return "clear"
	}
	return "take back (" + fate + ")"
}

// changes says how the parts of two plans differ: "30 more contacts of run
// 6 to remove, 2 fewer notes of run 5 to restore".
func changes(was, now []PlanPart) string {
	type key struct {
		run        int64
		kind, fate string
	}
	diff := map[key]int64{}
	var keys []PlanPart
	for _, p := range was {
		k := key{p.Run, p.Kind, p.Fate}
		if _, ok := diff[k]; !ok {
			keys = append(keys, PlanPart{Run: p.Run, Kind: p.Kind, Fate: p.Fate})
		}
		diff[k] -= p.Count
	}
	for _, p := range now {
		k := key{p.Run, p.Kind, p.Fate}
		if _, ok := diff[k]; !ok {
			keys = append(keys, PlanPart{Run: p.Run, Kind: p.Kind, Fate: p.Fate})
		}
		diff[k] += p.Count
	}
	sortParts(keys)
	var out []string
	for _, p := range keys {
		n := diff[key{p.Run, p.Kind, p.Fate}]
		more := "more"
		if n < 0 {
			n, more = -n, "fewer"
		}
		if n == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("%d %s %s of run %d to %s", n, more, kindWord(p.Kind, n), p.Run, verb(p.Fate)))
	}
	if len(out) == 0 {
		return "as many slots of each run, kind and fate, but not the same ones"
	}
	return strings.Join(out, ", ")
}

// describe says what a plan does, fate by fate: "would remove 2 companies
// of run 1 and 3 contacts of run 2; release 1 contact of run 2".
func describe(parts []PlanPart) string {
	if len(parts) == 0 {
		return "would take back nothing"
	}
	byFate := map[string][]string{}
	for _, p := range parts {
		byFate[p.Fate] = append(byFate[p.Fate], fmt.Sprintf("%d %s of run %d", p.Count, kindWord(p.Kind, p.Count), p.Run))
	}
	var out []string
	for _, f := range []string{fateRemoved, fateReleased, fateRestored, fateCleared} {
		if what := byFate[f]; len(what) > 0 {
			out = append(out, verb(f)+" "+andList(what))
		}
	}
	return "would " + strings.Join(out, "; ")
}

// andList joins "a", "b" and "c" as "a, b and c".
func andList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

func kindWord(kind string, n int64) string {
	if n == 1 {
		return kind
	}
	return ledger.Kind(kind).Plural()
}

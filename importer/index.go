package importer

import (
	"context"
	"strings"

	"crmimport/ledger"
)

// runIndex is what the importer keeps in memory for one run, so that a
// record needs no statement to be decided: the final slots of the kinds in
// play (R2: "already there", R6: links), the natural keys (R5) and the ids
// read so far in this run (SPEC §4 step 2). It learns only what commits
// (R12): a batch's additions wait in a stage until the batch commits.
type runIndex struct {
	tenant, source string
	finals         map[ledger.Kind]*finalSet // per kind, loaded on first need
	emails         map[string]int64          // email key -> oldest contact; nil until loaded
	domains        map[string]int64          // domain key -> oldest company; nil until loaded
	seen           map[ledger.Kind]map[string]firstSeen
	loaded         map[int64]bool // tasks whose read records are in seen
}

func newRunIndex(tenant, source string) *runIndex {
	return &runIndex{tenant: tenant, source: source, finals: map[ledger.Kind]*finalSet{},
		seen: map[ledger.Kind]map[string]firstSeen{}, loaded: map[int64]bool{}}
}

// need loads what deciding records of kind k asks for, and lets go of what
// no task left to run will ask for: the index holds the kinds in play only.
func (x *runIndex) need(ctx context.Context, q ledger.Querier, k ledger.Kind, remaining []ledger.Kind) error {
	keep := map[ledger.Kind]bool{}
	for _, r := range append(remaining, k) {
		keep[r] = true
		for _, l := range parents(r) {
			keep[l.kind] = true
		}
	}
	for kind := range x.finals {
		if !keep[kind] {
			delete(x.finals, kind)
		}
	}
	for kind := range x.seen {
		if !keep[kind] {
			delete(x.seen, kind)
		}
	}
	wanted := []ledger.Kind{k}
	for _, l := range parents(k) {
		wanted = append(wanted, l.kind)
	}
	for _, kind := range wanted {
		if _, ok := x.finals[kind]; ok {
			continue
		}
		f := &finalSet{loaded: map[string]int64{}, added: map[string]int64{}}
		if err := ledger.LoadFinal(ctx, q, x.tenant, x.source, kind, func(id string, rid int64) { f.loaded[id] = rid }); err != nil {
			return err
		}
		x.finals[kind] = f
	}
	if k == ledger.Contact && x.emails == nil {
		x.emails = map[string]int64{}
		if err := ledger.LoadEmailKeys(ctx, q, x.tenant, func(key string, id int64) { x.emails[key] = id }); err != nil {
			return err
		}
	}
	if k == ledger.Company && x.domains == nil {
		x.domains = map[string]int64{}
		if err := ledger.LoadDomainKeys(ctx, q, x.tenant, func(key string, id int64) { x.domains[key] = id }); err != nil {
			return err
		}
	}
	if !keep[ledger.Contact] {
		x.emails = nil
	}
	if !keep[ledger.Company] {
		x.domains = nil
	}
	return nil
}

// finalSet is one kind's final slots: those the ledger held when the kind
// was loaded, which are only ever read (the feed reads them from its own
// goroutine), and those this run has added since.
type finalSet struct {
	loaded map[string]int64
	added  map[string]int64
}

func (f *finalSet) get(id string) (int64, bool) {
	if f == nil {
		return 0, false
	}
	if rid, ok := f.loaded[id]; ok {
		return rid, true
	}
	rid, ok := f.added[id]
	return rid, ok
}

func (x *runIndex) seenOf(k ledger.Kind) map[string]firstSeen {
	if x.seen[k] == nil {
		x.seen[k] = map[string]firstSeen{}
	}
	return x.seen[k]
}

// stage holds one batch's additions to the index until the batch commits.
// mark and undo take back the additions of a part of the batch whose
// writes were rolled back.
type stage struct {
	x       *runIndex
	kind    ledger.Kind
	finals  map[string]int64 // of kind
	emails  map[string]int64
	domains map[string]int64
	seen    map[string]firstSeen
	log     []staged
}

type staged struct {
	m   byte // 'f' finals, 'e' emails, 'd' domains, 's' seen
	key string
}

func newStage(x *runIndex, k ledger.Kind) *stage {
	return &stage{x: x, kind: k, finals: map[string]int64{}, emails: map[string]int64{}, domains: map[string]int64{},
		seen: map[string]firstSeen{}}
}

func (s *stage) final(k ledger.Kind, id string) (int64, bool) {
	if k == s.kind {
		if rid, ok := s.finals[id]; ok {
			return rid, true
		}
	}
	return s.x.finals[k].get(id)
}

func (s *stage) email(key string) (int64, bool) {
	if id, ok := s.emails[key]; ok {
		return id, true
	}
	id, ok := s.x.emails[key]
	return id, ok
}

func (s *stage) domain(key string) (int64, bool) {
	if id, ok := s.domains[key]; ok {
		return id, true
	}
	id, ok := s.x.domains[key]
	return id, ok
}

func (s *stage) seenAt(id string) (firstSeen, bool) {
	if f, ok := s.seen[id]; ok {
		return f, true
	}
	f, ok := s.x.seen[s.kind][id]
	return f, ok
}

func (s *stage) addFinal(id string, rid int64) {
	s.finals[id] = rid
	s.log = append(s.log, staged{'f', id})
}

// addEmail and addDomain keep the oldest row of a key (R5).
func (s *stage) addEmail(key string, id int64) {
	if _, ok := s.email(key); key == "" || ok {
		return
	}
	key = strings.Clone(key) // not a window on the record's text
	s.emails[key] = id
	s.log = append(s.log, staged{'e', key})
}

func (s *stage) addDomain(key string, id int64) {
	if _, ok := s.domain(key); key == "" || ok {
		return
	}
	key = strings.Clone(key)
	s.domains[key] = id
	s.log = append(s.log, staged{'d', key})
}

func (s *stage) addSeen(id string, f firstSeen) {
	s.seen[id] = f
	s.log = append(s.log, staged{'s', id})
}

func (s *stage) mark() int { return len(s.log) }

// undo takes back every addition made since mark.
func (s *stage) undo(mark int) {
	for _, e := range s.log[mark:] {
		switch e.m {
		case 'f':
			delete(s.finals, e.key)
		case 'e':
			delete(s.emails, e.key)
		case 'd':
			delete(s.domains, e.key)
		case 's':
			delete(s.seen, e.key)
		}
	}
	s.log = s.log[:mark]
}

// commit hands the stage to the index: the batch is durable.
func (s *stage) commit() {
	if len(s.finals) > 0 {
		f := s.x.finals[s.kind]
		if f == nil {
			f = &finalSet{loaded: map[string]int64{}, added: map[string]int64{}}
			s.x.finals[s.kind] = f
		}
		for k, v := range s.finals {
			f.added[k] = v
		}
	}
	if s.x.emails != nil {
		for k, v := range s.emails {
			s.x.emails[k] = v
		}
	}
	if s.x.domains != nil {
		for k, v := range s.domains {
			s.x.domains[k] = v
		}
	}
	seen := s.x.seenOf(s.kind)
	for k, v := range s.seen {
		seen[k] = v
	}
}

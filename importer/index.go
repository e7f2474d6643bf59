package importer

import (
	"context"
	"database/sql"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/target"
)

// runIndex is what the importer keeps in memory for one run, so that a
// record needs no statement to be decided: the final slots of the kinds in
// play (R2: "already there", R6: links), the natural keys (R5) and the ids
// read so far in this run (SPEC §4 step 2). It learns only what commits
// (R12): a batch's additions wait in a stage until the batch commits. The
// tables are compact (idTable): at four times the seed's scale they hold
// about four million ids.
type runIndex struct {
	tenant, source string
	finals         map[ledger.Kind]*finalSet       // per kind, loaded on first need
	emails         *idTable[int64]                 // email key -> oldest contact, and userKey -> oldest user; nil until loaded
	domains        *idTable[int64]                 // domain key -> oldest company; nil until loaded
	seen           map[ledger.Kind]*idTable[int64] // id -> where it was first read (packed firstSeen)
	files          []string                        // the files of the run, by number, for seen
	loaded         map[int64]bool                  // tasks whose read records are in seen
	// update is the run's --update (runopts.Options.Update): "" leaves
	// changes at the source outdated (R17).
	update string
	// ahead are the final slots of kinds being loaded beside the writer
	// (loadAhead), each until finalsOf takes it.
	ahead map[ledger.Kind]chan loadedFinals
}

func newRunIndex(tenant, source string) *runIndex {
	return &runIndex{tenant: tenant, source: source, finals: map[ledger.Kind]*finalSet{},
		seen: map[ledger.Kind]*idTable[int64]{}, loaded: map[int64]bool{}}
}

// finalSet is one kind's final slots: those the ledger held when the kind
// was loaded, which are only ever read (the feed reads them from its own
// goroutine), and those this run has added since.
type finalSet struct {
	loaded *idTable[finalEntry]
	added  *idTable[int64]
}

// finalEntry is a final slot as the index holds it: its row, and the
// digest of what was last written for it (R17; 0 for none).
type finalEntry struct {
	rid, digest int64
}

// entry is the final slot of id; a slot this run added has no digest to
// compare with (a record of its id again is a duplicate, SPEC §4 step 2).
func (f *finalSet) entry(id string) (finalEntry, bool) {
	if f == nil {
		return finalEntry{}, false
	}
	if e, ok := f.loaded.get(id); ok {
		return e, true
	}
	rid, ok := f.added.get(id)
	return finalEntry{rid: rid}, ok
}

// need loads the final slots of kind k (the feed needs them at once, to
// leave unjudged the records that are already there), and lets go of what
// no task left to run will ask for: the index holds the kinds in play only.
// Parents' slots and natural keys are loaded on first need, through the
// transaction of the batch that needs them (a rerun, whose records are all
// already there, never needs them).
func (x *runIndex) need(ctx context.Context, q ledger.Querier, k ledger.Kind, remaining []ledger.Kind) error {
	x.release(k, remaining)
	_, err := x.finalsOf(ctx, q, k)
	return err
}

// release lets go of what neither kind k nor a task left to run will ask
// for.
func (x *runIndex) release(k ledger.Kind, remaining []ledger.Kind) {
	keep := map[ledger.Kind]bool{}
	for _, r := range append(remaining, k) {
		keep[r] = true
		for _, l := range canon.Parents(r) {
			keep[l.Kind] = true
		}
	}
	for kind := range x.finals {
		if !keep[kind] {
			delete(x.finals, kind)
		}
	}
	for kind, ch := range x.ahead {
		if !keep[kind] {
			<-ch
			delete(x.ahead, kind)
		}
	}
	for kind := range x.seen {
		if !keep[kind] {
			delete(x.seen, kind)
		}
	}
	if !keep[ledger.Contact] && !keep[ledger.User] {
		x.emails = nil
	}
	if !keep[ledger.Company] {
		x.domains = nil
	}
}

// finalsOf is one kind's final slots, read through q the first time a
// kind is asked for.
func (x *runIndex) finalsOf(ctx context.Context, q ledger.Querier, k ledger.Kind) (*finalSet, error) {
	if f, ok := x.finals[k]; ok {
		return f, nil
	}
	if ch, ok := x.ahead[k]; ok {
		delete(x.ahead, k)
		if l := <-ch; l.err == nil {
			x.finals[k] = l.f
			return l.f, nil
		} // else read again, through q: the error is the reading beside's
	}
	f, err := x.loadFinals(ctx, q, k)
	if err != nil {
		return nil, err
	}
	x.finals[k] = f
	return f, nil
}

// loadFinals reads kind k's final slots through q.
func (x *runIndex) loadFinals(ctx context.Context, q ledger.Querier, k ledger.Kind) (*finalSet, error) {
	f := &finalSet{loaded: newIDTable[finalEntry](0), added: newIDTable[int64](0)}
	put := func(id string, rid, digest int64) { f.loaded.put(id, finalEntry{rid, digest}) }
	if err := ledger.LoadFinal(ctx, q, x.tenant, x.source, k, put); err != nil {
		return nil, err
	}
	return f, nil
}

// loadedFinals is a kind's final slots as loadAhead read them.
type loadedFinals struct {
	f   *finalSet
	err error
}

// loadAhead starts reading, through beside (store.Beside), the final
// slots of kind k, which the run's next task reads, while the task
// before it works: a rerun's tasks each began by reading theirs (a third
// of a second for 100,000 contacts), with the other CPU idle.
//
// What it reads is what finalsOf would read when k's task opens: a task
// writes the slots of its own kind only (R1: a record's slot is its own
// kind's; its R17 hashes too; R6a's relinking writes rows and their
// remembered links, never a slot), the run is the tenant's only live one
// (R13), and a batch's slots are read only once committed (R12). So the
// slots of k are those it reads now, until k's own task writes.
func (x *runIndex) loadAhead(ctx context.Context, beside *sql.DB, k ledger.Kind) {
	if beside == nil || x.finals[k] != nil || x.ahead[k] != nil {
		return
	}
	if x.ahead == nil {
		x.ahead = map[ledger.Kind]chan loadedFinals{}
	}
	ch := make(chan loadedFinals, 1)
	x.ahead[k] = ch
	go func() {
		f, err := x.loadFinals(ctx, beside, k)
		ch <- loadedFinals{f, err}
	}()
}

// waitAhead waits for what is being read ahead and lets it go.
func (x *runIndex) waitAhead() {
	for k, ch := range x.ahead {
		<-ch
		delete(x.ahead, k)
	}
}

// emailKeys and domainKeys are the natural keys (R5), read through q the
// first time they are asked for.
func (x *runIndex) emailKeys(ctx context.Context, q ledger.Querier) (*idTable[int64], error) {
	if x.emails == nil {
		t := newIDTable[int64](0)
		if err := target.LoadEmailKeys(ctx, q, x.tenant, t.put); err != nil {
			return nil, err
		}
		if err := target.LoadUserKeys(ctx, q, x.tenant, func(key string, id int64) { t.put(userKey(key), id) }); err != nil {
			return nil, err
		}
		x.emails = t
	}
	return x.emails, nil
}

// userKey is the key under which the emails table holds a user's email
// key, beside the contacts' (R5: a user is found by email among users).
// No email key holds the byte it starts with.
func userKey(emailKey string) string { return "\x01" + emailKey }

func (x *runIndex) domainKeys(ctx context.Context, q ledger.Querier) (*idTable[int64], error) {
	if x.domains == nil {
		t := newIDTable[int64](0)
		if err := target.LoadDomainKeys(ctx, q, x.tenant, t.put); err != nil {
			return nil, err
		}
		x.domains = t
	}
	return x.domains, nil
}

func (x *runIndex) seenOf(k ledger.Kind) *idTable[int64] {
	if x.seen[k] == nil {
		x.seen[k] = newIDTable[int64](0)
	}
	return x.seen[k]
}

// pack and unpack keep where an id was first read in one number: the
// file's number in the run and the line.
func (x *runIndex) pack(f firstSeen) int64 {
	n := -1
	for i, name := range x.files {
		if name == f.file {
			n = i
		}
	}
	if n < 0 {
		n = len(x.files)
		x.files = append(x.files, f.file)
	}
	return int64(n)<<40 | int64(f.line)
}

func (x *runIndex) unpack(v int64) firstSeen {
	return firstSeen{file: x.files[v>>40], line: int(v & (1<<40 - 1))}
}

// remember keeps where id was first read, unless it was read before.
func (x *runIndex) remember(k ledger.Kind, id string, f firstSeen) {
	if id == "" {
		return
	}
	seen := x.seenOf(k)
	if _, ok := seen.get(id); !ok {
		seen.put(id, x.pack(f))
	}
}

// stage holds one batch's additions to the index until the batch commits.
// mark and undo take back the additions of a part of the batch whose
// writes were rolled back.
type stage struct {
	x *runIndex
	// look is a revisit's: the final slots it asked the ledger for, by
	// id, in place of the kinds' slots loaded whole (lookups); nil for a
	// full reading.
	look    *lookups
	kind    ledger.Kind
	finals  map[string]int64 // of kind
	emails  map[string]int64
	domains map[string]int64
	seen    map[string]firstSeen
	log     []staged
	// reads are what the chunk being decided read of its changed records
	// (R17, changeread.go).
	reads changeReads
}

type staged struct {
	m   byte // 'f' finals, 'e' emails, 'd' domains, 's' seen
	key string
}

func newStage(x *runIndex, k ledger.Kind) *stage {
	return &stage{x: x, kind: k, finals: map[string]int64{}, emails: map[string]int64{}, domains: map[string]int64{},
		seen: map[string]firstSeen{}}
}

// final, email and domain look a final slot and a natural key up in the
// stage, then in the index, which reads a kind's slots or the keys
// through q (the batch's transaction) on first need.
func (s *stage) final(ctx context.Context, q ledger.Querier, k ledger.Kind, id string) (int64, bool, error) {
	e, ok, err := s.slot(ctx, q, k, id)
	return e.rid, ok, err
}

// slot is final's, with the digest of what was last written for it (R17).
func (s *stage) slot(ctx context.Context, q ledger.Querier, k ledger.Kind, id string) (finalEntry, bool, error) {
	if k == s.kind {
		if rid, ok := s.finals[id]; ok {
			return finalEntry{rid: rid}, true, nil
		}
	}
	if s.look != nil {
		return s.look.final(ctx, q, k, id)
	}
	f, err := s.x.finalsOf(ctx, q, k)
	if err != nil {
		return finalEntry{}, false, err
	}
	e, ok := f.entry(id)
	return e, ok, nil
}

func (s *stage) email(ctx context.Context, q ledger.Querier, key string) (int64, bool, error) {
	if id, ok := s.emails[key]; ok {
		return id, true, nil
	}
	t, err := s.x.emailKeys(ctx, q)
	if err != nil {
		return 0, false, err
	}
	id, ok := t.get(key)
	return id, ok, nil
}

func (s *stage) domain(ctx context.Context, q ledger.Querier, key string) (int64, bool, error) {
	if id, ok := s.domains[key]; ok {
		return id, true, nil
	}
	t, err := s.x.domainKeys(ctx, q)
	if err != nil {
		return 0, false, err
	}
	id, ok := t.get(key)
	return id, ok, nil
}

// apply adds to the stage what a decision tells the index: its record's
// id was read (SPEC §4 step 2), the final slot of a record created or
// matched, and the natural key of a row created (R5).
func (s *stage) apply(d *decision) {
	if d.seen {
		s.addSeen(d.rec.ID, firstSeen{file: d.rec.File, line: d.rec.Line})
	}
	if d.outcome != created && d.outcome != matched {
		return
	}
	if d.emailKey != "" {
		s.addEmail(d.emailKey, d.rowID)
	}
	if d.domainKey != "" {
		s.addDomain(d.domainKey, d.rowID)
	}
	s.addFinal(d.rec.ID, d.rowID)
}

func (s *stage) seenAt(id string) (firstSeen, bool) {
	if f, ok := s.seen[id]; ok {
		return f, true
	}
	if v, ok := s.x.seen[s.kind].get(id); ok {
		return s.x.unpack(v), true
	}
	return firstSeen{}, false
}

func (s *stage) addFinal(id string, rid int64) {
	s.finals[id] = rid
	s.log = append(s.log, staged{'f', id})
}

// addEmail and addDomain keep the oldest row of a key (R5): the keys the
// index holds were read when the decision looked its key up.
func (s *stage) addEmail(key string, id int64) {
	if _, ok := s.emails[key]; key == "" || ok {
		return
	}
	if _, ok := s.x.emails.get(key); ok {
		return
	}
	s.emails[key] = id
	s.log = append(s.log, staged{'e', key})
}

func (s *stage) addDomain(key string, id int64) {
	if _, ok := s.domains[key]; key == "" || ok {
		return
	}
	if _, ok := s.x.domains.get(key); ok {
		return
	}
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
	if s.look != nil {
		// A revisit learns its own: the index keeps the kind's slots
		// only if it had loaded them whole.
		t := s.look.table(s.kind)
		for k, v := range s.finals {
			t.put(k, finalEntry{rid: v})
		}
		if f := s.x.finals[s.kind]; f != nil {
			for k, v := range s.finals {
				f.added.put(k, v)
			}
		}
	} else if len(s.finals) > 0 {
		f := s.x.finals[s.kind]
		if f == nil {
			f = &finalSet{loaded: newIDTable[finalEntry](0), added: newIDTable[int64](0)}
			s.x.finals[s.kind] = f
		}
		for k, v := range s.finals {
			f.added.put(k, v)
		}
	}
	if s.x.emails != nil {
		for k, v := range s.emails {
			s.x.emails.put(k, v)
		}
	}
	if s.x.domains != nil {
		for k, v := range s.domains {
			s.x.domains.put(k, v)
		}
	}
	for k, v := range s.seen {
		s.x.remember(s.kind, k, v)
	}
}

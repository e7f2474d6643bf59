package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"crmimport/store"
)

// TimeFormat is how every time is written to the database: UTC, fixed width,
// so that text order is time order.
const TimeFormat = "2006-01-02T15:04:05.000000Z"

// FormatTime writes t in TimeFormat.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

// ParseTime reads a time written by FormatTime (or any RFC 3339 time).
func ParseTime(s string) (time.Time, error) {
	if t, err := time.Parse(TimeFormat, s); err == nil {
		return t, nil
	}
	return time.Parse(time.RFC3339Nano, s)
}

// Key names one slot.
type Key struct {
	Tenant   string
	Source   string
	Kind     Kind
	SourceID string
}

func (k Key) String() string { return fmt.Sprintf("%s %s", k.Kind, k.SourceID) }

// Slot is what a claim writes into migration_records.
type Slot struct {
	Key
	RunID      int64
	Action     Action
	RecordType string // the target table, for created and matched slots
	RecordID   int64  // the target row, for created and matched slots; 0 for a skip
	Reason     string // why a record was skipped; "" otherwise
	Detail     string // JSON that a skip could not resolve (R6), or ""
	// Digest and Hashes are what a created or matched slot says was last
	// written for it (R17, canon.Hashes); 0 and "" for a skip.
	Digest int64
	Hashes string
	At     time.Time
}

// Ledger runs the ledger's statements inside one transaction that its caller
// owns (STYLE 9). Statements are prepared once per transaction, on first use.
type Ledger struct {
	tx    *sql.Tx
	d     store.Dialect
	stmts map[string]*sql.Stmt
	kept  *store.Kept // nil: each statement prepared in tx
	ids   *store.IDs  // the slot ids, from the slot table's allocator on first claim
	// copying, when set, says whether Record's claims go by COPY
	// (copyClaims); a COPY that meets a slot clears it.
	copying *bool
}

// New returns a Ledger working inside tx, a write transaction of a
// database of dialect d. Close it before the transaction ends.
func New(tx *sql.Tx, d store.Dialect) *Ledger {
	return &Ledger{tx: tx, d: d, stmts: map[string]*sql.Stmt{}}
}

// Keeping makes l take its statements from k, kept across a run's
// transactions (store.Kept), and returns it.
func (l *Ledger) Keeping(k *store.Kept) *Ledger {
	l.kept = k
	return l
}

// Copying makes Record's claims go by the engine's bulk path while *on
// (copyClaims), and returns l. The claim of a key that holds a slot
// already is the statement's (R2, R3), which a COPY cannot make: the first
// COPY that meets one sets *on false, so that the claims of the rest of the
// caller's work (a task's, over its batches) go by statements. A first run
// copies every chunk; a rerun, whose claims take skips over, meets a slot
// in its first chunk.
func (l *Ledger) Copying(on *bool) *Ledger {
	l.copying = on
	return l
}

// slotTable is the name of the slot table's id allocator.
const slotTable = "migration_records"

// Close releases the prepared statements.
func (l *Ledger) Close() error {
	var errs []error
	for q, s := range l.stmts {
		errs = append(errs, s.Close())
		delete(l.stmts, q)
	}
	return errors.Join(errs...)
}

func (l *Ledger) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if s, ok := l.stmts[query]; ok {
		return s, nil
	}
	s, err := l.kept.Prepare(ctx, l.tx, query)
	if err != nil {
		return nil, err
	}
	l.stmts[query] = s
	return s, nil
}

// exec runs a statement without arguments, prepared once per transaction
// (the savepoint of each Record call: preparing it each time cost more
// than running it).
func (l *Ledger) exec(ctx context.Context, query string) (sql.Result, error) {
	st, err := l.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx)
}

// The claim (R1-R3) is one statement: claimHead, one claimRow per slot,
// claimTail. A new slot is inserted; an existing slot is taken over only
// while it is a placeholder (R3: a skip is a placeholder, not a verdict):
// the WHERE clause of the conflict makes a created or matched slot refuse
// every later claim (R2), and lets an import, a match or a later skip
// overwrite a skip, refreshing its reason, owner and time so that the
// ledger always tells the latest attempt (the slot keeps its id).
//
// What a chunk of slots shares is bound once (?1-?6: tenant, source, kind,
// run, record type, time); each slot binds its source id, slot id, row id,
// action, reason and detail. A refused claim changes no row, so the count of
// changed rows tells whether every claim won; SPEC's RETURNING would tell
// which, at 40% more time per claim, and the importer redoes a chunk with a
// refusal record by record anyway.
const (
	claimHead = `
INSERT INTO migration_records
    (tenant_id, source, kind, source_id, id, migration_id, record_type, record_id, action, reason, detail, digest, hashes, created_at)
SELECT ?1, ?2, ?3, column1, column2, ?4, CASE WHEN column4 = 'skipped' THEN NULL ELSE ?5 END,
    column3, column4, column5, column6, column7, column8, ?6
FROM (VALUES `
	claimRow = `(?, ?, ?, ?, ?, ?, ?, ?)`
)

// claimTail ends the claim with its conflict clause on the ledger's own
// table (built once: Go has no constant function).
var (
	claimConflict = ClaimConflict("migration_records", "tenant_id, source, kind, source_id")
	claimTail     = `) WHERE true` + claimConflict
)

// ClaimConflict is the claim's conflict clause (R2, R3) on a table of slots
// named table, whose unique key is key: a skipped slot is taken over (every
// column the claim writes but the key and the slot's id, less those in
// absent, is set from the claim's row; the slot keeps its id), and a
// created or matched slot refuses. The claim says it of migration_records;
// the bench's other layouts of the slots (cmd/crmbench) say it of their own
// tables, so that they measure this claim and no copy of it. For
// migration_records:
//
//	ON CONFLICT (tenant_id, source, kind, source_id) DO UPDATE SET
//	    migration_id = excluded.migration_id,
//	    record_type  = excluded.record_type,
//	    …
//	    created_at   = excluded.created_at
//	WHERE migration_records.action = 'skipped'
func ClaimConflict(table, key string, absent ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nON CONFLICT (%s) DO UPDATE SET", key)
	sep := "\n"
	for _, c := range []string{"migration_id", "record_type", "record_id", "action", "reason", "detail", "digest", "hashes", "created_at"} {
		if slices.Contains(absent, c) {
			continue
		}
		fmt.Fprintf(&b, "%s    %-12s = excluded.%s", sep, c, c)
		sep = ",\n"
	}
	fmt.Fprintf(&b, "\nWHERE %s.action = 'skipped'", table)
	return b.String()
}

// The claim in PostgreSQL's spelling (issue 17): a subquery in FROM needs
// an alias there, and a parameter of a SELECT or VALUES list that is not
// text is cast to its column's type (PostgreSQL types an untyped one as
// text, where SQLite's columns take what they are given).
const (
	pgClaimHead = `
INSERT INTO migration_records
    (tenant_id, source, kind, source_id, id, migration_id, record_type, record_id, action, reason, detail, digest, hashes, created_at)
SELECT ?1, ?2, ?3, column1, column2, CAST(?4 AS bigint), CASE WHEN column4 = 'skipped' THEN NULL ELSE ?5 END,
    column3, column4, column5, column6, column7, column8, ?6
FROM (VALUES `
	pgClaimRow = `(?, CAST(? AS bigint), CAST(? AS bigint), ?, ?, ?, CAST(? AS bigint), ?)`
)

var pgClaimTail = `) AS v WHERE true` + claimConflict

// claimChunk is how many slots one claim statement holds.
const claimChunk = store.MaxStatementRows

// claimSQL is the claim statement for n slots, in dialect d's text.
func claimSQL(d store.Dialect, n int) string {
	key := claimKey{d, n}
	if q, ok := claimTexts.Load(key); ok {
		return q.(string)
	}
	var head, row, tail string
	switch d {
	case store.SQLite:
		head, row, tail = claimHead, claimRow, claimTail
	case store.Postgres:
		head, row, tail = pgClaimHead, pgClaimRow, pgClaimTail
	default:
		panic(d.Untaught("ledger.claimSQL"))
	}
	q := head + strings.TrimSuffix(strings.Repeat(row+", ", n), ", ") + tail
	claimTexts.Store(key, q)
	return q
}

type claimKey struct {
	d store.Dialect
	n int
}

// claimTexts keeps each claim statement's text once built (one per size:
// store.StatementRows).
var claimTexts sync.Map

// Claim claims the slots, each for its own key, and reports whether every
// claim won. won=false means at least one was refused by a final slot (R2):
// an expected outcome, not an error. Keys must be distinct.
func (l *Ledger) Claim(ctx context.Context, slots []Slot) (won bool, err error) {
	if len(slots) == 0 {
		return true, nil
	}
	if err := l.slotIDs(ctx); err != nil {
		return false, fmt.Errorf("claim %s: %w", slots[0].Key, err)
	}
	won = true
	for start := 0; start < len(slots); {
		// A statement holds slots that share tenant, source, kind, run and time.
		first := slots[start]
		end := start + 1
		for end < len(slots) && end-start < claimChunk && sameGroup(first, slots[end]) {
			end++
		}
		end = start + store.StatementRows(end-start)
		chunk := slots[start:end]
		start = end
		st, err := l.stmt(ctx, claimSQL(l.d, len(chunk)))
		if err != nil {
			return false, fmt.Errorf("claim %s: %w", first.Key, err)
		}
		args := make([]any, 0, 6+8*len(chunk))
		args = append(args, first.Tenant, first.Source, string(first.Kind), first.RunID, first.Kind.Table(), FormatTime(first.At))
		for _, s := range chunk {
			args = append(args, s.SourceID, l.ids.Next(), nullInt(s.RecordID), string(s.Action), nullString(s.Reason), nullString(s.Detail),
				nullInt(s.Digest), nullString(s.Hashes))
		}
		res, err := st.ExecContext(ctx, args...)
		if err != nil {
			return false, fmt.Errorf("claim %s: %w", first.Key, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return false, fmt.Errorf("claim %s: %w", first.Key, err)
		}
		if n != int64(len(chunk)) {
			won = false
		}
	}
	if err := l.ids.Save(ctx); err != nil {
		return false, fmt.Errorf("claim: %w", err)
	}
	return won, nil
}

// slotIDs reads the slot table's id allocator, once per Ledger.
func (l *Ledger) slotIDs(ctx context.Context) error {
	if l.ids != nil {
		return nil
	}
	ids, err := l.d.TakeIDs(ctx, l.tx, slotTable)
	if err != nil {
		return err
	}
	l.ids = ids
	return nil
}

func sameGroup(a, b Slot) bool {
	return a.Tenant == b.Tenant && a.Source == b.Source && a.Kind == b.Kind && a.RunID == b.RunID && a.At.Equal(b.At)
}

// WriteFunc writes the target rows of created slots, with the row ids the
// slots name. It runs only once every claim of the call has won.
type WriteFunc func(ctx context.Context, tx *sql.Tx) error

// ErrRefused is returned by Record when a claim was refused by a final
// slot (R2): nothing of the call was written.
var ErrRefused = errors.New("a claim was refused by a final slot")

// Record is the one way to write target rows (R1): inside one savepoint it
// claims every slot, then runs write. Nothing is written before the claims
// are known to have won; when one is refused (R2) or write fails, the
// savepoint is rolled back, so the slots and rows of the whole call leave
// nothing behind. A refusal is ErrRefused; a write error is returned as it
// came, for the caller to tell a record's fault (a constraint) from the
// database's and to redo the call record by record.
//
// Slots of created records carry the id their row will have (RecordID);
// matched slots the id of the row they found; skips none.
func (l *Ledger) Record(ctx context.Context, slots []Slot, write WriteFunc) error {
	if len(slots) == 0 {
		return nil
	}
	if _, err := l.exec(ctx, `SAVEPOINT crmimport_record`); err != nil {
		return fmt.Errorf("savepoint %s: %w", slots[0].Key, err)
	}
	undo := func(cause error) error {
		if _, err := l.exec(ctx, `ROLLBACK TO crmimport_record`); err != nil {
			return errors.Join(cause, fmt.Errorf("roll back %s: %w", slots[0].Key, err))
		}
		if err := l.release(ctx, slots[0].Key); err != nil {
			return errors.Join(cause, err)
		}
		return cause
	}
	if err := l.slotIDs(ctx); err != nil {
		return undo(fmt.Errorf("record %s: %w", slots[0].Key, err))
	}
	// What the savepoint takes back, the ids it gave out are given again:
	// they were never committed.
	mark := l.ids.Mark()
	won, err := l.claim(ctx, slots, mark)
	switch {
	case err != nil:
		l.ids.Reset(mark)
		return undo(err)
	case !won:
		l.ids.Reset(mark)
		return undo(ErrRefused)
	}
	if write != nil {
		if err := write(ctx, l.tx); err != nil {
			l.ids.Reset(mark)
			return undo(err)
		}
	}
	return l.release(ctx, slots[0].Key)
}

// claim claims slots for Record, inside its savepoint, by COPY where l
// copies (copyClaims) and else by the claim statement (Claim). A COPY
// that meets a slot already there is taken back (the savepoint) and the
// slots claimed by the statement, whose conflict clause says for each
// whether it takes a skip over or is refused by a final slot (R1-R3): a
// COPY only ever writes what the statement would have written, and only
// where no slot was.
func (l *Ledger) claim(ctx context.Context, slots []Slot, mark int64) (won bool, err error) {
	if !l.copies(len(slots)) {
		return l.Claim(ctx, slots)
	}
	err = l.copyClaims(ctx, slots)
	if err == nil {
		return true, nil
	}
	if !store.IsConstraint(err) {
		return false, fmt.Errorf("claim %s: %w", slots[0].Key, err)
	}
	*l.copying = false
	if _, err := l.exec(ctx, `ROLLBACK TO crmimport_record`); err != nil {
		return false, fmt.Errorf("claim %s: roll back its copy: %w", slots[0].Key, err)
	}
	l.ids.Reset(mark)
	return l.Claim(ctx, slots)
}

// copies tells whether n slots are claimed by COPY.
func (l *Ledger) copies(n int) bool {
	switch l.d {
	case store.SQLite:
		return false // its statements run in the process: nothing to save
	case store.Postgres:
		return l.copying != nil && *l.copying && n >= store.CopyMin
	default:
		panic(l.d.Untaught("ledger.Ledger.copies"))
	}
}

// slotColumns are the columns a claim writes, in the claim statement's
// order (claimHead).
var slotColumns = []string{"tenant_id", "source", "kind", "source_id", "id", "migration_id", "record_type", "record_id", "action",
	"reason", "detail", "digest", "hashes", "created_at"}

// copyClaims writes slots, none of whose keys may hold a slot, into
// migration_records by COPY (store.CopyIn), each row what the claim
// statement's row would be. A key that holds one fails it whole (the
// table's key, a constraint).
func (l *Ledger) copyClaims(ctx context.Context, slots []Slot) error {
	rows := make([][]any, len(slots))
	for i, s := range slots {
		var recordType any
		if s.Action != Skipped {
			recordType = s.Kind.Table() // as the statement writes it (claimHead)
		}
		rows[i] = []any{s.Tenant, s.Source, string(s.Kind), s.SourceID, l.ids.Next(), s.RunID, recordType, nullInt(s.RecordID),
			string(s.Action), nullString(s.Reason), nullString(s.Detail), nullInt(s.Digest), nullString(s.Hashes), FormatTime(s.At)}
	}
	if err := store.CopyIn(ctx, l.tx, slotTable, slotColumns, rows); err != nil {
		return err
	}
	return l.ids.Save(ctx)
}

func (l *Ledger) release(ctx context.Context, k Key) error {
	if _, err := l.exec(ctx, `RELEASE crmimport_record`); err != nil {
		return fmt.Errorf("release savepoint %s: %w", k, err)
	}
	return nil
}

// Querier is a *sql.DB or a *sql.Tx.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// finalsSQL reads every final slot of one kind (R2, R6): created or
// matched, never a skip. The importer keeps them in memory to answer "is
// this record already there" and "where does this link point" without a
// statement per record.
const finalsSQL = `
SELECT source_id, coalesce(record_id, 0), coalesce(digest, 0) FROM migration_records
WHERE tenant_id = ? AND source = ? AND kind = ? AND action IN ('created', 'matched')`

// LoadFinal calls add for every final slot of kind, with its row and the
// digest of what was last written for it (R17; 0 for none). A final slot
// without a row id (possible in a loaded dump) comes with id 0.
func LoadFinal(ctx context.Context, q Querier, tenant, source string, kind Kind, add func(sourceID string, recordID, digest int64)) error {
	return each(ctx, q, fmt.Sprintf("read final %s slots", kind), finalsSQL, add, tenant, source, string(kind))
}

// finalsAmongSQL reads the final slots of one kind among some ids (R2,
// R6), by the slot table's key: a revisit asks for the few ids it reads
// again, where a full reading loads them all (LoadFinal). The ids come as
// one JSON array, unpacked by each dialect's own function.
const finalsAmongSQL = `
SELECT source_id, coalesce(record_id, 0), coalesce(digest, 0) FROM migration_records
WHERE tenant_id = ? AND source = ? AND kind = ? AND source_id IN (SELECT value FROM json_each(?))
  AND action IN ('created', 'matched')`

const finalsAmongPG = `
SELECT source_id, coalesce(record_id, 0), coalesce(digest, 0) FROM migration_records
WHERE tenant_id = ? AND source = ? AND kind = ? AND source_id IN (SELECT jsonb_array_elements_text(CAST(? AS jsonb)))
  AND action IN ('created', 'matched')`

// LoadFinalAmong calls add for each final slot of kind among ids, as
// LoadFinal does for all of them.
func LoadFinalAmong(ctx context.Context, q Querier, d store.Dialect, tenant, source string, kind Kind, ids []string, add func(sourceID string, recordID, digest int64)) error {
	if len(ids) == 0 {
		return nil
	}
	b, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	var query string
	switch d {
	case store.SQLite:
		query = finalsAmongSQL
	case store.Postgres:
		query = finalsAmongPG
	default:
		panic(d.Untaught("ledger.LoadFinalAmong"))
	}
	return each(ctx, q, fmt.Sprintf("read final %s slots", kind), query, add, tenant, source, string(kind), string(b))
}

func each(ctx context.Context, q Querier, what, query string, add func(string, int64, int64), args ...any) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var id, digest int64
		if err := rows.Scan(&k, &id, &digest); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		add(k, id, digest)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullInt(n int64) any {
	if n == 0 {
		return nil
	}
	return n
}

// epochSQL reads the epoch of one tenant and source: a number that moves
// whenever a final slot of theirs is deleted or changed (schema 7's
// triggers). An import never does either (R2); an undo (R16) and a hand
// repair do. A task that read a file while the epoch stood still, and left
// every record of it in a final slot, vouches for that file's records for
// as long as the epoch stays where it was. A pair with no row stands at 0.
const epochSQL = `SELECT coalesce((SELECT n FROM ledger_epochs WHERE tenant_id = ? AND source = ?), 0)`

// Epoch returns the epoch of tenant and source (see epochSQL).
func Epoch(ctx context.Context, q Querier, tenant, source string) (int64, error) {
	rows, err := q.QueryContext(ctx, epochSQL, tenant, source)
	if err != nil {
		return 0, fmt.Errorf("read the ledger's epoch: %w", err)
	}
	defer rows.Close()
	var n int64
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return 0, fmt.Errorf("read the ledger's epoch: %w", err)
		}
		return 0, errors.New("read the ledger's epoch: no row")
	}
	if err := rows.Scan(&n); err != nil {
		return 0, fmt.Errorf("read the ledger's epoch: %w", err)
	}
	return n, rows.Close()
}

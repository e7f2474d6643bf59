package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
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
	At         time.Time
}

// Ledger runs the ledger's statements inside one transaction that its caller
// owns (STYLE 9). Statements are prepared once per transaction, on first use.
type Ledger struct {
	tx    *sql.Tx
	stmts map[string]*sql.Stmt
}

// New returns a Ledger working inside tx. Close it before the transaction ends.
func New(tx *sql.Tx) *Ledger { return &Ledger{tx: tx, stmts: map[string]*sql.Stmt{}} }

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
	s, err := l.tx.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	l.stmts[query] = s
	return s, nil
}

// claimSQL is the claim (R1-R3). A new slot is inserted; an existing slot is
// taken over only while it is a placeholder (R3: a skip is a placeholder, not
// a verdict): the WHERE clause makes a created or matched slot refuse every
// later claim (R2), and lets an import, a match or a later skip overwrite a
// skip, refreshing its reason, owner and time so that the ledger always tells
// the latest attempt. No row returned means refused.
const claimSQL = `
INSERT INTO migration_records
    (tenant_id, source, kind, source_id, migration_id, record_type, record_id, action, reason, detail, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (tenant_id, source, kind, source_id) DO UPDATE SET
    migration_id = excluded.migration_id,
    record_type  = excluded.record_type,
    record_id    = excluded.record_id,
    action       = excluded.action,
    reason       = excluded.reason,
    detail       = excluded.detail,
    created_at   = excluded.created_at
WHERE migration_records.action = 'skipped'
RETURNING id`

// Claim claims the slot s.Key for s. won=false is a refusal by a final slot
// (R2), an expected outcome and not an error.
func (l *Ledger) Claim(ctx context.Context, s Slot) (won bool, err error) {
	st, err := l.stmt(ctx, claimSQL)
	if err != nil {
		return false, fmt.Errorf("claim %s: %w", s.Key, err)
	}
	var id int64
	err = st.QueryRowContext(ctx,
		s.Tenant, s.Source, string(s.Kind), s.SourceID, s.RunID,
		nullString(s.RecordType), nullInt(s.RecordID), string(s.Action),
		nullString(s.Reason), nullString(s.Detail), FormatTime(s.At),
	).Scan(&id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("claim %s: %w", s.Key, err)
	}
	return true, nil
}

// WriteFunc writes one target row and returns its id.
type WriteFunc func(ctx context.Context, tx *sql.Tx) (id int64, err error)

// Record is the one way to write a target row (R1): inside a savepoint it
// runs write, then claims the slot as created with the row's id. When the
// claim is refused (R2) or write fails, the savepoint is rolled back, so the
// record leaves nothing behind; a write error is returned as it came, for the
// caller to tell a record's fault (a constraint) from the database's.
//
// With write nil (a match or a skip) Record is a plain Claim: there is no row
// to undo.
func (l *Ledger) Record(ctx context.Context, s Slot, write WriteFunc) (won bool, err error) {
	if write == nil {
		return l.Claim(ctx, s)
	}
	if _, err := l.tx.ExecContext(ctx, `SAVEPOINT crmimport_record`); err != nil {
		return false, fmt.Errorf("savepoint %s: %w", s.Key, err)
	}
	undo := func() error {
		if _, err := l.tx.ExecContext(ctx, `ROLLBACK TO crmimport_record`); err != nil {
			return fmt.Errorf("roll back %s: %w", s.Key, err)
		}
		return l.release(ctx, s.Key)
	}
	id, werr := write(ctx, l.tx)
	if werr != nil {
		if err := undo(); err != nil {
			return false, errors.Join(werr, err)
		}
		return false, werr
	}
	s.RecordID = id
	won, err = l.Claim(ctx, s)
	if err != nil || !won {
		if uerr := undo(); uerr != nil {
			return false, errors.Join(err, uerr)
		}
		return false, err
	}
	return true, l.release(ctx, s.Key)
}

func (l *Ledger) release(ctx context.Context, k Key) error {
	if _, err := l.tx.ExecContext(ctx, `RELEASE crmimport_record`); err != nil {
		return fmt.Errorf("release savepoint %s: %w", k, err)
	}
	return nil
}

// finalSQL finds a final slot (R2, R6): created or matched, never a skip.
const finalSQL = `
SELECT record_id FROM migration_records
WHERE tenant_id = ? AND source = ? AND kind = ? AND source_id = ?
  AND action IN ('created', 'matched')`

// Final returns the target row id of the final slot at k, if there is one.
// It answers "is this record already there" (R2) and "where does this link
// point" (R6). A final slot without a row id (possible in a loaded dump)
// is found with id 0.
func (l *Ledger) Final(ctx context.Context, k Key) (id int64, found bool, err error) {
	st, err := l.stmt(ctx, finalSQL)
	if err != nil {
		return 0, false, fmt.Errorf("look up %s: %w", k, err)
	}
	var rid sql.NullInt64
	err = st.QueryRowContext(ctx, k.Tenant, k.Source, string(k.Kind), k.SourceID).Scan(&rid)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("look up %s: %w", k, err)
	}
	return rid.Int64, true, nil
}

// matchContactSQL: R5, a contact is found by its email key among the
// tenant's rows, from any source; with several, the oldest.
const matchContactSQL = `
SELECT id FROM contacts WHERE tenant_id = ? AND email_key = ? ORDER BY id LIMIT 1`

// MatchContact returns the tenant's oldest contact whose EmailKey is key.
func (l *Ledger) MatchContact(ctx context.Context, tenant, key string) (id int64, found bool, err error) {
	return l.match(ctx, matchContactSQL, tenant, key)
}

// matchCompanySQL: R5, a company is found by its domain key.
const matchCompanySQL = `
SELECT id FROM companies WHERE tenant_id = ? AND domain_key = ? ORDER BY id LIMIT 1`

// MatchCompany returns the tenant's oldest company whose DomainKey is key.
func (l *Ledger) MatchCompany(ctx context.Context, tenant, key string) (id int64, found bool, err error) {
	return l.match(ctx, matchCompanySQL, tenant, key)
}

func (l *Ledger) match(ctx context.Context, query, tenant, key string) (int64, bool, error) {
	if key == "" {
		return 0, false, nil // only non-empty keys match
	}
	st, err := l.stmt(ctx, query)
	if err != nil {
		return 0, false, fmt.Errorf("match %q: %w", key, err)
	}
	var id int64
	err = st.QueryRowContext(ctx, tenant, key).Scan(&id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("match %q: %w", key, err)
	}
	return id, true, nil
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

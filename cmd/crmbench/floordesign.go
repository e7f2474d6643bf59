package main

// Designs of the schema floor (issue 16 goal 3): other layouts of the
// ledger's slots and of the natural-key indexes, each measured against the
// schema's own in the same round (-floor.design NAME[,NAME]). A design of
// the slots writes them into a table of its own in the floor's database,
// beside the schema's (which it leaves empty), with the same columns
// otherwise, the same key in meaning — one slot per (tenant_id, source,
// kind, source_id), R1 — the same claim (one statement per 256 slots, the
// same conflict clause, ledger.ClaimConflict's: a skip is taken over, a
// final slot refuses, R2/R3), the same slot ids from the same allocator,
// and the same triggers of schema 7 (the before-image of a slot taken over,
// the epoch of a final slot deleted or changed), which a first run never
// fires. The statements still name the tenant, the source and the kind: the
// claim finds the scope they make inside its own text. Nothing here changes
// the schema.
//
//   - scope: the tenant and source as a small integer, kept in a table of
//     scopes; slots keyed (scope_id, kind, source_id).
//   - scopekind: the kind in the scope too; slots keyed (scope_id,
//     source_id).
//   - compact: scopekind, with the slot's time as an integer (microseconds
//     since 1970, UTC) instead of 27 bytes of text, and no record_type
//     column (for a final slot it is always its kind's table, which the
//     scope tells; NULL for a skip).
//   - keys-after: the natural-key indexes (R5) dropped before the load and
//     built once after it, in one sort each, instead of entry by entry. A
//     first run finds its natural keys in memory (the keys already there
//     are read once, before the file), so the index serves the runs after.

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/store"
)

type floorDesign struct {
	slots     *slotLayout // nil: the schema's migration_records, through ledger.Claim
	keysAfter bool        // the natural-key indexes built after the load
}

// slotLayout is a table of slots of a design's own.
type slotLayout struct {
	name  string
	ddl   string // its tables and triggers
	scope string // registers the scopes of a run (tenant ?1, source ?2), as planning a run would
	// The claim: head, one (source id, slot id, row id, action, reason,
	// detail) tuple per slot, tail. Bound once: ?1 tenant, ?2 source, ?3
	// kind, ?4 run, ?5 record type, ?6 time.
	head, tail string
	intTime    bool   // ?6 is microseconds since 1970, not text
	count      string // kind, action, count(*) of every slot
}

var slotLayouts = map[string]*slotLayout{"scope": scopeLayout, "scopekind": scopeKindLayout, "compact": compactLayout}

func parseDesign(s string) (floorDesign, error) {
	var d floorDesign
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' }) {
		switch l, ok := slotLayouts[w]; {
		case w == "default":
		case w == "keys-after":
			d.keysAfter = true
		case ok && d.slots == nil:
			d.slots = l
		default:
			return d, fmt.Errorf("-floor.design: %q is none of default, scope, scopekind, compact, keys-after (one slot layout at most)", w)
		}
	}
	return d, nil
}

// String names the design as -floor.design takes it.
func (d floorDesign) String() string {
	var parts []string
	if d.slots != nil {
		parts = append(parts, d.slots.name)
	}
	if d.keysAfter {
		parts = append(parts, "keys-after")
	}
	if len(parts) == 0 {
		return "default"
	}
	return strings.Join(parts, ",")
}

var floorKeyIndexes = []struct{ name, create string }{
	{"contacts_email_key", `CREATE INDEX contacts_email_key ON contacts (tenant_id, email_key) WHERE email_key IS NOT NULL`},
	{"companies_domain_key", `CREATE INDEX companies_domain_key ON companies (tenant_id, domain_key) WHERE domain_key IS NOT NULL`},
}

// setup readies db for the design before the load.
func (d floorDesign) setup(ctx context.Context, db *sql.DB, tenant, source string) error {
	if d.slots != nil {
		if _, err := db.ExecContext(ctx, d.slots.ddl); err != nil {
			return fmt.Errorf("design %s: %w", d.slots.name, err)
		}
		if _, err := db.ExecContext(ctx, d.slots.scope, tenant, source); err != nil {
			return fmt.Errorf("design %s: scopes: %w", d.slots.name, err)
		}
	}
	if d.keysAfter {
		for _, ix := range floorKeyIndexes {
			if _, err := db.ExecContext(ctx, `DROP INDEX `+ix.name); err != nil {
				return err
			}
		}
	}
	return nil
}

// finish is the design's work after the load, timed with it.
func (d floorDesign) finish(ctx context.Context, db *sql.DB) error {
	if d.keysAfter {
		for _, ix := range floorKeyIndexes {
			if _, err := db.ExecContext(ctx, ix.create); err != nil {
				return err
			}
		}
	}
	return nil
}

// slotCount is the query that counts the slots per kind and action.
func (d floorDesign) slotCount() string {
	if d.slots != nil {
		return d.slots.count
	}
	return `SELECT kind, action, count(*) FROM migration_records GROUP BY kind, action`
}

// claim claims slots (all of one tenant, source, kind, run and time) into
// the layout's table, as ledger.Claim does into the schema's.
func (l *slotLayout) claim(ctx context.Context, tx *sql.Tx, stmts map[int]*sql.Stmt, slots []ledger.Slot) (won bool, err error) {
	ids, err := store.SQLite.TakeIDs(ctx, tx, "migration_records")
	if err != nil {
		return false, err
	}
	won = true
	for start := 0; start < len(slots); start += floorChunk {
		chunk := slots[start:min(start+floorChunk, len(slots))]
		st, ok := stmts[len(chunk)]
		if !ok {
			q := l.head + strings.TrimSuffix(strings.Repeat(`(?, ?, ?, ?, ?, ?), `, len(chunk)), ", ") + l.tail
			if st, err = tx.PrepareContext(ctx, q); err != nil {
				return false, fmt.Errorf("design %s: %w", l.name, err)
			}
			stmts[len(chunk)] = st
		}
		first := chunk[0]
		var at any = ledger.FormatTime(first.At)
		if l.intTime {
			at = first.At.UnixMicro()
		}
		args := make([]any, 0, 6+6*len(chunk))
		args = append(args, first.Tenant, first.Source, string(first.Kind), first.RunID, first.Kind.Table(), at)
		for _, s := range chunk {
			args = append(args, s.SourceID, ids.Next(), nullInt(s.RecordID), string(s.Action), nullString(s.Reason), nullString(s.Detail))
		}
		res, err := st.ExecContext(ctx, args...)
		if err != nil {
			return false, fmt.Errorf("design %s: claim: %w", l.name, err)
		}
		if n, err := res.RowsAffected(); err != nil || n != int64(len(chunk)) {
			won = false
		}
	}
	return won, ids.Save(ctx)
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

// floorKindCheck is the ledger's CHECK of a kind column: the kinds of the
// table of kinds.
var floorKindCheck = func() string {
	var ks []string
	for _, k := range canon.Kinds() {
		ks = append(ks, "'"+string(k)+"'")
	}
	return "CHECK (kind IN (" + strings.Join(ks, ", ") + "))"
}()

var scopeLayout = &slotLayout{
	name: "scope",
	ddl: `
CREATE TABLE floor_scopes (
    scope_id  INTEGER PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    source    TEXT NOT NULL,
    UNIQUE (tenant_id, source)
);
CREATE TABLE floor_slots (
    scope_id     INTEGER NOT NULL REFERENCES floor_scopes (scope_id),
    kind         TEXT    NOT NULL ` + floorKindCheck + `,
    source_id    TEXT    NOT NULL,
    id           INTEGER NOT NULL,
    migration_id INTEGER,
    record_type  TEXT,
    record_id    INTEGER,
    action       TEXT    NOT NULL CHECK (action IN ('created', 'matched', 'skipped')),
    reason       TEXT,
    detail       TEXT,
    created_at   TEXT    NOT NULL,
    PRIMARY KEY (scope_id, kind, source_id)
) WITHOUT ROWID;
CREATE TABLE floor_slot_before (
    scope_id     INTEGER NOT NULL,
    kind         TEXT    NOT NULL,
    source_id    TEXT    NOT NULL,
    taken_by     INTEGER NOT NULL,
    migration_id INTEGER,
    reason       TEXT,
    detail       TEXT,
    created_at   TEXT    NOT NULL,
    PRIMARY KEY (scope_id, kind, source_id)
) WITHOUT ROWID;
CREATE TRIGGER floor_slot_taken_over BEFORE UPDATE OF migration_id ON floor_slots
WHEN OLD.action = 'skipped' AND OLD.migration_id IS NOT NEW.migration_id
BEGIN
    INSERT INTO floor_slot_before (scope_id, kind, source_id, taken_by, migration_id, reason, detail, created_at)
    VALUES (OLD.scope_id, OLD.kind, OLD.source_id, NEW.migration_id, OLD.migration_id, OLD.reason, OLD.detail, OLD.created_at)
    ON CONFLICT (scope_id, kind, source_id) DO UPDATE SET
        taken_by = excluded.taken_by, migration_id = excluded.migration_id, reason = excluded.reason,
        detail = excluded.detail, created_at = excluded.created_at;
END;
` + floorEpochTriggers,
	scope: `INSERT INTO floor_scopes (tenant_id, source) VALUES (?1, ?2) ON CONFLICT DO NOTHING`,
	head: `
INSERT INTO floor_slots
    (scope_id, kind, source_id, id, migration_id, record_type, record_id, action, reason, detail, created_at)
SELECT (SELECT scope_id FROM floor_scopes WHERE tenant_id = ?1 AND source = ?2), ?3, column1, column2, ?4,
    CASE WHEN column4 = 'skipped' THEN NULL ELSE ?5 END, column3, column4, column5, column6, ?6
FROM (VALUES `,
	// The claim's own conflict clause (R2, R3), on this table.
	tail:  `) WHERE true` + ledger.ClaimConflict("floor_slots", "scope_id, kind, source_id", "digest", "hashes"),
	count: `SELECT kind, action, count(*) FROM floor_slots GROUP BY kind, action`,
}

// The epoch of a final slot deleted or changed (schema 7), for a slot
// table whose scope names the tenant and source.
const floorEpochTriggers = `
CREATE TRIGGER floor_final_slot_deleted AFTER DELETE ON floor_slots
WHEN OLD.action IN ('created', 'matched')
BEGIN
    INSERT INTO ledger_epochs (tenant_id, source, n)
    SELECT tenant_id, source, 1 FROM floor_scopes WHERE scope_id = OLD.scope_id
    ON CONFLICT (tenant_id, source) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER floor_final_slot_changed AFTER UPDATE ON floor_slots
WHEN OLD.action IN ('created', 'matched')
BEGIN
    INSERT INTO ledger_epochs (tenant_id, source, n)
    SELECT tenant_id, source, 1 FROM floor_scopes WHERE scope_id = OLD.scope_id
    ON CONFLICT (tenant_id, source) DO UPDATE SET n = n + 1;
END;`

// The scopes of tenant and source, one per kind, as planning a run would
// register them.
var floorScopeKinds = func() string {
	var vs []string
	kinds := canon.Kinds()
	sort.Slice(kinds, func(i, j int) bool { return kinds[i] < kinds[j] })
	for _, k := range kinds {
		vs = append(vs, fmt.Sprintf("(?1, ?2, '%s')", k))
	}
	return `INSERT INTO floor_scopes (tenant_id, source, kind) VALUES ` + strings.Join(vs, ", ") + ` ON CONFLICT DO NOTHING`
}()

var floorScopeKindTable = `
CREATE TABLE floor_scopes (
    scope_id  INTEGER PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    source    TEXT NOT NULL,
    kind      TEXT NOT NULL ` + floorKindCheck + `,
    UNIQUE (tenant_id, source, kind)
);
CREATE TABLE floor_slot_before (
    scope_id     INTEGER NOT NULL,
    source_id    TEXT    NOT NULL,
    taken_by     INTEGER NOT NULL,
    migration_id INTEGER,
    reason       TEXT,
    detail       TEXT,
    created_at   %[1]s NOT NULL,
    PRIMARY KEY (scope_id, source_id)
) WITHOUT ROWID;
CREATE TRIGGER floor_slot_taken_over BEFORE UPDATE OF migration_id ON floor_slots
WHEN OLD.action = 'skipped' AND OLD.migration_id IS NOT NEW.migration_id
BEGIN
    INSERT INTO floor_slot_before (scope_id, source_id, taken_by, migration_id, reason, detail, created_at)
    VALUES (OLD.scope_id, OLD.source_id, NEW.migration_id, OLD.migration_id, OLD.reason, OLD.detail, OLD.created_at)
    ON CONFLICT (scope_id, source_id) DO UPDATE SET
        taken_by = excluded.taken_by, migration_id = excluded.migration_id, reason = excluded.reason,
        detail = excluded.detail, created_at = excluded.created_at;
END;
`

const floorScopeKindCount = `SELECT c.kind, s.action, count(*) FROM floor_slots s JOIN floor_scopes c USING (scope_id) GROUP BY c.kind, s.action`

const floorScopeKindHead = `
FROM (VALUES `

var scopeKindLayout = &slotLayout{
	name: "scopekind",
	ddl: `
CREATE TABLE floor_slots (
    scope_id     INTEGER NOT NULL REFERENCES floor_scopes (scope_id),
    source_id    TEXT    NOT NULL,
    id           INTEGER NOT NULL,
    migration_id INTEGER,
    record_type  TEXT,
    record_id    INTEGER,
    action       TEXT    NOT NULL CHECK (action IN ('created', 'matched', 'skipped')),
    reason       TEXT,
    detail       TEXT,
    created_at   TEXT    NOT NULL,
    PRIMARY KEY (scope_id, source_id)
) WITHOUT ROWID;` + fmt.Sprintf(floorScopeKindTable, "TEXT   ") + floorEpochTriggers,
	scope: floorScopeKinds,
	head: `
INSERT INTO floor_slots
    (scope_id, source_id, id, migration_id, record_type, record_id, action, reason, detail, created_at)
SELECT (SELECT scope_id FROM floor_scopes WHERE tenant_id = ?1 AND source = ?2 AND kind = ?3), column1, column2, ?4,
    CASE WHEN column4 = 'skipped' THEN NULL ELSE ?5 END, column3, column4, column5, column6, ?6` + floorScopeKindHead,
	// The claim's own conflict clause (R2, R3), on this table.
	tail:  `) WHERE true` + ledger.ClaimConflict("floor_slots", "scope_id, source_id", "digest", "hashes"),
	count: floorScopeKindCount,
}

var compactLayout = &slotLayout{
	name: "compact",
	ddl: `
CREATE TABLE floor_slots (
    scope_id     INTEGER NOT NULL REFERENCES floor_scopes (scope_id),
    source_id    TEXT    NOT NULL,
    id           INTEGER NOT NULL,
    migration_id INTEGER,
    record_id    INTEGER,
    action       TEXT    NOT NULL CHECK (action IN ('created', 'matched', 'skipped')),
    reason       TEXT,
    detail       TEXT,
    created_at   INTEGER NOT NULL, -- microseconds since 1970, UTC
    PRIMARY KEY (scope_id, source_id)
) WITHOUT ROWID;` + fmt.Sprintf(floorScopeKindTable, "INTEGER") + floorEpochTriggers,
	scope: floorScopeKinds,
	head: `
INSERT INTO floor_slots
    (scope_id, source_id, id, migration_id, record_id, action, reason, detail, created_at)
SELECT (SELECT scope_id FROM floor_scopes WHERE tenant_id = ?1 AND source = ?2 AND kind = ?3), column1, column2, ?4,
    column3, column4, column5, column6, ?6` + floorScopeKindHead,
	// The claim's own conflict clause (R2, R3), on this table, which has no
	// record_type.
	tail:    `) WHERE true` + ledger.ClaimConflict("floor_slots", "scope_id, source_id", "record_type", "digest", "hashes"),
	intTime: true,
	count:   floorScopeKindCount,
}

package forensics

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"crmimport/ledger"
	"crmimport/store"
)

// LoadSummary is what a load brought in.
type LoadSummary struct {
	Dump         string         `json:"dump"`
	Files        []string       `json:"files"`
	Runs         []int64        `json:"runs"`
	Tenants      []string       `json:"tenants"`
	Tasks        int            `json:"tasks"`
	Slots        map[string]int `json:"slots"`        // by action
	Placeholders map[string]int `json:"placeholders"` // by target table
	Notices      []string       `json:"notices"`
}

// Load loads a production dump (a folder of migrations, migration_tasks and
// migration_records as .csv or .jsonl) into db, keeping its ids, in one
// transaction: a dump with a bad row, or one whose ids the database already
// holds, loads nothing (*DumpError, *ConflictError). now is written as the
// time placeholder rows were made.
func Load(ctx context.Context, db *sql.DB, dir string, now time.Time) (*LoadSummary, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("ledger load %s: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, &DumpError{File: dir, Msg: "is not a folder: a dump is a folder of migrations, migration_tasks and migration_records (.csv or .jsonl)"}
	}
	d, err := readDump(abs)
	if err != nil {
		return nil, err
	}
	if err := errors.Join(d.problems...); err != nil {
		return nil, fmt.Errorf("ledger load %s: nothing was loaded:\n%w", dir, err)
	}
	tx, err := store.Begin(ctx, db)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	sum, err := d.write(ctx, tx, ledger.FormatTime(now))
	if err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("ledger load %s: commit: %w", dir, err)
	}
	return sum, nil
}

// The statements of a load. Each inserts a row with the dump's id and does
// nothing where that id is taken, which the load then reports as a
// conflict (one changed row is a row loaded).

// insertDumpRunSQL: a loaded run has no owner here (a running one shows as
// interrupted, R13) and names its dump.
const insertDumpRunSQL = `
INSERT INTO migrations (id, tenant_id, source, status, current_phase, cancellation_requested, stats, options,
    started_at, finished_at, duration_ms, message, attempts, dump)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO NOTHING`

// insertDumpTaskSQL: a loaded task has no input file here (R10: resume
// --from plans one).
const insertDumpTaskSQL = `
INSERT INTO migration_tasks (id, migration_id, kind, phase, status, checkpoint, attempts, last_error,
    imported, matched, unchanged, skipped, failed, duplicate, unlinked, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO NOTHING`

// insertDumpSlotSQL restores a slot as production left it. It is not a
// claim (R1-R3 are the importer's): a slot already here is a conflict.
const insertDumpSlotSQL = `
INSERT INTO migration_records (tenant_id, source, kind, source_id, id, migration_id, record_type, record_id,
    action, reason, detail, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (tenant_id, source, kind, source_id) DO NOTHING`

const slotIDsSQL = `SELECT id FROM migration_records`

const nextSlotIDSQL = `SELECT next FROM slot_ids`

// bumpSlotIDsSQL: the ledger numbers new slots past every loaded one.
const bumpSlotIDsSQL = `UPDATE slot_ids SET next = max(next, ?)`

// placeholderSQL inserts the placeholder row of a created or matched slot
// whose row the dump does not carry, with the slot's record_id. Its one
// visible text says what it is; NOT NULL columns are filled by it.
var placeholderSQL = map[ledger.Kind]string{
	ledger.Company:  `INSERT INTO companies (id, tenant_id, name, extra, imported_at, from_dump) VALUES (?, ?, ?, ?, ?, 1) ON CONFLICT (id) DO NOTHING`,
	ledger.Contact:  `INSERT INTO contacts (id, tenant_id, last_name, extra, imported_at, from_dump) VALUES (?, ?, ?, ?, ?, 1) ON CONFLICT (id) DO NOTHING`,
	ledger.Deal:     `INSERT INTO deals (id, tenant_id, name, extra, imported_at, from_dump) VALUES (?, ?, ?, ?, ?, 1) ON CONFLICT (id) DO NOTHING`,
	ledger.Note:     `INSERT INTO notes (id, tenant_id, body, extra, imported_at, from_dump) VALUES (?, ?, ?, ?, ?, 1) ON CONFLICT (id) DO NOTHING`,
	ledger.Activity: `INSERT INTO activities (id, tenant_id, subject, extra, imported_at, from_dump) VALUES (?, ?, ?, ?, ?, 1) ON CONFLICT (id) DO NOTHING`,
	ledger.Email:    `INSERT INTO emails (id, tenant_id, subject, extra, imported_at, from_dump) VALUES (?, ?, ?, ?, ?, 1) ON CONFLICT (id) DO NOTHING`,
}

// maxRowIDSQL: a final slot without a record_id gets a placeholder row
// past every row of its table.
var maxRowIDSQL = map[ledger.Kind]string{
	ledger.Company:  `SELECT coalesce(max(id), 0) FROM companies`,
	ledger.Contact:  `SELECT coalesce(max(id), 0) FROM contacts`,
	ledger.Deal:     `SELECT coalesce(max(id), 0) FROM deals`,
	ledger.Note:     `SELECT coalesce(max(id), 0) FROM notes`,
	ledger.Activity: `SELECT coalesce(max(id), 0) FROM activities`,
	ledger.Email:    `SELECT coalesce(max(id), 0) FROM emails`,
}

const liveRunOfTenantSQL = `SELECT id FROM migrations WHERE tenant_id = ? AND status = 'running'`

// loadLogSQL: a loaded run's log says where it came from; its production
// log is not part of a dump.
const loadLogSQL = `INSERT INTO run_log (migration_id, at, level, message) VALUES (?, ?, 'notice', ?)`

// write inserts the dump in tx, or returns a *ConflictError naming every
// id the database already holds.
func (d *dump) write(ctx context.Context, tx *sql.Tx, now string) (*LoadSummary, error) {
	conflict := &ConflictError{Dump: d.dir}
	sum := &LoadSummary{Dump: d.dir, Slots: map[string]int{}, Placeholders: map[string]int{}, Notices: d.notices}
	for _, table := range []string{tableRuns, tableTasks, tableSlots} {
		if f := d.files[table]; f != "" {
			sum.Files = append(sum.Files, filepath.Base(f))
		}
	}
	tenants := map[string]bool{}
	for _, r := range d.runs {
		res, err := tx.ExecContext(ctx, insertDumpRunSQL, r.id, r.tenant, r.source, r.status, r.phase, boolInt(r.cancel),
			r.stats, r.options, r.started, r.finished, r.duration, r.message, r.attempts, r.dump)
		if store.IsUnique(err) {
			var live int64
			if qerr := tx.QueryRowContext(ctx, liveRunOfTenantSQL, r.tenant).Scan(&live); qerr != nil {
				return nil, errors.Join(err, qerr)
			}
			conflict.LiveRuns = append(conflict.LiveRuns, fmt.Sprintf("tenant %s already has a running run here (run %d), and the dump's run %d is running too (R13: one live run per tenant)", r.tenant, live, r.id))
			continue
		}
		if err := oneRow(res, err); errors.Is(err, errNoRow) {
			conflict.Runs = append(conflict.Runs, r.id)
			continue
		} else if err != nil {
			return nil, fmt.Errorf("load run %d: %w", r.id, err)
		}
		sum.Runs = append(sum.Runs, r.id)
		tenants[r.tenant] = true
		msg := fmt.Sprintf("run %d was loaded from the dump %s by `crmimport ledger load` as %s; its production log is not part of the dump, "+
			"and it has no input files here (`crmimport resume %d --from PATH` plans its unfinished tasks over a local export)",
			r.id, d.dir, r.status, r.id)
		if _, err := tx.ExecContext(ctx, loadLogSQL, r.id, now, msg); err != nil {
			return nil, fmt.Errorf("load run %d: log: %w", r.id, err)
		}
	}
	for _, t := range d.tasks {
		c := t.counts
		res, err := tx.ExecContext(ctx, insertDumpTaskSQL, t.id, t.runID, string(t.kind), t.phase, t.status, t.checkpoint,
			t.attempts, t.lastError, c[0], c[1], c[2], c[3], c[4], c[5], c[6], t.at)
		if err := oneRow(res, err); errors.Is(err, errNoRow) {
			conflict.Tasks = append(conflict.Tasks, t.id)
			continue
		} else if err != nil {
			return nil, fmt.Errorf("load task %d: %w", t.id, err)
		}
		sum.Tasks++
	}
	if err := d.numberSlots(ctx, tx, conflict); err != nil {
		return nil, err
	}
	rows, err := d.placeholders(ctx, tx)
	if err != nil {
		return nil, err
	}
	// A dump holds many slots and rows: one statement each, prepared once.
	slotStmt, err := tx.PrepareContext(ctx, insertDumpSlotSQL)
	if err != nil {
		return nil, fmt.Errorf("load slots: %w", err)
	}
	defer slotStmt.Close()
	rowStmts := map[ledger.Kind]*sql.Stmt{}
	for _, s := range d.slots {
		var recordType, recordID any
		if s.action.Final() {
			recordType, recordID = s.key.Kind.Table(), s.recordID
		}
		res, err := slotStmt.ExecContext(ctx, s.key.Tenant, s.key.Source, string(s.key.Kind), s.key.SourceID, s.id,
			s.runID, recordType, recordID, string(s.action), s.reason, s.detail, s.created)
		if err := oneRow(res, err); errors.Is(err, errNoRow) {
			conflict.Slots = append(conflict.Slots, fmt.Sprintf("%s/%s %s %s", s.key.Tenant, s.key.Source, s.key.Kind, s.key.SourceID))
			continue
		} else if err != nil {
			return nil, fmt.Errorf("load slot %s: %w", s.key, err)
		}
		sum.Slots[string(s.action)]++
		tenants[s.key.Tenant] = true
	}
	for _, p := range rows {
		extra, _ := json.Marshal(map[string]string{"loaded_from_dump": d.dir, "source": p.source, "source_id": p.sourceID})
		text := fmt.Sprintf("(loaded from a dump: %s %s)", p.kind, p.sourceID)
		st, ok := rowStmts[p.kind]
		if !ok {
			if st, err = tx.PrepareContext(ctx, placeholderSQL[p.kind]); err != nil {
				return nil, fmt.Errorf("load placeholders of %s: %w", p.kind.Table(), err)
			}
			defer st.Close()
			rowStmts[p.kind] = st
		}
		res, err := st.ExecContext(ctx, p.id, p.tenant, text, string(extra), now)
		if err := oneRow(res, err); errors.Is(err, errNoRow) {
			if conflict.Rows == nil {
				conflict.Rows = map[string][]int64{}
			}
			conflict.Rows[p.kind.Table()] = append(conflict.Rows[p.kind.Table()], p.id)
			continue
		} else if err != nil {
			return nil, fmt.Errorf("load placeholder %s %s: %w", p.kind, p.sourceID, err)
		}
		sum.Placeholders[p.kind.Table()]++
	}
	if conflict.any() {
		return nil, conflict
	}
	var maxID int64
	for _, s := range d.slots {
		maxID = max(maxID, s.id)
	}
	if _, err := tx.ExecContext(ctx, bumpSlotIDsSQL, maxID+1); err != nil {
		return nil, fmt.Errorf("load: number slots past %d: %w", maxID, err)
	}
	for t := range tenants {
		sum.Tenants = append(sum.Tenants, t)
	}
	sort.Strings(sum.Tenants)
	if sum.Notices == nil {
		sum.Notices = []string{}
	}
	return sum, nil
}

// numberSlots gives the slots without an id one past the ledger's and the
// dump's, and finds the dump's slot ids that the ledger already uses.
func (d *dump) numberSlots(ctx context.Context, tx *sql.Tx, conflict *ConflictError) error {
	taken := map[int64]bool{}
	rows, err := tx.QueryContext(ctx, slotIDsSQL)
	if err != nil {
		return fmt.Errorf("load: read slot ids: %w", err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		taken[id] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	var next int64
	if err := tx.QueryRowContext(ctx, nextSlotIDSQL).Scan(&next); err != nil {
		return fmt.Errorf("load: next slot id: %w", err)
	}
	for _, s := range d.slots {
		next = max(next, s.id+1)
		if s.id > 0 && taken[s.id] {
			conflict.SlotIDs = append(conflict.SlotIDs, s.id)
		}
	}
	for i := range d.slots {
		if d.slots[i].id == 0 {
			d.slots[i].id = next
			next++
		}
	}
	return nil
}

// placeholder is one target row that stands for a row of production.
type placeholder struct {
	kind     ledger.Kind
	id       int64
	tenant   string
	source   string
	sourceID string
	line     int
}

// placeholders decides the placeholder rows: one per (table, record_id)
// that created or matched slots name (two sources may match one row), and
// a new id, past the table's and the dump's, for a final slot that names
// none.
func (d *dump) placeholders(ctx context.Context, tx *sql.Tx) ([]placeholder, error) {
	type rowKey struct {
		kind ledger.Kind
		id   int64
	}
	dumpMax := map[ledger.Kind]int64{}
	for _, s := range d.slots {
		if s.action.Final() {
			dumpMax[s.key.Kind] = max(dumpMax[s.key.Kind], s.recordID)
		}
	}
	next := map[ledger.Kind]int64{} // the last id given to a slot without one
	seen := map[rowKey]int{}
	var out []placeholder
	for i := range d.slots {
		s := &d.slots[i]
		if !s.action.Final() {
			continue
		}
		if s.recordID == 0 {
			if _, ok := next[s.key.Kind]; !ok {
				var m int64
				if err := tx.QueryRowContext(ctx, maxRowIDSQL[s.key.Kind]).Scan(&m); err != nil {
					return nil, fmt.Errorf("load: next %s id: %w", s.key.Kind, err)
				}
				next[s.key.Kind] = max(m, dumpMax[s.key.Kind])
			}
			next[s.key.Kind]++
			s.recordID = next[s.key.Kind]
		}
		k := rowKey{s.key.Kind, s.recordID}
		if j, ok := seen[k]; ok {
			if out[j].tenant != s.key.Tenant {
				return nil, &DumpError{File: filepath.Base(d.files[tableSlots]), Line: s.line, Msg: fmt.Sprintf(
					"%s %s of tenant %s names %s row %d, which line %d gives to tenant %s: a row belongs to one tenant",
					s.key.Kind, s.key.SourceID, s.key.Tenant, s.key.Kind.Table(), s.recordID, out[j].line, out[j].tenant)}
			}
			continue
		}
		seen[k] = len(out)
		out = append(out, placeholder{kind: s.key.Kind, id: s.recordID, tenant: s.key.Tenant, source: s.key.Source,
			sourceID: s.key.SourceID, line: s.line})
	}
	return out, nil
}

var errNoRow = errors.New("no row changed")

// oneRow tells an insert that changed one row from one that changed none
// (its id was taken: ON CONFLICT DO NOTHING).
func oneRow(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return errNoRow
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

package forensics

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/report"
	"crmimport/store"
	"crmimport/target"
)

// Group is one line of the ledger grouped by kind, action, reason and run.
type Group struct {
	Kind      ledger.Kind `json:"kind"`
	Source    string      `json:"source"`
	Action    string      `json:"action"`
	Reason    string      `json:"reason"`
	Run       int64       `json:"run"`        // 0: the slots name no run
	RunStatus string      `json:"run_status"` // as `runs` shows it; "" for a run this database does not hold
	Count     int64       `json:"count"`
}

// Grouping is `ledger why` without a source id.
type Grouping struct {
	Tenant string  `json:"tenant"`
	Kind   string  `json:"kind,omitempty"`
	Run    int64   `json:"run,omitempty"`
	Total  int64   `json:"total"`
	Groups []Group `json:"groups"`
	// LedgerOnly is set on a production engine's ledger read as it is
	// (Production.Why).
	LedgerOnly *AsIs `json:"ledger_only,omitempty"`
}

// whyGroupsSQL is the query of write-up 000 — how the truth about the
// poisoned ledger was found, by hand, when the run log kept 200 entries —
// as a command: the tenant's slots grouped by kind, action, reason and the
// run that wrote them.
var whyGroupsSQL = `
SELECT r.kind, r.source, r.action, coalesce(r.reason, ''), coalesce(r.migration_id, 0), count(*)
FROM migration_records r
WHERE r.tenant_id = ?1 AND (?2 = '' OR r.kind = ?2) AND (?3 = 0 OR r.migration_id = ?3)
GROUP BY r.kind, r.source, r.action, r.reason, r.migration_id
ORDER BY ` + kindOrder + `, count(*) DESC, r.source, r.action, r.migration_id`

// Why groups a tenant's ledger by kind, action, reason and run, narrowed to
// a kind ("" for all) and a run (0 for all).
func Why(ctx context.Context, db *sql.DB, e *phases.Engine, tenant string, kind ledger.Kind, run int64) (*Grouping, error) {
	g := &Grouping{Tenant: tenant, Kind: string(kind), Run: run, Groups: []Group{}}
	rows, err := db.QueryContext(ctx, whyGroupsSQL, tenant, string(kind), run)
	if err != nil {
		return nil, fmt.Errorf("ledger why: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var gr Group
		if err := rows.Scan(&gr.Kind, &gr.Source, &gr.Action, &gr.Reason, &gr.Run, &gr.Count); err != nil {
			return nil, fmt.Errorf("ledger why: %w", err)
		}
		g.Total += gr.Count
		g.Groups = append(g.Groups, gr)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ledger why: %w", err)
	}
	runs := runCache{ctx: ctx, db: db, e: e, m: map[int64]*RunRef{}}
	for i := range g.Groups {
		if r, err := runs.get(g.Groups[i].Run); err != nil {
			return nil, err
		} else if r != nil {
			g.Groups[i].RunStatus = r.Status
		}
	}
	return g, nil
}

// RunRef is a run as a story names it.
type RunRef struct {
	ID         int64  `json:"id"`
	Status     string `json:"status"` // interrupted for a running run whose process is gone
	StartedAt  string `json:"started_at"`
	FinishedAt string `json:"finished_at,omitempty"`
	Loaded     bool   `json:"loaded_from_dump"`
}

// runCache reads each run once.
type runCache struct {
	ctx    context.Context
	db     *sql.DB
	e      *phases.Engine
	m      map[int64]*RunRef
	loaded map[int64]string
}

func (c *runCache) get(id int64) (*RunRef, error) {
	if id == 0 {
		return nil, nil
	}
	if r, ok := c.m[id]; ok {
		return r, nil
	}
	if c.loaded == nil {
		l, err := loadedRuns(c.ctx, c.db)
		if err != nil {
			return nil, err
		}
		c.loaded = l
	}
	run, err := phases.LoadRun(c.ctx, c.db, id)
	if errors.Is(err, phases.ErrNoRun) {
		c.m[id] = nil
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r := &RunRef{ID: id, Status: string(run.Status), StartedAt: ledger.FormatTime(run.StartedAt)}
	if c.e.Interrupted(run) {
		r.Status = "interrupted"
	}
	if run.FinishedAt != nil {
		r.FinishedAt = ledger.FormatTime(*run.FinishedAt)
	}
	_, r.Loaded = c.loaded[id]
	c.m[id] = r
	return r, nil
}

// SlotStory is one slot's story: what it says, which run claimed it, when
// and why, that run's status, and what came after.
type SlotStory struct {
	Source    string      `json:"source"`
	Kind      ledger.Kind `json:"kind"`
	SourceID  string      `json:"source_id"`
	Slot      int64       `json:"slot"`
	Action    string      `json:"action"`
	Reason    string      `json:"reason,omitempty"`
	Detail    string      `json:"detail,omitempty"`
	ClaimedAt string      `json:"claimed_at"`
	Run       *RunRef     `json:"run"` // nil when the slot names a run this database does not hold
	RunID     int64       `json:"run_id"`
	// Row is the target row of a created or matched slot.
	Row *RowRef `json:"row,omitempty"`
	// Later are the runs after the claiming one that processed the kind (a
	// task of it succeeded): a skip they left is a stale verdict (R3).
	Later []RunRef `json:"later_runs"`
	// Parents are the links a skip could not resolve and what they are now.
	Parents []ParentRef `json:"parents"`
	// Updates are the runs that updated the slot's row since it was
	// written (R17), oldest first.
	Updates []UpdateRef `json:"updates"`
	// Links are the link values of the slot's row that did not resolve
	// when it was written (R6a): each waits for its parent still, or a
	// later run completed it (relinked).
	Links []LinkRef `json:"links"`
	// Changes are what runs of the slot's tenant and source found changed
	// at the source for its record (R17, record_changes), oldest first.
	Changes []ChangeRef `json:"changes"`
}

// LinkRef is a link value of a slot's row that did not resolve when the
// row was written (R6a): the parent it names, the run that wrote it, and
// the run that completed it once the parent arrived (0: it waits).
type LinkRef struct {
	Field       string      `json:"field"`
	Kind        ledger.Kind `json:"kind"`
	SourceID    string      `json:"source_id"`
	Run         int64       `json:"run"`
	CompletedBy int64       `json:"completed_by,omitempty"`
}

// ChangeRef is what one run found changed at the source for a record
// (R17): outdated, conflict, deleted_since, updated or overwritten (or an
// undo's removed_edited), the fields whose source value changed with
// their values before and after, the fields edited by hand since import,
// and the undo of that run, if any.
type ChangeRef struct {
	Run      int64                `json:"run"`
	Change   string               `json:"change"`
	Fields   []string             `json:"fields"`
	Edited   []string             `json:"edited,omitempty"`
	Values   []report.FieldChange `json:"values,omitempty"`
	UndoneBy int64                `json:"undone_by,omitempty"`
}

// UpdateRef is one update of a slot's row (R17): the run that wrote it,
// when that run started, the fields whose source value it wrote, and the
// undo that gave the row its before-image back, if any.
type UpdateRef struct {
	Run        int64    `json:"run"`
	StartedAt  string   `json:"started_at,omitempty"` // "" when the run is not in this database
	Fields     []string `json:"fields"`
	RevertedBy int64    `json:"reverted_by,omitempty"`
}

// RowRef is a final slot's target row.
type RowRef struct {
	Table       string `json:"table"`
	ID          int64  `json:"id"`
	Missing     bool   `json:"missing"`
	Placeholder bool   `json:"placeholder"`       // loaded from a dump
	Unknown     bool   `json:"unknown,omitempty"` // on a production ledger, which has no target tables
}

// ParentRef is a link a skip could not resolve, and its slot now.
type ParentRef struct {
	Field    string      `json:"field"`
	Kind     ledger.Kind `json:"kind"`
	SourceID string      `json:"source_id"`
	Action   string      `json:"action"` // the parent's slot now: created, matched, skipped or ""
	Run      int64       `json:"run"`
}

// FailureRef is a failed attempt at the record (R4: it claimed nothing).
type FailureRef struct {
	Run    int64       `json:"run"`
	Source string      `json:"source"`
	Kind   ledger.Kind `json:"kind"`
	File   string      `json:"file"`
	Line   int64       `json:"line"`
	Reason string      `json:"reason"`
}

// Story is `ledger why --source-id ID`: every slot of the tenant with that
// source id (of one kind, or of every kind and source), and the failed
// attempts at it.
type Story struct {
	Tenant   string       `json:"tenant"`
	Kind     string       `json:"kind,omitempty"`
	SourceID string       `json:"source_id"`
	Slots    []SlotStory  `json:"slots"`
	Failures []FailureRef `json:"failures"`
	// LedgerOnly is set on a production engine's ledger read as it is
	// (Production.StoryOf).
	LedgerOnly *AsIs `json:"ledger_only,omitempty"`
}

const storySlotsSQL = `
SELECT source, kind, source_id, id, action, coalesce(reason, ''), coalesce(detail, ''), created_at,
    coalesce(migration_id, 0), coalesce(record_type, ''), coalesce(record_id, 0)
FROM migration_records
WHERE tenant_id = ?1 AND (?2 = '' OR kind = ?2) AND source_id = ?3
ORDER BY source, kind`

// laterRunsSQL: the runs after the claiming one, of the same tenant and
// source, that processed the kind (R3: a skip they left behind is stale).
const laterRunsSQL = `
SELECT DISTINCT m.id FROM migrations m JOIN migration_tasks t ON t.migration_id = m.id
WHERE m.tenant_id = ? AND m.source = ? AND t.kind = ? AND t.status = 'succeeded' AND m.id > ?
ORDER BY m.id`

// slotUpdatesSQL: the updates of one slot's row, per updating run (R17's
// before-images), oldest first.
const slotUpdatesSQL = `
SELECT migration_id, fields, coalesce(reverted_by, 0) FROM record_updates
WHERE tenant_id = ? AND source = ? AND kind = ? AND source_id = ?
ORDER BY migration_id`

// slotLinksSQL: the link values of one slot's row that did not resolve
// when it was written (R6a), waiting or completed.
const slotLinksSQL = `
SELECT field, parent_kind, parent_source_id, migration_id, coalesce(completed_by, 0) FROM pending_links
WHERE tenant_id = ? AND source = ? AND kind = ? AND source_id = ?
ORDER BY field`

// slotChangesSQL: what the runs of one slot's tenant and source found
// changed at the source for its record (R17), in the order they wrote it.
const slotChangesSQL = `
SELECT c.migration_id, c.change, coalesce(c.fields, '[]'), coalesce(c.edited, '[]'), coalesce(c.before, '{}'), coalesce(c.after, '{}'),
    coalesce(m.undone_by, 0)
FROM record_changes c JOIN migrations m ON m.id = c.migration_id
WHERE m.tenant_id = ? AND m.source = ? AND c.kind = ? AND c.source_id = ?
ORDER BY c.id`

const parentSlotSQL = `
SELECT action, coalesce(migration_id, 0) FROM migration_records
WHERE tenant_id = ? AND source = ? AND kind = ? AND source_id = ?`

const storyFailuresSQL = `
SELECT f.migration_id, m.source, f.kind, coalesce(f.file, ''), coalesce(f.line, 0), f.reason
FROM record_failures f JOIN migrations m ON m.id = f.migration_id
WHERE m.tenant_id = ?1 AND (?2 = '' OR f.kind = ?2) AND f.source_id = ?3
ORDER BY f.id`

// StoryOf tells the story of the tenant's record sourceID (of kind, or ""
// for every kind).
func StoryOf(ctx context.Context, db *sql.DB, e *phases.Engine, tenant string, kind ledger.Kind, sourceID string) (*Story, error) {
	st := &Story{Tenant: tenant, Kind: string(kind), SourceID: sourceID, Slots: []SlotStory{}, Failures: []FailureRef{}}
	runs := runCache{ctx: ctx, db: db, e: e, m: map[int64]*RunRef{}}
	rows, err := db.QueryContext(ctx, storySlotsSQL, tenant, string(kind), sourceID)
	if err != nil {
		return nil, fmt.Errorf("ledger why: %w", err)
	}
	for rows.Next() {
		var s SlotStory
		var recordType string
		var recordID int64
		if err := rows.Scan(&s.Source, &s.Kind, &s.SourceID, &s.Slot, &s.Action, &s.Reason, &s.Detail, &s.ClaimedAt,
			&s.RunID, &recordType, &recordID); err != nil {
			rows.Close()
			return nil, fmt.Errorf("ledger why: %w", err)
		}
		if ledger.Action(s.Action).Final() {
			s.Row = &RowRef{Table: s.Kind.Table(), ID: recordID}
		}
		st.Slots = append(st.Slots, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ledger why: %w", err)
	}
	for i := range st.Slots {
		if err := st.Slots[i].fill(ctx, db, tenant, &runs); err != nil {
			return nil, err
		}
	}
	frows, err := db.QueryContext(ctx, storyFailuresSQL, tenant, string(kind), sourceID)
	if err != nil {
		return nil, fmt.Errorf("ledger why: failures: %w", err)
	}
	defer frows.Close()
	for frows.Next() {
		var f FailureRef
		if err := frows.Scan(&f.Run, &f.Source, &f.Kind, &f.File, &f.Line, &f.Reason); err != nil {
			return nil, fmt.Errorf("ledger why: failures: %w", err)
		}
		st.Failures = append(st.Failures, f)
	}
	return st, frows.Err()
}

// fill reads what a slot's story needs beyond the slot.
func (s *SlotStory) fill(ctx context.Context, db *sql.DB, tenant string, runs *runCache) error {
	var err error
	if s.Run, err = runs.get(s.RunID); err != nil {
		return err
	}
	s.Later, s.Parents = []RunRef{}, []ParentRef{}
	if s.Updates, err = slotUpdates(ctx, db, tenant, s, runs); err != nil {
		return err
	}
	if s.Links, err = slotLinks(ctx, db, tenant, s); err != nil {
		return err
	}
	if s.Changes, err = slotChanges(ctx, db, tenant, s); err != nil {
		return err
	}
	if s.Row != nil {
		found, placeholder, err := target.RowState(ctx, db, s.Kind, s.Row.ID, tenant)
		if err != nil {
			return fmt.Errorf("ledger why: row of %s %s: %w", s.Kind, s.SourceID, err)
		}
		s.Row.Missing, s.Row.Placeholder = !found, placeholder
	}
	later, err := db.QueryContext(ctx, laterRunsSQL, tenant, s.Source, string(s.Kind), s.RunID)
	if err != nil {
		return fmt.Errorf("ledger why: later runs: %w", err)
	}
	var ids []int64
	for later.Next() {
		var id int64
		if err := later.Scan(&id); err != nil {
			later.Close()
			return err
		}
		ids = append(ids, id)
	}
	later.Close()
	if err := later.Err(); err != nil {
		return err
	}
	for _, id := range ids {
		r, err := runs.get(id)
		if err != nil {
			return err
		}
		if r != nil {
			s.Later = append(s.Later, *r)
		}
	}
	if s.Action != string(ledger.Skipped) || s.Detail == "" {
		return nil
	}
	var links map[string]any
	if json.Unmarshal([]byte(s.Detail), &links) != nil {
		return nil
	}
	fields := make([]string, 0, len(links))
	for f := range links {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	for _, f := range fields {
		k, ok := canon.KindOfLinkField(f)
		if !ok {
			continue
		}
		p := ParentRef{Field: f, Kind: k, SourceID: fmt.Sprint(links[f])}
		err := db.QueryRowContext(ctx, parentSlotSQL, tenant, s.Source, string(k), p.SourceID).Scan(&p.Action, &p.Run)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("ledger why: parent %s %s: %w", k, p.SourceID, err)
		}
		s.Parents = append(s.Parents, p)
	}
	return nil
}

// slotUpdates reads the updates of s's row (R17), each with its run's
// start.
func slotUpdates(ctx context.Context, db *sql.DB, tenant string, s *SlotStory, runs *runCache) ([]UpdateRef, error) {
	rows, err := db.QueryContext(ctx, slotUpdatesSQL, tenant, s.Source, string(s.Kind), s.SourceID)
	if err != nil {
		return nil, fmt.Errorf("ledger why: updates of %s %s: %w", s.Kind, s.SourceID, err)
	}
	out := []UpdateRef{}
	for rows.Next() {
		var u UpdateRef
		var fields string
		if err := rows.Scan(&u.Run, &fields, &u.RevertedBy); err != nil {
			rows.Close()
			return nil, fmt.Errorf("ledger why: updates of %s %s: %w", s.Kind, s.SourceID, err)
		}
		if err := json.Unmarshal([]byte(fields), &u.Fields); err != nil {
			rows.Close()
			return nil, fmt.Errorf("ledger why: update of %s %s by run %d: fields: %w", s.Kind, s.SourceID, u.Run, err)
		}
		if u.Fields == nil {
			u.Fields = []string{}
		}
		out = append(out, u)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		r, err := runs.get(out[i].Run)
		if err != nil {
			return nil, err
		}
		if r != nil {
			out[i].StartedAt = r.StartedAt
		}
	}
	return out, nil
}

// slotLinks reads the link values of s's row that did not resolve when
// it was written (R6a), waiting or completed.
func slotLinks(ctx context.Context, db *sql.DB, tenant string, s *SlotStory) ([]LinkRef, error) {
	out := []LinkRef{}
	err := store.EachRow(ctx, db, slotLinksSQL, []any{tenant, s.Source, string(s.Kind), s.SourceID}, func(rows store.Scanner) error {
		var l LinkRef
		var kind string
		err := rows.Scan(&l.Field, &kind, &l.SourceID, &l.Run, &l.CompletedBy)
		l.Kind = ledger.Kind(kind)
		out = append(out, l)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("ledger why: links of %s %s: %w", s.Kind, s.SourceID, err)
	}
	return out, nil
}

// slotChanges reads what runs found changed at the source for s's record
// (R17), each field with its value before and after as text.
func slotChanges(ctx context.Context, db *sql.DB, tenant string, s *SlotStory) ([]ChangeRef, error) {
	out := []ChangeRef{}
	err := store.EachRow(ctx, db, slotChangesSQL, []any{tenant, s.Source, string(s.Kind), s.SourceID}, func(rows store.Scanner) error {
		var c ChangeRef
		var fields, edited, before, after string
		if err := rows.Scan(&c.Run, &c.Change, &fields, &edited, &before, &after, &c.UndoneBy); err != nil {
			return err
		}
		var b, a map[string]any
		for _, x := range []struct {
			text string
			v    any
		}{{fields, &c.Fields}, {edited, &c.Edited}, {before, &b}, {after, &a}} {
			if err := json.Unmarshal([]byte(x.text), x.v); err != nil {
				return fmt.Errorf("run %d: %w", c.Run, err)
			}
		}
		if c.Fields == nil {
			c.Fields = []string{}
		}
		for _, f := range c.Fields {
			c.Values = append(c.Values, report.FieldChange{Field: f, Before: changeText(b[f]), After: changeText(a[f])})
		}
		out = append(out, c)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("ledger why: changes of %s %s: %w", s.Kind, s.SourceID, err)
	}
	return out, nil
}

// changeText is a field's value in a change as text: a string as it is,
// nothing as "", anything else as its JSON.
func changeText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

package forensics

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"crmimport/importer"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/report"
	"crmimport/store"
)

// What the desktop's pages of a run's records show, read by the same
// queries as rejects and doctor.

// Failure is one record a run failed (R4), as record_failures keeps it.
type Failure struct {
	ID       int64     `json:"id"` // record_failures.id: what a fix of the row names it by (package fixfile)
	Kind     string    `json:"kind"`
	SourceID string    `json:"source_id"`
	File     string    `json:"file"`
	Line     int64     `json:"line"`
	Reason   string    `json:"reason"`
	Class    string    `json:"class"` // the reason without its line and column (report.ReasonClass)
	Raw      []RawCell `json:"raw"`   // the row as read, in file order
	// RawJSON is the row as record_failures keeps it (a JSON object in
	// file order: importer/profile's RawJSON).
	RawJSON string `json:"-"`
	// Input and Format are the file the row's task read (a file, or
	// ZIP!/ENTRY) and its format, "" when not known.
	Input  string `json:"-"`
	Format string `json:"-"`
}

// RawCell is one column of a raw row.
type RawCell struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Failures lists the records run failed, in the order they failed, of kind
// and reason class when given ("" for any); at most limit of them (0: all).
// total counts every one that matches.
func Failures(ctx context.Context, db *sql.DB, runID int64, kind, class string, limit int) (out []Failure, total int, err error) {
	if _, err := phases.LoadRun(ctx, db, runID); err != nil {
		return nil, 0, err
	}
	out = []Failure{}
	err = eachReject(ctx, db, runID, func(r reject) error {
		c := report.ReasonClass(r.reason)
		if (kind != "" && r.kind != kind) || (class != "" && c != class) {
			return nil
		}
		total++
		if limit > 0 && len(out) >= limit {
			return nil
		}
		f := Failure{ID: r.id, Kind: r.kind, SourceID: r.sourceID, File: r.file, Line: r.line, Reason: r.reason, Class: c, Raw: []RawCell{},
			RawJSON: r.rawJSON, Input: r.input, Format: r.format}
		for _, c := range r.raw {
			f.Raw = append(f.Raw, RawCell{Name: c.name, Value: c.value})
		}
		out = append(out, f)
		return nil
	})
	return out, total, err
}

// Skip is one record a run skipped, with what it waits for.
type Skip struct {
	Kind     string            `json:"kind"`
	SourceID string            `json:"source_id"`
	Reason   string            `json:"reason"`
	Waits    map[string]string `json:"waits_for"` // the link values the skip could not resolve (its detail)
	Ready    []string          `json:"ready"`     // the kinds of those parents that now have a final slot (R3: a run takes it over)
	// WaitsForNothing: its links name only records that no run of its
	// export gives (R6b: a case, a kind the profile does not read); the
	// page promises it no run.
	WaitsForNothing bool   `json:"waits_for_nothing"`
	At              string `json:"at"`
}

// skipsSQL: the slots a run owns as skips (R3: the latest attempt owns a
// skip), with the parents of their detail found since. json_valid is
// SQLite's spelling (store.Dialect); skipsPG is PostgreSQL's.
const skipsSQL = `
SELECT r.kind, r.source_id, coalesce(r.reason, ''), coalesce(r.detail, ''), r.created_at,
    CASE WHEN r.detail IS NOT NULL AND json_valid(r.detail) THEN ` + parentsFoundSQL + ` END
FROM migration_records r
WHERE r.action = 'skipped' AND r.migration_id = ?1 AND (?2 = '' OR r.kind = ?2)
ORDER BY ` + kindOrder + `, r.source_id LIMIT ?3`

const skipsPG = `
SELECT r.kind, r.source_id, coalesce(r.reason, ''), coalesce(r.detail, ''), r.created_at,
    CASE WHEN ` + flatDetailPG + ` THEN ` + parentsFoundPG + ` END
FROM migration_records r
WHERE r.action = 'skipped' AND r.migration_id = ?1 AND (?2 = '' OR r.kind = ?2)
ORDER BY ` + kindOrder + `, r.source_id LIMIT ?3`

// Skips lists the records run skipped that it still owns (of kind, or ""
// for every kind), at most limit (0: all).
func Skips(ctx context.Context, db *sql.DB, runID int64, kind ledger.Kind, limit int) ([]Skip, error) {
	if _, err := phases.LoadRun(ctx, db, runID); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = math.MaxInt64 // every one: PostgreSQL refuses SQLite's LIMIT -1
	}
	q := skipsSQL
	if store.DialectOf(db) == store.Postgres {
		q = skipsPG
	}
	rows, err := db.QueryContext(ctx, q, runID, string(kind), limit)
	if err != nil {
		return nil, fmt.Errorf("skips of run %d: %w", runID, err)
	}
	defer rows.Close()
	out := []Skip{}
	for rows.Next() {
		var s Skip
		var detail string
		var ready sql.NullString
		if err := rows.Scan(&s.Kind, &s.SourceID, &s.Reason, &detail, &s.At, &ready); err != nil {
			return nil, fmt.Errorf("skips of run %d: %w", runID, err)
		}
		s.WaitsForNothing = importer.WaitsForNothing(s.Reason)
		s.Waits = map[string]string{}
		if detail != "" {
			_ = json.Unmarshal([]byte(detail), &s.Waits) // a detail that is not an object waits for nothing known
		}
		s.Ready = []string{}
		if ready.Valid && ready.String != "" {
			// In plan order: the dialects' aggregates give the kinds in
			// orders of their own.
			var kinds []ledger.Kind
			for _, k := range strings.Split(ready.String, ",") {
				kinds = append(kinds, ledger.Kind(k))
			}
			for _, k := range sortKinds(kinds) {
				s.Ready = append(s.Ready, string(k))
			}
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

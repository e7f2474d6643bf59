package fixfile

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"crmimport/importer/fixmanifest"
	"crmimport/importer/profile"
	"crmimport/importer/reader"
	"crmimport/ledger"
	"crmimport/report"
)

// EditedRow is a failed row as the desktop's page edited it: its failure
// (Failure.ID) and the cells it changes, named as Failure.Raw names them
// ("Phone#2" for a repeated column). A cell not named keeps its value as
// read.
type EditedRow struct {
	Failure int64            `json:"failure"`
	Cells   []report.RawCell `json:"cells"`
}

// WriteEdited writes edited rows of one file of run runID — file is the
// rows' Failure.File, or the name their fix file takes — as a one-file fix
// folder (layout, reasons.csv and manifest as Write writes them) in a new
// private folder under parent, and returns that folder's path. A run over
// it (with --only the file's kind) imports them; Outcomes then tells what
// became of each.
func WriteEdited(ctx context.Context, db *sql.DB, runID int64, file string, rows []EditedRow, parent string) (string, error) {
	if len(rows) == 0 {
		return "", fmt.Errorf("run %d: no edited rows to write", runID)
	}
	src, err := load(ctx, db, runID)
	if err != nil {
		return "", err
	}
	// Only the rows edited are read (issue 23 item 15: a fix of one row
	// of a run that failed 400,000 read them all).
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.Failure
	}
	found, err := report.FailuresByID(ctx, db, runID, ids)
	if err != nil {
		return "", err
	}
	byID := map[int64]report.Failure{}
	for _, f := range found {
		byID[f.ID] = f
	}
	var fails []report.Failure
	for _, r := range rows {
		f, ok := byID[r.Failure]
		if !ok {
			return "", fmt.Errorf("failure %d is not a failed record of run %d: list them with `crmimport rejects %d`", r.Failure, runID, runID)
		}
		if name, _ := fixName(f); f.File != file && name != file {
			return "", fmt.Errorf("failure %d of run %d is a row of %s, not of %s: write the rows of each file on their own", r.Failure, runID, f.File, file)
		}
		fails = append(fails, f)
	}
	files, err := group(fails)
	if err != nil {
		return "", err
	}
	ff := files[0]
	if ff.format == reader.FormatCSV {
		if err := src.header(ctx, db, ff); err != nil {
			return "", err
		}
	}
	// A line that two kinds of its file failed is one row (SPEC §4): the
	// edits of either failure are its edits, in the order given.
	at := map[int64]int{}
	for i, r := range ff.rows {
		at[r.failure] = i
		for _, a := range r.also {
			at[a.failure] = i
		}
	}
	for _, e := range rows {
		if err := ff.edit(&ff.rows[at[e.Failure]], e.Cells); err != nil {
			return "", err
		}
	}
	for i := range ff.rows {
		mapper := profile.NewMapper(src.prof, ledger.Kind(ff.rows[i].kind), ff.name)
		cols := make([]reader.Col, len(ff.rows[i].cells))
		for j, c := range ff.rows[i].cells {
			cols[j] = reader.Col{Name: c.Name, Value: c.Value}
		}
		ff.rows[i].sourceID = mapper.Map(reader.Row{Line: 1, Cols: cols}).ID
	}
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return "", fmt.Errorf("folder of fixes %s: %w", parent, err)
	}
	dir, err := os.MkdirTemp(parent, fmt.Sprintf("run%d-%s-", runID, strings.ReplaceAll(ff.name, ".", "-")))
	if err != nil {
		return "", fmt.Errorf("folder of fixes %s: %w", parent, err)
	}
	if _, err := src.write(ctx, db, files, dir, true); err != nil {
		return "", err
	}
	return dir, nil
}

// edit sets the cells of a row that cells name; a name that is not a
// column of the file is an error. A row that could not be read as a row
// is one once edited: its columns are the ones named.
func (ff *fixFile) edit(r *fixRow, cells []report.RawCell) error {
	known := map[string]bool{}
	for _, k := range ff.keys {
		known[k] = true
	}
	at := map[string]int{}
	for i, c := range r.cells {
		at[c.Name], known[c.Name] = i, true
	}
	if len(cells) > 0 && r.unreadable() {
		r.text = ""
	}
	var orig map[string]json.RawMessage
	_ = json.Unmarshal([]byte(r.raw), &orig) // a raw row that is not an object has nothing nested to keep
	for _, c := range cells {
		if ff.format == reader.FormatCSV && !known[c.Name] && len(ff.keys) > 0 {
			return fmt.Errorf("failure %d: %s has no column %q (its columns: %s)", r.failure, ff.name, c.Name, strings.Join(ff.keys, ", "))
		}
		if i, ok := at[c.Name]; ok {
			r.cells[i].Value = c.Value
		} else {
			at[c.Name] = len(r.cells)
			r.cells = append(r.cells, c)
		}
	}
	if ff.format == reader.FormatCSV {
		return nil
	}
	// A JSON row is its object again: an edited nested value stays nested
	// when it is still JSON of that shape, every other value is text.
	var b bytes.Buffer
	b.WriteByte('{')
	for i, c := range r.cells {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(c.Name)
		v, _ := json.Marshal(c.Value)
		if o := bytes.TrimSpace(orig[c.Name]); len(o) > 0 && (o[0] == '{' || o[0] == '[') && json.Valid([]byte(c.Value)) &&
			strings.HasPrefix(strings.TrimSpace(c.Value), string(o[0])) {
			v = []byte(c.Value)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	r.raw = b.String()
	return nil
}

// Outcome is what became of one row of a fix folder in a run over it.
type Outcome struct {
	Failure  int64  `json:"failure"` // the failure the row was written from
	File     string `json:"file"`
	Line     int    `json:"line"`
	SourceID string `json:"source_id"`
	// Outcome is imported, unchanged, skipped, failed or "not read".
	Outcome string `json:"outcome"`
	Action  string `json:"action,omitempty"` // created or matched, for imported and unchanged
	Reason  string `json:"reason,omitempty"`
	Owner   int64  `json:"owner_run,omitempty"` // the run whose slot it is, for unchanged
}

// slotSQL: R2-R3, the slot of a record, whoever owns it.
const slotSQL = `
SELECT action, coalesce(reason, ''), coalesce(migration_id, 0) FROM migration_records
WHERE tenant_id = ? AND source = ? AND kind = ? AND source_id = ?`

// Outcomes tells what became of each row of the fix folder that run runID
// read (its input): failed, with the reason, when the run failed the
// row's line (record_failures); else as the ledger has the row's source
// id — imported or skipped by this run, unchanged when another run's
// final slot holds it — and "not read" when neither has it (a kind left
// out with --only, a row the profile does not take).
func Outcomes(ctx context.Context, db *sql.DB, runID int64) ([]Outcome, error) {
	run, opts, err := runOptions(ctx, db, runID)
	if err != nil {
		return nil, err
	}
	man, err := fixmanifest.Read(opts.Input)
	if err != nil {
		return nil, err
	}
	if man == nil {
		return nil, fmt.Errorf("run %d did not read a fix folder (%s holds no %s)", runID, opts.Input, fixmanifest.Name)
	}
	// The run's failures, by where they are in the folder: no more than
	// the rows of the manifest, which is read whole already.
	type at struct {
		file string
		line int64
	}
	type failure struct{ sourceID, reason string }
	failed := map[at]failure{}
	err = report.EachFailure(ctx, db, runID, func(f report.Failure) error {
		failed[at{f.File, f.Line}] = failure{f.SourceID, f.Reason}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := []Outcome{}
	for _, mf := range man.Files {
		for i, id := range mf.IDs {
			o := Outcome{Failure: mf.Failures[i], File: mf.Name, Line: mf.Lines[i], SourceID: id}
			if f, ok := failed[at{mf.Name, int64(o.Line)}]; ok {
				o.Outcome, o.Reason, o.SourceID = "failed", f.reason, f.sourceID
				out = append(out, o)
				continue
			}
			var action, reason string
			var owner int64
			err := db.QueryRowContext(ctx, slotSQL, run.Tenant, run.Source, mf.RowKind(i), id).Scan(&action, &reason, &owner)
			switch {
			case errors.Is(err, sql.ErrNoRows) || id == "":
				o.Outcome = "not read"
			case err != nil:
				return nil, fmt.Errorf("outcome of %s %s: %w", mf.RowKind(i), id, err)
			case owner == runID && ledger.Action(action).Final():
				o.Outcome, o.Action = "imported", action
			case owner == runID:
				o.Outcome, o.Reason = "skipped", reason
			case ledger.Action(action).Final():
				o.Outcome, o.Action, o.Owner = "unchanged", action, owner
			default:
				o.Outcome = "not read"
			}
			out = append(out, o)
		}
	}
	return out, nil
}

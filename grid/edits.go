package grid

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"crmimport/fixfile"
	"crmimport/phases"
	"crmimport/report"
	"crmimport/store"
)

// Edit is a cell of a failed row that a person changed: its latest value,
// and the run that re-imported it (0 while it waits).
type Edit struct {
	Failure int64
	Column  string
	Value   string
	FixRun  int64
}

// idsIn is "(?, ?, …)" for n ids: the number of parameters, never a value,
// is written in the text.
func idsIn(n int) string { return "(" + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + ")" }

func anys(ids []int64) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

// editsSQL: the edits of the failures named (a page's, a chunk's).
const editsSQL = `SELECT failure_id, column_name, value, coalesce(fix_run, 0) FROM record_edits WHERE failure_id IN `

// Edits reads the edits of the failures ids, per failure, by column name.
func Edits(ctx context.Context, db store.Querier, ids []int64) (map[int64][]Edit, error) {
	out := map[int64][]Edit{}
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), editChunk)]
		ids = ids[len(chunk):]
		err := store.EachRow(ctx, db, editsSQL+idsIn(len(chunk))+` ORDER BY failure_id, column_name`, anys(chunk), func(rows store.Scanner) error {
			var e Edit
			err := rows.Scan(&e.Failure, &e.Column, &e.Value, &e.FixRun)
			out[e.Failure] = append(out[e.Failure], e)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("edits: %w", err)
		}
	}
	return out, nil
}

// editChunk is how many failures one statement of edits names.
const editChunk = 500

// saveEditSQL: one cell's edit, the latest value; it waits again (fix_run
// NULL) until the next re-import.
const saveEditSQL = `INSERT INTO record_edits (failure_id, migration_id, column_name, value, edited_at) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (failure_id, column_name) DO UPDATE SET value = excluded.value, edited_at = excluded.edited_at, fix_run = NULL`

// dropEditSQL: a cell given back its value as read has no edit.
const dropEditSQL = `DELETE FROM record_edits WHERE failure_id = ? AND column_name = ?`

// SaveEdits keeps the edited cells of failed rows of run runID in the
// database (record_edits), in one transaction of the writer db: each row a
// failure of the run, each cell a column of its row as read (or a new
// column of a JSON row). A cell given its value as read again loses its
// edit. It returns how many cells it wrote.
func SaveEdits(ctx context.Context, db *sql.DB, runID int64, rows []fixfile.EditedRow, now time.Time) (int, error) {
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.Failure
	}
	fails, err := report.FailuresByID(ctx, db, runID, ids)
	if err != nil {
		return 0, err
	}
	byID := map[int64]report.Failure{}
	for _, f := range fails {
		byID[f.ID] = f
	}
	for _, r := range rows {
		f, ok := byID[r.Failure]
		switch {
		case !ok:
			return 0, fmt.Errorf("%w: failure %d is not a failed record of run %d", ErrBadQuery, r.Failure, runID)
		case len(f.Raw) == 1 && f.Raw[0].Name == TextColumn:
			return 0, fmt.Errorf("%w: failure %d was not read as a row (a broken quote): correct its text in the export", ErrBadQuery, r.Failure)
		}
	}
	tx, err := store.Begin(ctx, db)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	at := now.UTC().Format(time.RFC3339Nano)
	n := 0
	for _, r := range rows {
		asRead := map[string]string{}
		for _, c := range byID[r.Failure].Raw {
			asRead[c.Name] = c.Value
		}
		for _, c := range r.Cells {
			if c.Name == "" || c.Name == TextColumn {
				return 0, fmt.Errorf("%w: failure %d: a cell names no column", ErrBadQuery, r.Failure)
			}
			q, args := saveEditSQL, []any{r.Failure, runID, c.Name, c.Value, at}
			if v, ok := asRead[c.Name]; ok && v == c.Value {
				q, args = dropEditSQL, []any{r.Failure, c.Name}
			}
			if _, err := tx.ExecContext(ctx, q, args...); err != nil {
				return 0, fmt.Errorf("edit of failure %d, %s: %w", r.Failure, c.Name, err)
			}
			n++
		}
	}
	return n, tx.Commit()
}

// pendingFilesSQL: per file, the run's failed rows with an edit that waits.
const pendingFilesSQL = `SELECT f.file, count(DISTINCT e.failure_id) FROM record_edits e JOIN record_failures f ON f.id = e.failure_id
WHERE e.migration_id = ? AND e.fix_run IS NULL GROUP BY f.file ORDER BY f.file`

func pendingFiles(ctx context.Context, db *sql.DB, runID int64) ([]FileCount, error) {
	out := []FileCount{}
	err := store.EachRow(ctx, db, pendingFilesSQL, []any{runID}, func(rows store.Scanner) error {
		var c FileCount
		err := rows.Scan(&c.File, &c.Count)
		out = append(out, c)
		return err
	})
	return out, err
}

// pendingOfFileSQL: every edit of the failed rows of a file of the run
// that have one waiting — a row is re-imported with all its edits.
const pendingOfFileSQL = `SELECT e.failure_id, e.column_name, e.value FROM record_edits e JOIN record_failures f ON f.id = e.failure_id
WHERE e.migration_id = ? AND f.file = ? AND e.failure_id IN (
    SELECT p.failure_id FROM record_edits p WHERE p.migration_id = ? AND p.fix_run IS NULL)
ORDER BY e.failure_id, e.column_name`

// Pending are the edited rows of a file of run runID that wait for a
// re-import, each with all its edits (those re-imported before too: the
// fix file holds the row as it stands now), in failure order.
func Pending(ctx context.Context, db *sql.DB, runID int64, file string) ([]fixfile.EditedRow, error) {
	var out []fixfile.EditedRow
	err := store.EachRow(ctx, db, pendingOfFileSQL, []any{runID, file, runID}, func(rows store.Scanner) error {
		var id int64
		var c report.RawCell
		if err := rows.Scan(&id, &c.Name, &c.Value); err != nil {
			return err
		}
		if len(out) == 0 || out[len(out)-1].Failure != id {
			out = append(out, fixfile.EditedRow{Failure: id})
		}
		out[len(out)-1].Cells = append(out[len(out)-1].Cells, c)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("edits of %s of run %d: %w", file, runID, err)
	}
	return out, nil
}

// markSentSQL: the edits of the rows a fix run re-imports name it.
const markSentSQL = `UPDATE record_edits SET fix_run = ? WHERE migration_id = ? AND failure_id IN `

// MarkSent records that run fixRun re-imports the edited rows of run
// runID given (every edit of each), in one transaction of the writer db.
func MarkSent(ctx context.Context, db *sql.DB, runID, fixRun int64, rows []fixfile.EditedRow) error {
	tx, err := store.Begin(ctx, db)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for len(rows) > 0 {
		chunk := rows[:min(len(rows), editChunk)]
		rows = rows[len(chunk):]
		args := []any{fixRun, runID}
		for _, r := range chunk {
			args = append(args, r.Failure)
		}
		if _, err := tx.ExecContext(ctx, markSentSQL+idsIn(len(chunk)), args...); err != nil {
			return fmt.Errorf("edits re-imported by run %d: %w", fixRun, err)
		}
	}
	return tx.Commit()
}

// outcomes gives each row that a run re-imported what that run made of
// it (fixfile.Outcomes, once per run); while the run works, a row it has
// not read yet is pending.
func outcomes(ctx context.Context, db *sql.DB, rows []Row) error {
	byRun := map[int64]map[int64]Outcome{}
	for i := range rows {
		run := rows[i].FixRun
		if run == 0 {
			continue
		}
		if _, ok := byRun[run]; !ok {
			got, err := outcomesOf(ctx, db, run)
			if err != nil {
				return err
			}
			byRun[run] = got
		}
		if o, ok := byRun[run][rows[i].ID]; ok {
			rows[i].Outcome = &o
		} else if o, ok := byRun[run][0]; ok {
			rows[i].Outcome = &o // the run's outcomes cannot be read
		}
	}
	return nil
}

func outcomesOf(ctx context.Context, db *sql.DB, fixRun int64) (map[int64]Outcome, error) {
	run, err := phases.LoadRun(ctx, db, fixRun)
	if err != nil {
		return nil, err
	}
	out := map[int64]Outcome{}
	got, err := fixfile.Outcomes(ctx, db, fixRun)
	if err != nil {
		// The fix folder is gone (deleted by hand): the run's page still
		// tells what it did; each of its rows says why it cannot (under
		// failure 0, which no failure is).
		out[0] = Outcome{Outcome: "unknown", Reason: fmt.Sprintf("run %d's fix folder cannot be read: %v", fixRun, err)}
		return out, nil
	}
	for _, o := range got {
		word := o.Outcome
		if word == "not read" && !run.Status.Terminal() {
			word = "pending"
		}
		out[o.Failure] = Outcome{Outcome: word, Action: o.Action, Reason: o.Reason, Owner: o.Owner}
	}
	return out, nil
}
